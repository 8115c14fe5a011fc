"""The film's own subtitles (film.srt, film.vtt): every chapter's cues, placed at the chapter's
start in the joined film, so a player showing the whole film has captions as each chapter's
clip does."""

from __future__ import annotations

import datetime
from pathlib import Path

import srt

from dtfilm.system.video import srt_to_vtt
from dtfilm.userfile import read_back

MAX_SUBTITLE_BYTES = 4 * 2**20  # a chapter's subtitles are a few kB


def chapter_cues(path: Path) -> list[srt.Subtitle]:
    """A chapter's cues as its .srt has them; none when it is missing, too large or unreadable
    (read back from the renders folder: text only, never trusted further than that)."""
    data = read_back(path, MAX_SUBTITLE_BYTES)
    try:
        return list(srt.parse(data.decode("utf-8"))) if data is not None else []
    except (ValueError, srt.SRTParseError):
        return []


def film_srt(chapters: list[tuple[Path, float, float]]) -> str:
    """The film's SRT from each chapter's (.srt path, start, end) in the film, in seconds: each
    cue moved by its chapter's start and kept within its chapter."""
    cues = []
    for path, start, end in chapters:
        offset, until = datetime.timedelta(seconds=start), datetime.timedelta(seconds=end)
        for cue in chapter_cues(path):
            begin, finish = cue.start + offset, min(cue.end + offset, until)
            if begin < finish:
                cues.append(srt.Subtitle(len(cues) + 1, begin, finish, cue.content))
    return srt.compose(cues, reindex=False)


def film_vtt(film_srt_text: str) -> str:
    return srt_to_vtt(film_srt_text)
