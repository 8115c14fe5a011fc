"""How many literal coordinates each shot module places things at (figures printed, not asserted).

A literal coordinate is a number that positions something on the frame: inside a point given to
`move_to([x, y, 0])`, `set_x`/`set_y`, a `UP * 0.3`-style shift, or a module constant named
like a position (`GRID_TOP = 2.45`). Placing into the theme's regions (`ctx.regions.stage.place`)
needs none of them. Usage: python benchmarks/layout_literals.py
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

SHOTS = Path(__file__).resolve().parent.parent / "dtfilm" / "shots"
POSITION_NAMES = ("_X", "_Y", "_TOP", "_BOTTOM", "_LEFT", "_RIGHT")
DIRECTIONS = {"UP", "DOWN", "LEFT", "RIGHT"}


def _numbers_in(node: ast.AST) -> int:
    return sum(
        1
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool)
        and n.value != 0
    )  # fmt: skip


def literal_coordinates(source: str) -> int:
    """The count of non-zero number literals that position something, in one module."""
    tree = ast.parse(source)
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "move_to" and node.args and isinstance(node.args[0], ast.List):
                count += _numbers_in(node.args[0])
            elif node.func.attr in ("set_x", "set_y") and node.args:
                count += _numbers_in(node.args[0])
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            sides = (node.left, node.right)
            if any(isinstance(s, ast.Name) and s.id in DIRECTIONS for s in sides):
                count += sum(_numbers_in(s) for s in sides if not isinstance(s, ast.Name))
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id.isupper() and node.targets[0].id.endswith(POSITION_NAMES):
                count += _numbers_in(node.value)
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple):
            names = [t.id for t in node.targets[0].elts if isinstance(t, ast.Name)]
            if names and all(n.isupper() for n in names) and any(n.endswith(POSITION_NAMES) for n in names):
                count += _numbers_in(node.value)
    return count


def main() -> int:
    total_literals = total_lines = 0
    print(f"{'module':<22}{'lines':>7}{'literal coordinates':>22}{'per 100 lines':>15}")
    for path in sorted(SHOTS.glob("*.py")):
        source = path.read_text()
        lines = len(source.splitlines())
        literals = literal_coordinates(source)
        total_literals += literals
        total_lines += lines
        print(f"{path.name:<22}{lines:>7}{literals:>22}{100 * literals / lines:>15.1f}")
    print(f"{'all':<22}{total_lines:>7}{total_literals:>22}{100 * total_literals / total_lines:>15.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
