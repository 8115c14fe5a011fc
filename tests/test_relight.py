"""ShotContext.relight (issue 58, speech over stills): where the voice stays on what was just lit
for 2 s or more before its next mark (or its end), the pieces are lit again halfway there; a
shorter wait is left alone, so a shot never runs past its narration for it."""

from __future__ import annotations

from types import SimpleNamespace

from dtfilm.scene import RELIGHT_SECONDS, ShotContext


class _Ctx(SimpleNamespace):
    """What relight reads of a ShotContext: the shot's marks and their times, the scene's clock."""

    relight = ShotContext.relight

    def mark_seconds(self, name: str) -> float:
        return self.times[name]

    def said_seconds(self) -> float:
        return self.said

    def until_second(self, seconds: float) -> None:
        self.scene.time = max(self.scene.time, self.shot_start + seconds)

    def highlight(self, *pieces, across: bool = False) -> None:
        self.lit.append((self.scene.time - self.shot_start, pieces, across))


def _ctx(now: float, times: dict[str, float], said: float) -> _Ctx:
    shot = SimpleNamespace(marks=[(name, 0) for name in times])
    return _Ctx(scene=SimpleNamespace(time=100.0 + now), shot_start=100.0, shot=shot, times=times, said=said, lit=[])


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
