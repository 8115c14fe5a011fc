"""ShotContext.relight (issue 58, speech over stills): where the voice stays on what was just lit
for 2 s or more before its next mark (or its end), the pieces are lit again halfway there; a
shorter wait is left alone, so a shot never runs past its narration for it. And
ShotContext.point_in_turn, which relights a row whose pieces leave no room for a band each."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from dtfilm.scene import POINT_AND_ROW_SECONDS, POINT_SECONDS, RELIGHT_SECONDS, ShotContext


class _Ctx(SimpleNamespace):
    """What relight reads of a ShotContext: the shot's marks and their times, the scene's clock."""

    relight = ShotContext.relight
    point_in_turn = ShotContext.point_in_turn
    next_mark = ShotContext.next_mark
    spread = ShotContext.spread

    def mark_seconds(self, name: str) -> float:
        return self.times[name]

    def said_seconds(self) -> float:
        return self.said

    def until_second(self, seconds: float) -> None:
        self.scene.time = max(self.scene.time, self.shot_start + seconds)

    def highlight(self, *pieces, across: bool = False, hold: float = 0.35) -> None:
        self.lit.append((self.scene.time - self.shot_start, pieces, across))
        self.scene.time += 0.7 + hold  # a band's fade in and out

    def point_at(self, *pieces, scale: float = 1.2) -> None:
        self.pointed.append((self.scene.time - self.shot_start, pieces))
        self.scene.time += 0.9


def _ctx(now: float, times: dict[str, float], said: float) -> _Ctx:
    shot = SimpleNamespace(marks=[(name, i) for i, name in enumerate(times)])
    return _Ctx(
        scene=SimpleNamespace(time=100.0 + now), shot_start=100.0, shot=shot, times=times, said=said, lit=[], pointed=[]
    )


def test_a_long_wait_for_the_next_mark_is_split_by_a_highlight_halfway():
    ctx = _ctx(now=4.0, times={"total": 3.0, "capacity": 8.0, "verdict": 10.0}, said=12.0)
    ctx.relight("bar", across=True)
    assert ctx.lit == [(6.0, ("bar",), True)]  # halfway from 4 s to [capacity] at 8 s


def test_the_narration_s_end_when_no_mark_follows():
    ctx = _ctx(now=9.0, times={"copies": 6.0}, said=13.0)
    ctx.relight("total")
    assert ctx.lit == [(11.0, ("total",), False)]


def test_a_short_wait_is_left_alone():
    ctx = _ctx(now=4.0, times={"capacity": 4.0 + RELIGHT_SECONDS - 0.1}, said=20.0)
    ctx.relight("bar")
    assert ctx.lit == []
    assert ctx.scene.time == 104.0  # nothing waited for


def test_pieces_with_room_are_pointed_at_in_turn_each_with_its_row_lit():
    ctx = _ctx(now=2.0, times={"row1_parts": 2.0, "row2": 2.0 + 3 * POINT_AND_ROW_SECONDS}, said=20.0)
    ctx.point_in_turn(["a", "b", "c"], "row1_parts", "row")
    spread = [2.0, 2.0 + POINT_AND_ROW_SECONDS, 2.0 + 2 * POINT_AND_ROW_SECONDS]
    assert [when for when, _ in ctx.pointed] == pytest.approx(spread)
    assert [pieces for _, pieces, _ in ctx.lit] == [("row",)] * 3  # a band with each
    assert ctx.scene.time - ctx.shot_start <= 2.0 + 3 * POINT_AND_ROW_SECONDS + 1e-9  # never past the next mark


def test_pieces_said_quickly_are_pointed_at_without_a_band_each():
    room = (POINT_SECONDS + POINT_AND_ROW_SECONDS) / 2  # a point's time each, not a band's too
    ctx = _ctx(now=0.0, times={"row1_parts": 0.0, "row2": 2 * room}, said=20.0)
    ctx.point_in_turn(["a", "b"], "row1_parts", "row")
    assert [when for when, _ in ctx.pointed] == pytest.approx([0.0, room])
    assert ctx.lit == []  # what is left after the last point is too short to relight the row
    assert ctx.scene.time - ctx.shot_start <= 2 * room  # the next row keeps its mark


def test_pieces_said_in_one_breath_are_not_pointed_at():
    ctx = _ctx(now=0.0, times={"row1_parts": 0.0, "row2": 4 * (POINT_SECONDS - 0.1)}, said=20.0)
    ctx.point_in_turn(["a", "b", "c", "d"], "row1_parts", "row")
    assert ctx.pointed == []  # a point each would run the next row late
    assert ctx.lit == [(pytest.approx(1.8), ("row",), True)]  # the row lit instead, halfway to [row2] at 3.6 s
