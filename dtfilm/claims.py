"""Claims: the conclusions a caption or the narration draws from the numbers, bound to the cost
model, so that the words change when the numbers do.

A claim in a template names its quantity and its conditions over template paths:

    {?bytes: memory.total <= memory.capacity => It fits | It does not fit}

The alternatives are tried in order; the first whose condition holds gives the words, and a last
alternative without a condition (`| It does not fit`) is what is said otherwise. A claim with no
such last alternative asserts its condition: shown at a setting where it is false, it is a false
claim, and `dtfilm check` fails in one line. Words may hold templates (`{memory.headroom:GB}`)
but not another claim. Conditions are a small expression language: dotted paths of
`dtfilm estimate --json`, numbers (with GB, MB, TB, s or ms), + - * /, min, max, abs,
comparisons, and, or, not; within a budget of length, nodes, depth, names, numbers and time
(MAX_* below, docs/storyboards.md), and every error of evaluation one line naming its values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dtfilm.conditions import ClaimError, compile_condition, evaluate, own_path, record_paths, shown_value
from dtfilm.paths import suggested_unit

# What a claim is about: the quantity its condition compares. "heaviest" by bytes and by
# seconds a step are different claims (the 3D chapter's DP group is the lightest by one and
# the heaviest by the other), so every claim says which it means.
QUANTITIES = ("bytes", "seconds", "flops", "bandwidth", "count", "share")


# A path whose suggested unit (dtfilm paths) is one of these states that quantity; a claim
# that names bytes may not compare seconds, nor the reverse.
_UNIT_QUANTITY = {"bytes": "bytes", "time": "seconds", "GB/s": "bandwidth"}


@dataclass(frozen=True)
class ClaimResult:
    """One claim evaluated at one setting: the words shown and whether they hold."""

    quantity: str
    condition: str  # the condition the shown words rest on (an otherwise: none of the others)
    text: str  # the words shown
    holds: bool
    values: tuple[tuple[str, Any], ...]  # every path the conditions name, with its value
    alternatives: int  # how many wordings the claim has (1: it asserts its condition)

    def as_json(self) -> dict[str, Any]:
        return {
            "quantity": self.quantity,
            "condition": self.condition,
            "text": self.text,
            "holds": self.holds,
            "values": dict(self.values),
            "chosen_by_numbers": self.alternatives > 1,
        }

    def contradiction(self) -> str:
        """The values that make the claim false, for a one-line report."""
        return ", ".join(f"{path} = {shown_value(path, value)}" for path, value in self.values)


def find_claims(template: str) -> list[tuple[int, int]]:
    """The (start, end) of every `{?...}` in `template`, braces inside it balanced."""
    spans, i = [], 0
    while (start := template.find("{?", i)) >= 0:
        depth, j = 0, start
        while j < len(template):
            if template[j] == "{":
                depth += 1
            elif template[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if depth:
            raise ClaimError(f"unbalanced brace in claim {template[start : start + 40]!r}…; close it with }}")
        spans.append((start, j + 1))
        i = j + 1
    return spans


def _split_top(text: str, separator: str) -> list[str]:
    """`text` split on `separator` outside braces."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        if char == separator and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


@dataclass(frozen=True)
class Claim:
    """A claim as written: its quantity and its alternatives (condition or None, words)."""

    quantity: str
    alternatives: tuple[tuple[str | None, str], ...]


def parse_claim(body: str) -> Claim:
    """`bytes: COND => words | COND => words | words` (the `{?` and `}` taken off)."""
    quantity, colon, rest = body.partition(":")
    quantity = quantity.strip()
    if not colon or quantity not in QUANTITIES:
        raise ClaimError(
            f"claim {{?{body[:40]}…}} names no quantity; valid: {{?Q: CONDITION => words | other words}}"
            f" with Q one of {', '.join(QUANTITIES)}"
        )
    alternatives: list[tuple[str | None, str]] = []
    pieces = _split_top(rest, "|")
    for i, piece in enumerate(pieces):
        condition, arrow, words = piece.partition("=>")
        if not arrow:
            if i != len(pieces) - 1 or i == 0:
                raise ClaimError(
                    f"claim {{?{body[:40]}…}}: {piece.strip()!r} has no condition; valid: CONDITION => words,"
                    " and only the last alternative may be words alone"
                )
            alternatives.append((None, piece.strip()))
            continue
        if "{?" in words:
            raise ClaimError(f"claim {{?{body[:40]}…}} holds another claim; valid: one claim, several alternatives")
        alternatives.append((condition.strip(), words.strip()))
        compile_condition(condition.strip())  # a typo is an error when the storyboard loads
    return Claim(quantity, tuple(alternatives))


def check_quantity(claim: Claim, seen: dict[str, Any]) -> None:
    """A claim about bytes compares bytes, one about seconds seconds (by each path's unit)."""

    for path, found in seen.items():
        stated = _UNIT_QUANTITY.get(suggested_unit(own_path(path), found) or "")
        if stated is not None and stated != claim.quantity and claim.quantity in _UNIT_QUANTITY.values():
            raise ClaimError(
                f"claim about {claim.quantity} compares {path}, which is {stated}; valid: name the quantity it"
                f" compares ({{?{stated}: …}}) or compare {claim.quantity}"
            )


def choose(claim: Claim, lookup: Callable[[str], Any]) -> tuple[str, ClaimResult]:
    """The words the numbers choose, and the claim's result (its condition and values)."""
    seen: dict[str, Any] = {}
    chosen = None  # the first alternative whose condition holds; those after it are not evaluated
    for i, (condition, _) in enumerate(claim.alternatives):
        if condition is None:
            continue
        if chosen is None:
            chosen = i if evaluate(condition, lookup, seen) else None
        else:
            record_paths(condition, lookup, seen)
    check_quantity(claim, seen)
    values = tuple(seen.items())
    if chosen is not None:
        condition, words = claim.alternatives[chosen]
        return words, ClaimResult(claim.quantity, str(condition), words, True, values, len(claim.alternatives))
    last_condition, last_words = claim.alternatives[-1]
    if last_condition is None:
        otherwise = " and ".join(f"not ({c})" for c, _ in claim.alternatives if c)
        return last_words, ClaimResult(claim.quantity, otherwise, last_words, True, values, len(claim.alternatives))
    # Only asserted conditions, none holding: the first one's words are shown, and they are false.
    condition, words = claim.alternatives[0]
    return words, ClaimResult(claim.quantity, str(condition), words, False, values, len(claim.alternatives))
