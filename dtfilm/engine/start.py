"""Manim's import without scipy: a third of it, paid by every render that draws. The engine's one
piece that acts at import time (of dtfilm), as it must: it has to be in place before Manim is.

Manim's `space_ops` imports scipy's `Rotation` at its top for one use: `rotation_matrix`, the
matrix of a turn about an axis (`Rotation.from_rotvec(v).as_matrix()`). Importing it loads
scipy.spatial (k-d trees, sparse matrices, linear algebra): 0.25-0.47 s of Manim's 0.9-1.0 s
import on this machine, on the path of every changed caption's few seconds (the command line
imports Manim before its drawing processes fork).

`install()` (run by `import dtfilm`) has that one module imported with `AxisRotation` standing in
for scipy's class: the same matrix (Rodrigues' formula, equal to scipy's within 2e-15), in numpy.
Nothing else changes: scipy.spatial.transform is put back as it was once `space_ops` is loaded,
so code that imports it later gets scipy's own. `space_ops` uses `AxisRotation` even where
scipy was loaded first, so every process draws with the same matrices.

Beautiful Soup, which Manim's Code mobject parses its highlighting with, imports Soup Sieve for
CSS selectors, which neither uses; Soup Sieve compiles its patterns as it loads (40-48 ms here).
It is loaded lazily (importlib.util.LazyLoader): on first use, should anything select by CSS.

Manim's `graph` module (its Graph mobject, which dtfilm does not draw) imports networkx at its
top, 0.15-0.25 s of CPU in every process that imports Manim, and reads it at import only to list
its layout functions (`nx.layout.circular_layout` and six more). It is run with networkx standing
as `LazyNetworkx`: a layout function is looked up in networkx when it is called, anything else
when it is first asked for, so a Graph drawn from dtfilm or a user's scene works as before. Like
the rotation's stand-in, it is taken out of sys.modules once `graph` is loaded: code that imports
networkx later gets networkx itself.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

SPACE_OPS = "manim.utils.space_ops"
ROTATION_MODULE = "scipy.spatial.transform"
GRAPH = "manim.mobject.graph"
NETWORKX = "networkx"
LAZY_MODULES = ("soupsieve",)  # imported by what Manim imports, used by neither


class AxisRotation:
    """What Manim asks of scipy's Rotation: `AxisRotation.from_rotvec(v).as_matrix()`, the turn
    by |v| radians about v, counterclockwise looking down v."""

    def __init__(self, matrix: Any) -> None:
        self._matrix = matrix

    @classmethod
    def from_rotvec(cls, rotvec: Sequence[float]) -> AxisRotation:
        # (here: numpy only when a rotation is made: `import dtfilm` stays light)
        import numpy as np

        vector = np.asarray(rotvec, dtype=float)
        angle = float(np.linalg.norm(vector))
        if angle == 0.0:
            return cls(np.eye(3))
        x, y, z = vector / angle
        cross = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
        return cls(np.eye(3) + np.sin(angle) * cross + (1.0 - np.cos(angle)) * (cross @ cross))

    def as_matrix(self) -> Any:
        return self._matrix  # made anew by each from_rotvec, as scipy's is


def _networkx() -> types.ModuleType:
    return importlib.import_module(NETWORKX)


class _LazyLayouts:
    """`nx.layout` at Manim's import: each function looked up in networkx when it is called."""

    def __getattr__(self, name: str) -> Any:
        def layout(*args: Any, **kwargs: Any) -> Any:
            return getattr(_networkx().layout, name)(*args, **kwargs)

        layout.__name__ = layout.__qualname__ = name
        return layout


class LazyNetworkx(types.ModuleType):
    """networkx as Manim's `graph` module holds it: loaded at the first use of anything but
    the layout functions, which load it when called."""

    def __init__(self) -> None:
        super().__init__(NETWORKX)
        self.layout = _LazyLayouts()

    def __getattr__(self, name: str) -> Any:  # (only for names not set: all but `layout`)
        return getattr(_networkx(), name)


class _WithStandIn(importlib.abc.Loader):
    """Runs a module with `make()` standing in sys.modules as `name` (unless the real module is
    already loaded), takes it out again after, and then calls `after` with the module."""

    def __init__(
        self,
        loader: importlib.abc.Loader,
        name: str,
        make: Callable[[], types.ModuleType],
        after: Callable[[types.ModuleType], None] | None = None,
    ) -> None:
        self.loader, self.name, self.make, self.after = loader, name, make, after

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        stand_in = None
        if self.name not in sys.modules:
            stand_in = self.make()
            sys.modules[self.name] = stand_in
        try:
            self.loader.exec_module(module)
        finally:
            if stand_in is not None and sys.modules.get(self.name) is stand_in:
                del sys.modules[self.name]
        if self.after is not None:
            self.after(module)

    def __getattr__(self, name: str) -> Any:  # get_source and the rest, for tracebacks
        return getattr(self.loader, name)


def _rotation_module() -> types.ModuleType:
    """scipy.spatial.transform as `space_ops` imports it: a module holding AxisRotation."""
    stand_in = types.ModuleType(ROTATION_MODULE)
    stand_in.Rotation = AxisRotation  # type: ignore[attr-defined]
    return stand_in


def _use_axis_rotation(space_ops: types.ModuleType) -> None:
    space_ops.Rotation = AxisRotation  # type: ignore[attr-defined]  # (also where scipy was loaded first)


class _StartFinder(importlib.abc.MetaPathFinder):
    """Finds space_ops (run with AxisRotation), graph (with LazyNetworkx) and LAZY_MODULES (loaded
    lazily) as usual, with those loaders."""

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name not in (SPACE_OPS, GRAPH) and name not in LAZY_MODULES:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None and spec.loader is not None:
            if name == SPACE_OPS:
                spec.loader = _WithStandIn(spec.loader, ROTATION_MODULE, _rotation_module, _use_axis_rotation)
            elif name == GRAPH:
                spec.loader = _WithStandIn(spec.loader, NETWORKX, LazyNetworkx)
            else:
                spec.loader = importlib.util.LazyLoader(spec.loader)
        return spec


def install() -> None:
    """Have Manim's `space_ops`, whenever it is first imported, use AxisRotation, its `graph`
    LazyNetworkx, and Soup Sieve load lazily (once per process)."""
    if SPACE_OPS not in sys.modules and not any(isinstance(f, _StartFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _StartFinder())
