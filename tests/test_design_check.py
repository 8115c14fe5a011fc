"""The design check (issue 58): text too small at the 854×480 preview, text too faint against
what lies behind it (WCAG AA 4.5:1), and more than three layers of text besides the title."""

from __future__ import annotations

import numpy as np
import pytest
from manim import Rectangle, Scene, Text, VGroup

from dtfilm.onscreen.design import MIN_TEXT_PX, contrast, text_px
from dtfilm.onscreen.layout import LayoutCheck
from dtfilm.visuals.theme import DARK


class _Planted(Scene):
    def construct(self) -> None:
        pass


def _checked(*pieces) -> list[str]:
    scene = _Planted()
    scene.camera.background_color = DARK.background
    scene.add(*pieces)
    check = LayoutCheck()
    check(scene, "planted")
    assert check.problems == []  # (reported apart: `check` says them, and does not fail on them)
    return check.design


def test_wcag_contrast_of_known_pairs():
    assert contrast(np.zeros(3), np.ones(3)) == 21.0
    assert round(contrast(np.array([0x77, 0x77, 0x77]) / 255, np.ones(3)), 2) == 4.48


def test_small_text_is_reported_with_its_size_at_the_preview():
    # font size 16.8 is 14 px at 480 rows (72 to a unit, 60 px a unit); scaling counts
    assert round(text_px(Text("x", font_size=16.8)), 1) == 14.0
    small = Text("2.41 ms", font_size=20, color=DARK.text).scale(0.5)
    problems = _checked(small)
    assert problems == ["planted: text '2.41 ms' is 8.3 px at 854×480 (its font size); at least 14"]
    assert _checked(Text("2.41 ms", font_size=20, color=DARK.text)) == []


def test_faint_text_is_reported_and_what_lies_behind_counts():
    # the decision tree's dimmed branches: the theme's faint grey on the background, about 2.4:1
    faint = Text("93.7 GB", font_size=24, color=DARK.faint)
    (problem,) = _checked(faint)
    assert "has contrast 2.4:1 against what lies behind it; at least 4.5:1" in problem
    # white text is fine on the background, not on a light panel drawn under it
    panel = Rectangle(width=4, height=1, fill_color="#DDDDDD", fill_opacity=1, stroke_width=0)
    assert _checked(Text("fits", font_size=24, color=DARK.text)) == []
    (problem,) = _checked(panel, Text("fits", font_size=24, color=DARK.text))
    assert "'fits' has contrast 1.2:1" in problem
    # a text faded to a third of its opacity is as faint as it looks
    (problem,) = _checked(Text("fits", font_size=24, color=DARK.text).set_opacity(0.3))
    assert "contrast" in problem


def test_more_than_three_layers_of_text_besides_the_title():
    def layer(name: str, y: float) -> VGroup:
        group = VGroup(Text(name, font_size=24, color=DARK.text).move_to([0, y, 0]))
        group.text_layer = name
        return group

    title, counters, legend, caption = (
        layer(n, y) for n, y in (("title", 3.4), ("counters", 2.5), ("legend", -1), ("caption", -3.4))
    )
    labels = Text("labels", font_size=24, color=DARK.text)  # untagged: a label on the picture
    assert _checked(title, counters, legend, caption) == []
    (problem,) = _checked(title, counters, legend, caption, labels)
    assert problem == "planted: 4 layers of text besides the title (caption, counters, labels, legend); at most 3"


def test_a_relabelled_text_reads_the_font_size_it_is_drawn_at():
    """A label's font size is read from its height against the height it was typeset at; after a
    relabel the new words' own (pp at a 128k sequence: "614 GB" after "1,229 GB", whose comma's
    descender made it taller, read 12.3 px and failed the design check)."""
    from dtfilm.visuals.text import label, relabel
    from dtfilm.visuals.theme import THEMES

    theme = THEMES["dark"]
    shown, fresh = label(theme, "1,229 GB", theme.small_size), label(theme, "614 GB", theme.small_size)
    assert fresh.height < shown.height  # (the comma)
    relabel(shown, fresh)
    assert text_px(shown) == pytest.approx(text_px(fresh)) and text_px(fresh) >= MIN_TEXT_PX
