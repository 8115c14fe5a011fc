"""The opening chapter's pictures move as the voice names what they show (issue 45, item 5):
the FLOPs counted forward then backward, one card's years as they are said."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from dtfilm.scene import ShotContext
from dtfilm.storyboard import load_chapter
from tests.conftest import ROOT, inspection

FORWARD = "forward: a multiply and an add"
BACKWARD = "backward: input and weight gradients"
# the chapter's shared dry run (tests.conftest.inspection): its texts' first showing, its voice
pytestmark = pytest.mark.xdist_group("why-default")


def played(chapter_id: str):
    found = inspection(chapter_id, "default")
    return found, found.first_shown


def mark_at(found, beat: str, mark: str) -> float:
    """Scene seconds at which the voice reaches `mark` in shot `beat`."""
    chapter = load_chapter("why", {}, ROOT)
    shot = next(s for s in chapter.shots if s.beat == beat)
    start = next(start for b, start, _ in found.shot_times if b == beat)
    ctx = ShotContext(SimpleNamespace(track=found.track, time=0.0), chapter, found.theme)
    ctx.start_shot(shot)
    return start + ctx.mark_seconds(mark)


def test_the_six_operations_are_counted_forward_then_backward_as_the_voice_says_them():
    scene, shown = played("why")
    for text, mark in ((FORWARD, "forward"), (BACKWARD, "backward")):
        said = mark_at(scene, "wont-finish", mark)
        assert said <= shown[text] <= said + 1.5, (text, said, shown.get(text))


def test_one_cards_years_appear_when_they_are_said_not_when_its_calendar_fills():
    scene, shown = played("why")
    clock = next(s for s in load_chapter("why", {}, ROOT).shots if s.beat == "wont-finish")
    years = clock.numbers("{compute.training_seconds_one_card:years}").text
    said = mark_at(scene, "wont-finish", "years")
    assert mark_at(scene, "wont-finish", "busy") + 4 < said  # the voice names them well after the fill
    assert said <= shown[years] <= said + 1.0
