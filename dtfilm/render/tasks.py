"""Shots drawn as tasks: what a task is and what it hands back, and a cold chapter's shots made
into tasks (consecutive shots a scene plays, split while there are fewer tasks than workers, each
costed by the seconds its kinds take to draw, the longest first)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dtfilm.render.shot_cache import CachedShot, ShotKey
from dtfilm.shots.registry import KINDS
from dtfilm.storyboard import Chapter
from dtfilm.storyboard.timing import shot_floor_seconds


@dataclass(frozen=True)
class DryRunShot:
    """A shot as a dry run of its chapter found it (shot_render.dry_run_keys): its key and length."""

    key: ShotKey
    seconds: float  # its length in the dry run


@dataclass(frozen=True)
class ShotTask:
    """Shots of one chapter drawn in one scene: `beats` (None: every shot). An `adaptive` task
    plays every shot and draws those whose probes the cache lacks (shot_cache.shot_probe)."""

    chapter: str
    beats: tuple[str, ...] | None
    seconds: float  # the film they make, about: the longest tasks start first
    adaptive: bool = False
    # One shot's part: the animations that start this many seconds into it, from the first up
    # to the second (the last part's end is inf); tasks drawing every part make its clip.
    window: tuple[float, float] | None = None

    @property
    def label(self) -> str:
        if self.beats is None:
            return self.chapter
        if self.window is not None:
            return f"{self.chapter}:{self.beats[0]}@{self.window[0]:.0f}s"
        return f"{self.chapter}:{self.beats[0]}" + (f"+{len(self.beats) - 1}" if len(self.beats) > 1 else "")


@dataclass(frozen=True)
class ShotPart:
    """A window of one shot, drawn: its frames (None when no animation starts in it), the
    shot's probe, and what it drew before each of its animations (ShotRecord.prefixes). The
    last part plays the shot to its end and has its entry; a part that stopped at its window's
    end (`stop`: the index of the animation it stopped before, and the digest of what the shot
    drew before it) has none."""

    window: tuple[float, float]
    clip: Path | None
    entry: CachedShot | None
    probe: str
    wall_seconds: float
    prefixes: tuple[str, ...] = ()
    stop: tuple[int, str] | None = None

    def agrees(self, last: ShotPart) -> bool:
        """Whether this part drew the shot the last part drew: the same probe (the shot's own
        inputs, its sound and the screen it starts from), and what it drew up to its end."""
        if self.probe != last.probe or last.entry is None:
            return False
        if self.stop is None:  # it played the whole shot
            return self.entry is not None and self.entry.key == last.entry.key
        index, digest = self.stop
        return index < len(last.prefixes) and last.prefixes[index] == digest


@dataclass(frozen=True)
class DrawnShots:
    task: ShotTask
    keys: tuple[ShotKey, ...]  # every shot the scene played, drawn or skipped
    drawn: tuple[str, ...]  # the beats drawn into the cache
    wall_seconds: float
    missing: tuple[str, ...] = ()  # skipped on a probe, but their keys are not in the cache
    part: ShotPart | None = None  # a window task's part, for joining (join_parts)
    started_at: int = 0  # the shot its scene started from: after it, from a kept state (scene_state)


def shot_seconds(chapter: Chapter, manifest: dict[str, Any]) -> dict[str, float]:
    """About how long each shot runs: the last render's length, or its floor."""
    last = {s["beat"]: s["end"] - s["start"] for s in manifest["chapters"].get(chapter.id, {}).get("shots", [])}
    return {shot.beat: last.get(shot.beat) or shot_floor_seconds(shot) for shot in chapter.shots}


MIN_WINDOW_SECONDS = 3.0  # a shot's part is at least this much film (each part plays the shots before it)


# The earlier of two parts takes this share of their film. It stops at its window's end, where
# the later one plays the shot's logic from the start (with no frames before its window): so
# the two take about as long when the earlier draws more. If the logic costs L and the frames F
# over the whole film, share x balances x(L + F) = L + (1 - x)F, so x = (L + F) / (L + 2F).
# Measured on dp's ring at preview, two parts at once on two cores: at 0.6 the later took
# 0.22 to 0.28 s longer (of 2.4 to 2.6 s, three runs); at 0.65, 0.06 to 0.23 s (two runs).
EARLIER_SHARE = 0.65


def split_window(task: ShotTask) -> list[ShotTask]:
    """One shot's task (or part) as two parts, the earlier with EARLIER_SHARE of the film."""
    first, last = task.window or (0.0, math.inf)
    earlier = task.seconds * EARLIER_SHARE
    middle = first + earlier
    return [
        dataclasses.replace(task, window=(first, middle), seconds=earlier),
        dataclasses.replace(task, window=(middle, last), seconds=task.seconds - earlier),
    ]


def draw_costs(chapter: Chapter, manifest: dict[str, Any], seconds: dict[str, float]) -> dict[str, float]:
    """About how long drawing each shot takes: what it took when last drawn, else its `seconds`
    (shot_seconds: its floor, before a first render) at its kind's rate (its spec's draw_seconds_per_second)."""
    last = {s["beat"]: s for s in manifest["chapters"].get(chapter.id, {}).get("shots", [])}
    costs = {}
    for shot in chapter.shots:
        entry = last.get(shot.beat, {})
        drawn = entry.get("render_seconds") if entry.get("parts", {}).get("kind") == shot.kind else None
        rate = KINDS[shot.kind].draw_seconds_per_second
        costs[shot.beat] = drawn or seconds[shot.beat] * rate
    return costs


def task_cost(task: ShotTask, seconds: dict[str, dict[str, float]], costs: dict[str, dict[str, float]]) -> float:
    """About how long `task` takes to draw: its shots' costs (a window's share of its shot's)."""
    beats = task.beats if task.beats is not None else tuple(costs[task.chapter])
    if task.window is not None:
        shot = beats[0]
        return costs[task.chapter][shot] * task.seconds / max(seconds[task.chapter][shot], 1e-9)
    return sum(costs[task.chapter][b] for b in beats)


def split_tasks(
    tasks: list[ShotTask],
    jobs: int,
    seconds: dict[str, dict[str, float]],
    windows: bool = True,
    costs: dict[str, dict[str, float]] | None = None,
) -> list[ShotTask]:
    """While there are fewer tasks than workers, the longest task of two shots or more is cut in
    two halves of about equal film; failing that (and with `windows`), the longest shot is cut
    into two parts of its time, each drawing the animations that start in its window. Then the
    costliest go first (by `costs`, each shot's: draw_costs; without, the longest film)."""
    tasks = list(tasks)
    while len(tasks) < jobs:
        splittable = [t for t in tasks if t.beats is not None and len(t.beats) > 1]
        longest = max(splittable, key=lambda t: t.seconds, default=None)
        if longest is None:
            alone = [t for t in tasks if windows and t.beats is not None and len(t.beats) == 1 and not t.adaptive]
            shot = max(alone, key=lambda t: t.seconds, default=None)
            if shot is None or shot.seconds * min(EARLIER_SHARE, 1 - EARLIER_SHARE) < MIN_WINDOW_SECONDS:
                break
            tasks.remove(shot)
            tasks += split_window(shot)
            continue
        lengths = seconds[longest.chapter]
        half, cut = 0.0, 0
        while cut < len(longest.beats) - 1 and half + lengths[longest.beats[cut]] <= longest.seconds / 2:
            half += lengths[longest.beats[cut]]
            cut += 1
        cut = max(cut, 1)
        first, second = longest.beats[:cut], longest.beats[cut:]
        tasks.remove(longest)
        tasks += [
            ShotTask(longest.chapter, first, sum(lengths[b] for b in first)),
            ShotTask(longest.chapter, second, sum(lengths[b] for b in second)),
        ]
    if costs is None:
        return sorted(tasks, key=lambda t: -t.seconds)
    return sorted(tasks, key=lambda t: -task_cost(t, seconds, costs))
