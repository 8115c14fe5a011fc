"""A claim's condition (dtfilm.claims): a small expression language over the template paths of
`dtfilm estimate --json`, compiled within a budget of length, nodes, depth, names, numbers and
time (MAX_* below, docs/storyboards.md), every error of evaluation one line naming its values."""

from __future__ import annotations

import ast
import operator
import re
import time
from collections.abc import Callable
from typing import Any

from dtfilm.paths import TemplateError, lookup, suggested_unit
from dtfilm.units import format_quantity

_LITERAL_UNITS = {"TB": 1e12, "GB": 1e9, "MB": 1e6, "ms": 1e-3, "s": 1.0}


_UNIT_LITERAL = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?(?:e-?\d+)?)\s?(TB|GB|MB|ms|s)\b")


class ClaimError(ValueError):
    """A claim that cannot be read; the message says what is valid."""


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


def shown_value(path: str, value: Any) -> str:
    """A value as the screen would show it (93.7 GB, 165 ms), for the reports."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return repr(value)
    unit = suggested_unit(own_path(path), value)
    if unit in ("bytes", "time", "GB/s"):
        return format_quantity(float(value), unit).replace("\xa0", " ")
    return f"{value:.4g}"
