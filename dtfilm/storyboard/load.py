"""Load and validate a chapter: its storyboard over film.yaml and the flags, its shots, its captions
resolved against the cost model."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dtfilm.cost import Catalog, Value, builtin_layer
from dtfilm.cost.inputs import SECTIONS
from dtfilm.errors import DtfilmError, Where, did_you_mean
from dtfilm.inside import CHAPTER_ID, CHAPTER_ID_CHARS
from dtfilm.numbers import Numbers
from dtfilm.phrases import OverrideItems, Phrase
from dtfilm.storyboard.fields import one_line, require_mapping, short_repr
from dtfilm.storyboard.film import Film, film_phrase, find_root, load_film, shown_path
from dtfilm.storyboard.kinds import KindSpec
from dtfilm.storyboard.layers import flag_layer, input_layer, numbers_for, template
from dtfilm.storyboard.shot import Shot, load_shot
from dtfilm.system.yamlsrc import Located, dotted, load_yaml
from dtfilm.voice.engine import VoiceSpec

CHAPTER_KEYS = ("id", "title", "subtitle", "poster", "shots", *SECTIONS)


@dataclass(frozen=True)
class Chapter:
    id: str
    title: Phrase  # a template like a caption: "{model.label} on {cards:int} cards"
    subtitle: Phrase | None
    path: Path
    film: Film
    values: dict[str, Value]
    numbers: Numbers
    shots: tuple[Shot, ...]
    overrides: OverrideItems
    poster: str | None = None  # the beat whose last frame is the poster (None: the default)
    # the film's title and subtitle under this chapter's numbers (a title card's default subtitle)
    film_title: Phrase | None = None
    film_subtitle: Phrase | None = None

    @property
    def warnings(self) -> list[str]:
        return list(self.numbers.data.get("warnings", []))


def chapter_title_phrases(film: Film, overrides: OverrideItems = ()) -> dict[str, Phrase]:
    """Each chapter's title as drawn. A title is a template like a caption; one with no path in
    it is read from its storyboard without computing its numbers (the common case, and fast),
    one with a path is its chapter loaded under the same `overrides` as the chapter drawing it."""
    titles = {}
    for chapter in film.chapters:
        path = film.path.parent / f"{chapter}.yaml"
        data = load_yaml(path, shown_path(path)).data
        raw = data.get("title", chapter) if isinstance(data, dict) else chapter
        if isinstance(raw, str) and "{" in raw:
            titles[chapter] = load_chapter(path, dict(overrides), drawable=False).title
        else:
            titles[chapter] = Phrase(str(raw))
    return titles


def chapter_titles(film: Film) -> dict[str, str]:
    """Each chapter's title as text (a page's, a snippet's, a manifest's), under the storyboards'
    own numbers."""
    return {chapter: phrase.text for chapter, phrase in chapter_title_phrases(film).items()}


def chapter_path(spec: str, root: Path | None = None) -> Path:
    """A chapter id (looked up in the project's storyboard/) or a path to its YAML."""
    candidate = Path(spec)
    if candidate.suffix in (".yaml", ".yml") or os.sep in spec:
        return candidate.resolve()
    if not CHAPTER_ID.match(spec):
        raise DtfilmError(
            f"{short_repr(spec)} is neither a chapter id nor a .yaml path; valid: lower-case letters, digits, - and"
            f" _, at most {CHAPTER_ID_CHARS}",
            Where(spec[:80]),
        )
    root = root or find_root()
    path = root / "storyboard" / f"{spec}.yaml"
    if not path.is_file():
        film = load_film(root / "storyboard" / "film.yaml")
        raise DtfilmError(
            f"no chapter {spec!r}{did_you_mean(spec, film.chapters)}; valid: {', '.join(film.chapters)}",
            Where(shown_path(path)),
        )
    return path


def film_for(path: Path) -> Path:
    """The film.yaml a storyboard merges with: the one beside it, else the project's found
    by walking up from the storyboard, else from the working directory."""
    beside = path.parent / "film.yaml"
    if beside.is_file():
        return beside
    for start in (path.parent, None):
        try:
            return find_root(start) / "storyboard" / "film.yaml"
        except DtfilmError:
            continue
    raise DtfilmError(
        "no film.yaml beside it, and no storyboard/film.yaml above it or here; valid: a storyboard"
        " inside a film project, or run dtfilm inside one",
        Where(shown_path(path)),
    )


def load_chapter(
    spec: str | Path,
    overrides: dict[str, Any] | None = None,
    root: Path | None = None,
    drawable: bool = True,
    voice: VoiceSpec | None = None,
    kinds: Mapping[str, KindSpec] | None = None,
) -> Chapter:
    """Load one chapter with the film's defaults below it and `overrides` (flags) above it.
    `drawable` checks that every shot has what it draws (tp of 2 or more for split matrices);
    `dtfilm estimate` and `plan` ask only for numbers and skip it, and check the shots without the
    flags (the storyboard as written). `voice`: as load_film's. `kinds`: the shot kinds a shot
    may name, by name (None: every kind dtfilm has, dtfilm.shots.registry.KINDS)."""
    path = Path(spec).resolve() if isinstance(spec, Path) else chapter_path(spec, root)
    film = load_film(film_for(path), voice)
    doc = load_yaml(path, shown_path(path))
    data = _chapter_mapping(doc, path)
    overrides = dict(overrides or {})
    override_items = tuple(sorted(overrides.items()))
    catalog = film.catalog
    chapter_layer = input_layer(doc, (), data, "storyboard", catalog)
    layers = [builtin_layer(), film.defaults, chapter_layer, flag_layer(overrides, catalog)]
    try:
        values, numbers = numbers_for(layers, override_items, catalog)
    except DtfilmError as error:
        if error.where is not None and error.where.file is None and error.where.flag is None:
            raise DtfilmError(error.message, doc.where(()), error.key) from None
        raise
    shots = _shots(doc, data["shots"], layers, overrides, numbers, catalog, drawable, kinds)
    poster = data.get("poster")
    if poster is not None and poster not in (beats := [s.beat for s in shots]):
        raise DtfilmError(
            f"{poster!r} is not a beat of this chapter; valid: {', '.join(beats)}", doc.where(("poster",)), "poster"
        )
    return Chapter(
        id=data["id"],
        title=template(doc, ("title",), one_line(doc, ("title",), data["title"]), numbers),
        subtitle=(
            template(doc, ("subtitle",), one_line(doc, ("subtitle",), data["subtitle"]), numbers)
            if "subtitle" in data
            else None
        ),
        path=path,
        film=film,
        values=values,
        numbers=numbers,
        shots=shots,
        overrides=override_items,
        poster=poster,
        film_title=film_phrase(film, "title", numbers),
        film_subtitle=film_phrase(film, "subtitle", numbers),
    )


def _chapter_mapping(doc: Located, path: Path) -> dict[str, Any]:
    """The chapter's storyboard: known keys, the ones it must have, and an id that is its file's name."""
    data = require_mapping(doc, (), doc.data if doc.data is not None else {}, CHAPTER_KEYS)
    for key in ("id", "title", "shots"):
        if key not in data:
            raise DtfilmError(f"missing key {key!r}", doc.where(()), key)
    if data["id"] != path.stem:
        raise DtfilmError(f"id {data['id']!r} must match the file name {path.stem!r}", doc.where(("id",)), "id")
    return data


def _shots(
    doc: Located,
    shots_raw: Any,
    layers: list[dict[str, Value]],
    overrides: dict[str, Any],
    numbers: Numbers,
    catalog: Catalog,
    drawable: bool,
    kinds: Mapping[str, KindSpec] | None,
) -> tuple[Shot, ...]:
    """The chapter's shots, each beat named once."""
    if not isinstance(shots_raw, list) or not shots_raw:
        raise DtfilmError("expected a list of shots", doc.where(("shots",)), "shots")
    if drawable:
        shot_layers, shot_overrides, shot_numbers = layers, overrides, numbers
    else:
        # Numbers only (estimate, plan): the shots are checked as the storyboard writes them and
        # the flags move only the estimate, so `--tp 4` is not refused for a shot it cannot draw.
        shot_layers, shot_overrides = [*layers[:-1], {}], {}
        shot_numbers = numbers_for(shot_layers, (), catalog)[1] if overrides else numbers
    shots = tuple(
        load_shot(doc, i, raw, shot_numbers, shot_layers, shot_overrides, catalog, drawable, kinds)
        for i, raw in enumerate(shots_raw)
    )
    beats = [s.beat for s in shots]
    for i, shot in enumerate(shots):
        # the second use is the one to rename: name its line, and the first's
        if shot.beat in beats[:i]:
            first = beats.index(shot.beat)
            key_path = ("shots", i, "beat")
            raise DtfilmError(
                f"beat {shot.beat!r} is used twice (first by shots[{first}], "
                f"line {doc.where(('shots', first, 'beat')).line}); valid: a beat no other shot of the chapter uses",
                doc.where(key_path),
                dotted(key_path),
            )
    return shots


def spoken_and_written(chapter: Chapter) -> Iterator[tuple[str, str, Phrase]]:
    """Every phrase the storyboard gives (beat, which, phrase): the chapter's subtitle, each
    shot's caption, narration (the subtitles too), subtitle and comparison row labels."""
    yield "title", "title", chapter.title
    if chapter.subtitle is not None:
        yield "title", "subtitle", chapter.subtitle
    for shot in chapter.shots:
        for which, phrase in (("caption", shot.caption), ("narration", shot.narration)):
            if phrase is not None:
                yield shot.beat, which, phrase
        for key, value in shot.options.items():
            if isinstance(value, Phrase):
                yield shot.beat, key, value
            elif isinstance(value, tuple):  # a per-value key of a sweep: a Phrase per value
                for i, item in enumerate(value):
                    if isinstance(item, Phrase):
                        yield shot.beat, f"{key}[{i}]", item
        for i, (row_label, _) in enumerate(shot.options.get("rows", [])):
            yield shot.beat, f"rows[{i}].label", row_label
