"""A text that changes never stacks (issue 58): a cross-fade drew "4.29 GB" over "73 GB" for half
its length. The finder (dtfilm.onscreen.crossfades.crossfade_stacks) and the counters, which every
chapter changes by swapping them in turn."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from manim import DOWN, Text

from dtfilm.check.inspect import dry_run
from dtfilm.onscreen.design import drawn_order
from dtfilm.onscreen.layout import crossfade_stacks
from dtfilm.storyboard import load_chapter
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import DARK
from tests.conftest import ROOT, chapter_ids, inspection


class _Screen:
    def __init__(self, *shown: Any) -> None:
        self.mobjects = list(shown)


def _faded(words: str, opacity: float) -> Text:
    """A label (typeset into this process's own files: Manim's Text shares one file a text, which
    two workers writing the same words at once can read half-written) at this opacity."""
    return label(DARK, words, DARK.label_size).set_fill(opacity=opacity)


def test_two_texts_half_faded_in_one_place_are_a_stack() -> None:
    old, new = _faded("73 GB", 0.5), _faded("4.29 GB", 0.5)
    assert [(a.original_text, b.original_text) for a, b in crossfade_stacks(_Screen(old, new))] == [
        ("73 GB", "4.29 GB")
    ]


def test_no_stack_when_one_is_whole_the_words_are_the_same_or_they_stand_apart() -> None:
    assert crossfade_stacks(_Screen(_faded("73 GB", 1.0), _faded("4.29 GB", 0.5))) == []  # (a label passing)
    assert crossfade_stacks(_Screen(_faded("GPU 0", 0.5), _faded("GPU 0", 0.5))) == []  # (reads as one)
    apart = _faded("4.29 GB", 0.5).shift([3.0, 0.0, 0.0])
    assert crossfade_stacks(_Screen(_faded("73 GB", 0.5), apart)) == []


def test_the_counters_are_swapped_never_stacked() -> None:
    """tp changes its row of counters twice (a new row of names and values each time): halfway
    through each change, no counter is drawn over another text."""
    stacked: list[tuple[str, str, str]] = []

    def observe(scene: Any, beat: str) -> None:
        pairs = crossfade_stacks(scene)
        if pairs:
            layer = {id(mob): layer for mob, layer in drawn_order(scene)}
            stacked.extend(
                (beat, a.original_text, b.original_text)
                for a, b in pairs
                if "counters" in (layer.get(id(a)), layer.get(id(b)))
            )

    dry_run(load_chapter("tp", None, ROOT), None, [], moments=[observe])
    assert stacked == []


def test_texts_meet_where_different_words_stand_in_one_place() -> None:
    from dtfilm.onscreen.layout import texts_meet

    old, new = _faded("… and back to layer 1", 1.0), _faded("Data parallel", 1.0)
    far, same = _faded("FSDP", 1.0).shift([0.0, 3.0, 0.0]), _faded("… and back to layer 1", 1.0)
    assert texts_meet([old], [new])
    assert not texts_meet([old], [far]) and not texts_meet([old], [same])


def test_a_shot_handing_over_never_stacks_its_texts_on_the_next_ones() -> None:
    """fsdp's traffic comparison comes in as the gather's pieces go: "… and back to layer 1 of 32"
    stood over "Data parallel" halfway; where texts meet, the last pieces go before the next come."""
    import dataclasses

    stacked: list[tuple[str, str, str]] = []

    def observe(scene: Any, beat: str) -> None:
        stacked.extend((beat, a.original_text, b.original_text) for a, b in crossfade_stacks(scene))

    chapter = load_chapter("fsdp", None, ROOT)
    shots = tuple(s for s in chapter.shots if s.beat in ("gather", "traffic"))
    dry_run(dataclasses.replace(chapter, shots=shots), None, [], moments=[observe])
    assert stacked == []


def test_a_reshape_never_morphs_words_into_other_words() -> None:
    """Reshape (dp's rack becoming the next, tp's count becoming one all-reduce): a text whose
    words change goes over the first half and the next words come over the second; shapes morph
    and a text keeping its words moves, as Manim's Transform does."""
    from manim import Rectangle, VGroup

    from dtfilm.visuals.fade import Reshape

    def picture(words: str, x_units: float) -> VGroup:
        box = Rectangle(width=1.0 + x_units, height=0.5)
        return VGroup(box, _faded(words, 1.0).next_to(box, DOWN), _faded("GPU 0", 1.0).move_to([x_units, 2, 0]))

    old, new = picture("GPU 3", 0.0), picture("GPU 8", 2.0)
    morph = Reshape(old, new)
    morph.begin()

    def glyph_opacity(text: Any) -> float:
        return float(text.family_members_with_points()[0].get_fill_opacity())

    morph.interpolate(0.25)  # the old words going where they stood; the kept words moving, whole
    assert 0.05 < glyph_opacity(old[1]) < 0.95 and abs(old[1].get_x() - 0.0) < 1e-6
    assert glyph_opacity(old[2]) == 1.0 and 0.0 < old[2].get_x() < 2.0
    morph.interpolate(0.5)  # halfway: neither the old words nor the new drawn
    assert glyph_opacity(old[1]) < 0.05 and crossfade_stacks(_Screen(old)) == []
    assert 1.0 < old[0].width < 3.0  # (the box morphs)
    morph.interpolate(0.75)  # the new words coming where they will stand
    assert 0.05 < glyph_opacity(old[1]) < 0.95 and abs(old[1].get_x() - new[1].get_x()) < 1e-6
    morph.interpolate(1.0)
    assert glyph_opacity(old[1]) == 1.0 and np.allclose(old[1].get_center(), new[1].get_center())


def test_reword_moves_the_words_that_stay_and_swaps_the_rest() -> None:
    """The ledger's names when the precision changes: "4 bytes · fp32 Adam m" moves with its
    block; "2 bytes · bf16 weights" goes before "4 bytes · fp32 weights" comes."""
    from manim import ReplacementTransform

    from dtfilm.visuals.fade import reword

    kept, gone = _faded("4 bytes · fp32 Adam m", 1.0), _faded("2 bytes · bf16 weights", 1.0)
    moved, come = _faded("4 bytes · fp32 Adam m", 1.0).shift(DOWN), _faded("4 bytes · fp32 weights", 1.0)
    move, changed = reword([kept, gone], [moved, come])
    assert isinstance(move, ReplacementTransform) and (move.mobject, move.target_mobject) == (kept, moved)
    changed.begin()
    changed.interpolate(0.5)
    assert crossfade_stacks(_Screen(gone, come)) == []


def test_check_reports_a_stack_and_fails_on_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cross-fade planted back into the ledger's precision switch (its names faded out and in
    together, as before issue 58's fix): `check` says each stack as a design finding and fails."""
    import dataclasses

    from manim import VGroup

    import dtfilm.shots.ledger.draw
    from dtfilm.check.chapters import check_loaded
    from dtfilm.visuals.fade import appear, vanish

    chapter = load_chapter("ledger", None, ROOT)
    chapter = dataclasses.replace(chapter, shots=tuple(s for s in chapter.shots if s.beat == "precision"))

    def plain_reword(old, new):
        return [vanish(VGroup(*old)), appear(VGroup(*new))]

    monkeypatch.setattr(dtfilm.shots.ledger.draw, "reword", plain_reword)
    found = check_loaded(chapter)
    stacks = [d for d in found.design if "a cross-fade's stack" in d]
    assert stacks and found.failed
    assert stacks[0].startswith("precision: text '4 bytes · fp32 master copy of the weights' is drawn over")
    monkeypatch.undo()
    assert not [d for d in check_loaded(chapter).design if "a cross-fade's stack" in d]


def test_rewrite_turns_a_labels_words_in_place_halfway() -> None:
    """`rewrite`: the label stays the one object (pp's bubble line is highlighted and changed
    again later), its old words go over the first half and the next come over the second."""
    from dtfilm.visuals.fade import rewrite

    shown = _faded("Bubble: 75% of the timeline is idle", 1.0)
    fresh = _faded("Bubble: 60% of the timeline is idle", 1.0)
    turn = rewrite(shown, fresh.move_to(shown))
    old_glyphs = shown.family_members_with_points()
    turn.begin()

    def opacity() -> float:
        return float(shown.family_members_with_points()[0].get_fill_opacity())

    turn.interpolate(0.25)
    assert shown.original_text.startswith("Bubble: 75%") and 0.05 < opacity() < 0.95
    turn.interpolate(0.5)
    assert opacity() < 0.05
    turn.interpolate(0.75)
    assert shown.original_text.startswith("Bubble: 60%") and 0.05 < opacity() < 0.95
    # a frame draws the family listed at the start, the old glyphs with it: they stay unseen
    assert max(float(g.get_fill_opacity()) for g in old_glyphs) == 0.0
    turn.interpolate(1.0)
    turn.clean_up_from_scene(_Scene())
    assert shown.original_text.startswith("Bubble: 60%") and opacity() == 1.0


class _Scene(_Screen):
    def remove(self, *mobjects: Any) -> None:
        self.mobjects = [m for m in self.mobjects if m not in mobjects]


def test_pp_slider_labels_turn_with_its_counters(monkeypatch: pytest.MonkeyPatch) -> None:
    """pp's slider swapped the bubble's line and the gauges' "in flight" at a step's start, while
    the counters and the timeline changed over the step: for up to 1.3 s the line named the next
    value (60% beside a counter at 75%). At a quarter and three quarters of every animation, the
    line's share is the Bubble counter's, and GPipe's micro-batches in flight are the counter's."""
    import dataclasses
    import re

    from dtfilm.onscreen.layout import texts_on_screen
    from dtfilm.visuals.stats import StatsPanel

    monkeypatch.setattr("dtfilm.scene.MOMENTS", (0.25, 0.75))
    compared: list[tuple[str, str]] = []

    def observe(scene: Any, beat: str) -> None:
        panel = next((m for m in scene.mobjects if isinstance(m, StatsPanel)), None)
        if beat != "slider" or panel is None:
            return
        counters = {stat.name.original_text: stat.value.original_text for stat in panel.stats}
        texts = texts_on_screen(scene)  # (drawn: faded in part, or whole)
        lines = [t.original_text for t in texts if t.original_text.startswith("Bubble:")]
        flights = sorted((t for t in texts if t.original_text.endswith("in flight")), key=lambda t: t.get_x())
        if lines and "Bubble" in counters:
            compared.append((re.search(r"[\d.]+%", lines[0]).group(), counters["Bubble"]))
        if len(flights) == 2 and "Micro-batches" in counters:
            compared.append((flights[1].original_text.split()[0], counters["Micro-batches"]))

    chapter = load_chapter("pp", None, ROOT)
    slider = dataclasses.replace(chapter, shots=tuple(s for s in chapter.shots if s.beat in ("title", "slider")))
    dry_run(slider, None, [], moments=[observe])
    assert len(compared) > 20
    assert [pair for pair in compared if pair[0] != pair[1]] == []


def test_a_whole_text_moving_across_a_fading_one_is_found() -> None:
    """The finder's second case (issue 58: dp's "GPU 7" kept its words and slid at full opacity
    across "GPU 6" going and "GPU 8" coming): a text drawn whole whose way, from where it began
    through where it is at half the animation to as far again, meets a text fading there."""
    from dtfilm.onscreen.layout import AT_END, Box, crossings

    def screen(mover_x: float, other_opacity: float, other_x: float = 1.0) -> _Screen:
        mover, other = _faded("GPU 7", 1.0), _faded("GPU 6", 1.0).move_to([other_x, 0, 0])
        began = _Screen(mover, other)
        began.__dict__[AT_END] = {id(t): (t, Box.of(t)) for t in (mover, other)}
        mover.move_to([mover_x, 0, 0])  # (half its way: it goes on as far again)
        other.set_fill(opacity=other_opacity)
        return began

    # (the mover began at 0, is at -1 halfway, and ends at -2)
    assert [(a.original_text, b.original_text) for a, b in crossings(screen(-1.0, 0.0, other_x=-2.0))] == [
        ("GPU 7", "GPU 6")
    ]  # the fading text ahead, where the mover will be (unseen now, halfway through its swap)
    assert crossings(screen(-1.0, 0.5, other_x=-1.0)) != []  # part-faded where the mover is
    assert crossings(screen(-1.0, 0.5, other_x=3.0)) == []  # clear of its way
    assert crossings(screen(0.0, 0.5, other_x=0.0)) == []  # standing still: not this finder's
    assert crossings(screen(-1.0, 1.0, other_x=-1.0)) == []  # a whole text, not fading: the layout check's


def test_a_reshape_fades_a_kept_text_whose_way_crosses_words_that_change() -> None:
    """Reshape: "GPU 7" keeps its words but crosses where "GPU 6" goes: it fades with them, out
    where it stood and in where it goes; a kept text clear of them moves whole."""
    from manim import VGroup

    from dtfilm.visuals.fade import Reshape

    old = VGroup(_faded("GPU 6", 1.0).move_to([1, 0, 0]), _faded("GPU 7", 1.0).move_to([2, 0, 0]))
    old.add(_faded("Node 0", 1.0).move_to([0, 2, 0]))
    new = VGroup(_faded("GPU 8", 1.0).move_to([2, 0, 0]), _faded("GPU 7", 1.0).move_to([-1, 0, 0]))
    new.add(_faded("Node 0", 1.0).move_to([-1, 2, 0]))
    morph = Reshape(old, new)
    morph.begin()
    morph.interpolate(0.25)

    def opacity(text: Any) -> float:
        return float(text.family_members_with_points()[0].get_fill_opacity())

    assert 0.05 < opacity(old[1]) < 0.95 and abs(old[1].get_x() - 2.0) < 1e-6  # fading where it stood
    assert opacity(old[2]) == 1.0 and -1.0 < old[2].get_x() < 0.0  # "Node 0" moves whole
    morph.interpolate(0.75)
    assert 0.05 < opacity(old[1]) < 0.95 and abs(old[1].get_x() + 1.0) < 1e-6  # coming where it goes


def test_check_finds_dp_s_card_name_sliding_over_the_fading_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """dp's 8 -> 16 cards with the Reshape of before (a kept name always moved whole): `check`
    says "'GPU 7' moves across 'GPU 6'" as a design finding; with the fix, none."""
    import dataclasses

    import dtfilm.visuals.fade
    from dtfilm.check.chapters import check_loaded

    chapter = load_chapter("dp", None, ROOT)
    chapter = dataclasses.replace(chapter, shots=tuple(s for s in chapter.shots if s.beat == "more-cards"))
    monkeypatch.setattr(dtfilm.visuals.fade, "_crossing_members", lambda *args: set())
    found = [d for d in check_loaded(chapter).design if "moves across" in d]
    assert any(d.startswith("more-cards: text 'GPU 7' moves across 'GPU 6'") for d in found), found
    monkeypatch.undo()
    assert [d for d in check_loaded(chapter).design if "moves across" in d] == []


@pytest.mark.parametrize(
    "chapter", [pytest.param(c, marks=pytest.mark.xdist_group(f"{c}-default")) for c in chapter_ids()]
)
def test_no_text_slides_whole_across_a_fading_one(chapter: str) -> None:
    """Every chapter at its default configuration: no text drawn whole moves across another
    while that one fades (dp's "GPU 7" over "GPU 6"; tp's title over "layers 29–32", its "A"
    across the MLP's heading and its Y's title across X's and A's, all found when the finder
    learnt the case)."""
    assert [d for d in inspection(chapter, "default").layout.design if "moves across" in d] == []
