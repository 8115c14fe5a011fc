"""What renders/manifest.json must look like before anything it says is used.

The manifest is read back from the renders folder, which is not trusted (dtfilm.inside): a
chapter named `../../victim` made `dtfilm clean` delete files outside the project, and a manifest
that was `[]` or had the wrong types stopped commands with a traceback. Every entry is checked
here against the shape dtfilm.render.chapters writes; one that fails is dropped (its chapter counts as not
rendered, and is rendered again), and a file that is not a manifest at all counts as none.
Fields beyond these are kept as they are: they are read by code that checks them itself.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

from dtfilm.inside import inside, is_chapter_id, is_hex_name

_WARNED: set[str] = set()


def warn_once(message: str) -> None:
    """One warning line per process for each distinct message."""
    if message not in _WARNED:
        _WARNED.add(message)
        print(f"dtfilm: warning: {message}", file=sys.stderr)


def empty_manifest() -> dict[str, Any]:
    return {"version": 1, "chapters": {}, "film": {}}


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _strings(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def _shot_problem(shot: object, out_dir: Path) -> str | None:
    if not isinstance(shot, dict):
        return "a shot is not a mapping"
    if not isinstance(shot.get("beat"), str):
        return "a shot has no beat"
    if not (_number(shot.get("start")) and _number(shot.get("end"))):
        return f"shot {shot['beat']!r} has no start and end in seconds"
    if not is_hex_name(shot.get("key")):
        return f"shot {shot['beat']!r} has no cache key"
    for name in ("clip", "still"):
        if inside(out_dir, shot.get(name)) is None:
            return f"shot {shot['beat']!r}'s {name} is not a file in the renders folder"
    if "cache" in shot and inside(out_dir, shot["cache"]) is None:
        return f"shot {shot['beat']!r}'s cache is not a file in the renders folder"
    if "narration" in shot and not isinstance(shot["narration"], str):
        return f"shot {shot['beat']!r}'s narration is not text"
    if "parts" in shot and not _strings(shot["parts"]):
        return f"shot {shot['beat']!r}'s parts are not text"
    return None


def _chapter_problem(name: object, entry: object, out_dir: Path) -> str | None:
    if not is_chapter_id(name):
        return "not a chapter id"
    if not isinstance(entry, dict):
        return "not a mapping"
    if "parts" in entry and not _strings(entry["parts"]):
        return "its key's parts are not text"
    for field in ("key", "title", "subtitle", "quality"):
        if field in entry and not isinstance(entry[field], str):
            return f"its {field} is not text"
    if "duration" in entry and not _number(entry["duration"]):
        return "its duration is not a number of seconds"
    if "inputs" in entry and not isinstance(entry["inputs"], dict):
        return "its inputs are not a mapping"
    if "film" in entry and not _strings(entry["film"]):
        return "what it takes from the film is not text"
    outputs = entry.get("outputs", [])
    if not isinstance(outputs, list) or any(inside(out_dir, name) is None for name in outputs):
        return "its outputs are not files in the renders folder"
    shots = entry.get("shots", [])
    if not isinstance(shots, list):
        return "its shots are not a list"
    return next((problem for shot in shots if (problem := _shot_problem(shot, out_dir))), None)


def _film_problem(film: object) -> str | None:
    if not isinstance(film, dict):
        return "the film's entry is not a mapping"
    if "key" in film and not isinstance(film["key"], str):
        return "the film's key is not text"
    if film.get("output", "film.mp4") != "film.mp4":
        return "the film's output is not film.mp4"
    chapters = film.get("chapters", [])
    ok = isinstance(chapters, list) and all(
        isinstance(c, dict)
        and is_chapter_id(c.get("id"))
        and isinstance(c.get("title"), str)
        and _number(c.get("start"))
        and _number(c.get("end"))
        for c in chapters
    )
    return None if ok else "the film's chapters are not as dtfilm writes them"


def checked_manifest(data: object, out_dir: Path) -> tuple[dict[str, Any], str | None]:
    """The manifest with only the entries that have dtfilm's shape, and what was wrong (None
    when nothing was). `data`: the parsed JSON, {} for no file, None for one that is no JSON."""
    if data is None:
        return empty_manifest(), "not a manifest dtfilm wrote (not JSON, or not a readable file)"
    if not isinstance(data, dict):
        return empty_manifest(), "not a manifest dtfilm wrote (not a JSON object)"
    chapters = data.get("chapters", {})
    if not isinstance(chapters, dict):
        return empty_manifest(), "not a manifest dtfilm wrote (its chapters are not a mapping)"
    problems = []
    kept = {}
    for name, entry in chapters.items():
        problem = _chapter_problem(name, entry, out_dir)
        if problem is None:
            kept[name] = entry
        else:
            problems.append(f"chapter {str(name)[:60]!r}: {problem}")
    film = data.get("film", {})
    film_problem = _film_problem(film)
    if film_problem is not None:
        problems.append(film_problem)
        film = {}
    manifest = {**data, "version": data.get("version", 1), "chapters": kept, "film": film}
    shown = "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
    return manifest, shown or None
