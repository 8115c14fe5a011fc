"""The quick boundary (dtfilm.engine.bounds) lists what Manim's get_points_defining_boundary lists."""

from __future__ import annotations

import numpy as np
import pytest
from manim import Circle, Dot, Line, Mobject, Square, VGroup, VMobject

from dtfilm.engine import bounds
from dtfilm.engine.drawing import drawing
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import THEMES


def _manims(mob: VMobject) -> np.ndarray:
    """Manim's own answer, the patch put back as it was."""
    installed = VMobject.get_points_defining_boundary is bounds.quick_boundary
    bounds.uninstall()
    try:
        return mob.get_points_defining_boundary()
    finally:
        if installed:
            bounds.install()


def _manims_centre(mob: VMobject) -> np.ndarray:
    bounds.uninstall()
    try:
        return mob.get_center()
    finally:
        bounds.install()


def _pieces() -> list[VMobject]:
    theme = THEMES["dark"]
    caption = label(theme, "The ring averages 13.5 GB of gradients", theme.caption_size)
    one_point = VMobject()
    one_point.set_points(np.array([[1.0, 2.0, 0.0]]))
    stage = VGroup(caption, Square().shift(3 * np.array([1.0, 0.5, 0.0])), VGroup(Circle(), VGroup()), one_point)
    return [stage, caption, caption.submobjects[0], Square(), Circle().rotate(0.3), Line(), Dot(), one_point, VGroup()]


def test_the_same_points_in_the_same_order() -> None:
    with drawing():
        assert VMobject.get_points_defining_boundary is bounds.quick_boundary
        for mob in _pieces():
            quick, manims = mob.get_points_defining_boundary(), _manims(mob)
            assert quick.shape == manims.shape and quick.dtype == manims.dtype
            assert np.array_equal(quick, manims)
            assert np.array_equal(mob.get_center(), _manims_centre(mob))
    assert VMobject.get_points_defining_boundary is not bounds.quick_boundary  # (taken off after)


def test_uneven_anchors_raise_as_manims_strict_zip() -> None:
    odd = VMobject()
    odd.points = np.zeros((6, 3))  # one whole curve and half of another
    with pytest.raises(ValueError):
        _manims(odd)
    with drawing(), pytest.raises(ValueError):
        odd.get_points_defining_boundary()


def _manims_lengths(mob: VMobject) -> tuple[float, float, float]:
    bounds.uninstall()
    try:
        return mob.width, mob.height, mob.depth
    finally:
        bounds.install()


def test_the_same_width_and_height() -> None:
    planted = VMobject()
    planted.set_points(np.array([[np.nan, 1.0, 0.0], [2.0, 3.0, 0.0]]))  # Manim's answer, whatever it is
    with drawing():
        assert VMobject.length_over_dim is bounds.quick_length
        for mob in [*_pieces(), VGroup(VGroup(), Dot().shift([4.0, -2.0, 0.0]), VGroup(Square()))]:
            assert (mob.width, mob.height, mob.depth) == _manims_lengths(mob)
        assert VGroup().width == 0 and VGroup(VGroup()).height == 0
        assert np.array_equal(planted.height, _manims_lengths(planted)[1])
        assert np.isnan(planted.width) == np.isnan(_manims_lengths(planted)[0])
    assert VMobject.length_over_dim is not bounds.quick_length


def _manims_critical_points(mob: VMobject, directions: list[np.ndarray]) -> list[np.ndarray]:
    bounds.uninstall()
    try:
        return [mob.get_critical_point(d) for d in directions]
    finally:
        bounds.install()


def test_the_same_centres_edges_and_corners() -> None:
    """Each of the nine critical points, and a direction of other lengths (only its sign counts)."""
    directions = [np.array([x, y, 0.0]) for x in (-1, 0, 1) for y in (-1, 0, 1)] + [np.array([0.3, -2.0, 1.0])]
    planted = VMobject()
    planted.set_points(np.array([[np.nan, 1.0, 0.0], [2.0, 3.0, 0.0]] * 2))
    with drawing():
        assert Mobject.get_critical_point is bounds.quick_critical_point
        for mob in [*_pieces(), planted, Dot().shift([4.0, -2.0, 0.5])]:
            quick = [mob.get_critical_point(d) for d in directions]
            for mine, manims in zip(quick, _manims_critical_points(mob, directions), strict=True):
                assert mine.dtype == manims.dtype
                assert np.array_equal(mine, manims, equal_nan=True)
    assert Mobject.get_critical_point is not bounds.quick_critical_point


def test_a_texts_font_size_from_its_box_height_is_manims() -> None:
    """The design check sizes a text from the height of the box it measured (font_size_at_height):
    the same number as `Text.font_size`, bit for bit, however the text was scaled or stretched."""
    from manim import Text

    from dtfilm.engine.bounds import font_size_at_height
    from dtfilm.onscreen.boxes import Box

    texts = [Text("GPU 7", font_size=size) for size in (12, 16.8, 24, 48)]
    texts += [Text("Adam's two moments", font_size=20).scale(0.37), Text("13.5 GB").stretch(1.3, 1)]
    texts += [Text("x", font_size=30).rotate(0.3)]
    with drawing():
        for text in texts:
            assert font_size_at_height(text, Box.of(text).height) == text.font_size
            assert font_size_at_height(text, text.height) == text.font_size
