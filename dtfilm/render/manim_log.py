"""Where Manim's own log lines go while a shot is drawn: renders/logs/manim.log, not between
dtfilm's lines ("The original duration of ChapterScene.wait(), 0.0366 seconds, is too short for
the current frame rate" said nothing a user could act on). `--verbose` shows them as well.

The log is opened through `dtfilm.beneath` (renders/ is not trusted: no link followed, a hard
link planted there replaced) and emptied when past LOG_LIMIT_BYTES. Drawing processes inherit
the choice of `--verbose` through VERBOSE_VARIABLE, set by the command before they start."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from dtfilm import beneath
from dtfilm.engine.log import manim_lines_to

MANIM_LOG = "logs/manim.log"
LOG_LIMIT_BYTES = 4 * 1024 * 1024
VERBOSE_VARIABLE = "DTFILM_VERBOSE"  # "1": Manim's lines shown too (`dtfilm render --verbose`)


def verbose() -> bool:
    return os.environ.get(VERBOSE_VARIABLE) == "1"


@contextlib.contextmanager
def manim_log(out_dir: Path, label: str) -> Iterator[None]:
    """Manim's lines into `out_dir`'s log (each with `label`: the chapter and its shots) while
    the context is open; shown on the terminal as well under --verbose."""
    try:
        fd = beneath.open_append(out_dir, MANIM_LOG, LOG_LIMIT_BYTES)
    except beneath.Refused as refused:
        raise refused.line_error("the log file dtfilm writes (remove what is there)") from None
    with os.fdopen(fd, "a", encoding="utf-8", errors="replace", buffering=1) as stream:
        with manim_lines_to(stream, label, shown=verbose()):
            yield
