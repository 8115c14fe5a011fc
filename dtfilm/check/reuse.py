"""`check`'s dry run, shot by shot, reusing what did not change (dtfilm.check.kept).

The shots are looked up in order, each by its key from the screen the one before it left. The
first that misses plays, from the scene's state kept at its start (checked against the screen
the kept results say it starts from); after each shot played, the rest are looked up again
from the screen it left, and the scene stops once every one after it is kept. A caption
changed in one shot therefore plays that shot alone: every shot takes its caption away as it
ends, so the next one starts from the same screen as before.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dtfilm.check import kept
from dtfilm.check.shot_results import ShotObservers, ShotResult
from dtfilm.onscreen.scene_state import ShotStart, keep, load
from dtfilm.onscreen.screen import EMPTY, screen_digest
from dtfilm.storyboard import Chapter, Shot
from dtfilm.voice.track import narration_track


@dataclass
class ShotRun:
    """One chapter's shots: their keys and results as they become known."""

    chapter: Chapter
    folder: Path | None
    chapter_part: str
    said: Callable[[Shot], str]
    keys: list[str | None] = field(default_factory=list)
    starts: list[str | None] = field(default_factory=list)  # each shot's start screen
    results: list[ShotResult | None] = field(default_factory=list)
    played: int = 0  # shots played (the rest reused)
    observers: ShotObservers = field(default_factory=ShotObservers)

    def __post_init__(self) -> None:
        count = len(self.chapter.shots)
        self.keys, self.starts, self.results = [None] * count, [None] * count, [None] * count

    def look_up(self, first: int, screen: str) -> bool:
        """Whether every shot from `first` on is kept, chained from `screen`; those found are
        taken (up to the first that is not)."""
        for position, shot in enumerate(self.chapter.shots[first:], start=first):  # (positions:
            # `shot.index` names its storyboard entry, and a chapter may hold some shots only)
            key = kept.shot_key(self.chapter_part, shot, screen, self.said(shot))
            self.keys[position], self.starts[position] = key, screen
            found = kept.read_result(self.folder, key, shot.beat) if self.folder is not None else None
            if found is None:
                return False
            self.results[position] = found
            screen = found.end_screen
        return True

    def first_missing(self) -> int:
        return next(i for i, r in enumerate(self.results) if r is None)

    def start_from(self, scene: Any) -> ShotStart | None:
        """The state kept at the first missing shot's start, if it shows the screen the shot
        before left; None: play from the first shot."""
        first = self.first_missing()
        screen = self.starts[first]
        if first == 0 or self.folder is None or screen is None:
            return None
        state = load(kept.state_path(self.folder, kept.state_key(self.chapter_part, first, screen)))
        if state is None or state.index != first or screen_digest(state.mobjects) != screen:
            return None
        return state

    def keep_start(self, scene: Any, index: int, make: Callable[[], ShotStart]) -> None:
        """Keep the state at a shot's start (once: its key says what it is)."""
        screen = self.starts[index]
        if self.folder is None or screen is None:
            return
        path = kept.state_path(self.folder, kept.state_key(self.chapter_part, index, screen))
        if not os.path.lexists(path):
            with contextlib.suppress(OSError):  # (a folder it cannot write: nothing kept, the check goes on)
                keep(path, make())  # (signed as a scene state, as a render keeps one)

    def rest_known(self, scene: Any, index: int, _screen: str) -> bool:
        """After a shot played: its result, then whether every shot after it is kept."""
        shot = self.chapter.shots[index - 1]
        screen = screen_digest(scene.mobjects)
        record = scene.records[shot.beat]
        observers: ShotObservers = self.observers
        self.results[index - 1] = observers.result(shot.beat, screen, record.end - record.start)
        self.played += 1
        if index >= len(self.chapter.shots):
            return False  # (the scene's tail plays, and counts in the last shot)
        return self.look_up(index, screen)


def kept_results(
    chapter: Chapter, theme: str | None, folder: Path | None, typeset_root: Path | None = None
) -> tuple[list[ShotResult], int]:
    """Every shot's dry-run result, in order, and how many shots played (the others reused).
    With `typeset_root`, a dry run reads back and keeps the labels typeset in that project's
    cache (dtfilm.visuals.text). Manim is imported only when a shot plays: a check whose every
    shot is kept takes about 0.5 s less of CPU."""
    theme_name = theme or chapter.film.theme
    track = narration_track(chapter, chapter.film.voice)

    def said(shot: Shot) -> str:
        audio = track.get(shot.beat)
        return audio.path.stem if audio is not None else "silent"

    run = ShotRun(chapter, folder, kept.chapter_part(chapter, theme_name, said), said)
    if not run.look_up(0, EMPTY):
        from dtfilm.check.inspect import dry_run  # (here: Manim, as above)
        from dtfilm.visuals.text import TYPESET_FOLDER, keep_typeset_in

        if typeset_root is not None:
            keep_typeset_in(typeset_root / TYPESET_FOLDER)
        scene = dry_run(
            chapter,
            theme,
            [run.observers],
            moments=[run.observers.moment],
            start_from=run.start_from,
            keep_start=run.keep_start,
            rest_known=run.rest_known,
            track=track,
        )
        last = chapter.shots[-1]
        if run.results[-1] is not None and last.beat in scene.records and scene.records[last.beat].end:
            tail = scene.time - scene.records[last.beat].end
            run.results[-1] = dataclasses.replace(run.results[-1], seconds=run.results[-1].seconds + tail)
        if folder is not None:
            for index, result in enumerate(run.results):
                key = run.keys[index]
                if result is not None and key is not None and chapter.shots[index].beat in scene.records:
                    with contextlib.suppress(OSError):  # (as above)
                        kept.write_result(folder, key, result)
    missing = [s.beat for s, r in zip(chapter.shots, run.results, strict=True) if r is None]
    if missing:
        raise RuntimeError(f"{chapter.id}: the dry run left {', '.join(missing)} without a result")
    return run.results, run.played  # type: ignore[return-value]
