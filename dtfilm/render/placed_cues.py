"""Where a chapter's subtitle cues are drawn (dtfilm.render.subtitle_place), read shot by shot:
each shot's cues placed from its own cached clip and kept beside it in the shot cache
(<key>.lines), so a chapter joined again after one shot changed (a caption) decodes that shot's
frames only. The whole chapter's frames took a second of a changed caption's render.

A kept file is read back from renders/, which is not trusted (docs/security.md): through
`read_back` (a regular file within MAX_LINES_BYTES, no link followed), and used only when it has
the shape written here, names the clip it was read from by its digest, and the very cues asked
for; else the shot's clip is read again. What it holds is row percentages, nothing shown as text.
"""

from __future__ import annotations

import json
from pathlib import Path

from dtfilm.render.shot_cache import cache_folder, clip_path
from dtfilm.render.subtitle_place import cue_lines, shot_cue_lines
from dtfilm.system.atomic import write_text_atomic
from dtfilm.userfile import read_back

LINES_SUFFIX = ".lines"  # in the shot cache, beside <key>.mp4
MAX_LINES_BYTES = 256 * 2**10  # a shot's few dozen cues: a kilobyte or two
_FIELDS = {"clip", "cues", "lines"}


def lines_path(out_dir: Path, key: str) -> Path:
    return cache_folder(out_dir) / f"{key}{LINES_SUFFIX}"


def kept_lines(path: Path, clip_digest: str, cues: list[tuple[float, float]]) -> list[int] | None:
    """The lines kept for a shot's `cues`, read from its clip with digest `clip_digest`; None
    when the file is missing, not what this module writes, or made for another clip or cues."""
    data = read_back(path, MAX_LINES_BYTES)
    try:
        kept = json.loads(data) if data is not None else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(kept, dict) or set(kept) != _FIELDS or kept["clip"] != clip_digest:
        return None
    if kept["cues"] != [[start, end] for start, end in cues]:
        return None
    lines = kept["lines"]
    shaped = isinstance(lines, list) and len(lines) == len(cues)
    if not shaped or not all(type(line) is int and 0 <= line <= 100 for line in lines):
        return None
    return lines


def shot_lines(out_dir: Path, key: str, clip_digest: str, cues: list[tuple[float, float]]) -> list[int] | None:
    """A shot's cues' lines: kept, or read from its clip and kept; None when its clip cannot
    place them alone (subtitle_place.shot_cue_lines)."""
    path = lines_path(out_dir, key)
    lines = kept_lines(path, clip_digest, cues)
    if lines is None:
        lines = shot_cue_lines(clip_path(out_dir, key), cues)
        if lines is not None:
            write_text_atomic(path, json.dumps({"clip": clip_digest, "cues": [list(c) for c in cues], "lines": lines}))
    return lines


def chapter_cue_lines(
    chapter_clip: Path,
    out_dir: Path,
    shots: list[tuple[str, str, list[tuple[float, float]]]],
    starts: list[float],
) -> list[int]:
    """The chapter's cues' lines, in order: `shots` gives each shot's key, its clip's digest and
    its cues (seconds into the shot); `starts` where each shot starts in `chapter_clip`. Read
    shot by shot; should a shot's clip not place its cues alone, from the chapter's clip."""
    lines: list[int] = []
    for key, digest, cues in shots:
        found = shot_lines(out_dir, key, digest, cues) if cues else []
        if found is None:
            timed = [(start + b, start + e) for (_, _, c), start in zip(shots, starts, strict=True) for b, e in c]
            return cue_lines(chapter_clip, timed)
        lines += found
    return lines
