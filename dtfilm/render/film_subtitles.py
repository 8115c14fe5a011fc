"""The film's own subtitles (film.srt, film.vtt): every chapter's cues, placed at the chapter's
start in the joined film, so a player showing the whole film has captions as each chapter's
clip does.

A chapter's cues are read back from its .srt in renders/, which is not trusted: the film takes
them only when the file's bytes, as read, have the digest the manifest recorded when the chapter
was rendered (recorded_cues); its text was made from the storyboard then
(dtfilm.render.assemble.shot_cues)."""

from __future__ import annotations

import datetime
import hashlib
from pathlib import Path
from typing import Any

import srt

from dtfilm.system.webvtt import srt_to_vtt
from dtfilm.userfile import read_back

MAX_SUBTITLE_BYTES = 4 * 2**20  # a chapter's subtitles are a few kB


def _parsed(data: bytes | None) -> list[srt.Subtitle]:
    try:
        return list(srt.parse(data.decode("utf-8"))) if data is not None else []
    except (ValueError, srt.SRTParseError):
        return []


def chapter_cues(path: Path) -> list[srt.Subtitle]:
    """A chapter's cues as its .srt has them; none when it is missing, too large or unreadable
    (read back from the renders folder: text only, never trusted further than that)."""
    return _parsed(read_back(path, MAX_SUBTITLE_BYTES))


def recorded_cues(path: Path, record: Any) -> list[srt.Subtitle] | None:
    """A chapter's cues when its .srt, as read, is the file its render wrote (the SHA-256 of
    `record`, the manifest's); None when it is not (edited since, or not there)."""
    data = read_back(path, MAX_SUBTITLE_BYTES)
    sha256 = record.get("sha256") if isinstance(record, dict) else None
    if data is None or not isinstance(sha256, str) or hashlib.sha256(data).hexdigest() != sha256:
        return None
    return _parsed(data)


def placed_srt(chapters: list[tuple[list[srt.Subtitle], float, float]]) -> str:
    """The film's SRT from each chapter's (cues, start, end) in the film, in seconds: each cue
    moved by its chapter's start and kept within its chapter."""
    cues = []
    for said, start, end in chapters:
        offset, until = datetime.timedelta(seconds=start), datetime.timedelta(seconds=end)
        for cue in said:
            begin, finish = cue.start + offset, min(cue.end + offset, until)
            if begin < finish:
                cues.append(srt.Subtitle(len(cues) + 1, begin, finish, cue.content))
    return srt.compose(cues, reindex=False)


def film_vtt(film_srt_text: str) -> str:
    return srt_to_vtt(film_srt_text)
