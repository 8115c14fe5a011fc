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

import ast
import operator
import re
import time
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


_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {"min": min, "max": max, "abs": abs}
_SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}

# The budget (docs/storyboards.md, "The claims language's budget"): a condition is a sentence's
# worth of logic, and the film's longest is about 200 characters of some 40 nodes. Bounded text,
# nodes and depth bound the work before a node is evaluated (a million `not`s was a MemoryError,
# a hundred thousand `1+` terms a RecursionError); bounded strings and numbers bound what a node
# may make (`"a" * 4000000000` took 3.9 GB); the time bound backs both up.
MAX_CONDITION_CHARS = 1_000
MAX_NODES = 400
MAX_DEPTH = 40
MAX_STRING_CHARS = 100
MAX_MAGNITUDE = 1e100
MAX_SECONDS = 1.0
_ALLOWED = (
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
_DEFINED = "a condition defined at every setting (guard it: inputs.cards > 8 and ...)"
_VALID = "valid: paths, numbers, quoted names, + - * /, min, max, abs, comparisons, and, or, not"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _nodes_within_budget(condition: str, tree: ast.Expression) -> None:
    """The node count and depth of `tree` within the budget, walked without recursion (the
    walk that found a deep tree too deep must not itself run out of stack)."""
    count = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_NODES or depth > MAX_DEPTH:
            bound = f"{MAX_NODES} nodes" if count > MAX_NODES else f"{MAX_DEPTH} levels of nesting"
            raise ClaimError(
                f"condition {_short(condition)} is past the claims language's bound of {bound};"
                " valid: a shorter condition (docs/storyboards.md, the budget)"
            )
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _short(text: str, width: int = 80) -> str:
    """A condition quoted for a one-line error, shortened past `width` characters."""
    return repr(text if len(text) <= width else text[: width - 1] + "…")


def _with_units_read(condition: str) -> str:
    """`condition` with each number with a unit (4 GB, 165 ms) written in base units."""
    return _UNIT_LITERAL.sub(lambda m: repr(float(m.group(1)) * _LITERAL_UNITS[m.group(2)]), condition)


def compile_condition(condition: str) -> ast.Expression:
    """A condition parsed and every node in it allowed, within the budget; a ClaimError says
    what is not."""
    if len(condition) > MAX_CONDITION_CHARS:
        raise ClaimError(
            f"condition {_short(condition)} is {len(condition):,} characters; valid: at most"
            f" {MAX_CONDITION_CHARS:,} (docs/storyboards.md, the budget)"
        )
    text = _with_units_read(condition)
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise ClaimError(
            f"condition {_short(condition)} cannot be read; valid: such as memory.total <= memory.capacity"
        ) from None
    _nodes_within_budget(condition, tree)
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise ClaimError(f"condition {_short(condition)}: {type(node).__name__} is not allowed; {_VALID}")
        if isinstance(node, ast.Call) and not (
            isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS and not node.keywords
        ):
            raise ClaimError(f"condition {_short(condition)}: only {', '.join(_FUNCTIONS)} may be called")
        if isinstance(node, ast.Constant):
            _constant_within_budget(condition, node.value)
    return tree


def _constant_within_budget(condition: str, value: Any) -> None:
    """A literal is a number within the bound, or a quoted name of at most MAX_STRING_CHARS."""
    if isinstance(value, str) and len(value) > MAX_STRING_CHARS:
        raise ClaimError(
            f"condition {_short(condition)}: a quoted name of {len(value):,} characters; valid: at most"
            f" {MAX_STRING_CHARS}"
        )
    if _is_number(value) and not abs(value) <= MAX_MAGNITUDE:  # (nan and inf fail it too)
        raise ClaimError(
            f"condition {_short(condition)}: the number {value:.4g} is past the bound; valid: at most"
            f" {MAX_MAGNITUDE:.0e} in size"
        )
    if not (_is_number(value) or isinstance(value, (str, bool)) or value is None):
        raise ClaimError(f"condition {_short(condition)}: {value!r} is not allowed; {_VALID}")


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
            and isinstance(index.operand.value, int)
        ):
            index = ast.Constant(-index.operand.value)
        if head and isinstance(index, ast.Constant) and isinstance(index.value, int):
            if isinstance(node.value, ast.Name):
                return f"{head}[{index.value}]"
            # memory.stages[0]: an item of a list in the estimate, the template path memory.stages.0
            return f"{head}.{index.value}" if index.value >= 0 else None
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


class _Evaluation:
    """One condition evaluated at one setting, within the budget. `and`, `or` and a chain of
    comparisons stop at their first deciding operand, as Python's do; the paths of the operands
    they skip are still read and recorded (not computed), so that a claim's values name every
    path its conditions name, at every setting, as they did before the short cut."""

    def __init__(self, condition: str, lookup: Callable[[str], Any], seen: dict[str, Any]) -> None:
        self.condition, self.lookup, self.seen = condition, lookup, seen
        self.text = _with_units_read(condition)
        self.deadline = time.perf_counter() + MAX_SECONDS

    def fail(self, node: ast.AST, problem: str, valid: str = _DEFINED) -> ClaimError:
        """The one-line error for `node`: what went wrong, in which part, at which values, and
        what would be valid."""
        part = ast.get_source_segment(self.text, node) or ast.unparse(node)
        values = ", ".join(f"{path} = {shown_value(path, value)}" for path, value in self.seen.items())
        return ClaimError(
            f"condition {_short(self.condition)} cannot be evaluated here: {_short(part, 60)} {problem}"
            + (f" ({values})" if values else "")
            + f"; valid: {valid}"
        )

    def record(self, node: ast.AST) -> None:
        """Read and record the paths of an operand that is not evaluated, in the order the
        evaluation would have read them."""
        path = _path_of(node)
        if path is not None:
            self.seen[path] = self.lookup(path)
            return
        children = node.args if isinstance(node, ast.Call) else list(ast.iter_child_nodes(node))
        for child in children:
            self.record(child)

    def number(self, node: ast.AST, value: Any) -> Any:
        """`value`, which `node` made, if it is a number within the bound."""
        if _is_number(value) and not abs(value) <= MAX_MAGNITUDE:
            raise self.fail(node, f"is {value:.4g}", f"numbers of at most {MAX_MAGNITUDE:.0e} in size")
        return value

    def value(self, node: ast.AST) -> Any:
        if time.perf_counter() > self.deadline:
            raise self.fail(
                node, f"took more than {MAX_SECONDS:g} s", "a condition the budget allows (docs/storyboards.md)"
            )
        if isinstance(node, ast.Expression):
            return self.value(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        path = _path_of(node)
        if path is not None:
            self.seen[path] = self.lookup(path)
            return self.seen[path]
        if isinstance(node, ast.BoolOp):
            return self.boolean(node)
        if isinstance(node, ast.UnaryOp):
            inner = self.value(node.operand)
            if isinstance(node.op, ast.Not):
                return not inner
            if not _is_number(inner):
                raise self.fail(node, f"negates {_type(inner)}", "a number")
            return -inner
        if isinstance(node, ast.BinOp):
            return self.arithmetic(node)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        raise self.fail(node, "is not allowed", _VALID.removeprefix("valid: "))

    def boolean(self, node: ast.BoolOp) -> bool:
        stop = isinstance(node.op, ast.Or)  # `or` stops at its first true operand, `and` at a false one
        for i, operand in enumerate(node.values):
            if bool(self.value(operand)) == stop:
                for rest in node.values[i + 1 :]:
                    self.record(rest)
                return stop
        return not stop

    def arithmetic(self, node: ast.BinOp) -> Any:
        left, right = self.value(node.left), self.value(node.right)
        symbol = _SYMBOL[type(node.op)]
        if not (_is_number(left) and _is_number(right)):
            raise self.fail(node, f"is {_type(left)} {symbol} {_type(right)}", "numbers on both sides")
        if isinstance(node.op, ast.Div) and right == 0:
            raise self.fail(node, f"divides {_type(left)} by zero")
        return self.number(node, _ARITHMETIC[type(node.op)](left, right))

    def compare(self, node: ast.Compare) -> bool:
        left = self.value(node.left)
        for i, (op, right_node) in enumerate(zip(node.ops, node.comparators, strict=True)):
            right = self.value(right_node)
            if isinstance(op, _ORDERING) and not (
                (_is_number(left) and _is_number(right)) or (isinstance(left, str) and isinstance(right, str))
            ):
                raise self.fail(node, f"orders {_type(left)} against {_type(right)}", "numbers, or two names")
            if not _COMPARE[type(op)](left, right):
                for rest in node.comparators[i + 1 :]:
                    self.record(rest)
                return False
            left = right
        return True

    def call(self, node: ast.Call) -> Any:
        assert isinstance(node.func, ast.Name)
        name, args = node.func.id, [self.value(a) for a in node.args]
        wanted = "one number" if name == "abs" else "one or more numbers"
        if not args or (name == "abs" and len(args) != 1) or not all(_is_number(a) for a in args):
            given = ", ".join(_type(a) for a in args) or "nothing"
            raise self.fail(node, f"is given {given}", wanted)
        return self.number(node, _FUNCTIONS[name](*args))


def _type(value: Any) -> str:
    """A value as an error names it: a number as the number, else its kind and a short repr."""
    if _is_number(value):
        return f"{value:.4g}"
    if isinstance(value, str):
        return f"the name {_short(value, 30)}"
    return f"{type(value).__name__} {_short(repr(value), 30)}"


def evaluate(condition: str, lookup: Callable[[str], Any], seen: dict[str, Any]) -> bool:
    """Whether `condition` holds, each path read through `lookup` and recorded in `seen`; a
    condition that cannot be evaluated at this setting (a division by zero, a name compared with
    a number, a number past the bound) is a one-line ClaimError naming the part and the values."""
    tree = compile_condition(condition)
    return bool(_Evaluation(condition, lookup, seen).value(tree))


def record_paths(condition: str, lookup: Callable[[str], Any], seen: dict[str, Any]) -> None:
    """Record the paths `condition` names without evaluating it (an alternative after the one
    that held): the claim's values name every path at every setting."""
    _Evaluation(condition, lookup, seen).record(compile_condition(condition))


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
