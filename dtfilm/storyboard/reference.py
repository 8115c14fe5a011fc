"""The storyboard author's reference: `dtfilm kinds [KIND]` and `dtfilm paths [CHAPTER]`.

No manim here: measuring a kind's shortest length needs a dry run, which the command asks for
through `measure` (dtfilm.check.inspect), so that listing kinds stays instant.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from dtfilm.paths import suggested_unit
from dtfilm.phrases import render_template
from dtfilm.shots import registry  # (the module, not its KINDS: the registry imports this package)
from dtfilm.storyboard.kinds import PICK_KEYS, SHOT_KEYS, SWEEP_KEYS, KindSpec
from dtfilm.system.yamlsrc import load_yaml

CONFIGURATION = "the film's defaults, the chapter's inputs, the shot's `with:`, then flags"


def kind_flavour(spec: KindSpec) -> str:
    if spec.sweep:
        return "sweep"
    if spec.rows:
        return "rows"
    return "pick" if spec.pick else "plain"


def kind_keys(spec: KindSpec) -> list[str]:
    extra = [f"{k} (required)" if required else k for k, (_, required) in spec.keys.items()]
    if spec.sweep:
        extra += list(SWEEP_KEYS)
    if spec.rows:
        extra.append("rows")
    if spec.pick:
        extra += list(PICK_KEYS)
    return [*SHOT_KEYS, *extra]


RESOLVE = {
    "plain": f"caption and narration resolve against the shot's configuration ({CONFIGURATION})",
    "sweep": (
        "`set` and `values` move one input over 2 to 8 values (or `values` are mappings of inputs moving"
        " together); `also:` adds inputs played after the last value. The caption and narration resolve"
        " against the shot's configuration, not against a value: the shot draws each value's figures itself"
    ),
    "rows": (
        "`rows` is a list of {label, with}: each row is its own configuration and its label resolves against"
        " it; the caption and narration resolve against the shot's configuration"
    ),
    "pick": (
        "the planner picks a plan for the shot's configuration and `global_batch` (sequences, or tokens with K/M;"
        " default: the configuration's training.global_batch, dp x micro-batches x micro-batch size; a"
        " --global-batch flag overrides it); the caption and narration resolve against the shot's configuration,"
        " the figures drawn against the pick"
    ),
}


def kinds_text() -> str:
    """Every kind, one line each."""
    width = max(len(name) for name in registry.KINDS)
    lines = []
    for name, spec in registry.KINDS.items():
        needs = ", ".join(
            [f"{k} >= {v}" if v > 1 else k for k, v in spec.needs.items()]
            + [f"{k} <= {v}" for k, v in spec.at_most.items()]
        )
        flavour = kind_flavour(spec)
        tags = [t for t in (flavour if flavour != "plain" else "", f"needs {needs}" if needs else "") if t]
        lines.append(f"{name:<{width}}  {spec.summary}" + (f" [{'; '.join(tags)}]" if tags else ""))
    return "\n".join(lines)


def uses_of(kind: str, film_dir: Path, chapters: list[str]) -> Iterator[tuple[str, int, str]]:
    """(chapter, line, beat) of every shot of `kind` in the film's storyboards."""
    for chapter in chapters:
        path = film_dir / f"{chapter}.yaml"
        doc = load_yaml(path)
        shots = doc.data.get("shots", []) if isinstance(doc.data, dict) else []
        for i, shot in enumerate(shots if isinstance(shots, list) else []):
            if isinstance(shot, dict) and shot.get("kind") == kind:
                where = doc.where(("shots", i))
                yield chapter, where.line or 1, str(shot.get("beat", f"{i + 1:02d}-{kind}"))


def kind_text(
    name: str, uses: list[tuple[str, int, str]], measured: Callable[[str], dict[str, float]] | None = None
) -> str:
    """One kind in full: what it draws, its keys, how its templates resolve, what it needs, where
    the film uses it and, measured by a dry run, how long it takes at the least."""
    spec = registry.KINDS[name]
    lines = [f"{name}: {spec.summary}", f"  keys: {', '.join(kind_keys(spec))}"]
    if spec.doc:
        lines += textwrap.wrap(spec.doc, 96, initial_indent="  ", subsequent_indent="  ")
    lines.append(f"  templates: {RESOLVE[kind_flavour(spec)]}")
    if spec.per_step:
        keys = ", ".join(f"`{k}`" for k in spec.per_step)
        lines.append(f"  per value: {keys} resolve against each value's configuration in turn")
    if spec.needs or spec.at_most:
        needs = [f"{k} of {v} or more" if v > 1 else f"{k} {v}" for k, v in spec.needs.items()]
        needs += [f"{k} of {v} at most" for k, v in spec.at_most.items()]
        lines.append(f"  needs: {', '.join(needs)} (checked when the chapter loads)")
    if spec.takes:
        lines.append(
            f"  keeps from the shot before: {', '.join(spec.takes)}, when drawn for the same values"
            " (else it draws its own)"
        )
    if spec.hands_on:
        lines.append(f"  hands on to the next shot: {', '.join(spec.hands_on)}")
    if spec.marks:
        lines.append("  narration marks it waits for, in order (docs: The voice):")
        lines += [f"    [{mark}] {what}" for mark, what in spec.marks.items()]
    if not uses:
        lines.append("  used in: no chapter of this film")
        return "\n".join(lines)
    lines.append("  used in: " + ", ".join(f"{c}:{beat} (storyboard/{c}.yaml:{line})" for c, line, beat in uses))
    if measured is not None:
        for chapter in dict.fromkeys(c for c, _, _ in uses):
            for beat, seconds in measured(chapter).items():
                if any(c == chapter and b == beat for c, _, b in uses):
                    if spec.paced or spec.marks:
                        why = "its animations, paced to this narration: a shorter one shortens them"
                    else:
                        why = "its animations; a shorter duration or narration does not shorten it"
                    lines.append(f"  shortest length: {seconds:.1f} s in {chapter}:{beat} ({why})")
    return "\n".join(lines)


# --- template paths --------------------------------------------------------------------------


def _leaves(node: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, f"{prefix}.{key}" if prefix else str(key))
    elif not isinstance(node, list):
        yield prefix, node


def paths_rows(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(template, what it shows, unit) for every value a template can name, shown by the same
    renderer the film uses."""
    rows = []
    for path, value in _leaves(data):
        if path.startswith("inputs.") and not path.endswith(".value"):
            continue  # an input's source and file:line, not a value to show
        shown_path = path[: -len(".value")] if path.startswith("inputs.") else path
        unit = suggested_unit(shown_path, value)
        if unit is not None and isinstance(value, float) and not math.isfinite(value):
            unit = None
        template = f"{{{shown_path}:{unit}}}" if unit else f"{{{shown_path}}}"
        kind = unit or ("text" if isinstance(value, str) else "yes/no" if isinstance(value, bool) else "value")
        rows.append((template, render_template(template, data, ()).text, kind))
    return rows


def paths_text(data: dict[str, Any]) -> str:
    rows = paths_rows(data)
    width = max(len(t) for t, _, _ in rows)
    return "\n".join(f"{template:<{width}}  {shown}" for template, shown, _ in rows)
