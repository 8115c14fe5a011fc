"""One progress display for a film render: a row per task, seconds of film drawn against the
film it draws. Shown on a terminal only; silent otherwise."""

from __future__ import annotations

import contextlib
import queue
import sys
import threading
from collections.abc import Iterator
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn


@contextlib.contextmanager
def film_progress(rows: list[tuple[str, float]], updates: Any) -> Iterator[None]:
    """Draw progress from (row, seconds of film drawn) messages on `updates` until the block
    ends: a row per task (a chapter, or some of its shots), against the film it draws. A message
    from a cluster's worker names the worker too, (row, seconds, worker), shown on its row."""
    if not sys.stderr.isatty() or not rows:
        yield
        return

    width = max(10, *(len(name) for name, _ in rows)) + 12  # (room for "on <worker>")
    progress = Progress(
        TextColumn(f"{{task.description:<{width}}}"),
        BarColumn(),
        TextColumn("{task.completed:>6.1f} / {task.total:.0f} s of film"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    )
    tasks = {name: progress.add_task(name, total=max(seconds, 1.0)) for name, seconds in rows}
    stop = threading.Event()

    def pump() -> None:
        while not stop.is_set():
            try:
                name, seconds, *worker = updates.get(timeout=0.2)
            except queue.Empty:
                continue
            except Exception:  # the queue's other end is gone (a process, or a cluster's scheduler)
                return
            task = tasks[name]
            total = progress.tasks[task].total or 1.0
            shown = f"{name} on {worker[0]}" if worker else name
            progress.update(task, completed=seconds, total=max(total, seconds), description=shown)

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
