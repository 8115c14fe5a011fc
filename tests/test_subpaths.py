"""The quick point equality and subpaths (dtfilm.engine.subpaths) answer as Manim's do."""

from __future__ import annotations

import numpy as np
from manim import Arrow, Circle, RoundedRectangle, Square, VGroup, VMobject

from dtfilm.engine import subpaths
from dtfilm.engine.drawing import drawing
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import THEMES

_TOLERANCE = VMobject().tolerance_for_point_equality


def _pairs() -> list[tuple[np.ndarray, np.ndarray]]:
    """Points equal, near (inside and outside the tolerance, relative and absolute), far, and
    with NaN and infinities; and Manim's other shapes (a point against several)."""
    rng = np.random.default_rng(20261205)
    base = rng.normal(size=(40, 3)) * 5
    nudges = [0.0, _TOLERANCE / 2, _TOLERANCE * 2, 1e-5 * 5, 1e-4, 1.0]
    pairs = [(p, p + rng.choice([-1, 1], size=3) * nudge) for p in base for nudge in nudges]
    odd = [np.nan, np.inf, -np.inf, 0.0, 1e300]
    pairs += [(np.array([a, 1.0, 0.0]), np.array([b, 1.0, 0.0])) for a in odd for b in odd]
    pairs += [(np.zeros((4, 3)), np.zeros(3)), (np.zeros(3), [0.0, 0.0, 0.0])]
    # a path's last curve against its end point (align_points): each row near, or one row off
    for p0, p1 in pairs[: len(base) * len(nudges)]:
        rows = np.tile(p1, (4, 1))
        pairs += [(rows, p1), (np.vstack([rows[:3], p0]), p1), (np.vstack([p0, rows[1:]]), p1)]
    pairs += [(np.tile(np.array([a, 1.0, 0.0]), (4, 1)), np.array([b, 1.0, 0.0])) for a in odd for b in odd]
    pairs += [(np.zeros((12, 3)), np.zeros(3)), (np.zeros((0, 3)), np.zeros(3))]
    # float32 points (NumPy compares them in float32), near the tolerance
    pairs += [(p0.astype(np.float32), p1.astype(np.float32)) for p0, p1 in pairs[: len(base) * len(nudges)]]
    return pairs


def test_points_are_equal_when_manims_says_so() -> None:
    mob = VMobject()
    with drawing():
        assert VMobject.consider_points_equals is subpaths.quick_equals
        for p0, p1 in _pairs():
            assert mob.consider_points_equals(p0, p1) == bool(subpaths._manims_equals(mob, p0, p1)), (p0, p1)
    assert VMobject.consider_points_equals is not subpaths.quick_equals  # (taken off after)


def _paths() -> list[VMobject]:
    theme = THEMES["dark"]
    caption = label(theme, "The ring averages 13.5 GB of gradients", theme.caption_size)
    broken = VMobject()
    broken.set_points(np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]] * 3, dtype=float))
    short = VMobject()
    short.set_points(np.zeros((2, 3)))
    return [
        *caption.family_members_with_points(),
        RoundedRectangle(corner_radius=0.2),
        Square(),
        Circle(),
        Arrow(),
        broken,
        short,
        VMobject(),
        *VGroup(Square(), Circle()).family_members_with_points(),
    ]


def test_the_same_subpaths() -> None:
    with drawing():
        assert VMobject.get_subpaths_from_points is subpaths.quick_subpaths
        for mob in _paths():
            quick, manims = mob.get_subpaths(), subpaths._manims_subpaths(mob, mob.points)
            assert len(quick) == len(manims)
            for mine, theirs in zip(quick, manims, strict=True):
                assert np.array_equal(mine, theirs)


def test_a_transform_aligns_the_same_points() -> None:
    """align_points (every Transform's begin) asks both: the points it leaves are Manim's."""
    theme = THEMES["dark"]

    def aligned() -> list[np.ndarray]:
        start, end = label(theme, "4.29 GB", theme.label_size), RoundedRectangle(corner_radius=0.1)
        start.align_data(end)
        return [m.points.copy() for m in (*start.get_family(), *end.get_family())]

    manims = aligned()
    with drawing():
        quick = aligned()
    assert len(quick) == len(manims)
    assert all(np.array_equal(a, b) for a, b in zip(quick, manims, strict=True))
