"""A highlighter's band holds what it marks with a margin on every side, even a text that ends
at the stage's edge (issue 58: dp's 'exposed, 123 µs', right-aligned to the stage, lit by a band
across the stage that ended flush with its last letter, read as cut off at the frame's edge)."""

from __future__ import annotations

import pytest
from manim import Text

from dtfilm.onscreen.boxes import TOLERANCE, Box
from dtfilm.scene import HIGHLIGHT_BUFF, highlight_band
from dtfilm.visuals.regions import regions
from dtfilm.visuals.theme import THEMES

STAGE = regions(THEMES["dark"]).stage


def _text_at(edge: str) -> Text:
    """A label pushed against the stage's left or right edge, as the lanes' brackets are."""
    text = Text("exposed, 123 µs", font_size=20)
    if edge == "right":
        return text.align_to([STAGE.right, 0, 0], direction=[1, 0, 0])
    return text.align_to([STAGE.left, 0, 0], direction=[-1, 0, 0])


@pytest.mark.parametrize("edge", ["left", "right"])
def test_a_band_across_the_stage_reaches_past_a_text_at_its_edge(edge: str):
    text = _text_at(edge)
    band, piece = Box.of(highlight_band(text, "#ffcc00", STAGE)), Box.of(text)
    assert band.left <= min(STAGE.left, piece.left - HIGHLIGHT_BUFF) + TOLERANCE
    assert band.right >= max(STAGE.right, piece.right + HIGHLIGHT_BUFF) - TOLERANCE
    assert band.inside_frame()


def test_a_band_holds_its_piece_with_a_margin():
    text = Text("each token sent to its experts' cards and back", font_size=20)
    band, piece = Box.of(highlight_band(text, "#ffcc00")), Box.of(text)
    margins = (piece.left - band.left, band.right - piece.right, piece.bottom - band.bottom, band.top - piece.top)
    assert min(margins) >= HIGHLIGHT_BUFF - TOLERANCE
