"""Rounded corners computed once per shape: `Polygram.round_corners` kept by what it reads.

Manim rounds a polygon's corners by building an `ArcBetweenPoints` for every corner and a `Line`
between each two, for every rounded rectangle made (a card, a slot, a legend's swatch): sampled,
5% of a cold `dtfilm check dp` and as much of a shot's drawing, for a few dozen shapes of a few
sizes made again and again.

Its result is a function of the polygon's points (its vertex groups are read from them, split
where the shape's tolerance says two points are one), the radius and the two options, and it
ends by setting the points. So this keeps the points it set, by those and the shape's class,
tolerance and points per curve, and sets a copy of the same array on a shape that asks again:
the same points, bit for bit (tests/test_corners.py). A radius of 0, or one that is not a
number or a list of numbers, or a count of corner parts that is not an int, goes to Manim as
before. At most KEPT_SHAPES are kept, the oldest dropped first.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from manim import Polygram

_manims_round_corners = Polygram.round_corners
KEPT_SHAPES = 512  # a chapter makes a few dozen sizes; each kept is a few KB of points
_kept: OrderedDict[tuple[Any, ...], Any] = OrderedDict()


def _radius_key(radius: Any) -> tuple[float, ...] | None:
    """The radius as a key, None where it is not a number or a list of numbers."""
    values = radius if isinstance(radius, (list, tuple)) else [radius]
    if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return None
    return (isinstance(radius, (list, tuple)), *(float(v) for v in values))


def quick_round_corners(
    self: Polygram,
    radius: float | list[float] = 0.5,
    evenly_distribute_anchors: bool = False,
    components_per_rounded_corner: int = 2,
) -> Polygram:
    """`Polygram.round_corners`, the same points, each shape's computed once."""
    radius_key = _radius_key(radius)
    parts = components_per_rounded_corner
    if radius_key is None or radius == 0 or type(parts) is not int:  # (Manim refuses 2.5, and 3.0)
        return _manims_round_corners(self, radius, evenly_distribute_anchors, components_per_rounded_corner)
    points = self.points
    key = (
        type(self),  # (a class may find its corners another way)
        float(self.tolerance_for_point_equality),  # (where its vertex groups split)
        int(self.n_points_per_cubic_curve),
        points.shape,
        str(points.dtype),
        points.tobytes(),
        radius_key,
        bool(evenly_distribute_anchors),
        parts,
    )
    kept = _kept.get(key)
    if kept is None:
        _manims_round_corners(self, radius, evenly_distribute_anchors, components_per_rounded_corner)
        _kept[key] = self.points.copy()
        if len(_kept) > KEPT_SHAPES:
            _kept.popitem(last=False)
        return self
    _kept.move_to_end(key)
    self.set_points(kept)  # (Manim's set_points copies the array)
    return self


def install() -> None:
    """Every polygon's corners rounded by `quick_round_corners` (dtfilm.engine.drawing installs it)."""
    Polygram.round_corners = quick_round_corners  # type: ignore[method-assign,assignment]


def uninstall() -> None:
    Polygram.round_corners = _manims_round_corners  # type: ignore[method-assign]
