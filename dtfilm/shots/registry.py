"""The shot kinds a storyboard may name: every kind's spec, found in its own folder.

A kind lives in a folder of dtfilm/shots/: `specs.py` holds its `KindSpec` in `SPECS` (read with no
Manim: the loader and `dtfilm check` need only this), beside the module(s) with its `play_<kind>`
(dtfilm.shots.plays finds those). `KINDS` is found on first use, so that a mistake in a kind (a bad
field, a name taken twice, a spec that does not load) is the one-line DtfilmError of the command
that reads it, naming the kind and its file.
"""

from __future__ import annotations

import importlib
import pkgutil
import traceback
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dtfilm.errors import DtfilmError
from dtfilm.storyboard.kinds import MAX_ROWS, PICK_KEYS, READS, SHOT_KEYS, SWEEP_KEYS, KindSpec
from dtfilm.storyboard.marks import MARK

SPECS_MODULE = "specs"
HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Found:
    """A kind's spec and the file that declares it (None: `register`ed from outside dtfilm/shots)."""

    spec: KindSpec
    path: Path | None
    folder: str | None  # the folder's module (dtfilm.shots.pipeline), whose modules draw it


def shown(path: Path | None) -> str:
    """A spec's file as an error names it: from the project's root where it is under it."""
    if path is None:
        return "registered"
    try:
        return str(path.resolve().relative_to(HERE.parent.parent))
    except ValueError:
        return str(path)


def _is_names(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, str) and v for v in value)


def _is_counts(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and type(v) is int for k, v in value.items())


def taken_keys(spec: KindSpec) -> set[str]:
    """The keys every shot of the kind's flavour takes (a sweep's, a rows or pick kind's): its own are others."""
    return {
        *SHOT_KEYS,
        *(SWEEP_KEYS if spec.sweep else ()),
        *(("rows",) if spec.rows else ()),
        *(PICK_KEYS if spec.pick else ()),
    }


def _keys_problem(spec: KindSpec) -> str | None:
    keys = spec.keys
    if not isinstance(keys, dict):
        return "keys is no mapping of name -> (parser, required)"
    for name, entry in keys.items():
        if not (isinstance(entry, tuple) and len(entry) == 2 and callable(entry[0]) and isinstance(entry[1], bool)):
            return f"keys[{name!r}] is no (parser, required) pair"
        if name in taken_keys(spec):
            return f"keys[{name!r}] is a key every shot of its flavour takes already"
    return None


def _marks_problem(marks: Any) -> str | None:
    if not isinstance(marks, dict):
        return "marks is no mapping of mark -> what shows then"
    for name, what in marks.items():
        if not isinstance(name, str) or not MARK.fullmatch(f"[{name}]"):
            return f"marks: {name!r} is no mark a narration can write ([a-z0-9_], starting with a letter or digit)"
        if not isinstance(what, str) or not what.strip():
            return f"marks[{name!r}] says not what shows then"
    return None


def _flags_problem(spec: KindSpec) -> str | None:
    if not (isinstance(spec.summary, str) and spec.summary.strip()):
        return "summary is not text"
    if not isinstance(spec.doc, str):
        return "doc is not text"
    if not all(isinstance(getattr(spec, f), bool) for f in ("sweep", "rows", "pick", "tree", "paced")):
        return "sweep, rows, pick, tree and paced are True or False"
    if spec.tree and not spec.pick:
        return "tree answers the planner's pick: it needs pick=True"
    if type(spec.most_rows) is not int or not 1 <= spec.most_rows <= MAX_ROWS:
        return f"most_rows is a count from 1 to {MAX_ROWS} (MAX_ROWS)"
    if type(spec.most_sentences) is not int or spec.most_sentences < 0:
        return "most_sentences is a count (0: any)"
    return None


def _parts_problem(spec: KindSpec) -> str | None:
    for name in ("takes", "hands_on", "per_step", "reads"):
        if not _is_names(getattr(spec, name)):
            return f"{name} is no tuple of names"
    for name in ("needs", "at_most"):
        if not _is_counts(getattr(spec, name)):
            return f"{name} is no mapping of a plan degree to a whole number"
    if not set(spec.per_step) <= set(spec.keys):
        return f"per_step names {sorted(set(spec.per_step) - set(spec.keys))}, not keys of the kind"
    if not set(spec.reads) <= set(READS):
        return f"reads {sorted(set(spec.reads) - set(READS))}; what a kind may read of the film: {', '.join(READS)}"
    return None


def spec_problem(spec: Any) -> str | None:
    """What is wrong with a kind's spec, in words, or None: each field of the type it must be."""
    if not isinstance(spec, KindSpec):
        return f"{spec!r} is no KindSpec"
    if not (isinstance(spec.name, str) and spec.name.isidentifier() and spec.name == spec.name.lower()):
        return f"name {spec.name!r} is no kind's name (lower case, a Python name: its function is play_<name>)"
    cost = spec.draw_seconds_per_second
    if cost == 0:
        return (
            "draw_seconds_per_second is missing (seconds of drawing a second of the shot: 0.2, about the"
            " film's middle, until a render measures it)"
        )
    if isinstance(cost, bool) or not isinstance(cost, int | float) or not cost > 0:
        return f"draw_seconds_per_second {cost!r} is no positive number of seconds"
    return _keys_problem(spec) or _marks_problem(spec.marks) or _flags_problem(spec) or _parts_problem(spec)


def _line_in(error: BaseException, path: Path) -> str:
    """':LINE' of the deepest frame of `error` in `path`, where it has one."""
    lines = [f.lineno for f in traceback.extract_tb(error.__traceback__) if Path(f.filename) == path]
    return f":{lines[-1]}" if lines else ""


def _load_specs(module_name: str, path: Path) -> tuple[Any, Any]:
    """A folder's specs module's SPECS and PLACE; a module that does not load is one line."""
    try:
        module = importlib.import_module(module_name)
    except DtfilmError:
        raise
    except Exception as error:  # any mistake in the kind's file: one line naming it, not a traceback
        raise DtfilmError(f"{shown(path)}{_line_in(error, path)}: {type(error).__name__}: {error}") from None
    if not hasattr(module, "SPECS"):
        raise DtfilmError(f"{shown(path)}: no SPECS (a tuple of its kinds' KindSpec)")
    return module.SPECS, getattr(module, "PLACE", None)


def find_specs(folders: list[str], package: str) -> dict[str, Found]:
    """Every kind declared in a `specs.py` of a folder of `package`: by its folder's PLACE (a
    folder without one after those with one), then by folder name, then in SPECS' order. A
    bad spec, a name declared twice, is an error naming the kind and its file."""
    placed = []
    for info in pkgutil.iter_modules(folders):
        path = Path(str(getattr(info.module_finder, "path", ""))) / info.name / f"{SPECS_MODULE}.py"
        if not info.ispkg or not path.is_file():
            continue
        folder = f"{package}.{info.name}"
        specs, place = _load_specs(f"{folder}.{SPECS_MODULE}", path)
        if not isinstance(specs, tuple):
            raise DtfilmError(f"{shown(path)}: SPECS is no tuple of KindSpec")
        if place is not None and type(place) is not int:
            raise DtfilmError(f"{shown(path)}: PLACE {place!r} is no whole number")
        placed.append(((place is None, place or 0, info.name), folder, path, specs))
    found: dict[str, Found] = {}
    for _, folder, path, specs in sorted(placed, key=lambda entry: entry[0]):
        for spec in specs:
            name = getattr(spec, "name", None)
            problem = spec_problem(spec)
            if problem:
                raise DtfilmError(f"{shown(path)}: shot kind {name!r}: {problem}")
            if spec.name in found:
                raise DtfilmError(
                    f"{shown(path)}: shot kind {spec.name!r} is declared twice (also in {shown(found[spec.name].path)})"
                )
            found[spec.name] = Found(spec, path, folder)
    return found


class Kinds(Mapping[str, KindSpec]):
    """Every kind's spec by name (a read-only mapping), found in `folders` on first use."""

    def __init__(self, folders: list[str], package: str) -> None:
        self.folders, self.package = folders, package
        self._found: dict[str, Found] | None = None

    def found(self) -> dict[str, Found]:
        if self._found is None:
            self._found = find_specs(self.folders, self.package)
        return self._found

    def __getitem__(self, name: str) -> KindSpec:
        return self.found()[name].spec

    def __iter__(self) -> Iterator[str]:
        return iter(self.found())

    def __len__(self) -> int:
        return len(self.found())

    def where(self, name: str) -> Found:
        """The kind's spec with its file and folder."""
        return self.found()[name]

    def add(self, spec: KindSpec) -> None:
        """A kind from outside dtfilm/shots (dtfilm.shots.plays.register): checked as the film's are."""
        problem = spec_problem(spec)
        if problem:
            raise DtfilmError(f"shot kind {getattr(spec, 'name', None)!r}: {problem}")
        if spec.name in self.found():
            raise DtfilmError(f"shot kind {spec.name!r} exists already")
        self.found()[spec.name] = Found(spec, None, None)


KINDS = Kinds([str(HERE)], __name__.rpartition(".")[0])
