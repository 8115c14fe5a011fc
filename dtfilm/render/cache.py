"""The chapter cache: what a clip depends on, and why a chapter is stale.

A chapter's key hashes its parsed storyboard, its resolved inputs (the film's defaults merged
in), every number its shots show, the quality, the theme, and dtfilm's own code and Manim's
version. `renders/manifest.json` records each rendered chapter's key and parts, and each file
it wrote (size, time, digest: dtfilm.system.records). The manifest is written last, after every file it
records: it is the render's commit point, and a file that does not match its record (a render
that failed after writing it, say) makes its chapter stale. Nothing here imports manim, so
checking a film where nothing changed is quick.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from dtfilm.render.job import RenderJob
from dtfilm.shots.registry import KINDS
from dtfilm.storyboard import Chapter, Film, load_chapter
from dtfilm.storyboard.load import chapter_title_phrases
from dtfilm.system.atomic import write_text_atomic
from dtfilm.system.manifest_schema import checked_manifest, warn_once
from dtfilm.system.records import mismatch, record_of
from dtfilm.system.yamlsrc import load_yaml
from dtfilm.units import format_si
from dtfilm.userfile import read_back
from dtfilm.voice.engine import voice_key

MANIFEST = "manifest.json"
NOT_RENDERED = "not rendered yet"  # why a chapter the manifest does not list is stale
PACKAGE = Path(__file__).resolve().parents[1]


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# Parts of the package no chapter runs: the explorer page (`dtfilm page`, keyed by its own
# picture code, dtfilm.publish.explore.picture), so that work on the page leaves the film's shots fresh.
NOT_FILM_CODE = ("publish/explore",)


@cache
def code_digest() -> str:
    """dtfilm's drawing code (every module of the package but NOT_FILM_CODE) and the Manim it
    runs on."""
    h = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        if any(path.relative_to(PACKAGE).is_relative_to(part) for part in NOT_FILM_CODE):
            continue
        h.update(str(path.relative_to(PACKAGE)).encode())
        h.update(path.read_bytes())
    h.update(metadata.version("manim").encode())
    return h.hexdigest()[:16]


def chapter_numbers(chapter: Chapter) -> list[dict[str, Any]]:
    """Every estimate a chapter's shots draw from: its own, each shot's, sweeps' and rows'.
    Where each input was written is left out: it is shown relative to the working directory,
    and a key must not change with the folder a command runs in (a docs build runs elsewhere)."""
    out = [_placeless(chapter.numbers.data)]
    for shot in chapter.shots:
        out.append(_placeless(shot.numbers.data))
        out += [_placeless(n.data) for n in (*shot.steps, *shot.also_steps)]
        out += [_placeless(n.data) for _, n in shot.options.get("rows", [])]
    return out


def _placeless(data: dict[str, Any]) -> dict[str, Any]:
    inputs = {name: {k: v for k, v in value.items() if k != "where"} for name, value in data["inputs"].items()}
    return {**data, "inputs": inputs}


def input_values(chapter: Chapter) -> dict[str, Any]:
    return {name: value.value for name, value in sorted(chapter.values.items())}


@dataclass(frozen=True)
class ChapterKey:
    chapter: str
    parts: dict[str, str]
    inputs: dict[str, Any] = field(default_factory=dict)
    # what the chapter takes from the film, as text (its title, subtitle, chapters' titles): so
    # that `status` says which of them changed, not only that the film's part did
    film: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return _digest(self.parts)


def film_drawn(chapter: Chapter) -> dict[str, Any]:
    """What a chapter draws from the film rather than its own storyboard: the film's title (a
    title card's default subtitle) and every chapter's id and title (the ledger's map)."""
    film = chapter.film
    drawn: dict[str, Any] = {"title": film.title, "subtitle": film.subtitle}
    if any("chapters" in KINDS[shot.kind].reads for shot in chapter.shots):
        drawn["chapters"] = {c: t.text for c, t in chapter_title_phrases(film, chapter.overrides).items()}
    return drawn


def _film_record(drawn: dict[str, Any]) -> dict[str, str]:
    """What a chapter takes from the film as flat text, as the manifest records it."""
    record = {"title": str(drawn["title"]), "subtitle": str(drawn["subtitle"])}
    if "chapters" in drawn:
        record["chapters"] = json.dumps(drawn["chapters"], sort_keys=True)
    return record


_FILM_WORDS = {"title": "the film's title", "subtitle": "the film's subtitle", "chapters": "the chapters' titles"}


def film_changes(old: Any, new: dict[str, str], values: bool = True) -> str:
    """Which of what a chapter takes from the film changed, in words ("the film's title changed:
    'A' → 'B'", without the texts unless `values`); the old words when the manifest did not
    record it."""
    if not isinstance(old, dict):
        return _PART_WORDS["film"]
    changed = [key for key in _FILM_WORDS if old.get(key) != new.get(key)]
    if not changed:
        return _PART_WORDS["film"]
    said = []
    for key in changed:
        if key == "chapters" or not values:
            said.append(f"{_FILM_WORDS[key]} changed")
        else:
            said.append(f"{_FILM_WORDS[key]} changed: {old.get(key, '')!r} → {new.get(key, '')!r}")
    return "; ".join(said)


def chapter_key(chapter: Chapter, quality: str, theme: str) -> ChapterKey:
    inputs = input_values(chapter)
    parts = {
        "film": _digest(film_drawn(chapter)),
        "storyboard": _digest(load_yaml(chapter.path).data),
        "inputs": _digest(inputs),
        "numbers": _digest(chapter_numbers(chapter)),
        "quality": quality,
        "theme": theme,
        "code": code_digest(),
        "voice": voice_key(chapter.film.voice),
    }
    return ChapterKey(chapter.id, parts, inputs, _film_record(film_drawn(chapter)))


def outputs(chapter_id: str) -> list[str]:
    return [
        f"{chapter_id}.mp4",
        f"{chapter_id}.png",
        f"{chapter_id}.srt",
        f"{chapter_id}.vtt",
        f"{chapter_id}.numbers.json",
    ]


MAX_MANIFEST_BYTES = 64 * 2**20


def read_manifest(out_dir: Path) -> dict[str, Any]:
    """The manifest as dtfilm wrote it, every entry checked (dtfilm.system.manifest_schema): a file
    that is not one, or an entry that is not, counts as missing, with one warning, and what it
    described is rendered again. Nothing it names outside the renders folder is used."""
    path = out_dir / MANIFEST
    text = read_back(path, MAX_MANIFEST_BYTES)
    try:
        data = json.loads(text) if text is not None else {} if not os.path.lexists(path) else None
    except (ValueError, RecursionError):
        data = None
    manifest, problem = checked_manifest(data, out_dir)
    if problem is not None:
        warn_once(f"{path}: {problem}; treated as missing (rendered again)")
    return manifest


def write_manifest(out_dir: Path, manifest: dict[str, Any]) -> None:
    write_text_atomic(out_dir / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True, default=str))


_PART_WORDS = {
    "storyboard": "the storyboard's text changed",
    "film": "the film's title or its chapters changed",
    "numbers": "the cost model's numbers changed",
    "theme": "the theme changed",
    "code": "dtfilm's drawing code changed",
    "voice": "the voice changed",
}


def stale_reasons(key: ChapterKey, manifest: dict[str, Any], out_dir: Path, verify: bool = False) -> list[str]:
    """Why a chapter must be rendered again; empty when it is fresh. Its outputs must match
    what the manifest records of them (dtfilm.system.records; every digest with `verify`): one that
    does not (a render that failed after writing it, a truncated or edited file) makes it stale."""
    entry = manifest["chapters"].get(key.chapter)
    if entry is None:
        return [NOT_RENDERED]
    reasons = []
    old_parts = entry.get("parts", {})
    if old_parts.get("quality") != key.parts["quality"]:
        reasons.append(f"rendered at {old_parts.get('quality')} quality, asked for {key.parts['quality']}")
    if old_parts.get("inputs") != key.parts["inputs"]:
        old_inputs = entry.get("inputs", {})
        recorded = {name: _as_recorded(value) for name, value in key.inputs.items()}
        changes = [
            f"{name} {_shown(old_inputs.get(name))} → {_shown(value)}"
            for name, value in recorded.items()
            if old_inputs.get(name) != value
        ]
        reasons.append("inputs changed: " + (", ".join(changes) if changes else "resolved values"))
    for part, words in _PART_WORDS.items():
        if old_parts.get(part) != key.parts[part] and not (part == "numbers" and reasons):
            if part == "voice":
                words = f"the voice changed: {old_parts.get('voice', 'none recorded')} → {key.parts['voice']}"
            if part == "film":
                words = film_changes(entry.get("film"), key.film)
            reasons.append(words)
    return reasons + output_reasons(entry, key.chapter, out_dir, verify)


def _as_recorded(value: Any) -> Any:
    """An input as the manifest records it (written as JSON, a value that is not JSON as its text:
    a global batch as "8 sequences"), so that an unchanged input is not reported as changed."""
    return json.loads(json.dumps(value, default=str))


def _shown(value: Any) -> str:
    """An input as a reason shows it: a count as people write it (params 6.74B, not 6738415616.0)."""
    if isinstance(value, float) and abs(value) >= 1e4:
        return format_si(value)
    return repr(value)


def output_names(entry: dict[str, Any], chapter_id: str) -> list[str]:
    """Every file a chapter's render wrote (relative to the renders folder): its clip and
    sidecars, and each shot's clip and still."""
    clips = [name for shot in entry.get("shots", []) for name in (shot["clip"], shot["still"])]
    return [*outputs(chapter_id), *clips]


def output_reasons(entry: dict[str, Any], chapter_id: str, out_dir: Path, verify: bool = False) -> list[str]:
    """Why a rendered chapter's files are not what its render wrote: missing, or changed since."""
    files = entry.get("files")
    names = output_names(entry, chapter_id)
    if not isinstance(files, dict):  # a manifest from before outputs were recorded
        missing = [name for name in names if not (out_dir / name).is_file()]
        return [f"missing {', '.join(missing)}" if missing else "its outputs were not recorded when rendered"]
    return files_reasons(files, names, out_dir, verify)


# Text beside a clip that reaches a viewer or a page (subtitles, chapter titles, numbers): a few
# kB each, so always checked against its digest, not trusted for its size and time alone (an
# edited .srt with its old size and time reached the film's subtitles while it was "fresh").
TEXT_SUFFIXES = (".srt", ".vtt", ".json")


def files_reasons(files: dict[str, Any], names: list[str], out_dir: Path, verify: bool = False) -> list[str]:
    """Which of `names` are missing, and which changed since `files` recorded them (every
    digest with `verify`; the text files' always)."""
    found = {name: mismatch(out_dir / name, files.get(name), verify or name.endswith(TEXT_SUFFIXES)) for name in names}
    missing = [name for name, why in found.items() if why == "missing"]
    changed = [name for name, why in found.items() if why in ("changed", "unrecorded")]
    reasons = [f"missing {', '.join(missing)}"] if missing else []
    if changed:
        reasons.append(f"{', '.join(changed)} changed since {'it was' if len(changed) == 1 else 'they were'} rendered")
    return reasons


def record_files(out_dir: Path, names: list[str], previous: Any) -> dict[str, Any]:
    """The manifest's record of each of `names` as written (dtfilm.system.records); a file unchanged
    since `previous` recorded it is not read again."""
    old = previous if isinstance(previous, dict) else {}
    return {name: record_of(out_dir / name, old.get(name)) for name in names}


def film_key(keys: list[ChapterKey]) -> str:
    return _digest([[k.chapter, k.key] for k in keys])


def clip_stale_reasons(root: Path, out_dir: Path, chapter_id: str) -> list[str]:
    """Why a rendered clip no longer matches its storyboard, at the quality and theme it was
    rendered at (empty when it does): what the docs integrations warn about."""
    manifest = read_manifest(out_dir)
    entry = manifest["chapters"].get(chapter_id)
    if entry is None:
        return ["not rendered yet"]
    parts = entry.get("parts", {})
    key = chapter_key(load_chapter(chapter_id, root=root), parts.get("quality", "preview"), parts.get("theme", "dark"))
    return stale_reasons(key, manifest, out_dir)


@dataclass(frozen=True)
class RenderWork:
    """What a render run would do: every chapter's key and why each stale one is stale."""

    film: Film
    job: RenderJob  # the project, flags, quality, folder, theme and voice it renders with
    chapters: list[Chapter]
    keys: dict[str, ChapterKey]
    reasons: dict[str, list[str]]
    manifest: dict[str, Any]

    def chapter(self, chapter_id: str) -> Chapter:
        return next(c for c in self.chapters if c.id == chapter_id)

    @property
    def stale(self) -> list[Chapter]:
        return [c for c in self.chapters if self.reasons[c.id]]

    @property
    def film_is_named_part(self) -> bool:
        """Whether the run is of named chapters, not the whole film."""
        return [c.id for c in self.chapters] != list(self.film.chapters)
