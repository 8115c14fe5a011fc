"""Shot kinds: one function per `kind:` a storyboard may name.

A kind's function is `play_<kind>` in any module of this package, which finds it by itself: a new
kind is its spec in KINDS (dtfilm/storyboard/kinds.py, read with no Manim) and its function, here.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable

from dtfilm.errors import DtfilmError
from dtfilm.scene import ShotContext
from dtfilm.storyboard import Shot
from dtfilm.storyboard.kinds import KINDS, KindSpec

ShotFunction = Callable[[ShotContext, Shot], None]
PREFIX = "play_"


def find_shots(folders: list[str], package: str) -> dict[str, ShotFunction]:
    """Every `play_<kind>` defined in a module of `package`, by kind, in KINDS' order; a
    function for no kind of KINDS (a typo) is an error, naming it."""
    found: dict[str, ShotFunction] = {}
    for module_info in pkgutil.iter_modules(folders):
        module = importlib.import_module(f"{package}.{module_info.name}")
        for name, value in vars(module).items():
            if name.startswith(PREFIX) and callable(value) and value.__module__ == module.__name__:
                if name[len(PREFIX) :] not in KINDS:
                    raise DtfilmError(f"{module.__name__}.{name} draws no kind of KINDS (dtfilm/storyboard/kinds.py)")
                found[name[len(PREFIX) :]] = value
    return {kind: found[kind] for kind in KINDS if kind in found}


SHOTS: dict[str, ShotFunction] = find_shots(__path__, __name__)


def register(spec: KindSpec, play: ShotFunction) -> None:
    """Add a shot kind from outside the package (a scratch kind, a notebook, a test): its spec,
    which the loader checks storyboards against, and the function that draws it. The film's own
    kinds are their specs in KINDS (dtfilm/storyboard/kinds.py) and their `play_<kind>` here."""
    if spec.name in KINDS or spec.name in SHOTS:
        raise DtfilmError(f"shot kind {spec.name!r} exists already")
    KINDS[spec.name] = spec
    SHOTS[spec.name] = play
