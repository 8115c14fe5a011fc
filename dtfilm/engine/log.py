"""Manim's own log lines (a wait shorter than a frame, a font it could not find) kept out of
dtfilm's output: Manim logs to its own console handler, on the "manim" logger and, when the
root logger had none, on the root logger too (for PyAV's lines). Inside `manim_lines_to`, those
handlers are swapped for one writing to a stream dtfilm chose (a log file under renders/), or
the stream is added beside them when the user asked to see them (`--verbose`)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import TextIO

LINE_FORMAT = "%(asctime)s %(process)d %(levelname)s {label}: %(message)s"


@contextlib.contextmanager
def manim_lines_to(stream: TextIO, label: str, shown: bool = False) -> Iterator[None]:
    """Manim's log lines into `stream` (each with the time, the process and `label`) while the
    context is open; with `shown`, on Manim's own console as well. Restored after."""
    manim_logger, root = logging.getLogger("manim"), logging.getLogger()
    theirs = list(manim_logger.handlers)
    # Manim puts its console handler on the root logger when that had none (PyAV logs there)
    root_theirs = [h for h in root.handlers if h in theirs]
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter(LINE_FORMAT.format(label=label.replace("%", "%%"))))
    if not shown:
        for h in theirs:
            manim_logger.removeHandler(h)
        for h in root_theirs:
            root.removeHandler(h)
    manim_logger.addHandler(handler)
    if root_theirs:
        root.addHandler(handler)
    try:
        yield
    finally:
        manim_logger.removeHandler(handler)
        root.removeHandler(handler)
        handler.close()
        if not shown:
            for h in theirs:
                manim_logger.addHandler(h)
            for h in root_theirs:
                root.addHandler(h)
