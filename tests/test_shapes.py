"""dtfilm.visuals.shapes makes the mobjects Manim's constructors make, only sooner."""

from __future__ import annotations

import numpy as np
import pytest
from manim import Rectangle, VMobject

from dtfilm.engine.drawing import drawing
from dtfilm.visuals.shapes import rectangle

STYLES = [
    {"fill_color": "#4C8DF6", "fill_opacity": 1, "stroke_color": "#4C8DF6", "stroke_width": 0},
    {"fill_color": "#F28C28", "fill_opacity": 1, "stroke_color": "#22D3EE", "stroke_width": 2.5},
    {"fill_color": "#EF4444", "fill_opacity": 0.12, "stroke_color": "#EF4444", "stroke_width": 3},
    {
        "fill_color": "#EF4444",
        "fill_opacity": 0.14,
        "stroke_color": "#EF4444",
        "stroke_width": 1,
        "stroke_opacity": 0.6,
    },
]


def _same(mine: VMobject, manims: VMobject) -> None:
    assert type(mine) is type(manims)
    assert np.array_equal(mine.points, manims.points)
    for part in ("get_fill_rgbas", "get_stroke_rgbas"):
        assert np.array_equal(getattr(mine, part)(), getattr(manims, part)())
    assert mine.get_stroke_width() == manims.get_stroke_width()
    assert [type(m) for m in mine.get_family()] == [type(m) for m in manims.get_family()]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("size", [(0.52, 0.0133), (2.0, 2.0), (4.0, 0.3), (0.0, 1.0), (1e-4, 3.7)])
def test_a_rectangle_is_manims(style: dict, size: tuple[float, float]) -> None:
    width, height = size
    with drawing():
        _same(rectangle(width, height, **style), Rectangle(width=width, height=height, **style))
    _same(rectangle(width, height, **style), Rectangle(width=width, height=height, **style))


def test_each_rectangle_is_its_own() -> None:
    """A copy, never the one kept: changing a rectangle changes no other."""
    first = rectangle(1.0, 1.0, **STYLES[0])
    first.shift([3.0, 0.0, 0.0]).set_fill("#FFFFFF")
    again = rectangle(1.0, 1.0, **STYLES[0])
    _same(again, Rectangle(width=1.0, height=1.0, **STYLES[0]))
