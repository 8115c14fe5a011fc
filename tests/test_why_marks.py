"""The opening chapter's pictures move as the voice names what they show (issue 45, item 5):
the FLOPs counted forward then backward, one card's years as they are said."""

from __future__ import annotations

from functools import cache

from manim import Scene

from dtfilm.check.inspect import dry_run
from dtfilm.onscreen.layout import texts_on_screen
from dtfilm.scene import ChapterScene, ShotContext
from dtfilm.storyboard import load_chapter
from tests.conftest import ROOT

FORWARD = "forward: a multiply and an add"
BACKWARD = "backward: input and weight gradients"


class FirstShown:
    """When each text first shows (scene seconds, at the end of the animation that shows it)."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}

    def __call__(self, scene: Scene, beat: str) -> None:
        for text in texts_on_screen(scene):
            self.at.setdefault(text.original_text, scene.time)


@cache
def played(chapter_id: str) -> tuple[ChapterScene, dict[str, float]]:
    seen = FirstShown()
    scene = dry_run(load_chapter(chapter_id, {}, ROOT), None, [seen])
    return scene, seen.at


def mark_at(scene: ChapterScene, beat: str, mark: str) -> float:
    """Scene seconds at which the voice reaches `mark` in shot `beat`."""
    shot = next(s for s in scene.chapter.shots if s.beat == beat)
    start = next(start for b, start, _ in scene.shot_times if b == beat)
    ctx = ShotContext(scene, scene.chapter, scene.theme)
    ctx.start_shot(shot)
    return start + ctx.mark_seconds(mark)


def test_the_six_operations_are_counted_forward_then_backward_as_the_voice_says_them():
    scene, shown = played("why")
    for text, mark in ((FORWARD, "forward"), (BACKWARD, "backward")):
        said = mark_at(scene, "wont-finish", mark)
        assert said <= shown[text] <= said + 1.5, (text, said, shown.get(text))


def test_one_cards_years_appear_when_they_are_said_not_when_its_calendar_fills():
    scene, shown = played("why")
    clock = next(s for s in scene.chapter.shots if s.beat == "wont-finish")
    years = clock.numbers("{compute.training_seconds_one_card:years}").text
    said = mark_at(scene, "wont-finish", "years")
    assert mark_at(scene, "wont-finish", "busy") + 4 < said  # the voice names them well after the fill
    assert said <= shown[years] <= said + 1.0
