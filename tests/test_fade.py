"""dtfilm's fades change opacity in place, exactly as Manim's set_fill and set_stroke would."""

from __future__ import annotations

import numpy as np
import pytest
from manim import Circle, Square, Text, VGroup

from dtfilm.visuals.fade import _Fade


def pieces() -> VGroup:
    return VGroup(
        Square().set_fill("#FF0000", 0.7).set_stroke("#00FF00", 3, 0.5),
        Circle().set_fill("#0000FF", 0.3),
        Text("GPU 42"),
    )


@pytest.mark.parametrize("appearing", [True, False])
def test_a_fade_reaches_the_colours_manims_setters_would(appearing: bool):
    ours, theirs = pieces(), pieces()
    fade, reference = _Fade(ours, appearing), _Fade(theirs, appearing)
    fade.begin()
    reference.begin()
    for alpha in np.linspace(0.0, 1.0, 11):
        fade.interpolate_mobject(alpha)
        factor = reference.rate_func(alpha) if appearing else 1.0 - reference.rate_func(alpha)
        for mob, fill, stroke in reference.saved:  # Manim's way
            mob.set_fill(opacity=fill * factor, family=False)
            mob.set_stroke(opacity=stroke * factor, family=False)
        for a, b in zip(ours.get_family(), theirs.get_family(), strict=True):
            assert np.array_equal(a.fill_rgbas, b.fill_rgbas) and np.array_equal(a.stroke_rgbas, b.stroke_rgbas)
            assert np.array_equal(np.asarray(a.fill_opacity), np.asarray(b.fill_opacity))
    assert ours[0].fill_rgbas[0, 3] == pytest.approx(0.7 if appearing else 0.0)


def test_a_swapped_value_never_shows_with_the_one_it_replaces():
    # the ledger's cross-fades stacked "4.29 GB" over "73 GB": a swap shows one at a time
    from dtfilm.visuals.fade import swap

    class _Scene:
        def __init__(self, *shown):
            self.mobjects = list(shown)

        def add(self, *mobjects):
            self.mobjects += [m for m in mobjects if m not in self.mobjects]

        def remove(self, *mobjects):
            self.mobjects = [m for m in self.mobjects if m not in mobjects]

    old, new = Text("73 GB"), Text("4.29 GB")
    scene = _Scene(old)
    animation = swap(old, new)
    scene.remove(old)  # as a scene adds the animated pair
    scene.add(animation.mobject)
    animation.begin()
    for alpha in np.linspace(0.0, 1.0, 21):
        animation.interpolate_mobject(alpha)
        seen = [max(m.get_fill_opacity() for m in t.get_family()) for t in (old, new)]
        assert min(seen) < 1e-9  # never both
    animation.clean_up_from_scene(scene)
    assert scene.mobjects == [new] and new[0].get_fill_opacity() == pytest.approx(1.0)
