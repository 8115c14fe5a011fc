"""Every kind's play function, `play_<kind>`, found in the modules beside its spec.

Each kind's `play_<kind>(ctx, shot)` is in a module of the folder whose `specs.py` declares it
(dtfilm.shots.registry). A function for no kind, one outside its kind's folder, or a kind with
no function is a one-line DtfilmError naming the kind and its file, when the shots are first read
(the dry run, a render), not a KeyError when a shot plays.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from dtfilm.errors import DtfilmError
from dtfilm.scene import ShotContext
from dtfilm.shots.registry import KINDS, SPECS_MODULE, Kinds, shown
from dtfilm.storyboard import Shot
from dtfilm.storyboard.kinds import KindSpec

ShotFunction = Callable[[ShotContext, Shot], None]
PREFIX = "play_"


def _modules(folders: list[str], package: str) -> list[ModuleType]:
    """Every module under `folders` but the specs (and this one), imported."""
    found = []
    for info in pkgutil.walk_packages(folders, f"{package}."):
        if info.name.rpartition(".")[2] != SPECS_MODULE and info.name != __name__:
            found.append(importlib.import_module(info.name))
    return found


def _play_functions(module: ModuleType) -> list[tuple[str, ShotFunction]]:
    return [
        (name[len(PREFIX) :], value)
        for name, value in vars(module).items()
        if name.startswith(PREFIX) and callable(value) and getattr(value, "__module__", None) == module.__name__
    ]


def find_shots(folders: list[str], package: str, kinds: Kinds) -> dict[str, ShotFunction]:
    """Every `play_<kind>` defined in a module of `package`, by kind, in `kinds`' order. A function
    for no kind (a typo), one outside its spec's folder, two for a kind, or a kind of the package
    without one, is an error naming it."""
    found: dict[str, ShotFunction] = {}
    for module in _modules(folders, package):
        where = shown(Path(module.__file__ or module.__name__))
        for kind, play in _play_functions(module):
            if kind not in kinds:
                raise DtfilmError(f"{where}: {module.__name__}.{PREFIX}{kind} draws no kind: no spec names {kind!r}")
            home = kinds.where(kind)
            if home.folder is not None and not module.__name__.startswith(f"{home.folder}."):
                raise DtfilmError(
                    f"{where}: {PREFIX}{kind} is not beside its spec ({shown(home.path)}): a kind's"
                    " play function sits in its spec's folder"
                )
            if kind in found:
                raise DtfilmError(f"{where}: shot kind {kind!r} has two play functions (also {found[kind].__module__})")
            found[kind] = play
    for kind in kinds:
        home = kinds.where(kind)
        if home.folder is not None and home.folder.startswith(f"{package}.") and kind not in found:
            raise DtfilmError(f"{shown(home.path)}: shot kind {kind!r} has no {PREFIX}{kind} in a module of its folder")
    return {kind: found[kind] for kind in kinds if kind in found}


SHOTS: dict[str, ShotFunction] = find_shots([str(Path(__file__).resolve().parent)], __name__.rpartition(".")[0], KINDS)


def register(spec: KindSpec, play: ShotFunction) -> None:
    """Add a shot kind from outside the package (a notebook, a test): its spec, checked as a
    folder's is, and the function that draws it. The film's own kinds are each a folder of
    dtfilm/shots/, found by themselves."""
    if spec.name in SHOTS:
        raise DtfilmError(f"shot kind {spec.name!r} exists already")
    KINDS.add(spec)
    SHOTS[spec.name] = play
