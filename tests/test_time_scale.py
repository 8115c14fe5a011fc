"""A traffic comparison's time lines share one scale of seconds (a lecturer's review, issue 58:
ep's two rows drew the same 4.7 s of compute at two lengths, each row to its own scale)."""

from __future__ import annotations

import pytest

from dtfilm.shots.compare.draw import BAR_LEFT_X
from dtfilm.shots.compare.times import _time_names, _time_room, compute_bar, time_scale
from dtfilm.storyboard import load_chapter
from dtfilm.visuals.shapes import rectangle
from dtfilm.visuals.theme import DARK, FRAME_WIDTH
from tests.conftest import ROOT


@pytest.mark.parametrize("chapter", ["ep", "pp", "fsdp"])
def test_every_rows_time_line_is_drawn_to_one_scale(chapter: str):
    shot = next(s for s in load_chapter(chapter, root=ROOT).shots if s.kind == "traffic_compare")
    rows = [numbers for _, numbers in shot.options["rows"]]
    unit = time_scale(DARK, rows, BAR_LEFT_X)
    lengths = []
    for numbers in rows:
        bar = rectangle(1.0, 0.3).move_to([BAR_LEFT_X + 0.5, 0, 0])
        link, compute = compute_bar(DARK, numbers, bar, unit=unit)[0]
        link_s, compute_s = float(numbers.get("comm.seconds")), float(numbers.get("compute.compute_seconds"))
        assert compute.width == pytest.approx(max(unit * compute_s, 0.03))
        assert link.width == pytest.approx(max(unit * link_s, 0.03))
        lengths.append(compute.width / compute_s)
        assert (
            unit <= _time_room(_time_names(DARK, numbers), numbers, BAR_LEFT_X, FRAME_WIDTH / 2 - 0.3)[1] + 1e-9
        )  # (it fits every row)
    assert max(lengths) == pytest.approx(min(lengths))  # a second is as long in every row


def test_eps_rows_had_scales_of_their_own():
    """The case the review saw: each of ep's rows would fit its own, different scale."""
    shot = next(s for s in load_chapter("ep", root=ROOT).shots if s.kind == "traffic_compare")
    own = [
        _time_room(_time_names(DARK, numbers), numbers, BAR_LEFT_X, FRAME_WIDTH / 2 - 0.3)[1]
        for _, numbers in shot.options["rows"]
    ]
    assert max(own) > 1.05 * min(own)
