"""Rounded corners kept by shape (dtfilm.engine.corners) are the points Manim computes."""

from __future__ import annotations

import numpy as np
import pytest
from manim import Polygon, Polygram, RegularPolygon, RoundedRectangle, Square, Star

from dtfilm.engine import corners
from dtfilm.engine.drawing import drawing


def _made(make, radius, **options) -> np.ndarray:  # type: ignore[no-untyped-def]
    return make().round_corners(radius, **options).points


SHAPES = [
    lambda: Square(side_length=1.3),
    lambda: Square(side_length=0.4).shift([2.0, -1.0, 0.0]),
    lambda: Star(outer_radius=2),
    lambda: RegularPolygon(n=5),
    lambda: Polygon([0, 0, 0], [3, 0, 0], [3, 0.2, 0], [0, 0.2, 0]),
    lambda: Polygram([[0, 0, 0], [1, 0, 0], [1, 1, 0]], [[2, 2, 0], [3, 2, 0], [3, 3, 0]]),
]
RADII = [0.1, 0.25, -0.2, [0.1, 0.3], (0.05,), 0]


@pytest.mark.parametrize("shape", range(len(SHAPES)))
def test_corners_are_manims_bit_for_bit_first_and_kept(shape: int) -> None:
    make = SHAPES[shape]
    for radius in RADII:
        for options in ({}, {"evenly_distribute_anchors": True}, {"components_per_rounded_corner": 4}):
            try:
                manims = corners._manims_round_corners(make(), radius, **options).points
            except ValueError:  # (a list of radii that does not fit the corners: Manim's zip refuses)
                with drawing(), pytest.raises(ValueError):
                    _made(make, radius, **options)
                continue
            with drawing():
                assert Polygram.round_corners is corners.quick_round_corners
                first, again = _made(make, radius, **options), _made(make, radius, **options)
            assert first.shape == manims.shape and again.shape == manims.shape
            assert first.tobytes() == manims.tobytes() and again.tobytes() == manims.tobytes(), (radius, options)
    assert Polygram.round_corners is not corners.quick_round_corners  # (taken off after)


def test_a_kept_shape_is_copied_not_shared() -> None:
    with drawing():
        one = RoundedRectangle(width=2, height=1, corner_radius=0.2)
        two = RoundedRectangle(width=2, height=1, corner_radius=0.2)
        assert one.points is not two.points
        two.shift([1.0, 0.0, 0.0])
        three = RoundedRectangle(width=2, height=1, corner_radius=0.2)
    assert np.array_equal(one.points, three.points)
    assert not np.array_equal(two.points, three.points)


def test_the_kept_shapes_are_bounded() -> None:
    with drawing():
        for k in range(corners.KEPT_SHAPES + 20):
            RoundedRectangle(width=1 + k / 1000, height=1, corner_radius=0.1)
    assert len(corners._kept) <= corners.KEPT_SHAPES


def test_a_shape_that_splits_its_corners_otherwise_is_not_given_anothers() -> None:
    """Two squares of the same points, one with a tolerance so wide its corners are one group:
    each gets the corners Manim makes of it, not the other's."""
    with drawing():
        plain = Square(side_length=0.01).round_corners(0.001).points
        loose = Square(side_length=0.01)
        loose.tolerance_for_point_equality = 1.0
        wide = loose.round_corners(0.001).points
    manims_loose = Square(side_length=0.01)
    manims_loose.tolerance_for_point_equality = 1.0
    manims = corners._manims_round_corners(manims_loose, 0.001).points
    assert wide.tobytes() == manims.tobytes()
    assert plain.shape != wide.shape or plain.tobytes() != wide.tobytes()


def test_a_count_of_corner_parts_manim_refuses_is_refused() -> None:
    with drawing():
        Square().round_corners(0.2, components_per_rounded_corner=3)
        with pytest.raises(TypeError):
            Square().round_corners(0.2, components_per_rounded_corner=3.0)  # type: ignore[arg-type]
