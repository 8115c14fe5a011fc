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
comparisons, and, or, not.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dtfilm.paths import TemplateError, lookup, suggested_unit
from dtfilm.units import format_quantity

# What a claim is about: the quantity its condition compares. "heaviest" by bytes and by
# seconds a step are different claims (the 3D chapter's DP group is the lightest by one and
# the heaviest by the other), so every claim says which it means.
QUANTITIES = ("bytes", "seconds", "flops", "bandwidth", "count", "share")
# A path whose suggested unit (dtfilm paths) is one of these states that quantity; a claim
# that names bytes may not compare seconds, nor the reverse.
_UNIT_QUANTITY = {"bytes": "bytes", "time": "seconds", "GB/s": "bandwidth"}
_LITERAL_UNITS = {"TB": 1e12, "GB": 1e9, "MB": 1e6, "ms": 1e-3, "s": 1.0}
_UNIT_LITERAL = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?(?:e-?\d+)?)\s?(TB|GB|MB|ms|s)\b")


class ClaimError(ValueError):
    """A claim that cannot be read; the message says what is valid."""


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


def shown_value(path: str, value: Any) -> str:
    """A value as the screen would show it (93.7 GB, 165 ms), for the reports."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return repr(value)
    unit = suggested_unit(own_path(path), value)
    if unit in ("bytes", "time", "GB/s"):
        return format_quantity(float(value), unit).replace("\xa0", " ")
    return f"{value:.4g}"


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
    parts, depth, current = [], 0, []
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
    alternatives = []
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


_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {"min": min, "max": max, "abs": abs}


def compile_condition(condition: str) -> ast.Expression:
    """A condition parsed and every node in it allowed; a ClaimError says what is not."""
    text = _UNIT_LITERAL.sub(lambda m: repr(float(m.group(1)) * _LITERAL_UNITS[m.group(2)]), condition)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise ClaimError(
            f"condition {condition!r} cannot be read; valid: such as memory.total <= memory.capacity"
        ) from None
    for node in ast.walk(tree):
        allowed = (
            ast.Expression,
            ast.BoolOp,
            ast.And,
            ast.Or,
            ast.UnaryOp,
            ast.Not,
            ast.USub,
            ast.BinOp,
            ast.Compare,
            ast.Constant,
            ast.Name,
            ast.Attribute,
            ast.Load,
            ast.Call,
            ast.Subscript,
            *_COMPARE,
            *_ARITHMETIC,
        )
        if not isinstance(node, allowed):
            raise ClaimError(
                f"condition {condition!r}: {type(node).__name__} is not allowed; valid: paths, numbers,"
                " + - * /, min, max, abs, comparisons, and, or, not"
            )
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS):
            raise ClaimError(f"condition {condition!r}: only {', '.join(_FUNCTIONS)} may be called")
    return tree


def _path_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _path_of(node.value)
        return f"{head}.{node.attr}" if head else None
    if isinstance(node, ast.Subscript):  # steps[-1], rows[1]: one of the shot's configurations
        head, index = _path_of(node.value), node.slice
        if (
            isinstance(index, ast.UnaryOp)
            and isinstance(index.op, ast.USub)
            and isinstance(index.operand, ast.Constant)
        ):
            index = ast.Constant(-index.operand.value)
        if head and isinstance(index, ast.Constant) and isinstance(index.value, int):
            return f"{head}[{index.value}]"
    return None


_CONTEXT_PATH = re.compile(r"^(\w+)(?:\[(-?\d+)\])?\.(.+)$")


CONTEXT_NAMES = ("steps", "also", "rows", "pick", "alone", "tree")


def own_path(path: str) -> str:
    """The path within its configuration: `memory.total` for `steps[1].memory.total`."""
    match = _CONTEXT_PATH.match(path)
    return match.group(3) if match and match.group(1) in CONTEXT_NAMES else path


def context_entry(context: dict[str, Any], path: str) -> tuple[Any, str] | None:
    """(the configuration, the path within it) for `pick.memory.total` or
    `steps[-1].comm.seconds`; None for a path of the shot's own numbers."""
    match = _CONTEXT_PATH.match(path)
    if not match or not (match.group(1) in context or match.group(2) is not None):
        return None
    name, index, rest = match.group(1), match.group(2), match.group(3)
    if name not in context:
        raise TemplateError(f"{path} names {name}, but this shot has none; valid: {', '.join(context) or 'none'}")
    found = context[name]
    if index is not None:
        if not isinstance(found, (list, tuple)) or not -len(found) <= int(index) < len(found):
            raise TemplateError(f"{path}: this shot has no {name}[{index}]")
        found = found[int(index)]
    elif isinstance(found, (list, tuple)):
        raise TemplateError(f"{path} names {name} without an index; valid: {name}[0] to {name}[-1]")
    return found, rest


def context_lookup(data: dict[str, Any], context: dict[str, Any], path: str) -> Any:
    """A condition's path: `steps[-1].comm.seconds` in the shot's other configurations, any
    other in its own estimate."""
    entry = context_entry(context, path)
    if entry is None:
        return lookup(data, path)
    found, rest = entry
    return lookup(found if isinstance(found, dict) else found.data, rest)


def evaluate(condition: str, lookup: Callable[[str], Any], seen: dict[str, Any]) -> bool:
    """Whether `condition` holds, each path read through `lookup` and recorded in `seen`."""

    def value(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        path = _path_of(node)
        if path is not None:
            seen[path] = lookup(path)
            return seen[path]
        if isinstance(node, ast.BoolOp):
            results = [bool(value(v)) for v in node.values]  # every path recorded, no short cut
            return all(results) if isinstance(node.op, ast.And) else any(results)
        if isinstance(node, ast.UnaryOp):
            inner = value(node.operand)
            return (not inner) if isinstance(node.op, ast.Not) else -inner
        if isinstance(node, ast.BinOp):
            return _ARITHMETIC[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.Compare):
            left, result = value(node.left), True
            for op, right_node in zip(node.ops, node.comparators, strict=True):
                right = value(right_node)
                result = result and _COMPARE[type(op)](left, right)
                left = right
            return result
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)
            return _FUNCTIONS[node.func.id](*[value(a) for a in node.args])
        raise ClaimError(f"condition {condition!r} cannot be evaluated")

    return bool(value(compile_condition(condition)))


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
    outcomes = [(condition, evaluate(condition, lookup, seen)) for condition, _ in claim.alternatives if condition]
    check_quantity(claim, seen)
    values = tuple(seen.items())
    for (condition, words), (_, holds) in zip(claim.alternatives, outcomes, strict=False):
        if holds:
            return words, ClaimResult(claim.quantity, str(condition), words, True, values, len(claim.alternatives))
    last_condition, last_words = claim.alternatives[-1]
    if last_condition is None:
        otherwise = " and ".join(f"not ({c})" for c, _ in outcomes)
        return last_words, ClaimResult(claim.quantity, otherwise, last_words, True, values, len(claim.alternatives))
    # Only asserted conditions, none holding: the first one's words are shown, and they are false.
    condition, words = claim.alternatives[0]
    return words, ClaimResult(claim.quantity, str(condition), words, False, values, len(claim.alternatives))
