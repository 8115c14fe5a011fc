"""Which shots to draw, and drawing them on an executor: `--jobs` schedules shots, not chapters.

For each stale chapter: if its cached shots may serve (dtfilm.render.stale.cache_may_serve), one scene plays
it and draws only the shots the cache lacks; otherwise all its shots are drawn, as tasks of
consecutive shots (one scene each), split in halves while there are fewer tasks than workers.
The longest tasks start first. Everything runs behind a
`concurrent.futures.Executor` (processes here; a cluster's executor can take its place), and a
chapter is handed back as soon as its last task is done, so it is joined while others draw.
"""

from __future__ import annotations

import contextlib
import dataclasses
import queue
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dtfilm.onscreen.screen import EMPTY
from dtfilm.render.job import RenderJob
from dtfilm.render.progress import film_progress
from dtfilm.render.shot_cache import Prober, ShotKey, cached
from dtfilm.render.shot_render import chapter_prober, draw_shots, dry_run_keys, join_parts
from dtfilm.render.tasks import DrawnShots, DryRunShot, ShotPart, ShotTask
from dtfilm.storyboard import Chapter

if TYPE_CHECKING:
    from dtfilm.render.cluster import Cluster
from dtfilm.render.tasks import MIN_WINDOW_SECONDS, draw_costs, shot_seconds, split_tasks
from dtfilm.render.workers import InlineExecutor, keeping, local_executor


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


def draw_stale_shots(
    job: RenderJob,
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
    (`renumbered`) has a dry run first (dry_run_keys), and only the shots whose keys the cache
    lacks are drawn.
    Every other chapter has all its shots drawn. Shots to draw are split between the workers.

    On a `cluster` (dtfilm.render.cluster) the shots are drawn by its workers, which share no files with
    this machine: every reusable chapter has its dry run here first, so that only whole shots
    named by key are sent, and the clips they return are written into the cache here."""
    with contextlib.ExitStack() as stack:
        if cluster is not None:
            renumbered, jobs = reusable, cluster.jobs
        drawing = StaleShots(job, manifest, jobs, done, cluster, stack, chapters)
        if cluster is None and not keeping():  # (a watch keeps one pool of its --jobs across saves)
            drawing.jobs = min(jobs, drawing.most_tasks())  # --jobs 1024 forked 1,025 for one shot
        tasks = drawing.first_tasks(chapters, reusable, renumbered)
        drawing.draw(tasks)


@dataclass
class StaleShots:
    """One draw_stale_shots run, in named steps: the tasks the stale chapters need first
    (`first_tasks`), then drawing them (`draw`), where each finished task's shots are taken in
    (`take`) and may ask for more (a shot's parts that disagree, a probe whose key proved
    missing, a guess that failed), until every chapter is handed to `done`."""

    job: RenderJob
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
    updates: Any = None  # where draw_shots tells its progress, here

    def __post_init__(self) -> None:
        self.states = {c.id: ChapterShots(c) for c in self.chapters}
        self.lengths = {c.id: shot_seconds(c, self.manifest) for c in self.chapters}

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
        to_dry_run = [c for c in chapters if c.id in renumbered]
        running, _ = self.executor_for(len(to_dry_run))
        dry_runs = {c.id: running.submit(dry_run_keys, c.id, self.job) for c in to_dry_run}
        tasks = []
        for chapter in chapters:
            if chapter.id in dry_runs:
                task = self.dry_run_task(chapter, dry_runs[chapter.id].result())
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

    def dry_run_task(self, chapter: Chapter, dry_run: list[DryRunShot]) -> ShotTask | None:
        """A chapter with a dry run (its numbers changed): the shots whose keys the cache lacks."""
        seconds, state = self.lengths[chapter.id], self.states[chapter.id]
        seconds.update({p.key.beat: p.seconds for p in dry_run})
        state.keys = {p.key.beat: p.key for p in dry_run}
        beats = tuple(p.key.beat for p in dry_run if cached(self.job.out_dir, p.key.key) is None)
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
            future = self.executor.submit(draw_shots, task, self.job, self.updates)
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
            self.updates = updates
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
