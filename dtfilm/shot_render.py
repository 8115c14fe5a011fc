"""The two kinds of work a render hands to an executor (each runs in a worker of its own):

- `plan_chapter`: a dry run of a chapter with digests on, giving every shot's key, so the
  render knows which shots the cache lacks (no frames: seconds);
- `draw_shots`: one chapter's scene with frames for the named shots only (the others play with
  their animations skipped, so each drawn shot starts from what they leave). Each drawn shot's
  clip (Manim cuts one per section) goes into the cache under its key.

Both take and return plain data, so that any `concurrent.futures.Executor` can run them.
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dtfilm.shot_cache import CachedShot, ShotKey, clip_path, now_stamp, shot_key, write_entry
from dtfilm.storyboard import Chapter, load_chapter
from dtfilm.video import atomic_path, remux_faststart


@dataclass(frozen=True)
class PlannedShot:
    key: ShotKey
    seconds: float  # its length in the dry run


@dataclass(frozen=True)
class ShotTask:
    """Shots of one chapter drawn in one scene: `beats` (None: every shot)."""

    chapter: str
    beats: tuple[str, ...] | None
    seconds: float  # the film they make, about: the longest tasks start first

    @property
    def label(self) -> str:
        if self.beats is None:
            return self.chapter
        return f"{self.chapter}:{self.beats[0]}" + (f"+{len(self.beats) - 1}" if len(self.beats) > 1 else "")


@dataclass(frozen=True)
class DrawnShots:
    task: ShotTask
    keys: tuple[ShotKey, ...]  # every shot the scene played, drawn or skipped
    drawn: tuple[str, ...]  # the beats drawn into the cache
    wall_seconds: float


def keys_of(scene: Any, chapter: Chapter, quality: str, theme: str) -> list[ShotKey]:
    """The key of every shot a scene with digests on played, in order."""
    keys = []
    for shot in chapter.shots:
        record = scene.records.get(shot.beat)
        if record is None:
            break
        audio = scene.track.get(shot.beat)
        said = audio.path.stem if audio is not None else "silent"
        keys.append(shot_key(chapter, shot, record.start_screen, record.drawn_digest, said, quality, theme))
    return keys


def plan_chapter(chapter_id: str, root: Path, overrides: dict[str, Any], quality: str, theme: str) -> list[PlannedShot]:
    """Every shot's key, from a dry run (no frames)."""
    from dtfilm.inspect import dry_run
    from dtfilm.quality import FRAME_RATES

    chapter = load_chapter(chapter_id, overrides, root)
    scene = dry_run(chapter, theme, [], digests=True, frame_rate=FRAME_RATES[quality])
    keys = keys_of(scene, chapter, quality, theme)
    return [PlannedShot(k, scene.records[k.beat].end - scene.records[k.beat].start) for k in keys]


def draw_shots(
    task: ShotTask,
    root: Path,
    overrides: dict[str, Any],
    quality: str,
    out_dir: Path,
    theme: str,
    updates: Any = None,
) -> DrawnShots:
    """Draw a task's shots into the cache. `updates` (a queue) receives (task label, seconds of
    film drawn) after every animation."""
    from manim import tempconfig

    from dtfilm.render import QUALITIES, _quiet_muxer_note
    from dtfilm.scene import chapter_scene_class

    started = time.perf_counter()
    _quiet_muxer_note()
    chapter = load_chapter(task.chapter, overrides, root)
    cls = chapter_scene_class(chapter, theme)
    cls.digests, cls.with_sound = True, False
    cls.draw_beats = frozenset(task.beats) if task.beats is not None else None
    if updates is not None:
        cls.observers = [lambda scene, beat: updates.put((task.label, scene.drawn_seconds()))]
    settings = {
        **QUALITIES[quality],
        "disable_caching": True,  # dtfilm caches shots; Manim's per-animation cache is off
        "save_sections": True,  # one clip per shot: Manim cuts them as it draws
        "verbosity": "WARNING",
        "progress_bar": "none",
    }
    with tempfile.TemporaryDirectory(prefix=f"dtfilm-{chapter.id}-") as media:
        with tempconfig({**settings, "media_dir": media}):
            scene = cls()
            scene.render()
            index = Path(scene.renderer.file_writer.output_plan.section_index)
        sections = {s["name"]: index.parent / s["video"] for s in json.loads(index.read_text())}
        keys = keys_of(scene, chapter, quality, theme)
        drawn = [k for k in keys if scene.records[k.beat].drawn_frames]
        for key in drawn:
            record = scene.records[key.beat]
            with atomic_path(clip_path(out_dir, key.key)) as temp:
                remux_faststart(sections[key.beat], temp)
            entry = CachedShot(
                key.key, chapter.id, key.beat, record.end - record.start, record.cues, record.wall_seconds, now_stamp()
            )
            write_entry(out_dir, entry)
    return DrawnShots(task, tuple(keys), tuple(k.beat for k in drawn), time.perf_counter() - started)
