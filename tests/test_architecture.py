"""The layout: no import goes round in a cycle, and each package imports only the layers the
README's Layout table puts above it. Both read from the sources (ast), no module is imported."""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "dtfilm"


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the dtfilm module imported
    line: int
    typing_only: bool  # under `if TYPE_CHECKING:`: an annotation, never run


def module_names(package: Path) -> dict[str, Path]:
    names = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _typing_blocks(tree: ast.Module) -> set[int]:
    """The ids of every node under an `if TYPE_CHECKING:`."""
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            inside |= {id(n) for statement in node.body for n in ast.walk(statement)}
    return inside


@functools.cache  # (the sources, parsed once for the tests below)
def imports(package: Path = PACKAGE) -> list[Import]:
    """Every import of a dtfilm module by a dtfilm module: at the top, inside functions, typing-only."""
    modules = module_names(package)

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    found = []
    for source, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        typing = _typing_blocks(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # `from dtfilm.render.chapters import cache` imports the module dtfilm.render.cache
                names = [
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                    for a in node.names
                ]
            else:
                continue
            for name in names:
                target = known(name) if name.split(".")[0] == "dtfilm" else None
                if target and target != source:
                    found.append(Import(source, target, node.lineno, id(node) in typing))
    return found


def cycles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan's algorithm)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def layers(readme: Path = ROOT / "README.md") -> list[list[str]]:
    """The README's Layout table, top row first: each row's names (`system/`, `scene`, `units` ...)."""
    section = readme.read_text().split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|") and not line.startswith("|-")]
    return [re.findall(r"`([a-z_]+)/?`", row.split("|")[1]) for row in rows[1:]]


# A kind's spec (dtfilm/shots/<folder>/specs.py) and the registry that finds them live beside the
# kinds' drawings but read with no Manim: the loader checks storyboards against them, so they sit
# in the storyboard's row of the table as `specs`, not in the shots' row below the scene.
SPEC_MODULE = re.compile(r"dtfilm\.shots\.(registry|\w+\.specs)")


def component(module: str) -> str:
    """What a module belongs to in the table: its subpackage, else its own name (top-level); a
    kind's spec module and the registry, `specs`."""
    if SPEC_MODULE.fullmatch(module):
        return "specs"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_no_import_cycle():
    """Imports that run (at the top and inside functions) never lead back to where they began."""
    edges = {(i.source, i.target) for i in imports() if not i.typing_only}
    assert cycles(edges) == []


def test_cycles_are_found():
    """The check sees a cycle through a function-local import, and a long one."""
    assert cycles({("a", "b"), ("b", "a"), ("c", "a")}) == [["a", "b"]]
    assert cycles({("a", "b"), ("b", "c"), ("c", "d"), ("d", "b")}) == [["b", "c", "d"]]
    assert cycles({("a", "b"), ("b", "c")}) == []


def test_each_package_imports_only_the_layers_above_it():
    """A row of the README's Layout table imports only its own row and the rows above it: the
    rules, stated once, there. Typing-only imports count: they are a dependency too."""
    rows = layers()
    row_of = {name: i for i, row in enumerate(rows) for name in row}
    wrong = []
    for i in imports():
        source, target = component(i.source), component(i.target)
        if source in row_of and target in row_of and row_of[target] > row_of[source]:
            wrong.append(f"{i.source} (row {source}) imports {i.target} (row {target}), line {i.line}")
    assert wrong == []


def test_the_layout_table_lists_every_package_and_module():
    """Every subpackage and every top-level module sits in a row of the table (and so under its rules)."""
    listed = {name for row in layers() for name in row}
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    top = {p.stem for p in PACKAGE.glob("*.py")}
    assert sorted((packages | top) - listed) == []


# Files other branches of issue 48 rewrite (the Manim engine, the typed plan): their imports are
# sorted out there. Remove each from here once it has landed.


def unexplained_local_imports(package: Path = PACKAGE) -> list[str]:
    """Imports inside a function whose block has no comment saying why it is not at the top."""
    found = []
    for path in sorted(package.rglob("*.py")):
        lines = path.read_text().splitlines()
        tree = ast.parse("\n".join(lines))
        typing = _typing_blocks(tree)
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                for field in ("body", "orelse", "finalbody", "handlers"):
                    body = getattr(node, field, None)
                    if not isinstance(body, list):
                        continue
                    for i, statement in enumerate(body):
                        if not isinstance(statement, (ast.Import, ast.ImportFrom)) or id(statement) in typing:
                            continue
                        if i and isinstance(body[i - 1], (ast.Import, ast.ImportFrom)):
                            continue  # one block: its first import carries the comment
                        said = lines[statement.lineno - 2].strip().startswith("#") or "#" in lines[statement.lineno - 1]
                        if not said:
                            found.append(f"{path.relative_to(package.parent)}:{statement.lineno}")
    return found


def test_every_function_local_import_says_why():
    """An import inside a function is there to keep a command from loading Manim or an extra, and
    its comment says which; anything else belongs at the top of the module."""
    assert unexplained_local_imports() == []
