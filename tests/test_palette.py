"""One colour, one meaning (issue 58, finding 13): the palette's groups kept apart, and compute
time and traffic drawn in the neutral inks: no parallel group wears a card's colour (which means
"card i's" everywhere else) and no compute bar or collective a memory part's."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from manim import Text, VMobject
from manim.utils.color import ManimColor

from dtfilm.check.inspect import dry_run
from dtfilm.storyboard import load_chapter
from dtfilm.visuals.collectives import collective_piece, look
from dtfilm.visuals.palette import palette_clashes, palette_groups, palette_inks
from dtfilm.visuals.theme import DARK, THEMES
from tests.conftest import ROOT


def _hex(colour: Any) -> str:
    return ManimColor(colour).to_hex().upper()


@pytest.mark.parametrize("name", sorted(THEMES))
def test_the_inks_that_draw_compute_and_traffic_are_neutral_and_no_meaning(name):
    theme = THEMES[name]
    assert palette_clashes(theme) == []
    meanings = {c.upper() for items in palette_groups(theme).values() for c in items.values()}
    assert not set(palette_inks(theme).values()) & meanings


def test_an_ink_that_borrows_a_card_colour_is_a_clash():
    # traffic drawn in card 5's lavender (as data parallelism's pieces were) reads as GPU 5's
    borrowed = dataclasses.replace(DARK, muted=DARK.cards[5])
    assert any("traffic ink" in problem and "not neutral" in problem for problem in palette_clashes(borrowed))
    reddish = dataclasses.replace(DARK, text="#E05060")  # a hue, and near the bad colour
    problems = [p for p in palette_clashes(reddish) if "compute ink" in p]
    assert len(problems) == 2


def test_each_collective_is_told_by_its_fill_in_one_ink():
    pieces = {name: collective_piece(DARK, name, 1.0, 0.4) for name in ("all-gather", "reduce-scatter", "all-to-all")}
    assert {_hex(p.get_fill_color()) for p in pieces.values()} == {_hex(DARK.traffic_ink)}
    assert len({(p.get_fill_opacity(), p.get_stroke_width()) for p in pieces.values()}) == 3
    assert look("send/recv") == look("all-reduce")  # anything else: half filled


# Every shot that draws compute time or traffic, by chapter and beat.
TIMED_SHOTS = [
    ("pp", "traffic"),  # traffic_compare
    ("ep", "nodes"),  # traffic_compare, two groups in a row
    ("ep", "beside"),  # step_breakdown
    ("tp", "stalls"),  # layer_timeline: compute blocks and stalls
    ("dp", "overlap"),  # overlap_timeline: DDP's buckets
    ("fsdp", "overlap"),  # overlap_timeline: gathers and reduce-scatters
]


def _shapes_seen(chapter_id: str, beat: str) -> list[VMobject]:
    """Every shape (not a word's) on the screen after each animation of the shot `beat`, in the
    dark theme (the chapter's title, then the shot)."""
    seen: list[VMobject] = []

    def observe(scene: Any, at: str) -> None:
        if at != beat:
            return
        words = {id(m) for t in scene.get_mobject_family_members() if isinstance(t, Text) for m in t.get_family()}
        members = scene.get_mobject_family_members()
        seen.extend(m for m in members if id(m) not in words and isinstance(m, VMobject) and len(m.points))

    chapter = load_chapter(chapter_id, None, ROOT)
    shots = tuple(s for s in chapter.shots if s.beat in ("title", beat))
    dry_run(dataclasses.replace(chapter, shots=shots), "dark", [observe])
    return seen


def _drawn_colours(chapter_id: str, beat: str) -> set[str]:
    """The colours of every shape during the shot `beat`: fills and edges that show."""
    colours: set[str] = set()
    for mob in _shapes_seen(chapter_id, beat):
        if mob.get_fill_opacity() > 0:
            colours.add(_hex(mob.get_fill_color()))
        if mob.get_stroke_width() > 0 and mob.get_stroke_opacity() > 0:
            colours.add(_hex(mob.get_stroke_color()))
    return colours


@pytest.mark.parametrize(("chapter_id", "beat"), TIMED_SHOTS)
def test_no_compute_bar_or_traffic_wears_a_card_or_memory_colour(chapter_id, beat):
    colours = _drawn_colours(chapter_id, beat)
    assert colours, "the shot drew nothing"
    cards = {c.upper() for c in DARK.cards}
    memory = {c.upper() for c in DARK.memory.values()}
    assert not colours & cards, f"a card's colour on {chapter_id}:{beat}'s traffic or time"
    assert not colours & memory, f"a memory part's colour on {chapter_id}:{beat}'s traffic or time"


def _solid_fills(chapter_id: str, beat: str) -> set[str]:
    """The colours of every solid shape (fill opacity 0.5 or more) during `beat`."""
    return {_hex(m.get_fill_color()) for m in _shapes_seen(chapter_id, beat) if m.get_fill_opacity() >= 0.5}


@pytest.mark.parametrize(
    ("chapter_id", "beat", "ink"),
    [
        ("why", "links", "traffic_ink"),  # the links' pipes
        ("dp", "more-cards", "traffic_ink"),  # "Traffic per card"
        ("3d", "links", "traffic_ink"),  # each group's bytes a step
        ("ledger", "activations", "compute_ink"),  # "6 FLOPs per parameter per token"
    ],
)
def test_traffic_and_compute_bars_wear_their_ink_not_the_accent(chapter_id, beat, ink):
    """The fresh review of issue 58: gold, the accent (the number to remember, what the voice
    points at; the card's capacity line), also filled why's pipes, dp's traffic bar, 3d's groups'
    bytes and the ledger's compute bar."""
    fills = _solid_fills(chapter_id, beat)
    assert _hex(getattr(DARK, ink)) in fills
    assert _hex(DARK.accent) not in fills
