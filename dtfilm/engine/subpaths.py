"""A quicker `VMobject.consider_points_equals` and `VMobject.get_subpaths_from_points`.

Manim asks whether two points are the same with `np.allclose`, about 100 µs a call on two
3-vectors (NumPy's checks dwarf the three subtractions), and splits a path into its subpaths by
asking that once per curve in a Python `filter`. Every transform's `align_points`, every
rounded corner and every outline drawn pays it: sampled, 7% of `dtfilm check dp` (cold).

These give the same answers: a pair of 3-vectors is compared coordinate by coordinate with
`np.isclose`'s rule (|a - b| <= atol + 1e-5 |b|, a NaN never close, an infinity close only to
itself), anything else goes to Manim's `np.allclose`; the subpaths are split where `np.isclose`
over all the curves' joins at once says a curve does not start where the one before ended,
which is `allclose` pair by pair.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from manim import VMobject

_manims_equals = VMobject.consider_points_equals
_manims_subpaths = VMobject.get_subpaths_from_points
_RTOL = 1.0e-5  # np.isclose's default, which Manim's allclose uses
_MANY_ROWS = 8  # more points than this against one go to NumPy (a Python step a coordinate)


def quick_equals(self: VMobject, p0: np.ndarray, p1: np.ndarray) -> bool:
    """`VMobject.consider_points_equals`, the same answer. A few points against one (`align_points`
    asks whether a path's last curve is its end point repeated) are each compared with it."""
    if type(p0) is not np.ndarray or type(p1) is not np.ndarray or p1.shape != (3,):
        return bool(_manims_equals(self, p0, p1))
    if p0.dtype != np.float64 or p1.dtype != np.float64 or not math.isfinite(self.tolerance_for_point_equality):
        return bool(_manims_equals(self, p0, p1))  # (NumPy compares float32 in float32; an infinite tolerance)
    if p0.shape == (3,):
        rows = [p0.tolist()]
    elif p0.ndim == 2 and p0.shape[1] == 3 and 0 < p0.shape[0] <= _MANY_ROWS:
        rows = p0.tolist()
    else:
        return bool(_manims_equals(self, p0, p1))
    atol = self.tolerance_for_point_equality
    one = p1.tolist()
    for row in rows:
        for a, b in zip(row, one, strict=True):
            if a != b:
                apart = abs(a - b)
                if not (apart <= atol + _RTOL * abs(b) and math.isfinite(apart)):
                    return False
    return True


def quick_subpaths(self: VMobject, points: np.ndarray) -> list[np.ndarray]:
    """`VMobject.get_subpaths_from_points`, the same pieces of `points`."""
    step = self.n_points_per_cubic_curve
    joins = np.arange(step, len(points), step)
    if len(joins):
        together = np.isclose(points[joins - 1], points[joins], rtol=_RTOL, atol=self.tolerance_for_point_equality)
        splits = joins[~together.reshape(len(joins), -1).all(axis=1)].tolist()
    else:
        splits = []
    bounds = [0, *splits, len(points)]
    return [points[start:end] for start, end in itertools.pairwise(bounds) if end - start >= step]


def install() -> None:
    """Every VMobject's points compared by `quick_equals` and split by `quick_subpaths`
    (dtfilm.engine.drawing installs them)."""
    VMobject.consider_points_equals = quick_equals  # type: ignore[method-assign,assignment]
    VMobject.get_subpaths_from_points = quick_subpaths  # type: ignore[method-assign]


def uninstall() -> None:
    VMobject.consider_points_equals = _manims_equals  # type: ignore[method-assign]
    VMobject.get_subpaths_from_points = _manims_subpaths  # type: ignore[method-assign]
