"""Which shots to draw, and drawing them on an executor: `--jobs` schedules shots, not chapters.

For each stale chapter: if its cached shots may serve (dtfilm.render._reusable), one scene plays
it and draws only the shots the cache lacks; otherwise all its shots are drawn, as tasks of
consecutive shots (one scene each), split in halves while there are fewer tasks than workers.
The longest tasks start first. Everything runs behind a
`concurrent.futures.Executor` (processes here; a cluster's executor can take its place), and a
chapter is handed back as soon as its last task is done, so it is joined while others draw.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import queue
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from multiprocessing.managers import SyncManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dtfilm.onscreen.screen import EMPTY
from dtfilm.render.progress import film_progress
from dtfilm.render.shot_cache import Prober, ShotKey, cached
from dtfilm.render.shot_render import (
    DrawnShots,
    ShotPart,
    ShotTask,
    chapter_prober,
    draw_shots,
    join_parts,
    plan_chapter,
)
from dtfilm.storyboard import Chapter
from dtfilm.storyboard.timing import shot_floor_seconds
from dtfilm.system.lifeline import lifeline, watch_parent
from dtfilm.system.quiet_workers import QuietPool, quiet_context

if TYPE_CHECKING:
    from dtfilm.render.cluster import Cluster


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
    """An executor for `jobs` processes and a queue its tasks can report progress on: the kept
    one while `kept_workers` is open (started by the first render that draws)."""
    if jobs <= 1:
        with InlineExecutor() as inline:
            yield inline, queue.Queue()
        return
    if _kept is None:
        with _worker_pool(jobs) as pool:
            yield pool
        return
    if jobs not in _kept.pools:
        _keep_pool(_kept, jobs)
    executor, updates, own = _kept.pools[jobs]
    try:
        yield executor, updates
    except BaseException as error:  # a render that failed may have left a worker broken or busy:
        del _kept.pools[jobs]  # the next render starts new ones, once these are stopped
        own.__exit__(type(error), error, error.__traceback__)
        raise


@contextlib.contextmanager
def _worker_pool(jobs: int) -> Iterator[tuple[Executor, Any]]:
    context = quiet_context()  # (forked on Linux: see there)
    if context.get_start_method() == "fork":
        import dtfilm.scene  # noqa: F401  (Manim with it: imported once, here, not by each worker)
    # Each process (the drawing ones, and the manager's that serves their progress queue) ends
    # when this one dies, however it dies (dtfilm.lifeline): none outlives a killed render.
    with lifeline(context) as line, _manager(context, line) as manager, QuietPool(jobs, line) as pool:
        pool.submit(int).result()  # every worker started now, before a progress display's thread
        try:
            yield pool, manager.Queue()
        except BaseException:
            # What is queued is not drawn, and the processes are waited for: before their queue
            # (the manager) closes, and before this process exits. (A plain shutdown, which
            # __exit__ makes, would draw every shot still queued.)
            pool.shutdown(wait=True, cancel_futures=True)
            raise


def _manager(context: BaseContext, line: Connection) -> SyncManager:
    """A started manager (for the progress queue) whose process watches `line`."""
    manager = SyncManager(ctx=context)
    manager.start(watch_parent, (line, os.getpid()))
    return manager


@dataclass
class _KeptWorkers:
    stack: contextlib.ExitStack  # closes every pool kept
    # by how many processes: each pool, its progress queue, and what closes the two
    pools: dict[int, tuple[Executor, Any, contextlib.ExitStack]] = field(default_factory=dict)


_kept: _KeptWorkers | None = None


def _keep_pool(kept: _KeptWorkers, jobs: int) -> None:
    own = kept.stack.enter_context(contextlib.ExitStack())  # the pool's own, to close it alone too
    kept.pools[jobs] = (*own.enter_context(_worker_pool(jobs)), own)


@contextlib.contextmanager
def kept_workers(jobs: int = 1) -> Iterator[None]:
    """While open, the processes that draw shots are kept from one render to the next (`dtfilm
    render --watch`): renders hand them their shots at once, without starting processes or
    importing Manim again (about a second of a changed caption's few). `jobs` processes start
    now (more than one); a render asking for another count starts its own, kept too."""
    global _kept
    with contextlib.ExitStack() as stack:
        _kept = _KeptWorkers(stack)
        if jobs > 1:
            _keep_pool(_kept, jobs)
        try:
            yield
        finally:
            _kept = None


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
    # drawn by beat with no scene played first (Prober.missing_beats): its keys are found in
    # the cache once they are drawn, or an adaptive task plays it
    guessed: bool = False
    parts: dict[str, list[ShotPart]] = field(default_factory=dict)  # a shot's parts drawn so far
    part_counts: dict[str, int] = field(default_factory=dict)  # how many parts each split shot has
    probes: Prober | None = None  # its shots looked up by probe (a reusable chapter's)
    wall_seconds: float = 0.0  # its tasks' wall times, summed
    tasks: int = 0  # how many tasks drew its shots

    def ordered_keys(self) -> list[ShotKey]:
        return [self.keys[shot.beat] for shot in self.chapter.shots]


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


# Seconds of drawing a second of a shot's floor (its narration's length, as a render knows it
# before drawing: dtfilm.scene_timing) takes, by shot kind: preview, from a cold render of the
# film's default numbers, two processes on this 2-core machine (titles 0.07 to 0.17). A task's
# cost is its shots' floors times these, so a cold render starts the costliest chapters first:
# by film seconds alone tp (0.17 s a second) went before 3d (0.21), which then drew alone for
# the last 10 s. Only their ratios matter. A shot the last render drew is ranked by the time it
# took.
DRAW_SECONDS_PER_SECOND = {
    "title": 0.11,
    "traffic_compare": 0.11,
    "split_matrices": 0.13,
    "layer_timeline": 0.13,
    "timeline": 0.15,
    "precision_switch": 0.17,
    "group_links": 0.17,
    "model_lineup": 0.18,
    "zigzag_balance": 0.18,
    "bytes_per_param": 0.18,
    "loaf_to_stages": 0.19,
    "bandwidth_ladder": 0.19,
    "memory_bars": 0.19,
    "ring_attention": 0.20,
    "chapter_map": 0.20,
    "ring_allreduce": 0.20,
    "loaf_to_rack": 0.22,
    "ledger_knobs": 0.22,
    "loaf_to_grid": 0.22,
    "training_clock": 0.23,
    "memory_columns": 0.24,
    "strategy_table": 0.25,
    "gather_layer": 0.26,
    "loaf_split": 0.26,
    "pipeline_slider": 0.28,
    "sweep": 0.28,
    "planner_pick": 0.39,
    "shard_steps": 0.44,
}
DRAW_SECONDS_PER_SECOND_ELSE = 0.2  # a kind not measured


def draw_costs(chapter: Chapter, manifest: dict[str, Any], seconds: dict[str, float]) -> dict[str, float]:
    """About how long drawing each shot takes: what it took when last drawn, else its `seconds`
    (shot_seconds: its floor, before a first render) at its kind's rate (DRAW_SECONDS_PER_SECOND)."""
    last = {s["beat"]: s for s in manifest["chapters"].get(chapter.id, {}).get("shots", [])}
    costs = {}
    for shot in chapter.shots:
        entry = last.get(shot.beat, {})
        drawn = entry.get("render_seconds") if entry.get("parts", {}).get("kind") == shot.kind else None
        rate = DRAW_SECONDS_PER_SECOND.get(shot.kind, DRAW_SECONDS_PER_SECOND_ELSE)
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


def draw_stale_shots(
    job: ShotJob,
    chapters: list[Chapter],
    reusable: set[str],
    renumbered: set[str],
    manifest: dict[str, Any],
    jobs: int,
    done: Callable[[ChapterShots], None],
    cluster: Cluster | None = None,
) -> None:
    """Draw what the cache lacks of `chapters` and call `done` with each chapter once every shot
    of it is in the cache (in this process, in the order they finish).

    A chapter whose cached shots may serve (`reusable`) and whose numbers did not change (its
    captions, narration or options did) is joined at once when the cache holds every shot's
    probe, chained through the screens each shot leaves (a caption changed back, say);
    otherwise it is one adaptive task: one scene plays the shots and draws those whose probes
    miss, with no dry run first, and stops once the cache holds the rest; a shot skipped on a
    probe whose key then proves missing is drawn by a task of its own. A reusable chapter whose numbers changed
    (`renumbered`) has a dry run first (plan_chapter), and only the shots whose keys the cache
    lacks are drawn.
    Every other chapter has all its shots drawn. Shots to draw are split between the workers.

    On a `cluster` (dtfilm.cluster) the shots are drawn by its workers, which share no files with
    this machine: every reusable chapter has its dry run here first, so that only whole shots
    named by key are sent, and the clips they return are written into the cache here."""
    with contextlib.ExitStack() as stack:
        pool: list[tuple[Executor, Any]] = []

        common = (job.root, job.overrides, job.quality, job.out_dir)

        def executor_for(count: int) -> tuple[Executor, Any]:
            """For more than one task, the local processes (started once); for one, this process,
            which has Manim loaded already (a process of its own would spend seconds importing it)."""
            if count <= 1 or jobs <= 1:
                return InlineExecutor(), queue.Queue()
            if not pool:
                pool.append(stack.enter_context(local_executor(jobs)))
            return pool[0]

        states = {c.id: ChapterShots(c) for c in chapters}
        lengths = {c.id: shot_seconds(c, manifest) for c in chapters}
        if cluster is not None:
            renumbered, jobs = reusable, cluster.jobs
        to_plan = [c for c in chapters if c.id in renumbered]
        planning, _ = executor_for(len(to_plan))
        plans = {c.id: planning.submit(plan_chapter, c.id, *common, job.theme) for c in to_plan}
        tasks = []
        for chapter in chapters:
            seconds = lengths[chapter.id]
            if chapter.id in plans:
                planned = plans[chapter.id].result()
                seconds.update({p.key.beat: p.seconds for p in planned})
                states[chapter.id].keys = {p.key.beat: p.key for p in planned}
                beats = tuple(p.key.beat for p in planned if cached(job.out_dir, p.key.key) is None)
                if beats:
                    tasks.append(ShotTask(chapter.id, beats, sum(seconds[b] for b in beats)))
                else:  # every shot cached: joined at once
                    done(states[chapter.id])
            elif chapter.id in reusable:
                probes = states[chapter.id].probes = chapter_prober(chapter, job.quality, job.theme, job.out_dir)
                known = probes.chained_keys(0, EMPTY)
                last = {s["beat"]: s["key"] for s in manifest["chapters"].get(chapter.id, {}).get("shots", [])}
                missing = probes.missing_beats(EMPTY, last) if known is None else None
                if known is not None:  # every shot cached as the storyboard now is: joined at once
                    states[chapter.id].keys = {k.beat: k for k in known}
                    done(states[chapter.id])
                elif missing and cluster is None:  # only these shots changed, as far as probes tell
                    states[chapter.id].guessed = True
                    tasks.append(ShotTask(chapter.id, missing, sum(seconds[b] for b in missing)))
                else:
                    tasks.append(ShotTask(chapter.id, None, sum(seconds.values()), adaptive=True))
            else:
                tasks.append(ShotTask(chapter.id, tuple(s.beat for s in chapter.shots), sum(seconds.values())))
        costs = {c.id: draw_costs(c, manifest, lengths[c.id]) for c in chapters}
        tasks = split_tasks(tasks, jobs, lengths, windows=cluster is None, costs=costs)
        for task in tasks:
            state = states[task.chapter]
            state.tasks_left += 1
            if task.window is not None:
                state.part_counts[task.beats[0]] = state.part_counts.get(task.beats[0], 0) + 1
        rows = [(task.label, task.seconds) for task in tasks]
        if cluster is not None:
            updates: Any = cluster.updates
            by_id = {c.id: c for c in chapters}

            def submit(task: ShotTask) -> Future[Any]:
                return cluster.submit(task, by_id[task.chapter])

            result: Callable[[Future[Any]], DrawnShots] = cluster.result
        else:
            drawing, updates = executor_for(len(tasks))
            args = (*common, job.theme, updates)

            def submit(task: ShotTask) -> Future[Any]:
                return drawing.submit(draw_shots, task, *args)

            def result(future: Future[Any]) -> DrawnShots:
                return future.result()

        with film_progress(rows, updates):
            pending = {submit(task) for task in tasks}
            try:
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        drawn = result(future)
                        state = states[drawn.task.chapter]
                        for key in drawn.keys:  # the drawn shots' keys as drawn; the rest as played
                            if key.beat in drawn.drawn or key.beat not in state.keys:
                                state.keys[key.beat] = key
                        if drawn.part is not None:  # a shot's part: joined once every part is drawn
                            beat = drawn.task.beats[0]
                            state.parts.setdefault(beat, []).append(drawn.part)
                            if len(state.parts[beat]) == state.part_counts[beat]:
                                if join_parts(state.parts.pop(beat), job.out_dir) is not None:
                                    state.drawn.append(beat)
                                else:  # the parts drew different shots: draw it whole
                                    pending.add(submit(dataclasses.replace(drawn.task, window=None)))
                                    state.tasks_left += 1
                        else:
                            state.drawn += drawn.drawn
                        state.wall_seconds += drawn.wall_seconds
                        state.tasks += 1
                        if drawn.missing:  # a probe found a shot whose key has changed: draw it
                            again = ShotTask(drawn.task.chapter, drawn.missing, drawn.task.seconds)
                            pending.add(submit(again))
                            state.tasks_left += 1
                            for beat in drawn.missing:
                                state.keys.pop(beat, None)
                        state.tasks_left -= 1
                        if not state.tasks_left and state.guessed:  # its keys, as the cache now holds them
                            state.guessed = False
                            known = state.probes.chained_keys(0, EMPTY)
                            if known is None:  # a drawn shot left another screen: play the chapter
                                lengths_now = lengths[state.chapter.id]
                                pending.add(submit(ShotTask(state.chapter.id, None, sum(lengths_now.values()), True)))
                                state.tasks_left += 1
                                continue
                            state.keys = {k.beat: k for k in known}
                        if not state.tasks_left:
                            done(state)
            except BaseException:
                for future in pending:
                    future.cancel()
                raise
