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
import re
from pathlib import Path
from typing import Any

import srt

from dtfilm.system.webvtt import SUBTITLE_BOTTOM_PERCENT, srt_to_vtt
from dtfilm.userfile import read_back

MAX_SUBTITLE_BYTES = 4 * 2**20  # a chapter's subtitles are a few kB
CUE_LINE = re.compile(r"^\S+ --> \S+ line:(\d{1,3})%", re.MULTILINE)  # a cue's timing line, as srt_to_vtt writes it


def _parsed(data: bytes | None) -> list[srt.Subtitle]:
    try:
        return list(srt.parse(data.decode("utf-8"))) if data is not None else []
    except (ValueError, srt.SRTParseError):
        return []


def chapter_cues(path: Path) -> list[srt.Subtitle]:
    """A chapter's cues as its .srt has them; none when it is missing, too large or unreadable
    (read back from the renders folder: text only, never trusted further than that)."""
    return _parsed(read_back(path, MAX_SUBTITLE_BYTES))


def _recorded_bytes(path: Path, record: Any) -> bytes | None:
    """A chapter's subtitle file as read (bounded, no link followed), when its bytes have the
    SHA-256 of `record`, the manifest's: the file its render wrote; else None."""
    data = read_back(path, MAX_SUBTITLE_BYTES)
    sha256 = record.get("sha256") if isinstance(record, dict) else None
    if data is None or not isinstance(sha256, str) or hashlib.sha256(data).hexdigest() != sha256:
        return None
    return data


def recorded_cues(path: Path, record: Any) -> list[srt.Subtitle] | None:
    """A chapter's cues when its .srt, as read, is the file its render wrote (the SHA-256 of
    `record`, the manifest's); None when it is not (edited since, or not there)."""
    data = _recorded_bytes(path, record)
    return _parsed(data) if data is not None else None


def recorded_lines(path: Path, record: Any, count: int) -> list[int] | None:
    """Where a chapter's `count` cues are drawn, as its .vtt places them (the percent of the
    height each cue's last line ends at: dtfilm.render.subtitle_place), when the file, as read,
    is the one its render wrote (the SHA-256 of `record`) and places exactly `count` cues; else
    None. Only numbers are taken from it, each within 0-100."""
    data = _recorded_bytes(path, record)
    if data is None:
        return None
    lines = [int(n) for n in CUE_LINE.findall(data.decode("utf-8", errors="replace"))]
    return lines if len(lines) == count and all(0 <= n <= 100 for n in lines) else None


def placed_srt(chapters: list[tuple[list[srt.Subtitle], float, float]]) -> str:
    """The film's SRT from each chapter's (cues, start, end) in the film, in seconds: each cue
    moved by its chapter's start and kept within its chapter."""
    return placed_subtitles([(said, None, start, end) for said, start, end in chapters])[0]


def placed_subtitles(
    chapters: list[tuple[list[srt.Subtitle], list[int] | None, float, float]],
) -> tuple[str, list[int]]:
    """The film's SRT, and each of its cues' line for the VTT, from each chapter's (cues, their
    lines or None, start, end) in the film, in seconds: each cue moved by its chapter's start
    and kept within its chapter, where its chapter placed it (else just above the caption)."""
    cues, lines = [], []
    for said, placed, start, end in chapters:
        offset, until = datetime.timedelta(seconds=start), datetime.timedelta(seconds=end)
        where = placed if placed is not None and len(placed) == len(said) else [SUBTITLE_BOTTOM_PERCENT] * len(said)
        for cue, line in zip(said, where, strict=True):
            begin, finish = cue.start + offset, min(cue.end + offset, until)
            if begin < finish:
                cues.append(srt.Subtitle(len(cues) + 1, begin, finish, cue.content))
                lines.append(line)
    return srt.compose(cues, reindex=False), lines


def film_vtt(film_srt_text: str, lines: list[int] | None = None) -> str:
    """The film's VTT, each cue at its line (as its chapter's VTT placed it), else above the caption."""
    return srt_to_vtt(film_srt_text, lines)
