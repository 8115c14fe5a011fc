"""A text that changes never stacks (issue 58): a cross-fade drew "4.29 GB" over "73 GB" for half
its length. The finder (dtfilm.onscreen.layout.crossfade_stacks) and the counters, which every
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
from tests.conftest import ROOT


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
