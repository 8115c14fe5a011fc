"""Shapes drawn by the hundred, made quickly: the same mobject as Manim's constructor makes."""

from __future__ import annotations

from typing import Any

from manim import Rectangle

_DRAWN: dict[tuple[tuple[str, str], ...], Rectangle] = {}  # a 2 by 2 rectangle in each style asked for


def rectangle(width: float, height: float, **style: Any) -> Rectangle:
    """Manim's `Rectangle(width=width, height=height, **style)`, point for point and colour for
    colour: a copy of one drawn 2 by 2 in the style (its polygon's own size), stretched to the
    width and then the height as Manim's constructor stretches that polygon. A gauge is a
    rectangle a memory part, several hundred a picture: Manim's constructor (its polygon, its
    colours parsed, an empty grid group) was a third of building the explorer page."""
    key = tuple(sorted((name, repr(value)) for name, value in style.items()))
    drawn = _DRAWN.get(key)
    if drawn is None:
        drawn = _DRAWN[key] = Rectangle(width=2.0, height=2.0, **style)
    made = drawn.copy()
    made.stretch_to_fit_width(width)
    made.stretch_to_fit_height(height)
    return made
