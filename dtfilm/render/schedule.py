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
    PlannedShot,
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
from dtfilm.system.pickled import signing_key
from dtfilm.system.quiet_workers import QuietPool, quiet_context
from dtfilm.voice.engine import VoiceSpec

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

        signing_key()  # read once, here, and any warning about it said once: every worker inherits it
    # Each process (the drawing ones, and the manager's that serves their progress queue) ends
    # when this one dies, however it dies (dtfilm.system.lifeline): none outlives a killed render.
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
    # The voice the render speaks with, as this process read the user's choice (--voice,
    # DTFILM_VOICE, film.yaml) at the command's start: handed to every drawing process.
    voice: VoiceSpec


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
# before drawing: dtfilm.storyboard.timing) takes, by shot kind: preview, from a cold render of the
# film's default numbers, two processes on this 2-core machine (titles 0.07 to 0.17). A task's
# cost is its shots' floors times these, so a cold render starts the costliest chapters first:
# by film seconds alone tp (0.17 s a second) went before 3d (0.21), which then drew alone for
# the last 10 s. Only their ratios matter. A shot the last render drew is ranked by the time it
# took.
DRAW_SECONDS_PER_SECOND = {
    "title": 0.11,
    "traffic_compare": 0.11,
    "step_breakdown": 0.06,  # these three: measured beside a kind above on a loaded machine, scaled by it
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
    "decision_tree": 0.19,
    "overlap_timeline": 0.4,
    "expert_all_to_all": 0.26,  # these two: measured beside memory_columns (ep's render), scaled by it
    "expert_imbalance": 0.32,  # drawn alone, the fsdp shots before it played without frames counted in
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

    On a `cluster` (dtfilm.render.cluster) the shots are drawn by its workers, which share no files with
    this machine: every reusable chapter has its dry run here first, so that only whole shots
    named by key are sent, and the clips they return are written into the cache here."""
    with contextlib.ExitStack() as stack:
        if cluster is not None:
            renumbered, jobs = reusable, cluster.jobs
        drawing = StaleShots(job, manifest, jobs, done, cluster, stack, chapters)
        if cluster is None and _kept is None:  # (a watch keeps one pool of its --jobs across saves)
            drawing.jobs = min(jobs, drawing.most_tasks())  # --jobs 1024 forked 1,025 for one shot
        tasks = drawing.first_tasks(chapters, reusable, renumbered)
        drawing.draw(tasks)


@dataclass
class StaleShots:
    """One draw_stale_shots run, in named steps: the tasks the stale chapters need first
    (`first_tasks`), then drawing them (`draw`), where each finished task's shots are taken in
    (`take`) and may ask for more (a shot's parts that disagree, a probe whose key proved
    missing, a guess that failed), until every chapter is handed to `done`."""

    job: ShotJob
    manifest: dict[str, Any]
    jobs: int
    done: Callable[[ChapterShots], None]
    cluster: Cluster | None
    stack: contextlib.ExitStack  # closes the local worker processes, once started
    chapters: list[Chapter]
    states: dict[str, ChapterShots] = field(init=False)  # by chapter id
    lengths: dict[str, dict[str, float]] = field(init=False)  # each chapter's shots' seconds, by beat
    pending: set[Future[Any]] = field(default_factory=set)  # the tasks submitted and not yet taken in
    pool: tuple[Executor, Any] | None = None  # the local processes and their progress queue, once started
    executor: Executor | None = None  # where draw tasks go, here (not on a cluster)
    draw_args: tuple[Any, ...] = ()  # what draw_shots takes after its task, here

    def __post_init__(self) -> None:
        self.states = {c.id: ChapterShots(c) for c in self.chapters}
        self.lengths = {c.id: shot_seconds(c, self.manifest) for c in self.chapters}

    @property
    def common(self) -> tuple[Path, dict[str, Any], str, Path]:
        job = self.job
        return (job.root, job.overrides, job.quality, job.out_dir)

    def most_tasks(self) -> int:
        """The most tasks the stale chapters can be split into: each shot, cut into as many
        windows of its time as it can be (split_tasks: none under MIN_WINDOW_SECONDS of film).
        No more drawing processes than that are started."""
        parts = [max(1, int(s // MIN_WINDOW_SECONDS)) for lengths in self.lengths.values() for s in lengths.values()]
        return max(1, sum(parts))

    def executor_for(self, count: int) -> tuple[Executor, Any]:
        """For more than one task, the local processes (started once); for one, this process,
        which has Manim loaded already (a process of its own would spend seconds importing it)."""
        if count <= 1 or self.jobs <= 1:
            return InlineExecutor(), queue.Queue()
        if self.pool is None:
            self.pool = self.stack.enter_context(local_executor(self.jobs))
        return self.pool

    # -- the first tasks ----------------------------------------------------------------------
    def first_tasks(self, chapters: list[Chapter], reusable: set[str], renumbered: set[str]) -> list[ShotTask]:
        """The tasks the chapters need, split between the workers, costliest first; a chapter
        the cache already holds whole is handed to `done` at once."""
        job = self.job
        to_plan = [c for c in chapters if c.id in renumbered]
        planning, _ = self.executor_for(len(to_plan))
        plans = {c.id: planning.submit(plan_chapter, c.id, *self.common, job.theme, job.voice) for c in to_plan}
        tasks = []
        for chapter in chapters:
            if chapter.id in plans:
                task = self.planned_task(chapter, plans[chapter.id].result())
            elif chapter.id in reusable:
                task = self.reusable_task(chapter)
            else:
                seconds = self.lengths[chapter.id]
                task = ShotTask(chapter.id, tuple(s.beat for s in chapter.shots), sum(seconds.values()))
            if task is not None:
                tasks.append(task)
        costs = {c.id: draw_costs(c, self.manifest, self.lengths[c.id]) for c in chapters}
        tasks = split_tasks(tasks, self.jobs, self.lengths, windows=self.cluster is None, costs=costs)
        for task in tasks:
            state = self.states[task.chapter]
            state.tasks_left += 1
            if task.window is not None:
                state.part_counts[task.beats[0]] = state.part_counts.get(task.beats[0], 0) + 1
        return tasks

    def planned_task(self, chapter: Chapter, planned: list[PlannedShot]) -> ShotTask | None:
        """A chapter with a dry run (its numbers changed): the shots whose keys the cache lacks."""
        seconds, state = self.lengths[chapter.id], self.states[chapter.id]
        seconds.update({p.key.beat: p.seconds for p in planned})
        state.keys = {p.key.beat: p.key for p in planned}
        beats = tuple(p.key.beat for p in planned if cached(self.job.out_dir, p.key.key) is None)
        if beats:
            return ShotTask(chapter.id, beats, sum(seconds[b] for b in beats))
        self.done(state)  # every shot cached: joined at once
        return None

    def reusable_task(self, chapter: Chapter) -> ShotTask | None:
        """A chapter whose cached shots may serve, by its probes: joined at once when they hold
        every shot; else the beats they lack, guessed (not on a cluster); else an adaptive task."""
        job, seconds, state = self.job, self.lengths[chapter.id], self.states[chapter.id]
        probes = state.probes = chapter_prober(chapter, job.quality, job.theme, job.out_dir)
        known = probes.chained_keys(0, EMPTY)
        last = {s["beat"]: s["key"] for s in self.manifest["chapters"].get(chapter.id, {}).get("shots", [])}
        missing = probes.missing_beats(EMPTY, last) if known is None else None
        if known is not None:  # every shot cached as the storyboard now is: joined at once
            state.keys = {k.beat: k for k in known}
            self.done(state)
            return None
        if missing and self.cluster is None:  # only these shots changed, as far as probes tell
            state.guessed = True
            return ShotTask(chapter.id, missing, sum(seconds[b] for b in missing))
        return ShotTask(chapter.id, None, sum(seconds.values()), adaptive=True)

    # -- drawing --------------------------------------------------------------------------------
    def submit(self, task: ShotTask) -> None:
        """Hand a task to the cluster or the executor (an inline one draws it now)."""
        if self.cluster is not None:
            future = self.cluster.submit(task, self.states[task.chapter].chapter)
        else:
            assert self.executor is not None
            future = self.executor.submit(draw_shots, task, *self.draw_args)
        self.pending.add(future)

    def result(self, future: Future[Any]) -> DrawnShots:
        return self.cluster.result(future) if self.cluster is not None else future.result()

    def draw(self, tasks: list[ShotTask]) -> None:
        """Submit the tasks and take in each as it finishes, until none is left; on the way out
        (an error, Ctrl-C) those not started are cancelled."""
        rows = [(task.label, task.seconds) for task in tasks]
        if self.cluster is not None:
            updates: Any = self.cluster.updates
        else:
            self.executor, updates = self.executor_for(len(tasks))
            self.draw_args = (*self.common, self.job.theme, updates, self.job.voice)
        with film_progress(rows, updates):
            for task in tasks:
                self.submit(task)
            try:
                while self.pending:
                    finished, self.pending = wait(self.pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        self.take(self.result(future))
            except BaseException:
                for future in self.pending:
                    future.cancel()
                raise

    def take(self, drawn: DrawnShots) -> None:
        """A finished task: its keys, its shots (or part), and what it leaves to draw; its
        chapter handed to `done` once the chapter has no task left."""
        state = self.states[drawn.task.chapter]
        for key in drawn.keys:  # the drawn shots' keys as drawn; the rest as played
            if key.beat in drawn.drawn or key.beat not in state.keys:
                state.keys[key.beat] = key
        if drawn.part is not None:
            self.take_part(state, drawn)
        else:
            state.drawn += drawn.drawn
        state.wall_seconds += drawn.wall_seconds
        state.tasks += 1
        if drawn.missing:  # a probe found a shot whose key has changed: draw it
            self.again(state, ShotTask(drawn.task.chapter, drawn.missing, drawn.task.seconds))
            for beat in drawn.missing:
                state.keys.pop(beat, None)
        state.tasks_left -= 1
        if not state.tasks_left and state.guessed and not self.check_guess(state):
            return
        if not state.tasks_left:
            self.done(state)

    def take_part(self, state: ChapterShots, drawn: DrawnShots) -> None:
        """A shot's part: the shot is joined once every part is drawn, or drawn whole when the
        parts drew different shots."""
        beat = drawn.task.beats[0]
        state.parts.setdefault(beat, []).append(drawn.part)
        if len(state.parts[beat]) == state.part_counts[beat]:
            if join_parts(state.parts.pop(beat), self.job.out_dir) is not None:
                state.drawn.append(beat)
            else:
                self.again(state, dataclasses.replace(drawn.task, window=None))

    def check_guess(self, state: ChapterShots) -> bool:
        """A chapter drawn by guessed beats, all drawn: its keys as the cache now holds them
        (True), or, where a drawn shot left another screen, an adaptive task to play it (False)."""
        state.guessed = False
        known = state.probes.chained_keys(0, EMPTY)
        if known is None:
            self.again(state, ShotTask(state.chapter.id, None, sum(self.lengths[state.chapter.id].values()), True))
            return False
        state.keys = {k.beat: k for k in known}
        return True

    def again(self, state: ChapterShots, task: ShotTask) -> None:
        """One more task for a chapter."""
        self.submit(task)
        state.tasks_left += 1
