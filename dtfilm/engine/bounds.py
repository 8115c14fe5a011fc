"""A quicker `VMobject.get_points_defining_boundary`. Manim lists a VMobject's boundary points
(every member's curve anchors, start and end interleaved) by zipping two array slices and
chaining them into a tuple of rows, one Python step a point: every `get_center`, `move_to`,
`next_to` and edge of a mobject pays it. Profiled, `dtfilm check pp --pp 16` spent 53 s of 373 in
`get_critical_point`, most of it building that tuple.

This returns the same array, row for row: each member's anchors (its points when it has one
point), start and end interleaved, members in family order; an array of no rows where there is
none (Manim's `np.array(())`); a member whose start and end anchors differ in number raises as
Manim's `zip(strict=True)` does.
"""

from __future__ import annotations

import numpy as np
from manim import VMobject

_manims_boundary = VMobject.get_points_defining_boundary


def _anchors(member: VMobject) -> np.ndarray:
    """One member's anchors as Manim's `get_anchors` lists them, as one array."""
    points = member.points
    if points.shape[0] == 1:
        return points
    step = member.n_points_per_cubic_curve
    starts, ends = points[::step], points[step - 1 :: step]
    if len(starts) != len(ends):
        raise ValueError(f"zip() argument 2 is shorter than argument 1 ({len(starts)} starts, {len(ends)} ends)")
    pairs = np.empty((2 * len(starts), points.shape[1]), dtype=points.dtype)
    pairs[0::2], pairs[1::2] = starts, ends
    return pairs


def quick_boundary(self: VMobject) -> np.ndarray:
    """`VMobject.get_points_defining_boundary`, the same array, built with numpy."""
    parts = [anchors for member in self.get_family() if len(anchors := _anchors(member))]
    if not parts:
        return np.array(())
    return np.concatenate(parts).astype(float, copy=False)  # (a new array: one part is copied too)


def install() -> None:
    """Every VMobject's boundary is listed by `quick_boundary` (dtfilm.engine.drawing installs it)."""
    VMobject.get_points_defining_boundary = quick_boundary  # type: ignore[method-assign]


def uninstall() -> None:
    VMobject.get_points_defining_boundary = _manims_boundary  # type: ignore[method-assign]
