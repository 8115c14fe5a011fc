"""The layout check's quick reads of a member's opacities (dtfilm.onscreen.boxes.fill_opacity,
stroke_opacity) and of its box from members listed once (Box.of_drawn) give Manim's answers."""

from __future__ import annotations

import numpy as np
from manim import Circle, Dot, Line, Rectangle, Square, Text, VGroup, VMobject

from dtfilm.engine.drawing import drawing
from dtfilm.onscreen.boxes import Box, drawn_members, extent, fill_opacity, stroke_opacity, visible


class _Dimmed(Square):
    """A shape that answers its fill's opacity its own way (the quick read must ask it)."""

    def get_fill_opacity(self) -> float:  # type: ignore[override]
        return 0.5


def _members() -> list[VMobject]:
    text = Text("GPU 7", fill_opacity=0.4)
    shapes: list[VMobject] = [
        Square().set_fill("#ff0000", opacity=0.8),
        Rectangle().set_stroke(width=2, opacity=0.3).set_fill(opacity=0),
        Circle().set_fill(opacity=0.02).set_stroke(opacity=0.04),
        Line(),
        Dot(),
        VMobject(),
        _Dimmed(),
        Square().set_fill(["#ff0000", "#00ff00"], opacity=0.6),
    ]
    return [*shapes, text, *text.get_family()]


def test_opacities_read_quickly_are_manims() -> None:
    with drawing():
        for member in _members():
            assert fill_opacity(member) == member.get_fill_opacity(), member
            assert stroke_opacity(member) == member.get_stroke_opacity(), member


def test_a_box_of_members_listed_once_is_the_box() -> None:
    group = VGroup(Square().shift([3.0, 1.0, 0.0]), VGroup(Text("13.5 GB"), VMobject()), Circle(radius=0.1))
    with drawing():
        for mob in [group, *group.get_family()]:
            assert Box.of_drawn(drawn_members(mob), mob) == Box.of(mob)
            manims = [m for m in mob.get_family() if m.has_points()]
            if manims:
                points = np.concatenate([m.points for m in manims])
                assert Box.of(mob).left == points[:, 0].min() and Box.of(mob).top == points[:, 1].max()
            assert visible(mob) == (
                bool(manims) and any(m.get_fill_opacity() > 0.05 or m.get_stroke_opacity() > 0.05 for m in manims)
            )


def test_a_shapes_extent_is_its_width_and_height() -> None:
    shapes: list[VMobject] = [Square(0.2).shift([1.0, -2.0, 0.0]), Rectangle(width=3, height=0.01), Line(), Dot()]
    shapes += [VGroup(Square(), Circle().shift([4.0, 0.0, 0.0])), VMobject(), Circle(radius=2).rotate(0.4)]
    nan = Square()
    nan.points[3, 1] = np.nan
    for inside in (True, False):
        for mob in [*shapes, nan]:
            if inside:
                with drawing():
                    got, want = extent(mob), (mob.width, mob.height)
            else:
                got, want = extent(mob), (mob.width, mob.height)
            assert np.array_equal(np.array(got), np.array(want, dtype=float), equal_nan=True), mob
