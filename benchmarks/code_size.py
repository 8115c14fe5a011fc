"""Issue 61's size counts: functions over 60 lines and modules over 400 lines in dtfilm/, counted
as physical lines (docstrings and comments included), the longest first.

    .venv/bin/python benchmarks/code_size.py            # the counts and the lists
    .venv/bin/python benchmarks/code_size.py --counts   # the two counts alone

Prints figures; asserts nothing. Target (issue 61): at most 10 functions over 60 lines and at
most 8 modules over 400 lines, each left with its reason in a comment.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FUNCTION_LINES = 60
MODULE_LINES = 400


def long_functions(package: Path) -> list[tuple[int, str]]:
    """(lines, "path:line name") of every function or method over FUNCTION_LINES."""
    found = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                lines = node.end_lineno - first + 1
                if lines > FUNCTION_LINES:
                    found.append((lines, f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"))
    return sorted(found, reverse=True)


def long_modules(package: Path) -> list[tuple[int, str]]:
    """(lines, path) of every module over MODULE_LINES."""
    sized = [(len(p.read_text().splitlines()), str(p.relative_to(ROOT))) for p in package.rglob("*.py")]
    return sorted((n, p) for n, p in sized if n > MODULE_LINES)[::-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", action="store_true", help="print the two counts alone")
    args = parser.parse_args()
    functions, modules = long_functions(ROOT / "dtfilm"), long_modules(ROOT / "dtfilm")
    print(f"functions over {FUNCTION_LINES} lines: {len(functions)}")
    print(f"modules over {MODULE_LINES} lines: {len(modules)}")
    if args.counts:
        return
    for title, rows in (("functions", functions), ("modules", modules)):
        print(f"\n{title}, longest first:")
        for lines, where in rows:
            print(f"  {lines:5d}  {where}")


if __name__ == "__main__":
    main()
