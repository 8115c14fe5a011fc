"""`dtfilm render --watch`: re-render stale chapters at preview quality whenever a storyboard
is saved. A save with an error prints the one-line error and keeps watching. The processes that
draw are kept from one save to the next (dtfilm.render.workers.kept_workers)."""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

from dtfilm.errors import DtfilmError
from dtfilm.render.job import RenderRequest
from dtfilm.storyboard import find_root

POLL_SECONDS = 0.2  # a save is seen this soon (a look at a dozen files' times)


def _snapshot(folder: Path) -> dict[Path, float]:
    return {path: path.stat().st_mtime_ns for path in sorted(folder.glob("*.y*ml"))}


def watch(chapter_ids: list[str], request: RenderRequest, max_rounds: int | None = None, jobs: int = 1) -> int:
    """Render once, then again after every change to storyboard/, until Ctrl-C (or max_rounds),
    with `jobs` processes drawing, at preview quality whatever `request` asks."""
    # (here: it loads PyAV, which only commands that touch video need)
    from dtfilm.render.chapters import render_chapters
    from dtfilm.render.workers import kept_workers

    folder = find_root() / "storyboard"
    preview = dataclasses.replace(request, quality="preview")
    rounds = 0
    seen: dict[Path, float] | None = None
    print(f"watching {folder} (Ctrl-C to stop)", flush=True)
    try:
        with kept_workers(jobs):
            while max_rounds is None or rounds < max_rounds:
                current = _snapshot(folder)
                if current != seen:
                    seen = current
                    rounds += 1
                    try:
                        render_chapters(chapter_ids, preview, jobs=jobs)
                    except DtfilmError as error:
                        print(f"dtfilm: error: {error.line()}", file=sys.stderr, flush=True)
                    print(f"watching for changes (round {rounds} done)", flush=True)
                    continue
                time.sleep(POLL_SECONDS)
    except KeyboardInterrupt:
        print("stopped watching")
    return 0
