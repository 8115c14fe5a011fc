"""The quick family walk (dtfilm.engine.family) lists what Manim's get_family lists."""

from __future__ import annotations

from manim import Circle, Mobject, Square, VGroup

from dtfilm.engine import family
from dtfilm.engine.drawing import drawing
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import THEMES


def _manims(mob: Mobject) -> list[Mobject]:
    family.uninstall()
    try:
        return mob.get_family()
    finally:
        family.install()


def test_the_same_members_in_the_same_order() -> None:
    with drawing():
        _the_same_members_in_the_same_order()


def _the_same_members_in_the_same_order() -> None:
    theme = THEMES["dark"]
    caption = label(theme, "The ring averages 13.5 GB of gradients", theme.caption_size)
    shared = Circle()  # reached from two branches: kept where it is reached last
    left, right = VGroup(Square(), shared), VGroup(shared, VGroup(Square(), VGroup()))
    stage = VGroup(caption, left, right, VGroup())
    looped = VGroup(Square(), VGroup(Circle()))
    looped.submobjects[1].submobjects.append(looped)  # a cycle, as Manim's walk guards against
    for mob in (stage, caption, caption.submobjects[0], left, right, looped, Mobject()):
        assert mob.get_family() == _manims(mob)
        assert all(a is b for a, b in zip(mob.get_family(), _manims(mob), strict=True))
    assert len(stage.get_family()) == len(set(stage.get_family()))
    assert stage.get_family().count(shared) == 1
