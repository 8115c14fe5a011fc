"""film.yaml: the film's title, chapters, theme, defaults, voice, scheduler and glossary; where the project is."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dtfilm.cost import BUILTIN_CATALOG, Catalog, Value, builtin_layer
from dtfilm.cost.inputs import SECTIONS
from dtfilm.errors import DtfilmError, Where
from dtfilm.inside import CHAPTER_ID, CHAPTER_ID_CHARS
from dtfilm.numbers import Numbers
from dtfilm.paths import TemplateError
from dtfilm.phrases import Phrase
from dtfilm.storyboard.catalog import CATALOG_FILE, load_catalog
from dtfilm.storyboard.fields import checked_text, one_line, require_mapping, short_repr
from dtfilm.storyboard.layers import flag_layer, input_layer, numbers_for
from dtfilm.system.yamlsrc import Located, load_yaml
from dtfilm.voice.engine import VOICE_VARIABLE, VoiceSpec, parse_voice, voice_source

FILM_KEYS = ("title", "subtitle", "theme", "defaults", "chapters", "small_print", "voice", "scheduler", "glossary")


THEMES = ("dark", "light")


@dataclass(frozen=True)
class Film:
    path: Path
    title: str
    subtitle: str
    theme: str
    chapters: tuple[str, ...]
    small_print: str
    defaults: dict[str, Value]
    voice: VoiceSpec = field(default_factory=VoiceSpec)
    scheduler: str = ""  # the Dask scheduler to render on (dtfilm.render.cluster); empty: here
    # The film's glossary (dtfilm.storyboard.glossary), a YAML file beside film.yaml; empty: the film has
    # none, and no term is checked (a user's film opts in with `glossary: glossary.yaml`).
    glossary: str = ""
    # Where film.yaml writes its title and subtitle: templates, resolved when a chapter loads (under
    # its numbers) or a page is written (under the film's defaults and flags), errors named there.
    wheres: dict[str, Where] = field(default_factory=dict)
    # The cards, links and models its inputs name: the built-in ones and storyboard/catalog.yaml's.
    catalog: Catalog = BUILTIN_CATALOG


def shown_path(path: Path) -> str:
    """A path as errors show it: relative to the working directory where possible."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def find_root(start: Path | None = None) -> Path:
    """The project folder: the nearest parent holding storyboard/film.yaml."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "storyboard" / "film.yaml").is_file():
            return folder
    raise DtfilmError(
        "no storyboard/film.yaml here or in any parent folder; run dtfilm inside a film project",
        Where(str(here)),
    )


def film_voice(doc: Located, raw: Any, project: Path | None = None) -> VoiceSpec:
    """film.yaml's `voice:`, unless the environment names another (`--voice` sets DTFILM_VOICE
    for the command; the processes drawing its shots are handed the voice read here, SceneBrief.voice).
    A relative model path in film.yaml is the project folder's (wherever the command runs); one
    given to --voice, the working folder's."""
    chosen = os.environ.get(VOICE_VARIABLE)
    if chosen:
        source = voice_source(chosen)
        return parse_voice(chosen, Where(flag=source), source)
    return parse_voice(raw, doc.where(("voice",)), "voice", project)


# \Z, not $: `$` matches before a trailing newline ("tcp://127.0.0.1:1\n" passed)
SCHEDULER_ADDRESS = re.compile(r"(?:(?:tcp|tls)://[^\s/]+|[^\s/:]+):(\d{1,5})\Z|none\Z")


SCHEDULER_TEXT = "tcp://HOST:PORT, tls://HOST:PORT (a port 1 to 65535) or none"


def is_scheduler_address(text: str) -> bool:
    """A Dask scheduler's address (HOST:PORT, tcp:// or tls://, a port of 1 to 65535) or none."""
    match = SCHEDULER_ADDRESS.match(text)
    return match is not None and (match.group(1) is None or 1 <= int(match.group(1)) <= 65535)


def _scheduler(doc: Located, raw: Any) -> str:
    """film.yaml's `scheduler:`, a Dask scheduler's address (or `none`: render here)."""
    if raw is None:
        return ""
    if not isinstance(raw, str) or not is_scheduler_address(raw):
        raise DtfilmError(
            f"{raw!r} is not a Dask scheduler's address; valid: {SCHEDULER_TEXT}",
            doc.where(("scheduler",)),
            "scheduler",
        )
    return raw


def load_film(path: Path, voice: VoiceSpec | None = None) -> Film:
    """film.yaml at `path`. `voice`: the voice a drawing process was handed (SceneBrief.voice), in
    place of film.yaml's and the environment's (None: read them here)."""
    catalog_file = path.parent / CATALOG_FILE
    catalog = BUILTIN_CATALOG
    if catalog_file.is_file():  # the film's own cards, links and models, before any input names them
        catalog = load_catalog(catalog_file, shown_path(catalog_file))
    doc = load_yaml(path, shown_path(path))
    data = require_mapping(doc, (), doc.data if doc.data is not None else {}, FILM_KEYS)
    for key in ("title", "chapters"):
        if key not in data:
            raise DtfilmError(f"missing key {key!r}", doc.where(()), key)
    chapters = data["chapters"]
    if not isinstance(chapters, list) or not chapters:
        got = "an empty list" if chapters == [] else repr(chapters)
        raise DtfilmError(
            f"{got} is not a list of chapter ids; valid: at least one, such as [memory]",
            doc.where(("chapters",)),
            "chapters",
        )
    for i, chapter in enumerate(chapters):
        if not isinstance(chapter, str) or not CHAPTER_ID.match(chapter):
            raise DtfilmError(
                f"{short_repr(chapter)} is not a chapter id; valid: lower-case letters, digits, - and _,"
                f" at most {CHAPTER_ID_CHARS}",
                doc.where(("chapters", i)),
                f"chapters[{i}]",
            )
        if chapter in chapters[:i]:
            raise DtfilmError(
                f"{chapter!r} is listed twice (first as chapters[{chapters.index(chapter)}]); valid: each chapter once",
                doc.where(("chapters", i)),
                f"chapters[{i}]",
            )
        expected = path.parent / f"{chapter}.yaml"
        if not expected.is_file():
            raise DtfilmError(
                f"no storyboard for chapter {chapter!r}: expected {shown_path(expected)}",
                doc.where(("chapters", i)),
                f"chapters[{i}]",
            )
    theme = data.get("theme", "dark")
    if theme not in THEMES:
        raise DtfilmError(f"{theme!r} is not a theme; valid: {', '.join(THEMES)}", doc.where(("theme",)), "theme")
    defaults = require_mapping(doc, ("defaults",), data.get("defaults", {}), SECTIONS)
    return Film(
        path=path,
        title=one_line(doc, ("title",), data["title"]),
        subtitle=one_line(doc, ("subtitle",), data["subtitle"]) if "subtitle" in data else "",
        theme=theme,
        chapters=tuple(chapters),
        small_print=checked_text(doc, ("small_print",), data["small_print"]) if "small_print" in data else "",
        voice=voice if voice is not None else film_voice(doc, data.get("voice"), path.resolve().parent.parent),
        scheduler=_scheduler(doc, data.get("scheduler")),
        glossary=_glossary_file(doc, path, data.get("glossary")),
        defaults=input_layer(doc, ("defaults",), defaults, "default", catalog),
        wheres={key: doc.where((key,)) for key in ("title", "subtitle") if key in data},
        catalog=catalog,
    )


def film_phrase(film: Film, which: str, numbers: Numbers) -> Phrase | None:
    """The film's `title` or `subtitle` (a template, as a chapter's title is) under `numbers`;
    None when the film has none. A template error names film.yaml's line."""
    text = film.title if which == "title" else film.subtitle
    if not text:
        return None
    try:
        return numbers(text)
    except TemplateError as error:
        raise DtfilmError(str(error), film.wheres.get(which), which) from None


def film_titles(film: Film, overrides: dict[str, Any] | None = None) -> tuple[Phrase, Phrase | None]:
    """The film's title and subtitle as its pages show them (the gallery's heading, the deck's and
    the explorer page's titles): under the film's defaults and the flags. A text with no path in it
    is taken as written, without computing numbers."""
    overrides = dict(overrides or {})
    if "{" not in film.title + film.subtitle:
        return Phrase(film.title), Phrase(film.subtitle) if film.subtitle else None
    layers = [builtin_layer(), film.defaults, flag_layer(overrides, film.catalog)]
    numbers = numbers_for(layers, tuple(sorted(overrides.items())), film.catalog)[1]
    title = film_phrase(film, "title", numbers)
    assert title is not None  # (film.yaml must give a title)
    return title, film_phrase(film, "subtitle", numbers)


def _glossary_file(doc: Located, path: Path, raw: Any) -> str:
    """The film's glossary file name (beside film.yaml), or "" when it has none."""
    if raw is None:
        return ""
    if not isinstance(raw, str) or "/" in raw or "\\" in raw or not raw.endswith((".yaml", ".yml")):
        where = doc.where(("glossary",))
        raise DtfilmError(f"{raw!r} is not a glossary; valid: a .yaml file name beside film.yaml", where, "glossary")
    return raw  # read by `dtfilm check` (dtfilm.storyboard.glossary), which says so when it is missing
