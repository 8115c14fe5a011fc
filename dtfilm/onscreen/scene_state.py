"""A scene's state at a shot's start, kept in the shot cache, so that a render drawing a later shot
starts there instead of playing every shot before it without frames.

Drawing one changed shot used to begin with a dry run of the shots before it: about 0.8 s of
the dp ring shot's 3.7 s (each of the two processes drawing half of it paid it). The state is
what the shots before leave: the mobjects on screen, the pieces the shot context keeps between
shots (header, stats, stage, the facts handed on) and the clock. It is keyed by what made it
(shot_cache.state_key): the chapter's numbers and the keys of every shot before (each of which
holds the quality, the theme and the drawing code), and kept pickled, compressed, in
renders/cache/<key>.state. A render checks a loaded state against the screen the shot before
left (its cache entry's end_screen) and plays the shots before it when they differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dtfilm.system.pickled import read_pickled, write_pickled

STATE_SUFFIX = ".state"


@dataclass
class ShotStart:
    """What a scene holds when shot `index` starts."""

    index: int
    time: float  # the scene's clock, in seconds
    mobjects: list[Any]  # on screen, in drawing order
    header: Any
    stats: Any
    caption: Any
    stage: dict[str, Any]
    handed: dict[str, Any]


def keep(path: Path, start: ShotStart) -> None:
    """Write the state (once: a state's key says what it is)."""
    if not path.is_file():
        write_pickled(path, start, "scene state")


def load(path: Path) -> ShotStart | None:
    """The state kept at `path`; None when there is none or it cannot be read (its key holds the
    code's digest, so such a file is damaged or from elsewhere)."""
    start = read_pickled(path, "scene state")
    return start if isinstance(start, ShotStart) else None
