"""One progress display for a film render: a row per chapter, seconds of film drawn against
the chapter's expected length. Shown on a terminal only; silent otherwise."""

from __future__ import annotations

import contextlib
import queue
import sys
import threading
from collections.abc import Iterator
from typing import Any

from dtfilm.storyboard import Chapter


def expected_seconds(chapter: Chapter, manifest: dict[str, Any]) -> float:
    """The last render's length, or a floor from the storyboard (durations and narration)."""
    previous = manifest["chapters"].get(chapter.id, {}).get("duration")
    if previous:
        return float(previous)
    from dtfilm.scene_timing import shot_floor_seconds

    return sum(shot_floor_seconds(shot) for shot in chapter.shots) or 1.0


@contextlib.contextmanager
def film_progress(chapters: list[Chapter], manifest: dict[str, Any], updates: Any) -> Iterator[None]:
    """Draw progress from (chapter id, seconds drawn) messages on `updates` until the block ends."""
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn("{task.description:<10}"),
        BarColumn(),
        TextColumn("{task.completed:>6.1f} / {task.total:.0f} s of film"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    )
    tasks = {c.id: progress.add_task(c.id, total=expected_seconds(c, manifest)) for c in chapters}
    stop = threading.Event()

    def pump() -> None:
        while not stop.is_set():
            try:
                chapter_id, seconds = updates.get(timeout=0.2)
            except queue.Empty:
                continue
            except (EOFError, OSError):
                return
            task = tasks[chapter_id]
            total = progress.tasks[task].total or 1.0
            progress.update(task, completed=seconds, total=max(total, seconds))

    with progress:
        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            yield
        finally:
            stop.set()
            reader.join(timeout=1)
            for task in tasks.values():
                progress.update(task, completed=progress.tasks[task].total)
