"""Objects kept on disk for other processes: pickled, compressed, written atomically, and read
back or not at all (typeset labels, dtfilm.visuals.text; scene states, dtfilm.scene_state)."""

from __future__ import annotations

import contextlib
import gc
import pickle
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dtfilm.video import atomic_path


@contextlib.contextmanager
def _no_collection() -> Iterator[None]:
    """The garbage collector paused: pickling a screen of glyphs makes or walks tens of
    thousands of objects, and a full collection in the middle cost up to 0.3 s."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def write_pickled(path: Path, value: Any) -> None:
    with _no_collection():
        blob = zlib.compress(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), 1)
    with atomic_path(path) as temp:
        temp.write_bytes(blob)


def read_pickled(path: Path) -> Any | None:
    """What `path` holds; None when it is missing or cannot be read (damaged, or written by
    other code: whoever names these files puts what made them in the name)."""
    try:
        blob = path.read_bytes()
        with _no_collection():
            return pickle.loads(zlib.decompress(blob))
    except Exception:  # any file that cannot be read is made again instead
        return None
