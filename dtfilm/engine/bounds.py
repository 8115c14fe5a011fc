"""A quicker `VMobject.get_points_defining_boundary`, `Mobject.get_critical_point` and
`Mobject.length_over_dim`.

Manim lists a VMobject's boundary points (every member's curve anchors, start and end
interleaved) by zipping two array slices and chaining them into a tuple of rows, one Python step
a point: every `get_center`, `move_to`, `next_to` and edge of a mobject pays it. Profiled,
`dtfilm check pp --pp 16` spent 53 s of 373 in `get_critical_point`, most of it building that
tuple.

This returns the same array, row for row: each member's anchors (its points when it has one
point), start and end interleaved, members in family order; an array of no rows where there is
none (Manim's `np.array(())`); a member whose start and end anchors differ in number raises as
Manim's `zip(strict=True)` does. Widths and heights: `quick_length`; centres, edges and corners:
`quick_critical_point`.
"""

from __future__ import annotations

import numpy as np
from manim import DEFAULT_FONT_SIZE, Mobject, Text, VMobject
from manim.mobject.text.text_mobject import TEXT_MOB_SCALE_FACTOR

_manims_boundary = VMobject.get_points_defining_boundary
_manims_length = Mobject.length_over_dim
_manims_critical_point = Mobject.get_critical_point


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


def quick_length(self: Mobject, dim: int) -> float:
    """`Mobject.length_over_dim` (a `width`, a `height`), the same number. Manim takes the builtin
    `max` and `min` of each member's coordinates, one Python step a point, recursing through the
    family: a text's font size (its height) cost 0.7 ms, 1.2 s of a 17 s dry run of tp. Here,
    NumPy's over the family's points at once; a member with no points is left out, as Manim's
    `reduce_across_dimension` leaves it. A NaN coordinate gets Manim's own answer (the builtins
    order it as NumPy does not)."""
    columns = [member.points[:, dim] for member in self.get_family() if len(member.points)]
    if not columns:
        return 0
    values = columns[0] if len(columns) == 1 else np.concatenate(columns)
    high, low = values.max(), values.min()
    if np.isnan(high) or np.isnan(low):
        return _manims_length(self, dim)
    return high - low


def quick_critical_point(self: Mobject, direction: np.ndarray) -> np.ndarray:
    """`Mobject.get_critical_point` (`get_center`, `get_top`, `get_corner`...), the same point.
    Manim takes NumPy's `min` and `max` of the boundary's column once per axis and end, through
    `get_extremum_along_dim`: 8% of a cold `dtfilm check dp`, sampled, most of it NumPy's cost of
    a call. Here, the columns' `min` and `max` at once; each coordinate is then the same
    number: the least, the greatest, or (least + greatest) / 2 as Manim computes it."""
    result = np.zeros(self.dim)
    points = self.get_points_defining_boundary()
    if len(points) == 0:
        return result
    low, high = points.min(axis=0), points.max(axis=0)
    for dim in range(self.dim):
        key = direction[dim]
        result[dim] = low[dim] if key < 0 else (low[dim] + high[dim]) / 2 if key == 0 else high[dim]
    return result


def font_size_at_height(text: Text, height: float) -> float:
    """`Text.font_size` of a text whose height (its family's points, `Text.height`) is `height`,
    measured already: the same number, by Manim's formula, without measuring the text again.
    The design check sizes every text on screen after every animation, having just measured
    its box (4% of a cold `dtfilm check dp`, sampled, went to measuring it twice)."""
    return height / text.initial_height / TEXT_MOB_SCALE_FACTOR * 2.4 * text._font_size / DEFAULT_FONT_SIZE


def install() -> None:
    """Every VMobject's boundary is listed by `quick_boundary`, every mobject's width and height
    measured by `quick_length` and its centre, edges and corners found by `quick_critical_point`
    (dtfilm.engine.drawing installs them)."""
    VMobject.get_points_defining_boundary = quick_boundary  # type: ignore[method-assign]
    Mobject.length_over_dim = quick_length  # type: ignore[method-assign]
    Mobject.get_critical_point = quick_critical_point  # type: ignore[method-assign]


def uninstall() -> None:
    VMobject.get_points_defining_boundary = _manims_boundary  # type: ignore[method-assign]
    Mobject.length_over_dim = _manims_length  # type: ignore[method-assign]
    Mobject.get_critical_point = _manims_critical_point  # type: ignore[method-assign]
