"""A shot's stage carries its picture from its first moment, not only its title and caption, while
the voice opens on it (issue 58: a teacher never talks over an empty board). 3d's planner stood
on the title and the stats alone until the voice had named the model and its cards (now the
tree's questions are there, the first lit, to be walked); pp's traffic
on its heading and key alone (or, held, on the last shot's pipeline) until [row1]. Each reads the
chapter's shared dry run (tests.conftest.inspection): when each text first shows."""

from __future__ import annotations

import pytest

from dtfilm.cost.memory import STATE_PARTS
from dtfilm.shots.decision_tree.draw import LEAVES, ONE_CARD_QUESTION
from dtfilm.storyboard import load_chapter
from tests.conftest import ROOT, inspection

OPENING_SECONDS = 1.5  # the picture's first piece is on screen this soon after the shot starts


def _opening(chapter: str, beat: str) -> tuple[float, dict[str, float], object]:
    """The shot's start (scene seconds), when each text first showed, and the shot."""
    found = inspection(chapter, "default")
    start = next(begin for name, begin, _ in found.shot_times if name == beat)
    shot = next(s for s in load_chapter(chapter, {}, ROOT).shots if s.beat == beat)
    return start, found.first_shown, shot


@pytest.mark.xdist_group("3d-default")
def test_3d_planner_opens_on_the_trees_questions_as_the_voice_starts():
    start, shown, shot = _opening("3d", "planner")
    question = shot.options["tree_configs"]["one_card"](ONE_CARD_QUESTION).text
    # the first question, and the outline of the questions the walk may reach (dimmed)
    outline = [question, "Where is the bottleneck?", *[words for words, _, _ in LEAVES.values()]]
    assert {q: round(shown[q] - start, 2) for q in outline if shown[q] - start > OPENING_SECONDS} == {}
    # what the question is weighed on still comes as the walk starts ([one_card]), not before
    held = shot.options["tree_configs"]["one_card"]("{memory.total:GB}: {memory.static:GB} state").text
    figures = next(text for text in shown if text.startswith(held))
    assert shown[figures] - start > OPENING_SECONDS


@pytest.mark.xdist_group("pp-default")
def test_pp_traffic_opens_on_its_first_row_before_the_voice_names_it():
    start, shown, shot = _opening("pp", "traffic")
    name, numbers = shot.options["rows"][0]
    assert shown[name.text] - start <= OPENING_SECONDS, shown[name.text] - start
    # its figures come as the voice says the row ([row1], 1.8 s in), not with the opening
    figures = numbers("{comm.total:bytes} · {comm.seconds:time}").text
    assert shown[figures] - start > OPENING_SECONDS


@pytest.mark.xdist_group("tp-default")
def test_tp_title_gives_the_stage_to_the_loaf_as_the_voice_names_every_layer():
    start, shown, _ = _opening("tp", "title")
    halves, _, _ = _opening("tp", "halves")
    # the loaf's ends ("layers 1–4") come in the title shot, as the voice says "every layer"
    # (its [picture] mark, 3.7 s in), where the old code drew the loaf 11.7 s in, in the next shot
    ends = [text for text in shown if text.startswith("layers ")]
    assert ends and all(shown[text] - start < 5.0 for text in ends), {t: shown[t] - start for t in ends}
    assert all(shown[text] < halves for text in ends)


@pytest.mark.xdist_group("ledger-default")
def test_ledger_opens_on_its_rows_as_the_title_card_goes():
    _, _, shot = _opening("ledger", "sixteen-bytes")
    rows = sum(1 for part in STATE_PARTS if shot.numbers.get(f"bytes_per_param.{part}") > 0)
    shapes = inspection("ledger", "default").stage_shapes
    opening = [count for beat, at, count in shapes if beat == "sixteen-bytes" and at <= OPENING_SECONDS]
    # every row of the ledger (empty, each filled as the voice names it) as the title card goes,
    # where the old code stood on the header and caption alone, its first block 2.6 s in
    assert max(opening, default=0) >= rows, opening


@pytest.mark.xdist_group("why-default")
def test_why_title_stands_over_the_single_card_whose_gauge_fills_as_said():
    shapes = [(at, count) for beat, at, count in inspection("why", "default").stage_shapes if beat == "title"]
    # the card comes in with the title ("A single card"), where the old code's title card stood
    # alone on the stage for 7.5 s
    assert max((count for at, count in shapes if at <= OPENING_SECONDS), default=0) >= 1, shapes
    # and its gauge fills with the state's parts as the voice says the model does not fit
    assert max(count for _, count in shapes) >= 1 + len(STATE_PARTS), shapes


@pytest.mark.xdist_group("cp-default")
def test_cp_title_stands_over_the_model_its_cuts_sliced():
    shapes = [(at, count) for beat, at, count in inspection("cp", "default").stage_shapes if beat == "title"]
    # the loaf (what every cut so far sliced) comes in with the title, where the old code's
    # title card stood alone for 7 s; the sequence it then cuts comes as the voice names it
    assert max((count for at, count in shapes if at <= OPENING_SECONDS), default=0) >= 1, shapes
