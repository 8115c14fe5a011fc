"""One shot of a chapter: its kind's keys, its own inputs, its narration's marks, and what its kind needs to draw."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from dtfilm.claims import ClaimResult
from dtfilm.conditions import ClaimError
from dtfilm.cost import Catalog, Value
from dtfilm.cost.inputs import merge_overrides
from dtfilm.errors import DtfilmError, Where, did_you_mean
from dtfilm.inside import CHAPTER_ID, CHAPTER_ID_CHARS
from dtfilm.numbers import Numbers
from dtfilm.phrases import Fact, Phrase
from dtfilm.shots import registry  # (the module, not its KINDS: the registry imports this package)
from dtfilm.storyboard.claims_context import claim_numbers
from dtfilm.storyboard.configurations import comparison_rows, decision_tree, planner_pick, sweep_steps
from dtfilm.storyboard.fields import require_mapping, short_repr
from dtfilm.storyboard.kinds import PICK_KEYS, SHOT_KEYS, SWEEP_KEYS, KindSpec
from dtfilm.storyboard.layers import numbers_for, template, with_layer
from dtfilm.storyboard.marks import Marks, split_marks
from dtfilm.system.yamlsrc import KeyPath, Located, dotted

MAX_SHOT_SECONDS = 120.0


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


def load_shot(
    doc: Located,
    index: int,
    raw: Any,
    numbers: Numbers,
    layers: list[dict[str, Value]],
    overrides: dict[str, Any],
    catalog: Catalog,
    drawable: bool = True,
    kinds: Mapping[str, KindSpec] | None = None,
) -> Shot:
    """The storyboard's shot `index`, its kind looked up in `kinds` (None: every kind dtfilm has,
    dtfilm.shots.registry.KINDS)."""
    path: KeyPath = ("shots", index)
    spec = _kind_of(doc, path, raw, registry.KINDS if kinds is None else kinds)
    flags = dict(overrides)  # the user's flags, before the shot's `with:` joins them
    if "with" in raw:
        numbers, layers, overrides = _with_inputs(doc, path, raw["with"], layers, overrides, catalog)
    duration = _duration(doc, path, raw.get("duration"))
    beat = _beat(doc, path, raw.get("beat", f"{index + 1:02d}-{spec.name}"))
    options, steps, also_steps = _configurations(doc, path, raw, spec, layers, overrides, catalog)
    if drawable:
        configs = (numbers,) if not spec.sweep else steps
        _check_needs(doc, path, spec, configs, [n for _, n in options.get("rows", [])], flags)
    numbers = claim_numbers(numbers, steps, also_steps, options)  # claims may name the other configurations
    options.update(_kind_keys(doc, path, raw, spec, numbers, steps))

    def phrase(key: str) -> Phrase | None:
        return template(doc, (*path, key), raw[key], numbers) if key in raw else None

    narration, marks = _narration(doc, path, spec, phrase("narration"))
    return Shot(
        index=index,
        kind=spec.name,
        beat=beat,
        caption=phrase("caption"),
        narration=narration,
        duration=duration,
        where=doc.where(path),
        numbers=numbers,
        options=options,
        steps=steps,
        also_steps=also_steps,
        marks=marks,
    )


def _kind_of(doc: Located, path: KeyPath, raw: Any, kinds: Mapping[str, KindSpec]) -> KindSpec:
    """The shot's kind, with the keys it takes checked against it."""
    if not isinstance(raw, dict) or "kind" not in raw:
        raise DtfilmError("a shot needs a kind", doc.where(path), dotted(path))
    kind = raw["kind"]
    if not isinstance(kind, str) or kind not in kinds:  # (a list is no name, and unhashable)
        raise DtfilmError(
            f"unknown shot kind {kind!r}{did_you_mean(kind, kinds)}; valid: {', '.join(kinds)}",
            doc.where((*path, "kind")),
            dotted((*path, "kind")),
        )
    spec = kinds[kind]
    extra = (
        *spec.keys,
        *(SWEEP_KEYS if spec.sweep else ()),
        *(("rows",) if spec.rows else ()),
        *(PICK_KEYS if spec.pick else ()),
    )
    require_mapping(doc, path, raw, (*SHOT_KEYS, *extra))
    return spec


def _with_inputs(
    doc: Located,
    path: KeyPath,
    raw: Any,
    layers: list[dict[str, Value]],
    overrides: dict[str, Any],
    catalog: Catalog,
) -> tuple[Numbers, list[dict[str, Value]], dict[str, Any]]:
    """The shot's numbers, layers and overrides with its `with:` inputs. The rule: a flag beats a
    shot's `with:` (it sets that input in every shot); a sweep's values, its `also:` and a
    comparison's rows keep theirs, since they are what the shot compares. So the `with:` layer
    goes below the flags."""
    extra_inputs, layer = with_layer(doc, (*path, "with"), raw, catalog)
    overrides = merge_overrides(extra_inputs, overrides)
    layers = [*layers[:-1], layer, layers[-1]]
    try:
        _, numbers = numbers_for(layers, tuple(sorted(overrides.items())), catalog)
    except DtfilmError as error:
        raise DtfilmError(error.message, doc.where((*path, "with")), dotted((*path, "with"))) from None
    return numbers, layers, overrides


def _duration(doc: Located, path: KeyPath, duration: Any) -> float | None:
    """The shot's `duration:` in seconds, if it gives one."""
    if duration is not None and (
        isinstance(duration, bool) or not isinstance(duration, (int, float)) or not 0 < duration <= MAX_SHOT_SECONDS
    ):
        raise DtfilmError(
            f"{duration!r} is not a duration; valid: seconds above 0 and at most {MAX_SHOT_SECONDS:g}",
            doc.where((*path, "duration")),
            dotted((*path, "duration")),
        )
    return float(duration) if duration is not None else None


def _beat(doc: Located, path: KeyPath, beat: Any) -> str:
    """The shot's name, also a file name in renders/."""
    if not isinstance(beat, str) or not CHAPTER_ID.match(beat):
        raise DtfilmError(
            f"{short_repr(beat)} is not a beat name; valid: lower-case letters, digits, - and _, at most"
            f" {CHAPTER_ID_CHARS}",
            doc.where((*path, "beat")),
            dotted((*path, "beat")),
        )
    return beat


def _configurations(
    doc: Located,
    path: KeyPath,
    raw: dict[str, Any],
    spec: KindSpec,
    layers: list[dict[str, Value]],
    overrides: dict[str, Any],
    catalog: Catalog,
) -> tuple[dict[str, Any], tuple[Numbers, ...], tuple[Numbers, ...]]:
    """The other configurations the kind compares (dtfilm.storyboard.configurations): options,
    a sweep's steps and the same steps under its `also:`."""
    options: dict[str, Any] = {}
    steps: tuple[Numbers, ...] = ()
    also_steps: tuple[Numbers, ...] = ()
    if spec.sweep:
        options, steps, also_steps = sweep_steps(doc, path, raw, layers, overrides, catalog)
    if spec.rows:
        options["rows"] = comparison_rows(
            doc, (*path, "rows"), raw.get("rows"), layers, overrides, catalog, spec.most_rows
        )
    if spec.pick:
        options.update(planner_pick(doc, path, raw, layers, overrides, catalog))
    if spec.tree:
        try:
            options.update(decision_tree(options, layers, overrides, catalog))
        except ClaimError as error:  # one of the tree's questions cannot be answered at these inputs
            raise DtfilmError(f"the decision tree: {error}", doc.where(path), dotted(path)) from None
    return options, steps, also_steps


def _kind_keys(
    doc: Located, path: KeyPath, raw: dict[str, Any], spec: KindSpec, numbers: Numbers, steps: tuple[Numbers, ...]
) -> dict[str, Any]:
    """The kind's own keys, parsed and resolved as templates under the shot's numbers."""
    options: dict[str, Any] = {}
    for key, (parse, required) in spec.keys.items():
        if key in raw:
            try:
                value = parse(raw[key])
            except ValueError as error:
                raise DtfilmError(str(error), doc.where((*path, key)), dotted((*path, key))) from None
            if key in spec.per_step:  # one Phrase per value of the sweep, each against its step
                options[key] = tuple(
                    template(doc, (*path, key), value, replace(step, context=numbers.context)) for step in steps
                )
            else:
                options[key] = template(doc, (*path, key), value, numbers)
        elif required:
            raise DtfilmError(f"shot kind {spec.name!r} needs {key!r}", doc.where(path), dotted(path))
    return options


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
