"""Load and validate the film and its chapters; resolve captions against the cost model."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dtfilm.claims import ClaimError, ClaimResult
from dtfilm.cost import BUILTIN_CATALOG, Catalog, Value, builtin_layer, estimate, parse_value, resolve
from dtfilm.cost.batch import parse_global_batch
from dtfilm.cost.inputs import SECTIONS, SPECS, CardsNotWhole, build_setup, merge_overrides
from dtfilm.cost.planner import evaluate, fastest_with_room, plan
from dtfilm.errors import DtfilmError, Where, did_you_mean
from dtfilm.inside import CHAPTER_ID, CHAPTER_ID_CHARS
from dtfilm.numbers import Numbers
from dtfilm.paths import TemplateError
from dtfilm.phrases import Fact, OverrideItems, Phrase
from dtfilm.storyboard import tree
from dtfilm.storyboard.catalog import CATALOG_FILE, load_catalog
from dtfilm.storyboard.claims_context import claim_numbers
from dtfilm.storyboard.kinds import KINDS, MAX_ROWS, PICK_KEYS, PLAN_INPUTS, ROW_KEYS, SHOT_KEYS, SWEEP_KEYS, KindSpec
from dtfilm.storyboard.marks import Marks, split_marks
from dtfilm.system.fonts import FONTS, missing_glyph
from dtfilm.system.yamlsrc import KeyPath, Located, dotted, load_yaml
from dtfilm.textcheck import character_name, hidden_character
from dtfilm.voice.engine import VOICE_VARIABLE, VoiceSpec, parse_voice, voice_source

FILM_KEYS = ("title", "subtitle", "theme", "defaults", "chapters", "small_print", "voice", "scheduler", "glossary")
CHAPTER_KEYS = ("id", "title", "subtitle", "poster", "shots", *SECTIONS)
THEMES = ("dark", "light")
_ID = CHAPTER_ID  # a chapter's id or a shot's beat: also a file name in renders/
MAX_SHOT_SECONDS = 120.0


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


@dataclass(frozen=True)
class Shot:
    index: int
    kind: str
    beat: str
    caption: Phrase | None
    narration: Phrase | None
    duration: float | None
    where: Where
    numbers: Numbers  # the chapter's, or with the shot's `with:` inputs on top
    options: dict[str, Any] = field(default_factory=dict)
    steps: tuple[Numbers, ...] = ()  # a sweep's numbers, one per value
    also_steps: tuple[Numbers, ...] = ()  # the same steps under the sweep's `also:` inputs
    marks: Marks = ()  # the narration's marks: (name, offset in narration.text)


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


def _require_mapping(doc: Located, path: KeyPath, value: Any, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DtfilmError(f"expected a mapping with keys {', '.join(allowed)}", doc.where(path), dotted(path))
    for key in value:
        if key not in allowed:
            raise DtfilmError(
                f"unknown key {key!r}{did_you_mean(key, allowed)}; valid: {', '.join(allowed)}",
                doc.where((*path, key)),
                dotted((*path, key)),
            )
    return value


def _short_repr(value: object, width: int = 60) -> str:
    """A value as an error quotes it, shortened past `width` characters (a 300-character id)."""
    text = repr(value)
    return text if len(text) <= width else f"{text[: width - 1]}… ({len(str(value)):,} characters)"


def _text(doc: Located, path: KeyPath, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DtfilmError(
            f"expected text, got {value!r}; valid: words in quotes, a number in them named by a template"
            ' ("{params:si} parameters")',
            doc.where(path),
            dotted(path),
        )
    if (hidden := hidden_character(value)) is not None:
        raise DtfilmError(
            f"text holds {character_name(hidden)}, which changes what is shown without being seen;"
            " valid: visible text (write the words as they should read)",
            doc.where(path),
            dotted(path),
        )
    if path[-1] != "narration" and (missing := missing_glyph(value)) is not None:  # narration is heard
        raise DtfilmError(
            f"text holds {missing!r} ({character_name(missing)}), which the film's fonts"
            f" ({', '.join(FONTS)}) cannot draw; valid: characters they have (fc-list shows them)",
            doc.where(path),
            dotted(path),
        )
    return value


# A line break or control character in a title: the chapter markers (film.chapters.vtt), the
# gallery's headings and the terminal show a title as one line, and a title that was
# "x\n00:00:00.000 --> 09:00:00.000" became a forged cue of its own there.
_NOT_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _one_line(doc: Located, path: KeyPath, value: Any) -> str:
    """Text (as _text) of one line: a title, shown on one line wherever it goes."""
    text = _text(doc, path, value)
    found = _NOT_ONE_LINE.search(text)
    if found is not None:
        raise DtfilmError(
            f"a line break or control character ({found.group()!r}) in a title; valid: one line of text",
            doc.where(path),
            dotted(path),
        )
    return text


def _input_layer(
    doc: Located, root: KeyPath, sections: dict[str, Any], source: str, catalog: Catalog
) -> dict[str, Value]:
    layer: dict[str, Value] = {}
    for section in SECTIONS:
        if section not in sections:
            continue
        allowed = tuple(n for n, s in SPECS.items() if s.section == section)
        if section == "model":
            allowed = ("preset", *[a for a in allowed if a != "model"])
        items = _require_mapping(doc, (*root, section), sections[section], allowed)
        for key, raw in items.items():
            name = "model" if (section, key) == ("model", "preset") else key
            path = (*root, section, key)
            try:
                layer[name] = parse_value(name, raw, source, doc.where(path), catalog)
            except DtfilmError as error:
                raise DtfilmError(error.message, doc.where(path), dotted(path)) from None
    return layer


def film_voice(doc: Located, raw: Any, project: Path | None = None) -> VoiceSpec:
    """film.yaml's `voice:`, unless the environment names another (`--voice` sets DTFILM_VOICE
    for the command; the processes drawing its shots are handed the voice read here, DrawPlan.voice).
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
    """film.yaml at `path`. `voice`: the voice a drawing process was handed (DrawPlan.voice), in
    place of film.yaml's and the environment's (None: read them here)."""
    catalog_file = path.parent / CATALOG_FILE
    catalog = BUILTIN_CATALOG
    if catalog_file.is_file():  # the film's own cards, links and models, before any input names them
        catalog = load_catalog(catalog_file, shown_path(catalog_file))
    doc = load_yaml(path, shown_path(path))
    data = _require_mapping(doc, (), doc.data if doc.data is not None else {}, FILM_KEYS)
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
        if not isinstance(chapter, str) or not _ID.match(chapter):
            raise DtfilmError(
                f"{_short_repr(chapter)} is not a chapter id; valid: lower-case letters, digits, - and _,"
                f" at most {CHAPTER_ID_CHARS}",
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
    defaults = _require_mapping(doc, ("defaults",), data.get("defaults", {}), SECTIONS)
    return Film(
        path=path,
        title=_one_line(doc, ("title",), data["title"]),
        subtitle=_one_line(doc, ("subtitle",), data["subtitle"]) if "subtitle" in data else "",
        theme=theme,
        chapters=tuple(chapters),
        small_print=_text(doc, ("small_print",), data["small_print"]) if "small_print" in data else "",
        voice=voice if voice is not None else film_voice(doc, data.get("voice"), path.resolve().parent.parent),
        scheduler=_scheduler(doc, data.get("scheduler")),
        glossary=_glossary_file(doc, path, data.get("glossary")),
        defaults=_input_layer(doc, ("defaults",), defaults, "default", catalog),
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


def flag_layer(overrides: dict[str, Any], catalog: Catalog = BUILTIN_CATALOG) -> dict[str, Value]:
    """Command-line style overrides ({"cards": 16}) as a layer of inputs, names `catalog`'s."""
    layer = {}
    for name, raw in overrides.items():
        if name not in SPECS:
            raise DtfilmError(f"unknown input {name!r}; valid: {', '.join(SPECS)}", Where(flag=f"--{name}"))
        flag = "--" + name.replace("_", "-")
        layer[name] = parse_value(name, raw, "flag", Where(flag=flag), catalog)
    return layer


def numbers_for(
    layers: list[dict[str, Value]], overrides: OverrideItems, catalog: Catalog
) -> tuple[dict[str, Value], Numbers]:
    values = resolve(layers, catalog)
    return values, Numbers(estimate(values, catalog), overrides)


def _template(doc: Located, path: KeyPath, raw: Any, numbers: Numbers) -> Phrase:
    text = _text(doc, path, raw)
    try:
        return numbers(text)
    except TemplateError as error:
        raise DtfilmError(str(error), doc.where(path), dotted(path)) from None


def input_paths() -> dict[str, str]:
    """Storyboard paths of the cost model's inputs ("cluster.cards" -> "cards")."""
    paths = {f"{spec.section}.{name}": name for name, spec in SPECS.items()}
    paths["model.preset"] = paths.pop("model.model")
    return paths


def _input_name(doc: Located, path: KeyPath, target: Any) -> str:
    paths = input_paths()
    if not isinstance(target, str) or target not in paths:  # (a list is no name, and unhashable)
        # a bare name ('cards', as the flag is --cards) means its one path: say which
        bare = [
            full for full, name in paths.items() if isinstance(target, str) and target in (name, full.split(".")[-1])
        ]
        meant = f" (did you mean {bare[0]!r}?)" if len(bare) == 1 else did_you_mean(target, paths)
        raise DtfilmError(
            f"{target!r} is not an input{meant}; valid: {', '.join(sorted(paths))}", doc.where(path), dotted(path)
        )
    return paths[target]


def _with_layer(doc: Located, path: KeyPath, raw: Any, catalog: Catalog) -> tuple[dict[str, Any], dict[str, Value]]:
    """A mapping of inputs (`with:`, `also:`, a sweep step): as flag-style overrides, and
    parsed into a layer whose values name their own line."""
    if not isinstance(raw, dict) or not raw:
        raise DtfilmError("expected a mapping such as {plan.zero: 0}", doc.where(path), dotted(path))
    overrides, layer = {}, {}
    for key, value in raw.items():
        name = _input_name(doc, (*path, key), key)
        try:
            layer[name] = parse_value(name, value, "flag", doc.where((*path, key)), catalog)
        except DtfilmError as error:  # named where it is written (shots[3].with.plan.zero), not as a flag
            raise DtfilmError(error.message, doc.where((*path, key)), dotted((*path, key))) from None
        overrides[name] = value
    return overrides, layer


def _sweep(
    doc: Located,
    path: KeyPath,
    data: dict[str, Any],
    layers: list[dict[str, Value]],
    overrides: dict[str, Any],
    catalog: Catalog,
) -> tuple[dict[str, Any], tuple[Numbers, ...], tuple[Numbers, ...]]:
    """A sweep's steps: `set` with scalar `values`, or `values` that are mappings of inputs
    (several inputs moving together). `also` adds a second configuration to every step."""
    values = data.get("values")
    if not isinstance(values, list) or not 2 <= len(values) <= 8:
        # what was written, and the two keys a sweep takes: `values` alone was named before,
        # even when both were missing
        got = "missing key 'values'" if values is None else f"{values!r} is not a list of 2 to 8 values"
        raise DtfilmError(
            f"{got}; valid: set: an input (cluster.cards) and values: 2 to 8 of its values ([2, 4, 8]),"
            " or values alone as mappings of inputs ([{plan.zero: 1}, {plan.zero: 3}])",
            doc.where((*path, "values")),
            dotted((*path, "values")),
        )
    name = _input_name(doc, (*path, "set"), data["set"]) if "set" in data else None
    also, also_layer = _with_layer(doc, (*path, "also"), data["also"], catalog) if "also" in data else ({}, {})
    steps, seconds, refused = [], [], []
    for i, raw in enumerate(values):
        here = (*path, "values", i)
        if name is not None and isinstance(raw, (dict, list)):
            # a mapping (or list) is no value of one input: `set` and mappings are two ways to sweep
            got = "a mapping of inputs" if isinstance(raw, dict) else "a list"
            raise DtfilmError(
                f"{got} is not a value of {data['set']}; valid: with `set`, each value is one of its values"
                f" ([2, 4, 8]); for mappings of inputs ({{training.micro_batches: 4}}), leave `set` out",
                doc.where(here),
                dotted(here),
            )
        if name is not None:
            try:
                change, layer = {name: raw}, {name: parse_value(name, raw, "flag", doc.where(here), catalog)}
            except DtfilmError as error:
                raise DtfilmError(error.message, doc.where(here), dotted(here)) from None
        elif isinstance(raw, dict):
            change, layer = _with_layer(doc, here, raw, catalog)
        else:
            raise DtfilmError(
                "without `set`, each value is a mapping of inputs, such as {training.micro_batches: 4}",
                doc.where(here),
                dotted(here),
            )
        try:
            step_overrides = merge_overrides(overrides, change)
            _, numbers = numbers_for([*layers, layer], tuple(sorted(step_overrides.items())), catalog)
            if also:
                also_overrides = merge_overrides(step_overrides, also)
                _, second = numbers_for([*layers, layer, also_layer], tuple(sorted(also_overrides.items())), catalog)
                seconds.append(second)
        except CardsNotWhole as error:  # every step's, then one message
            refused.append((here, error))
            continue
        except DtfilmError as error:
            raise DtfilmError(error.message, doc.where(here), dotted(here)) from None
        steps.append(numbers)
    if refused:
        raise _cards_for_every_step(doc, refused, steps)
    options = {"set": name, "values": [s.get(f"inputs.{name}") for s in steps] if name else list(values)}
    return options, tuple(steps), tuple(seconds)


def _cards_for_every_step(
    doc: Located, refused: list[tuple[KeyPath, CardsNotWhole]], taken: list[Numbers]
) -> DtfilmError:
    """One error for a sweep whose steps do not fit the card count: the first step's, and where
    more than one is refused, the card counts that every step takes."""
    here, first = refused[0]
    if len(refused) == 1:
        return DtfilmError(first.message, doc.where(here), dotted(here))
    groups = [error.group_cards for _, error in refused]
    groups += [int(n.get("plan.tp") * n.get("plan.pp") * n.get("plan.cp")) for n in taken]
    others = ", ".join(dotted(path).rsplit(".", 1)[-1] for path, _ in refused[1:])
    return DtfilmError(
        f"{first.message}; {others} too: card counts every step takes are multiples of {math.lcm(*groups)}",
        doc.where(here),
        dotted(here),
    )


def _shot(
    doc: Located,
    index: int,
    raw: Any,
    numbers: Numbers,
    layers: list[dict[str, Value]],
    overrides: dict[str, Any],
    catalog: Catalog,
    drawable: bool = True,
) -> Shot:
    path: KeyPath = ("shots", index)
    if not isinstance(raw, dict) or "kind" not in raw:
        raise DtfilmError("a shot needs a kind", doc.where(path), dotted(path))
    kind = raw["kind"]
    if not isinstance(kind, str) or kind not in KINDS:  # (a list is no name, and unhashable)
        raise DtfilmError(
            f"unknown shot kind {kind!r}{did_you_mean(kind, KINDS)}; valid: {', '.join(KINDS)}",
            doc.where((*path, "kind")),
            dotted((*path, "kind")),
        )
    spec = KINDS[kind]
    extra = (
        *spec.keys,
        *(SWEEP_KEYS if spec.sweep else ()),
        *(("rows",) if spec.rows else ()),
        *(PICK_KEYS if spec.pick else ()),
    )
    _require_mapping(doc, path, raw, (*SHOT_KEYS, *extra))
    flags = dict(overrides)  # the user's flags, before the shot's `with:` joins them
    if "with" in raw:
        # The rule: a flag beats a shot's `with:` (it sets that input in every shot); a sweep's
        # values, its `also:` and a comparison's rows keep theirs, since they are what the shot
        # compares. So the `with:` layer goes below the flags.
        extra_inputs, layer = _with_layer(doc, (*path, "with"), raw["with"], catalog)
        overrides = merge_overrides(extra_inputs, overrides)
        layers = [*layers[:-1], layer, layers[-1]]
        try:
            _, numbers = numbers_for(layers, tuple(sorted(overrides.items())), catalog)
        except DtfilmError as error:
            raise DtfilmError(error.message, doc.where((*path, "with")), dotted((*path, "with"))) from None
    duration = raw.get("duration")
    if duration is not None and (
        isinstance(duration, bool) or not isinstance(duration, (int, float)) or not 0 < duration <= MAX_SHOT_SECONDS
    ):
        raise DtfilmError(
            f"{duration!r} is not a duration; valid: seconds above 0 and at most {MAX_SHOT_SECONDS:g}",
            doc.where((*path, "duration")),
            dotted((*path, "duration")),
        )
    beat = raw.get("beat", f"{index + 1:02d}-{kind}")
    if not isinstance(beat, str) or not _ID.match(beat):
        raise DtfilmError(
            f"{_short_repr(beat)} is not a beat name; valid: lower-case letters, digits, - and _, at most"
            f" {CHAPTER_ID_CHARS}",
            doc.where((*path, "beat")),
            dotted((*path, "beat")),
        )
    options: dict[str, Any] = {}
    steps: tuple[Numbers, ...] = ()
    also_steps: tuple[Numbers, ...] = ()
    if spec.sweep:
        options, steps, also_steps = _sweep(doc, path, raw, layers, overrides, catalog)
    if spec.rows:
        options["rows"] = _rows(doc, (*path, "rows"), raw.get("rows"), layers, overrides, catalog, spec.most_rows)
    if spec.pick:
        options.update(_pick(doc, path, raw, layers, overrides, catalog))
    if spec.tree:
        try:
            options.update(_tree(options, layers, overrides, catalog))
        except ClaimError as error:  # one of the tree's questions cannot be answered at these inputs
            raise DtfilmError(f"the decision tree: {error}", doc.where(path), dotted(path)) from None
    if drawable:
        configs = (numbers,) if not spec.sweep else steps
        _check_needs(doc, path, spec, configs, [n for _, n in options.get("rows", [])], flags)
    numbers = claim_numbers(numbers, steps, also_steps, options)  # claims may name the other configurations
    for key, (parse, required) in spec.keys.items():
        if key in raw:
            try:
                value = parse(raw[key])
            except ValueError as error:
                raise DtfilmError(str(error), doc.where((*path, key)), dotted((*path, key))) from None
            if key in spec.per_step:  # one Phrase per value of the sweep, each against its step
                options[key] = tuple(
                    _template(doc, (*path, key), value, replace(step, context=numbers.context)) for step in steps
                )
            else:
                options[key] = _template(doc, (*path, key), value, numbers)
        elif required:
            raise DtfilmError(f"shot kind {kind!r} needs {key!r}", doc.where(path), dotted(path))

    def phrase(key: str) -> Phrase | None:
        return _template(doc, (*path, key), raw[key], numbers) if key in raw else None

    narration, marks = _narration(doc, path, spec, phrase("narration"))
    return Shot(
        index=index,
        kind=kind,
        beat=beat,
        caption=phrase("caption"),
        narration=narration,
        duration=float(duration) if duration is not None else None,
        where=doc.where(path),
        numbers=numbers,
        options=options,
        steps=steps,
        also_steps=also_steps,
        marks=marks,
    )


# The film's longest narration is 360 characters; this is ten times that, and bounds the audio a
# shot's narration is joined into (about 0.05 s of speech a character).
MAX_NARRATION_CHARS = 4_000


def _narration(doc: Located, path: KeyPath, spec: KindSpec, said: Phrase | None) -> tuple[Phrase | None, Marks]:
    """The narration without its `[mark]`s, and the marks, each one the kind waits for."""
    if said is None:
        return None, ()
    text, marks = split_marks(said.text)
    # a last sentence that a claim leaves unsaid ({?count: C => words | }) leaves no space behind
    text = text.rstrip()
    marks = tuple((name, min(offset, len(text))) for name, offset in marks)
    if len(text) > MAX_NARRATION_CHARS:  # (the voice's memory grows with a shot's audio: README, "The voice")
        raise DtfilmError(
            f"{len(text):,} characters; valid: a narration of at most {MAX_NARRATION_CHARS:,} characters"
            " (about three minutes of speech): split it across shots",
            doc.where((*path, "narration")),
            dotted((*path, "narration")),
        )
    names = [name for name, _ in marks]
    for name in names:
        if name not in spec.marks or names.count(name) > 1:
            why = "is used twice" if name in spec.marks else f"is not a mark shot kind {spec.name!r} waits for"
            valid = ", ".join(f"[{m}]" for m in spec.marks) or "none (this kind waits for no mark)"
            raise DtfilmError(
                f"narration mark [{name}] {why}; valid: {valid}",
                doc.where((*path, "narration")),
                dotted((*path, "narration")),
            )
    facts = tuple(_unmarked(f) if "[" in f.shown else f for f in said.facts)
    return Phrase(text, facts), marks


def _unmarked(fact: Fact) -> Fact:
    """A claim with a mark among its words ({?bytes: C => sharded, [answer] it fits | ...}) as
    the voice says it: its shown words, and the words its result reports, without the mark."""
    value = fact.value
    if fact.kind == "claim" and isinstance(value, ClaimResult) and "[" in value.text:
        value = replace(value, text=split_marks(value.text)[0])
    return replace(fact, shown=split_marks(fact.shown)[0], value=value)


def _check_needs(
    doc: Located,
    path: KeyPath,
    spec: KindSpec,
    configs: tuple[Numbers, ...],
    rows: list[Numbers],
    flags: dict[str, Any],
) -> None:
    """A kind that draws a strategy needs its degree above 1 (the TP chapter at tp = 1 has
    nothing to split): say so in one line, naming the shot and the input, before any frame."""
    for name, least in spec.needs.items():
        for numbers in (*configs, *rows):
            value = numbers.get(f"plan.{name}")  # needs name plan degrees (and the ZeRO stage)
            if value < least:
                label = NEED_LABELS.get(name, name)
                raise DtfilmError(
                    f"shot kind {spec.name!r} draws {label} and needs {name} of {least} or more, but here"
                    f" {name} = {value}{_source(numbers, name, flags)}; valid: {name} >= {least}",
                    doc.where(path),
                    dotted(path),
                )
    for name, most in spec.at_most.items():
        for numbers in (*configs, *rows):
            value = numbers.get(f"plan.{name}")
            if value > most:
                raise DtfilmError(
                    f"shot kind {spec.name!r} draws {AT_MOST_LABELS.get(name, name)}, but here {name} = {value}"
                    f"{_source(numbers, name, flags)}; valid: {name} <= {most}",
                    doc.where(path),
                    dotted(path),
                )


AT_MOST_LABELS = {
    "virtual_stages": "the 1F1B schedule without interleaving",
    "cp": "one card per ring position",
    "zero": "a gradient all-reduce, which ZeRO-3 replaces with a reduce-scatter (gather_layer draws it)",
}
NEED_LABELS = {
    "tp": "tensor parallelism",
    "pp": "a pipeline",
    "dp": "data-parallel shards",
    "zero": "ZeRO-3",
    "cp": "a context-parallel ring",
}


def _source(numbers: Numbers, name: str, flags: dict[str, Any]) -> str:
    """Where a refused degree came from, when not the storyboard's inputs: a flag, or the
    shot's own `with:`, sweep or rows (which a flag does not set: "from --pp" misled there)."""
    if name in flags:
        return f" (from --{name.replace('_', '-')})"
    if name in dict(numbers.overrides):
        return " (from this shot's with:, sweep or rows)"
    shaping = [(k, v) for k, v in numbers.overrides if k in ("cards", "nodes", "cards_per_node", "tp", "pp", "cp")]
    if name == "dp" and shaping:
        said = [f"--{k.replace('_', '-')} {v}" if k in flags else f"{k} {v} in this shot" for k, v in shaping]
        return " (after " + ", ".join(said) + ")"
    return ""


def _pick(
    doc: Located,
    path: KeyPath,
    raw: dict[str, Any],
    layers: list[dict[str, Value]],
    overrides: dict[str, Any],
    catalog: Catalog,
) -> dict[str, Any]:
    """The planner's pick for the shot's inputs, as Numbers with the picked plan on top (so its
    facts name the flags that reproduce it), and where the decision tree ended."""
    setup, _ = build_setup(resolve(layers, catalog), catalog)
    here = (*path, "global_batch")
    # the shot's configuration's own global batch (training.global_batch, else dp x m x b), or the
    # shot's `global_batch:`; a --global-batch flag beats that as it beats a `with:`
    global_batch = setup.dp * setup.micro_batches * setup.micro_batch_size
    if "global_batch" in raw and "global_batch" not in layers[-1]:
        try:
            global_batch = parse_global_batch(raw["global_batch"]).whole_sequences(setup.seq_len)
        except ValueError as error:
            raise DtfilmError(str(error), doc.where(here), dotted(here)) from None
    result = plan(setup, global_batch, top=1)
    if result["pick"] is None:
        raise DtfilmError(
            "no plan fits these inputs; valid: more cards, a larger card or a shorter sequence",
            doc.where(path),
            dotted(path),
        )

    def numbers_of(row: dict[str, Any]) -> Numbers:
        chosen = _chosen(row)
        merged = merge_overrides(overrides, chosen)
        return numbers_for([*layers, flag_layer(chosen, catalog)], tuple(sorted(merged.items())), catalog)[1]

    alone = result["data_parallel_only"]
    return {
        "pick": numbers_of(result["pick"]),
        "data_parallel_only": numbers_of(alone) if alone is not None and alone != result["pick"] else None,
        "branch": result["branch"],
        "global_batch": global_batch,
    }


def _chosen(row: dict[str, Any]) -> dict[str, Any]:
    """A planned row's plan inputs, with its ep where it names one (a MoE model's rows do)."""
    return {name: row[name] for name in (*PLAN_INPUTS, "ep") if name in row}


def _tree(
    options: dict[str, Any], layers: list[dict[str, Value]], overrides: dict[str, Any], catalog: Catalog
) -> dict[str, Any]:
    """Seed 001's decision tree for the shot's inputs (dtfilm.storyboard.tree): the configurations
    its questions are weighed on, their answers, and the fastest plan that takes exactly the
    tree's splits (None when none fits), to set beside the planner's pick."""

    def numbers_of(chosen: dict[str, Any]) -> Numbers:
        merged = merge_overrides(overrides, chosen)
        return numbers_for([*layers, flag_layer(chosen, catalog)], tuple(sorted(merged.items())), catalog)[1]

    setup, _ = build_setup(resolve(layers, catalog), catalog)
    configs = tree.probes(numbers_of, setup.cards)
    answered = tree.answers(configs)
    splits = tree.tree_splits(answered)
    plans = evaluate(setup, options["global_batch"])
    best = fastest_with_room(plans, tree.follows(plans, splits))
    follow = None
    if best is not None:
        row = plans.row(best)
        follow = numbers_of(_chosen(row))
    return {"tree_configs": configs, "tree_answers": answered, "tree_splits": splits, "tree_follow": follow}


def _rows(
    doc: Located,
    path: KeyPath,
    raw: Any,
    layers: list[dict[str, Value]],
    overrides: dict[str, Any],
    catalog: Catalog,
    most: int = MAX_ROWS,
) -> list[tuple[Phrase, Numbers]]:
    """Comparison rows: each a label (a template) and the inputs that differ (`with`); at most
    `most` (the kind's)."""
    if not isinstance(raw, list) or not 1 <= len(raw) <= most:
        raise DtfilmError(f"expected a list of 1 to {most} rows", doc.where(path), dotted(path))
    rows = []
    for i, row in enumerate(raw):
        here = (*path, i)
        _require_mapping(doc, here, row, ROW_KEYS)
        if "label" not in row:
            raise DtfilmError("a row needs a label", doc.where(here), dotted(here))
        extra, layer = _with_layer(doc, (*here, "with"), row["with"], catalog) if row.get("with") else ({}, {})
        row_overrides = merge_overrides(overrides, extra)
        try:
            _, numbers = numbers_for([*layers, layer], tuple(sorted(row_overrides.items())), catalog)
        except DtfilmError as error:
            raise DtfilmError(error.message, doc.where(here), dotted(here)) from None
        rows.append((_template(doc, (*here, "label"), row["label"], numbers), numbers))
    return rows


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
    if not _ID.match(spec):
        raise DtfilmError(
            f"{_short_repr(spec)} is neither a chapter id nor a .yaml path; valid: lower-case letters, digits, - and"
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
) -> Chapter:
    """Load one chapter with the film's defaults below it and `overrides` (flags) above it.
    `drawable` checks that every shot has what it draws (tp of 2 or more for split matrices);
    `dtfilm estimate` and `plan` ask only for numbers and skip it, and check the shots without the
    flags (the storyboard as written). `voice`: as load_film's."""
    path = Path(spec).resolve() if isinstance(spec, Path) else chapter_path(spec, root)
    film = load_film(film_for(path), voice)
    doc = load_yaml(path, shown_path(path))
    data = _require_mapping(doc, (), doc.data if doc.data is not None else {}, CHAPTER_KEYS)
    for key in ("id", "title", "shots"):
        if key not in data:
            raise DtfilmError(f"missing key {key!r}", doc.where(()), key)
    if data["id"] != path.stem:
        raise DtfilmError(f"id {data['id']!r} must match the file name {path.stem!r}", doc.where(("id",)), "id")
    overrides = dict(overrides or {})
    override_items = tuple(sorted(overrides.items()))
    catalog = film.catalog
    chapter_layer = _input_layer(doc, (), data, "storyboard", catalog)
    layers = [builtin_layer(), film.defaults, chapter_layer, flag_layer(overrides, catalog)]
    try:
        values, numbers = numbers_for(layers, override_items, catalog)
    except DtfilmError as error:
        if error.where is not None and error.where.file is None and error.where.flag is None:
            raise DtfilmError(error.message, doc.where(()), error.key) from None
        raise
    shots_raw = data["shots"]
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
        _shot(doc, i, raw, shot_numbers, shot_layers, shot_overrides, catalog, drawable)
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
    poster = data.get("poster")
    if poster is not None and poster not in beats:
        raise DtfilmError(
            f"{poster!r} is not a beat of this chapter; valid: {', '.join(beats)}", doc.where(("poster",)), "poster"
        )
    return Chapter(
        id=data["id"],
        title=_template(doc, ("title",), _one_line(doc, ("title",), data["title"]), numbers),
        subtitle=(
            _template(doc, ("subtitle",), _one_line(doc, ("subtitle",), data["subtitle"]), numbers)
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
