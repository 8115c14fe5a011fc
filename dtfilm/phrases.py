"""Text for the screen that knows where each of its numbers came from.

A Phrase is a string plus the Facts behind it: for every number or name with digits it shows,
the cost-model path (in `dtfilm estimate --json`), the unit and the inputs it was computed for.
The numbers-on-screen test reads these and checks them against a separate estimate process.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from dtfilm.claims import choose, find_claims, parse_claim
from dtfilm.conditions import ClaimError, context_entry, context_lookup
from dtfilm.errors import did_you_mean
from dtfilm.paths import TemplateError, lookup
from dtfilm.units import UNITS, format_quantity
from dtfilm.words import ONE_MARK, agreeing, format_number

OverrideItems = tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Fact:
    """One value shown on screen. kind "cost": the value at `path` of the estimate JSON in
    `unit`; kind "index": a position (GPU 3) within the count at `path`, never a quantity;
    kind "literal": words the storyboard marks as ordinary English (`{~one} card at a time`)."""

    path: str
    unit: str | None
    shown: str
    overrides: OverrideItems = ()
    kind: str = "cost"
    value: Any = None


@dataclass(frozen=True)
class Phrase:
    text: str
    facts: tuple[Fact, ...] = field(default=())
    # It shows a card's memory past the card's capacity: a counter draws it in the bad colour.
    # (Not part of what the phrase is: equal texts and facts are equal phrases.)
    over: bool = field(default=False, compare=False)

    def __add__(self, other: Phrase | str) -> Phrase:
        if isinstance(other, str):
            return Phrase(self.text + other, self.facts, self.over)
        return Phrase(self.text + other.text, self.facts + other.facts, self.over or other.over)

    def __radd__(self, other: str) -> Phrase:
        return Phrase(other + self.text, self.facts, self.over)


def plain(text: str) -> Phrase:
    """Text that shows no number; the numbers-on-screen test fails if it does."""
    return Phrase(text)


def index_phrase(
    template: str, index: int, bound: str, one_based: bool = False, overrides: OverrideItems = ()
) -> Phrase:
    """A label carrying a position (GPU 3, layer 12): `bound` is the estimate path of the
    count it indexes into (cluster.cards, model.layers); `template` holds one {} for it."""
    shown = str(index)
    unit = "1-based" if one_based else "0-based"
    return Phrase(template.format(shown), (Fact(bound, unit, shown, overrides, "index", index),))


def formula(text: str) -> Phrase:
    """Notation such as (p−1)/(m+p−1): its digits are symbols, not quantities."""
    return Phrase(text, (Fact("formula", None, text, (), "formula"),))


def format_value(value: Any, unit: str | None) -> str:
    """How a template shows a value: with a unit, or as a name or a plain number."""
    if unit is not None:
        return format_quantity(float(value), unit)
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, str):
        return value
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return format_number(float(value))


_FIELD = re.compile(r"\{\{|\}\}|\{([^{}:]+)(?::([^{}]+))?\}")


def render_template(
    template: str, data: dict[str, Any], overrides: OverrideItems, context: dict[str, Any] | None = None
) -> Phrase:
    """Fill {path} and {path:unit} fields from the estimate object; {~words} are ordinary
    English, shown as written; {{ and }} are braces; {?quantity: condition => words | words}
    is a claim (dtfilm/claims.py): the words the numbers choose, with a Fact of kind "claim".
    `context` holds the shot's other configurations (a sweep's `steps`, comparison `rows`, the
    planner's `pick`) that a claim's condition may name: `steps[-1].comm.seconds`."""
    if "{?" in template:
        return _render_claims(template, data, overrides, context or {})
    facts: list[Fact] = []
    context = context or {}

    def fill(match: re.Match[str]) -> str:
        whole = match.group(0)
        if whole in ("{{", "}}"):
            return whole[0]
        path, unit = match.group(1).strip(), match.group(2)
        if path.startswith("~") and unit is None:
            # Ordinary English that happens to hold a checked word: shown as written.
            shown = path[1:]
            facts.append(Fact("literal", None, shown, overrides, "literal", shown))
            return shown
        if unit is not None:
            unit = unit.strip()
            if unit not in UNITS:
                raise TemplateError(
                    f"unknown unit {unit!r} in {whole}{did_you_mean(unit, UNITS)}; valid: {', '.join(UNITS)}"
                )
        if context and (other := _in_context(context, path)) is not None:
            # One of the shot's other configurations ({pick.memory.total:GB}): its own inputs.
            numbers, rest = other
            value = lookup(numbers.data, rest)
            shown = format_value(value, unit)
            facts.append(Fact(rest, unit, shown, numbers.overrides, value=value))
            return shown + ONE_MARK if _is_one(value, unit) else shown
        value = lookup(data, path)
        if unit is not None and isinstance(value, (str, bool)):
            raise TemplateError(f"{whole}: {path} is {value!r}, not a number to show in {unit}")
        shown = format_value(value, unit)
        facts.append(Fact(path, unit, shown, overrides, value=value))
        return shown + ONE_MARK if _is_one(value, unit) else shown

    leftover = _FIELD.sub("", template)
    if "{" in leftover or "}" in leftover:
        raise TemplateError(f"unbalanced brace in {template!r}; write {{{{ for a literal brace")
    return Phrase(agreeing(_FIELD.sub(fill, template)), tuple(facts))


def _is_one(value: Any, unit: str | None) -> bool:
    """A count of exactly one, shown as a count: the noun after it is singular."""
    counted = unit is None and isinstance(value, int) and not isinstance(value, bool)
    counted = counted or (unit is not None and UNITS[unit][0] == "count")
    return counted and isinstance(value, (int, float)) and value == 1


def _render_claims(template: str, data: dict[str, Any], overrides: OverrideItems, context: dict[str, Any]) -> Phrase:
    """A template holding claims: the text between them rendered as any template, each claim's
    chosen words rendered too and followed by its Fact (kind "claim", value a ClaimResult)."""
    try:
        spans = find_claims(template)
        phrase, cursor = Phrase(""), 0
        for start, end in spans:
            phrase = phrase + render_template(template[cursor:start], data, overrides, context)
            words, result = choose(
                parse_claim(template[start + 2 : end - 1]), lambda path: context_lookup(data, context, path)
            )
            said = render_template(words, data, overrides, context)
            result = replace(result, text=said.text)
            fact = Fact("claim", result.quantity, said.text, overrides, "claim", result)
            phrase = phrase + Phrase(said.text, (*said.facts, fact))
            cursor = end
        return phrase + render_template(template[cursor:], data, overrides, context)
    except ClaimError as error:
        raise TemplateError(str(error)) from None


def _in_context(context: dict[str, Any], path: str) -> tuple[Any, str] | None:
    """(the Numbers, the path within them) for `pick.memory.total` or `steps[-1].comm.seconds`;
    None for a path of the shot's own numbers."""
    return context_entry(context, path)
