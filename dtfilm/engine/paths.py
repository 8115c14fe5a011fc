"""A cache of the Cairo paths Manim builds, one per distinct outline.

Manim's Cairo camera turns every VMobject into a Cairo path on every frame: it finds the
subpaths in the points (numpy, about 50 µs) and issues each curve from Python (a glyph has 10 to
40). Most of what a frame draws has been drawn before with the same points: a fading label, a
caption held, the static picture behind each animation. Profiled on the dp ring shot (30,000
outlines drawn in 324 frames), building paths was two thirds of the frames' drawing time.

Here each path is built once and replayed with `append_path`, keyed by the outline's points and
the camera's transform. Cairo keeps a path in device space at fixed point; `copy_path` hands it
back in user space and `append_path` maps it to the same device coordinates, so a frame drawn
from the cache is the same pixels as one drawn without it (a test checks, and the clips of dp's
shots are byte for byte the same).
"""

from __future__ import annotations

from typing import Any

import cairo
import numpy as np
from manim.camera.camera import Camera

# about: the kept paths' points, held twice (the keys are the points); cleared when reached
MAX_CACHED_BYTES = 96 * 2**20

_paths: dict[tuple[Any, ...], cairo.Path] = {}
_cached_bytes = 0


def _outline_key(points: np.ndarray, ctx: cairo.Context, vmobject: Any) -> tuple[Any, ...]:
    """The outline exactly (its points' bytes, not a digest of them) and what else shapes its
    path: the camera's transform and how the points make curves. A tuple of plain values hashes
    in a quarter of the time a blake2b digest of the same took (1.6 against 6.7 µs an outline;
    the film draws about a million)."""
    return (
        points.tobytes(),
        points.shape,
        tuple(ctx.get_matrix()),
        vmobject.n_points_per_cubic_curve,
        vmobject.tolerance_for_point_equality,
    )


class FilmCamera(Camera):
    """Manim's Cairo camera, with each distinct outline's Cairo path built once (the cache above):
    the camera every dtfilm drawing uses (FilmRenderer's, the explorer page's pictures)."""

    def set_cairo_context_path(self, ctx: cairo.Context, vmobject: Any) -> Camera:
        """Manim's `Camera.set_cairo_context_path`, building each distinct outline's path once."""
        global _cached_bytes
        points = vmobject.points
        if len(points) == 0:  # (Manim leaves the context's path as it was)
            return super().set_cairo_context_path(ctx, vmobject)
        key = _outline_key(points, ctx, vmobject)
        path = _paths.get(key)
        if path is None:
            super().set_cairo_context_path(ctx, vmobject)
            if _cached_bytes >= MAX_CACHED_BYTES:
                clear()
            _paths[key] = ctx.copy_path()
            _cached_bytes += 2 * points.nbytes
        else:
            ctx.new_path()
            ctx.append_path(path)
        return self


def clear() -> None:
    global _cached_bytes
    _paths.clear()
    _cached_bytes = 0
