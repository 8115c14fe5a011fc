"""Files made from the rendered clips, with records in the manifest, so that `status` says when
they no longer follow the renders and which command makes them again.

- The slide deck (slides.html, slides.pptx): made by `dtfilm slides` from the per-shot clips,
  their narration and the titles. Its record keeps the digest of those inputs (`deck_key`), the
  chapters and options it was made with, and each file's record; after a render that changed a
  clip or a note, the deck is stale, and `dtfilm render` makes it again at its end (cli).
- Single shots and stills (renders/one/): made by `dtfilm render CHAPTER:BEAT` and `dtfilm still`
  under one quality, theme and set of flags; each record keeps its chapter's key then, and
  `status` names the command that makes it again once that key has changed.

The records are read back from the renders folder, which is not trusted: one that is not as
dtfilm writes it is ignored (as if the file had no record).
"""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path
from typing import Any

from dtfilm.errors import DtfilmError
from dtfilm.inside import is_chapter_id
from dtfilm.render.cache import chapter_key, files_reasons, record_files
from dtfilm.storyboard import load_chapter
from dtfilm.system.quality import QUALITY_NAMES

SLIDES = "slides"  # the manifest's key for the deck's record
SINGLES = "one"  # ... and for the single shots' and stills' records, by file name under renders/
SLIDE_FILES = ("slides.html", "slides.pptx")


def deck_inputs(manifest: dict[str, Any], chapter_ids: list[str], title: str, theme: str) -> list[Any] | None:
    """What the deck shows, from the manifest: each shot's clip, still, narration and chapter
    title, in order, and the deck's title and theme (None when a chapter has no per-shot clips)."""
    shots: list[Any] = []
    for chapter in chapter_ids:
        entry = manifest["chapters"].get(chapter)
        if not isinstance(entry, dict) or not entry.get("shots"):
            return None
        title_of = entry.get("title", chapter)
        for s in entry["shots"]:
            shots.append([chapter, s.get("beat"), s.get("clip"), s.get("still"), s.get("narration"), title_of])
    return [title, theme, shots]


def deck_key(inputs: list[Any]) -> str:
    text = json.dumps(inputs, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def deck_theme(film_theme: str) -> str:
    """reveal.js's theme for the film's."""
    return "white" if film_theme == "light" else "black"


def slides_record(
    out_dir: Path, chapter_ids: list[str], key: str, pptx: bool, voice: bool, previous: Any
) -> dict[str, Any]:
    """The deck's record as `dtfilm slides` wrote it."""
    names = list(SLIDE_FILES if pptx else SLIDE_FILES[:1])
    old = previous.get("files") if isinstance(previous, dict) else None
    return {
        "key": key,
        "chapters": list(chapter_ids),
        "pptx": pptx,
        "voice": voice,
        "files": record_files(out_dir, names, old),
    }


def deck_record(manifest: dict[str, Any]) -> dict[str, Any] | None:
    """The deck's record, if the manifest has one as dtfilm writes it."""
    record = manifest.get(SLIDES)
    if not isinstance(record, dict):
        return None
    chapters = record.get("chapters")
    if not (
        isinstance(record.get("key"), str)
        and isinstance(chapters, list)
        and all(is_chapter_id(c) for c in chapters)
        and isinstance(record.get("pptx"), bool)
        and isinstance(record.get("voice"), bool)
        and isinstance(record.get("files"), dict)
    ):
        return None
    return record


def deck_reasons(
    manifest: dict[str, Any], out_dir: Path, title: str, theme: str, verify: bool = False
) -> list[str] | None:
    """Why the deck no longer follows the renders (empty: it does; None: no deck was made)."""
    record = deck_record(manifest)
    if record is None:
        return None
    inputs = deck_inputs(manifest, record["chapters"], title, theme)
    reasons = []
    if inputs is None:
        reasons.append("a chapter of it has no per-shot clips")
    elif deck_key(inputs) != record["key"]:
        reasons.append("its clips, notes or titles changed since it was made")
    names = list(SLIDE_FILES if record["pptx"] else SLIDE_FILES[:1])
    return reasons + files_reasons(record["files"], names, out_dir, verify)


def slides_command(record: dict[str, Any]) -> str:
    """The command that makes the deck again as it was made."""
    words = ["dtfilm", "slides", *record["chapters"]]
    words += [] if record["pptx"] else ["--no-pptx"]
    words += ["--voice"] if record["voice"] else []
    return shlex.join(words)


# -- single shots and stills ------------------------------------------------------------------


def single_name(chapter_id: str, beat: str, quality: str, at_seconds: float | None = None) -> str:
    """A single shot's or still's file name under renders/one/, with its quality: a preview and
    a final render of the same frame are two files, not one overwritten by the other."""
    if at_seconds is None:
        return f"{chapter_id}-{beat}-{quality}.mp4"
    return f"{chapter_id}-{beat}-{at_seconds:g}s-{quality}.png"


def single_record(
    out_dir: Path,
    name: str,
    key: str,
    shot: str,
    quality: str,
    theme: str | None,
    overrides: dict[str, Any],
    at_seconds: float | None,
    previous: Any,
) -> dict[str, Any]:
    old = previous.get("files") if isinstance(previous, dict) else None
    return {
        "key": key,
        "shot": shot,
        "quality": quality,
        "theme": theme or "",
        "overrides": {k: v if isinstance(v, (bool, int, float)) else str(v) for k, v in overrides.items()},
        "at": at_seconds,
        "files": record_files(out_dir, [f"one/{name}"], old),
    }


def _single_ok(name: object, record: object) -> bool:
    return (
        isinstance(name, str)
        and "/" not in name
        and isinstance(record, dict)
        and isinstance(record.get("key"), str)
        and isinstance(record.get("shot"), str)
        and record.get("quality") in QUALITY_NAMES
        and isinstance(record.get("theme"), str)
        and isinstance(record.get("overrides"), dict)
        and (record.get("at") is None or isinstance(record.get("at"), (int, float)))
        and isinstance(record.get("files"), dict)
    )


def single_records(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The records of renders/one/'s files that are as dtfilm writes them."""
    records = manifest.get(SINGLES)
    if not isinstance(records, dict):
        return {}
    return {name: record for name, record in records.items() if _single_ok(name, record)}


def single_command(record: dict[str, Any]) -> str:
    """The command that makes a single shot or still again as it was made."""
    if record["at"] is None:
        words = ["dtfilm", "render", record["shot"]]
    else:
        words = ["dtfilm", "still", record["shot"], "--at", f"{record['at']:g}"]
    if record["quality"] != "preview":
        words += ["--quality", record["quality"]]
    if record["theme"]:
        words += ["--theme", record["theme"]]
    for name, value in sorted(record["overrides"].items()):
        flag = "--" + str(name).replace("_", "-")
        words += [flag] if value is True else [f"--no-{flag[2:]}"] if value is False else [flag, str(value)]
    return shlex.join(words)


def single_reasons(root: Path, out_dir: Path, name: str, record: dict[str, Any], verify: bool = False) -> list[str]:
    """Why a single shot or still no longer shows its shot as the storyboard has it now."""
    chapter_id, _, beat = record["shot"].partition(":")
    reasons = []
    try:
        chapter = load_chapter(chapter_id, dict(record["overrides"]), root)
    except DtfilmError as error:
        return [f"its chapter no longer loads as it was made ({error.message})"]
    if beat not in {s.beat for s in chapter.shots}:
        return [f"its chapter has no shot {beat!r} now"]
    if chapter_key(chapter, record["quality"], record["theme"] or chapter.film.theme).key != record["key"]:
        reasons.append("its chapter changed since it was made")
    return reasons + files_reasons(record["files"], [f"one/{name}"], out_dir, verify)


def derived_lines(
    root: Path, out_dir: Path, manifest: dict[str, Any], title: str, film_theme: str, stale: set[str], verify: bool
) -> list[str]:
    """`status`'s lines for the deck and renders/one/'s files, each fresh or stale, why, and the
    command that makes it again. `stale`: the chapters a render would draw again (the deck made
    from them is stale once it does)."""
    lines = []
    reasons = deck_reasons(manifest, out_dir, title, deck_theme(film_theme), verify)
    record = deck_record(manifest)
    if reasons is not None and record is not None:
        after = [c for c in record["chapters"] if c in stale]
        if after:
            reasons.append(f"{', '.join(after)} will be rendered again")
        if reasons:
            lines.append(
                f"{'slides':<10} stale: {'; '.join(reasons)}; `dtfilm render` makes it again at its end"
                f" (or: {slides_command(record)})"
            )
        else:
            lines.append(f"{'slides':<10} fresh")
    for name, single in sorted(single_records(manifest).items()):
        why = single_reasons(root, out_dir, name, single, verify)
        state = f"stale: {'; '.join(why)}; {single_command(single)} makes it again" if why else "fresh"
        lines.append(f"{'one':<10} {name}: {state}")
    return lines
