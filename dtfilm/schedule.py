"""Which shots to draw, and drawing them on an executor: `--jobs` schedules shots, not chapters.

For each stale chapter: if its cached shots may serve (dtfilm.render._reusable), a dry run
gives every shot's key and only the shots the cache lacks are drawn; otherwise all are. The
shots to draw become tasks of consecutive shots of one chapter (one scene each), split in halves
while there are fewer tasks than workers, and started longest first. Everything runs behind a
`concurrent.futures.Executor` (processes here; a cluster's executor can take its place), and a
chapter is handed back as soon as its last task is done, so it is joined while others draw.
"""

from __future__ import annotations

import contextlib
import queue
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from dtfilm.progress import film_progress
from dtfilm.scene_timing import shot_floor_seconds
from dtfilm.shot_cache import ShotKey, cached
from dtfilm.shot_render import DrawnShots, PlannedShot, ShotTask, draw_shots, plan_chapter
from dtfilm.storyboard import Chapter


class InlineExecutor(Executor):
    """One job: each task runs in this process when it is submitted."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # handed to whoever waits on it, as a pool would
            future.set_exception(error)
        return future


@contextlib.contextmanager
def local_executor(jobs: int) -> Iterator[tuple[Executor, Any]]:
    """An executor for `jobs` processes and a queue its tasks can report progress on."""
    if jobs <= 1:
        with InlineExecutor() as inline:
            yield inline, queue.Queue()
        return
    context = get_context("spawn")
    with context.Manager() as manager, ProcessPoolExecutor(jobs, mp_context=context) as pool:
        yield pool, manager.Queue()


@dataclass(frozen=True)
class ShotJob:
    """What rendering the stale chapters asks of the executor."""

    root: Path
    overrides: dict[str, Any]
    quality: str
    out_dir: Path
    theme: str


@dataclass
class ChapterShots:
    """A chapter's shots as they become known: every key, and which were drawn this run."""

    chapter: Chapter
    keys: dict[str, ShotKey] = field(default_factory=dict)
    drawn: list[str] = field(default_factory=list)
    tasks_left: int = 0
    wall_seconds: float = 0.0

    def ordered_keys(self) -> list[ShotKey]:
        return [self.keys[shot.beat] for shot in self.chapter.shots]


def shot_seconds(chapter: Chapter, manifest: dict[str, Any], planned: list[PlannedShot] | None) -> dict[str, float]:
    """About how long each shot runs: the dry run's length, the last render's, or its floor."""
    if planned is not None:
        return {p.key.beat: p.seconds for p in planned}
    last = {s["beat"]: s["end"] - s["start"] for s in manifest["chapters"].get(chapter.id, {}).get("shots", [])}
    return {shot.beat: last.get(shot.beat) or shot_floor_seconds(shot) for shot in chapter.shots}


def split_tasks(tasks: list[ShotTask], jobs: int, seconds: dict[str, dict[str, float]]) -> list[ShotTask]:
    """While there are fewer tasks than workers, the longest one is cut in two halves of about
    equal film; then the longest go first."""
    tasks = list(tasks)
    while len(tasks) < jobs:
        longest = max(tasks, key=lambda t: t.seconds, default=None)
        if longest is None or longest.beats is None or len(longest.beats) < 2:
            break
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
    return sorted(tasks, key=lambda t: -t.seconds)


def draw_stale_shots(
    job: ShotJob,
    chapters: list[Chapter],
    reusable: set[str],
    manifest: dict[str, Any],
    jobs: int,
    done: Callable[[ChapterShots], None],
    executor: Executor | None = None,
) -> None:
    """Draw what the cache lacks of `chapters` and call `done` with each chapter once every shot
    of it is in the cache (in this process, in the order they finish)."""
    with contextlib.ExitStack() as stack:
        if executor is None:
            executor, updates = stack.enter_context(local_executor(jobs))
        else:
            updates = None  # a cluster's tasks report no progress here
        args = (job.root, job.overrides, job.quality)
        plans = {c.id: executor.submit(plan_chapter, c.id, *args, job.theme) for c in chapters if c.id in reusable}
        planned = {chapter_id: future.result() for chapter_id, future in plans.items()}
        states, tasks, lengths = {}, [], {}
        for chapter in chapters:
            state = states[chapter.id] = ChapterShots(chapter)
            keys = planned.get(chapter.id)
            lengths[chapter.id] = shot_seconds(chapter, manifest, keys)
            if keys is None:
                beats = tuple(shot.beat for shot in chapter.shots)
            else:
                state.keys = {p.key.beat: p.key for p in keys}
                beats = tuple(p.key.beat for p in keys if cached(job.out_dir, p.key.key) is None)
            if beats:
                tasks.append(ShotTask(chapter.id, beats, sum(lengths[chapter.id][b] for b in beats)))
        tasks = split_tasks(tasks, jobs, lengths)
        for task in tasks:
            states[task.chapter].tasks_left += 1
        for state in states.values():
            if not state.tasks_left:  # every shot cached: joined at once
                done(state)
        rows = [(task.label, task.seconds) for task in tasks]
        with film_progress(rows, updates) if updates is not None else contextlib.nullcontext():
            pending = {executor.submit(draw_shots, task, *args, job.out_dir, job.theme, updates) for task in tasks}
            try:
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        drawn: DrawnShots = future.result()
                        state = states[drawn.task.chapter]
                        for key in drawn.keys:  # the drawn shots' keys as drawn; the rest as planned
                            if key.beat in drawn.drawn or key.beat not in state.keys:
                                state.keys[key.beat] = key
                        state.drawn += drawn.drawn
                        state.wall_seconds += drawn.wall_seconds
                        state.tasks_left -= 1
                        if not state.tasks_left:
                            done(state)
            except BaseException:
                for future in pending:
                    future.cancel()
                raise
