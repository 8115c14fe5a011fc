"""The whole film on 1, 2, 4, 8 and 32 Dask workers, predicted from measured per-shot times.

    .venv/bin/python benchmarks/cluster_speed.py                       # renders/manifest.json
    .venv/bin/python benchmarks/cluster_speed.py --manifest DIR/manifest.json
    .venv/bin/python benchmarks/cluster_speed.py --manifest P/manifest.json --scale F/manifest.json

Prints figures; asserts nothing (issue 19). The manifest is a render's: each shot's drawing time
(from its cache entry), each chapter's join time and its tasks' summed wall time, the film's join
time. `--scale` takes a manifest of some chapters at another quality (say dp at final) and
multiplies every shot's time by the ratio of drawing times of the chapters both hold: the film at
final predicted from a preview render and one chapter at final.

The model is the render's own: a cold render's tasks as dtfilm.render.tasks.split_tasks makes them for
N workers (each chapter one task, the longest cut in halves while there are fewer tasks than
workers), each costing its shots' drawing times plus the measured overhead of a task (a scene's
setup, the dry run of the shots before it, the transfer), handed longest first to whichever
worker is free (Dask places queued tasks on workers as they free up). The client joins a chapter
when its last task returns, one join at a time, then the film. The critical path, which no number
of workers shortens, is the longest task plus its chapter's join.
"""

from __future__ import annotations

import argparse
import heapq
import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dtfilm.render.tasks import ShotTask, split_tasks  # noqa: E402

WORKERS = (1, 2, 4, 8, 32)
STARTUP_SECONDS = 4.0  # a render's start with nothing to draw: Python, imports, the storyboards (render_speed.py)


@dataclass(frozen=True)
class Measured:
    shot_seconds: dict[str, dict[str, float]]  # chapter: beat: drawing time
    film_seconds: dict[str, dict[str, float]]  # chapter: beat: seconds of film (how tasks are cut)
    join_seconds: dict[str, float]
    task_overhead_seconds: float
    film_join_seconds: float
    film_length_seconds: float
    quality: str


def measured(manifest: dict) -> Measured:
    shots, lengths, joins, overheads = {}, {}, {}, []
    for chapter, entry in manifest["chapters"].items():
        shots[chapter] = {s["beat"]: float(s.get("render_seconds", 0.0)) for s in entry["shots"]}
        lengths[chapter] = {s["beat"]: s["end"] - s["start"] for s in entry["shots"]}
        joins[chapter] = float(entry.get("join_seconds", 0.0))
        if entry.get("tasks"):
            overheads.append((entry["task_seconds"] - sum(shots[chapter].values())) / entry["tasks"])
    overhead = max(0.0, sum(overheads) / len(overheads)) if overheads else 0.0
    length = sum(entry["duration"] for entry in manifest["chapters"].values())
    quality = {entry.get("quality", "?") for entry in manifest["chapters"].values()}
    return Measured(
        shots, lengths, joins, overhead, float(manifest["film"].get("join_seconds", 0.0)), length, ",".join(quality)
    )


def scaled(base: Measured, other: dict) -> tuple[Measured, float]:
    """Every shot's time times the drawing-time ratio of the chapters both manifests hold."""
    theirs = measured(other)
    both = [c for c in theirs.shot_seconds if c in base.shot_seconds]
    if not both:
        raise SystemExit("--scale: the two manifests share no chapter")
    ratio = sum(sum(theirs.shot_seconds[c].values()) for c in both) / sum(
        sum(base.shot_seconds[c].values()) for c in both
    )
    join_ratio = sum(theirs.join_seconds[c] for c in both) / max(1e-9, sum(base.join_seconds[c] for c in both))
    shots = {c: {b: t * ratio for b, t in beats.items()} for c, beats in base.shot_seconds.items()}
    joins = {c: t * join_ratio for c, t in base.join_seconds.items()}
    return (
        Measured(
            shots,
            base.film_seconds,
            joins,
            theirs.task_overhead_seconds,
            base.film_join_seconds * join_ratio,
            base.film_length_seconds,
            theirs.quality + " (scaled)",
        ),
        ratio,
    )


def predicted(m: Measured, workers: int) -> tuple[float, float]:
    """The film's wall time on `workers` workers, and its critical path (seconds)."""
    tasks = [
        ShotTask(chapter, tuple(beats), sum(m.film_seconds[chapter].values()))
        for chapter, beats in m.film_seconds.items()
    ]
    tasks = split_tasks(tasks, workers, m.film_seconds)  # longest (in film) first, as a render sends them

    def cost(task: ShotTask) -> float:
        return sum(m.shot_seconds[task.chapter][b] for b in task.beats or ()) + m.task_overhead_seconds

    free = [(0.0, i) for i in range(workers)]
    heapq.heapify(free)
    last_done: dict[str, float] = {}
    for task in tasks:
        start, worker = heapq.heappop(free)
        end = start + cost(task)
        heapq.heappush(free, (end, worker))
        last_done[task.chapter] = max(last_done.get(task.chapter, 0.0), end)
    clock = 0.0
    for chapter, ready in sorted(last_done.items(), key=lambda item: item[1]):  # joined one at a time
        clock = max(clock, ready) + m.join_seconds[chapter]
    wall = STARTUP_SECONDS + clock + m.film_join_seconds
    critical = STARTUP_SECONDS + max(cost(t) + m.join_seconds[t.chapter] for t in tasks) + m.film_join_seconds
    return wall, critical


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", type=Path, default=ROOT / "renders" / "manifest.json")
    parser.add_argument("--scale", type=Path, help="a manifest of some chapters at the quality to predict")
    args = parser.parse_args()
    m = measured(json.loads(args.manifest.read_text()))
    print(f"{args.manifest}: {len(m.shot_seconds)} chapters, {m.film_length_seconds:.1f} s of film, at {m.quality}")
    if args.scale is not None:
        m, ratio = scaled(m, json.loads(args.scale.read_text()))
        print(f"scaled by {ratio:.2f}x, the drawing-time ratio of the chapters {args.scale} holds too")
    drawing = sum(sum(beats.values()) for beats in m.shot_seconds.values())
    print(
        f"shots' drawing {drawing:.1f} s, joins {sum(m.join_seconds.values()):.1f} s"
        f" + film {m.film_join_seconds:.1f} s,"
        f" a task's overhead {m.task_overhead_seconds:.1f} s, startup {STARTUP_SECONDS:.1f} s"
    )
    print(f"{'workers':>8} {'wall s':>9} {'wall/film':>12} {'critical path s':>16}")
    for workers in WORKERS:
        wall, critical = predicted(m, workers)
        print(f"{workers:>8} {wall:>9.1f} {wall / m.film_length_seconds:>11.2f}x {critical:>16.1f}")


if __name__ == "__main__":
    main()
