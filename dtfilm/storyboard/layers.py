"""The cost model's inputs as a storyboard writes them: layers of values (the film's defaults, a
chapter's, the flags, a shot's `with:`), the numbers they resolve to, and templates under those numbers."""

from __future__ import annotations

from typing import Any

from dtfilm.cost import BUILTIN_CATALOG, Catalog, Value, estimate, parse_value, resolve
from dtfilm.cost.inputs import SECTIONS, SPECS
from dtfilm.errors import DtfilmError, Where, did_you_mean
from dtfilm.numbers import Numbers
from dtfilm.paths import TemplateError
from dtfilm.phrases import OverrideItems, Phrase
from dtfilm.storyboard.fields import checked_text, require_mapping
from dtfilm.system.yamlsrc import KeyPath, Located, dotted


def input_layer(
    doc: Located, root: KeyPath, sections: dict[str, Any], source: str, catalog: Catalog
) -> dict[str, Value]:
    layer: dict[str, Value] = {}
    for section in SECTIONS:
        if section not in sections:
            continue
        allowed = tuple(n for n, s in SPECS.items() if s.section == section)
        if section == "model":
            allowed = ("preset", *[a for a in allowed if a != "model"])
        items = require_mapping(doc, (*root, section), sections[section], allowed)
        for key, raw in items.items():
            name = "model" if (section, key) == ("model", "preset") else key
            path = (*root, section, key)
            try:
                layer[name] = parse_value(name, raw, source, doc.where(path), catalog)
            except DtfilmError as error:
                raise DtfilmError(error.message, doc.where(path), dotted(path)) from None
    return layer


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


def template(doc: Located, path: KeyPath, raw: Any, numbers: Numbers) -> Phrase:
    text = checked_text(doc, path, raw)
    try:
        return numbers(text)
    except TemplateError as error:
        raise DtfilmError(str(error), doc.where(path), dotted(path)) from None


def input_paths() -> dict[str, str]:
    """Storyboard paths of the cost model's inputs ("cluster.cards" -> "cards")."""
    paths = {f"{spec.section}.{name}": name for name, spec in SPECS.items()}
    paths["model.preset"] = paths.pop("model.model")
    return paths


def input_name(doc: Located, path: KeyPath, target: Any) -> str:
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


def with_layer(doc: Located, path: KeyPath, raw: Any, catalog: Catalog) -> tuple[dict[str, Any], dict[str, Value]]:
    """A mapping of inputs (`with:`, `also:`, a sweep step): as flag-style overrides, and
    parsed into a layer whose values name their own line."""
    if not isinstance(raw, dict) or not raw:
        raise DtfilmError("expected a mapping such as {plan.zero: 0}", doc.where(path), dotted(path))
    overrides, layer = {}, {}
    for key, value in raw.items():
        name = input_name(doc, (*path, key), key)
        try:
            layer[name] = parse_value(name, value, "flag", doc.where((*path, key)), catalog)
        except DtfilmError as error:  # named where it is written (shots[3].with.plan.zero), not as a flag
            raise DtfilmError(error.message, doc.where((*path, key)), dotted((*path, key))) from None
        overrides[name] = value
    return overrides, layer
