"""The work a render hands to an executor, as plain data, so that any
`concurrent.futures.Executor` can run it:

- `dry_run_keys`: a dry run of a chapter with digests on, giving every shot's key (no frames);
- `draw_shots`: one chapter's scene, drawing the named shots (or, in an adaptive task, the
  shots whose probes the cache lacks: shot_cache.shot_probe); the others play with their
  animations skipped, so each drawn shot starts from what they leave. Each drawn shot's clip
  (Manim cuts one per section) goes into the cache under its key.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dtfilm.onscreen.scene_state import ShotStart, keep, load
from dtfilm.onscreen.screen import EMPTY, screen_digest
from dtfilm.render.cache import chapter_key
from dtfilm.render.job import RenderJob
from dtfilm.render.manim_log import manim_log
from dtfilm.render.shot_cache import (
    CachedShot,
    Prober,
    ShotKey,
    cached,
    clip_path,
    now_stamp,
    probed,
    shot_key,
    state_key,
    state_path,
    write_entry,
    write_probe,
)
from dtfilm.render.tasks import DrawnShots, DryRunShot, ShotPart, ShotTask
from dtfilm.scene_brief import SceneBrief, chapter_brief
from dtfilm.storyboard import Chapter, Shot, load_chapter
from dtfilm.system.atomic import atomic_path, scratch_folder, scratch_name
from dtfilm.system.quality import QUALITY
from dtfilm.system.video import join_pictures, remux_faststart
from dtfilm.voice.track import narration_track


def said_in(track: dict[str, Any]) -> Callable[[Shot], str]:
    """What a shot's key holds of its spoken narration, given the chapter's narration track:
    the joined WAV's name (its content digest), or "silent"."""

    def said(shot: Shot) -> str:
        audio = track.get(shot.beat)
        return audio.path.stem if audio is not None else "silent"

    return said


def _said(scene: Any, shot: Shot) -> str:
    return said_in(scene.track)(shot)


def chapter_prober(chapter: Chapter, quality: str, theme: str, out_dir: Path) -> Prober:
    """The chapter's shots looked up by probe with no scene played (its narration track read
    here): every key when the cache holds the whole chapter as its storyboard now is
    (`chained_keys(0, EMPTY)`), or the beats it lacks (`missing_beats(EMPTY, ...)`)."""

    said = said_in(narration_track(chapter, chapter.film.voice))
    return Prober(out_dir, chapter, said, quality, theme, chapter_key(chapter, quality, theme).parts)


def scene_prober(scene: Any, chapter: Chapter, quality: str, theme: str, out_dir: Path) -> Prober:
    """The chapter's shots looked up by probe, as a scene playing it hears them."""
    return Prober(out_dir, chapter, said_in(scene.track), quality, theme, dict(scene.brief.chapter_parts))


@dataclass
class KeptStates:
    """The scene states kept at shots' starts (dtfilm.onscreen.scene_state) for one scene of a chapter:
    the state it may start from, at shot `first`, and those it keeps as it plays."""

    chapter: Chapter
    quality: str
    theme: str
    out_dir: Path
    first: int  # the first shot it draws
    before: list[ShotKey] = field(default_factory=list)  # the keys of the shots before the state it started from

    def start_from(self, scene: Any) -> ShotStart | None:
        """The state kept at the first drawn shot's start, when the cache holds every shot before
        it as the storyboard now is, and the state shows the screen the last of them left."""
        if not self.first:
            return None
        probes = scene_prober(scene, self.chapter, self.quality, self.theme, self.out_dir)
        keys = probes.chained_keys(0, EMPTY, until=self.first)
        kept = load(self.path(scene, [k.key for k in keys])) if keys else None
        entry = cached(self.out_dir, keys[-1].key) if kept is not None and kept.index == self.first else None
        if entry is None or screen_digest(kept.mobjects) != entry.end_screen:
            return None
        self.before = keys
        return kept

    def keep_start(self, scene: Any, index: int, start: Callable[[], ShotStart]) -> None:
        """Keep the state shot `index` starts from (a scene with digests on: its shots' keys)."""
        keys = [k.key for k in [*self.before, *keys_of(scene, self.chapter, self.quality, self.theme)]]
        if len(keys) == index:  # (always, as the scene plays its shots in order)
            keep(self.path(scene, keys), start())

    def path(self, scene: Any, before: list[str]) -> Path:
        return state_path(self.out_dir, state_key(dict(scene.brief.chapter_parts), before))


def join_parts(parts: list[ShotPart], out_dir: Path) -> CachedShot | None:
    """A shot's clip from its parts' frames (copied, not encoded again), into the cache under its
    key (the last part's), with its entry and probe; the parts' files are removed. None when a
    part disagrees with the last on the shot it drew (ShotPart.agrees): then nothing is cached,
    and the shot must be drawn whole."""

    ordered = sorted(parts, key=lambda p: p.window)
    last = ordered[-1]
    clips = [p.clip for p in ordered if p.clip is not None]
    entry = last.entry
    agreed = entry is not None and all(p.agrees(last) for p in ordered[:-1]) and clips
    if agreed:
        with atomic_path(clip_path(out_dir, entry.key)) as temp:
            join_pictures(clips, temp, None)
        entry = dataclasses.replace(entry, render_seconds=sum(p.wall_seconds for p in parts))
        write_entry(out_dir, entry)
        write_probe(out_dir, last.probe, entry.key)
    for clip in clips:
        clip.unlink(missing_ok=True)
    return entry if agreed else None


def keys_of(scene: Any, chapter: Chapter, quality: str, theme: str) -> list[ShotKey]:
    """The key of every shot a scene with digests on played, in order."""
    keys = []
    for shot in chapter.shots:
        record = scene.records.get(shot.beat)
        if record is None or record.stopped:  # not played (before the state it started from, or
            continue  # after it stopped), or played in part (a window: its key is the last part's)
        said = _said(scene, shot)
        keys.append(shot_key(chapter, shot, record.start_screen, record.drawn_digest, said, quality, theme))
    return keys


def note_probes(
    scene: Any, chapter: Chapter, keys: list[ShotKey], quality: str, theme: str, out_dir: Path
) -> list[str]:
    """Point each played shot's probe at its key where the cache holds it; the beats it lacks."""
    probes = scene_prober(scene, chapter, quality, theme, out_dir)
    missing = []
    for key in keys:
        if cached(out_dir, key.key) is None:
            missing.append(key.beat)
        else:
            start_screen = scene.records[key.beat].start_screen
            write_probe(out_dir, probes.probe(chapter.shots[key.index], start_screen), key.key)
    return missing


def dry_run_keys(chapter_id: str, job: RenderJob) -> list[DryRunShot]:
    """Every shot's key, from a dry run (no frames): for a chapter whose numbers changed, whose
    shots' probes would all miss though only the shots showing those numbers changed. The job's
    voice is the one the render speaks with (None: the film's, as loaded here)."""
    # (here: Manim, which only drawing needs)
    from dtfilm.check.inspect import dry_run
    from dtfilm.visuals.text import TYPESET_FOLDER, keep_typeset_in

    quality, theme = job.quality, job.theme
    keep_typeset_in(job.root / TYPESET_FOLDER)
    chapter = load_chapter(chapter_id, job.overrides, job.root, voice=job.voice)
    parts = chapter_key(chapter, quality, theme).parts
    scene = dry_run(chapter, theme, [], digests=True, frame_rate=QUALITY[quality].frame_rate, chapter_parts=parts)
    keys = keys_of(scene, chapter, quality, theme)
    note_probes(scene, chapter, keys, quality, theme, job.out_dir)
    return [DryRunShot(k, scene.records[k.beat].end - scene.records[k.beat].start) for k in keys]


def draw_shots(task: ShotTask, job: RenderJob, updates: Any = None) -> DrawnShots:
    """Draw a task's shots into the cache. `updates` (a queue) receives (task label, seconds of
    film drawn) after every animation. The job's voice is the one the render speaks with, handed
    on by the process that read the user's choice (None: the film's, as loaded here)."""
    # (here: Manim, which only drawing needs)
    from manim import tempconfig

    from dtfilm.scene import ChapterScene
    from dtfilm.shots.plays import SHOTS
    from dtfilm.system.quality import quiet_muxer_note as _quiet_muxer_note
    from dtfilm.visuals.text import TYPESET_FOLDER, keep_typeset_in

    started = time.perf_counter()
    _quiet_muxer_note()
    quality, theme, out_dir = job.quality, job.theme, job.out_dir
    keep_typeset_in(job.root / TYPESET_FOLDER)
    chapter = load_chapter(task.chapter, job.overrides, job.root, voice=job.voice)
    first = 0 if task.beats is None or task.adaptive else next(s.index for s in chapter.shots if s.beat in task.beats)
    states = KeptStates(chapter, quality, theme, out_dir, first)
    brief, rest = _task_brief(task, chapter, job, SHOTS, states, updates)
    # Manim's files for the task, in the renders folder's scratch folder: swept by a later
    # render should this process be killed (it is not a task's to sweep them from /tmp)
    scratch = scratch_folder(out_dir)
    with (
        tempfile.TemporaryDirectory(prefix=scratch_name(f"dtfilm-{chapter.id}-"), dir=scratch) as media,
        manim_log(out_dir, task.label),
    ):
        with tempconfig({**_manim_settings(brief), "media_dir": media}):
            scene = ChapterScene(brief)
            scene.render()
            index = scene.renderer.section_index()
        played = keys_of(scene, chapter, quality, theme)
        drawn = [k for k in played if scene.records[k.beat].drawn_frames]
        listed = json.loads(index.read_text()) if drawn or task.window is not None else []
        sections = {s["name"]: index.parent / s["video"] for s in listed if s.get("video")}
        part = None
        if task.window is not None:  # a part: joined with the others' (join_parts)
            part = window_part(scene, task, sections, chapter, job, played)
        else:
            for key in drawn:
                if key.beat in sections:
                    with atomic_path(clip_path(out_dir, key.key)) as temp:
                        remux_faststart(sections[key.beat], temp)
                write_entry(out_dir, shot_entry(chapter, key, scene.records[key.beat]))
    missing = note_probes(scene, chapter, played, quality, theme, out_dir)
    keys = states.before + played + rest
    elapsed = time.perf_counter() - started
    missing = missing if task.adaptive else []  # (a task's other shots are drawn by other tasks)
    drew = tuple(k.beat for k in drawn)
    return DrawnShots(task, tuple(keys), drew, elapsed, tuple(missing), part, started_at=len(states.before))


def _manim_settings(brief: SceneBrief) -> dict[str, Any]:
    """Manim's settings for a task: the brief's quality, one clip a shot, no cache of Manim's own."""
    return {
        **brief.quality.manim_settings(),
        "disable_caching": True,  # dtfilm caches shots; Manim's per-animation cache is off
        "save_sections": True,  # one clip per shot: Manim cuts them as it draws
        "verbosity": "WARNING",
        "progress_bar": "none",
    }


def _task_brief(
    task: ShotTask,
    chapter: Chapter,
    job: RenderJob,
    shots: Any,
    states: KeptStates,
    updates: Any,
) -> tuple[SceneBrief, list[ShotKey]]:
    """The SceneBrief a task's scene plays (its beats, its window, where it starts), and the list
    that an adaptive task's scene fills with the keys of the shots after it stopped, found in the
    cache."""
    quality, theme, out_dir = job.quality, job.theme, job.out_dir

    def choose(scene: Any, shot: Shot, start_screen: str) -> bool:
        return probed(out_dir, scene_prober(scene, chapter, quality, theme, out_dir).probe(shot, start_screen)) is None

    rest: list[ShotKey] = []

    def rest_known(scene: Any, first: int, screen: str) -> bool:
        keys = scene_prober(scene, chapter, quality, theme, out_dir).chained_keys(first, screen)
        rest.extend(keys or [])
        return keys is not None

    observers = ()
    if updates is not None:  # an adaptive task's row counts the film played, drawn or not
        progress = (lambda scene: scene.time) if task.adaptive else (lambda scene: scene.drawn_seconds())
        observers = (lambda scene, beat: updates.put((task.label, progress(scene))),)
    brief = chapter_brief(
        chapter,
        shots,
        theme,
        quality=QUALITY[quality],
        voice=chapter.film.voice,
        observers=observers,
        draw_beats=frozenset(task.beats) if task.beats is not None else None,
        choose_drawn=choose if task.adaptive else None,
        chapter_parts=chapter_key(chapter, quality, theme).parts,  # (for probes)
        rest_known=rest_known if task.adaptive else None,
        draw_window=task.window,
        start_from=states.start_from,
        keep_start=states.keep_start,
        digests=True,
        with_sound=False,
    )
    return brief, rest


def shot_entry(chapter: Chapter, key: ShotKey, record: Any) -> CachedShot:
    """What the cache keeps beside a drawn shot's clip, from its record as played."""
    return CachedShot(
        key.key,
        chapter.id,
        key.beat,
        record.end - record.start,
        record.cues,
        record.wall_seconds,
        now_stamp(),
        key.parts,
        record.end_screen,
    )


def window_part(
    scene: Any,
    task: ShotTask,
    sections: dict[str, Path],
    chapter: Chapter,
    job: RenderJob,
    played: list[ShotKey],
) -> ShotPart:
    """A window task's part of its shot: its frames (its section, moved beside the cache and
    named by the shot's probe and the window), for join_parts."""
    assert task.beats is not None and task.window is not None
    out_dir = job.out_dir
    beat = task.beats[0]
    record = scene.records[beat]
    shot = next(s for s in chapter.shots if s.beat == beat)
    probe = scene_prober(scene, chapter, job.quality, job.theme, out_dir).probe(shot, record.start_screen)
    clip = None
    if beat in sections:
        clip = clip_path(out_dir, probe).with_name(f"{probe}.part-{task.window[0]:.3f}.mp4")
        with atomic_path(clip) as temp:
            remux_faststart(sections[beat], temp)
    key = next((k for k in played if k.beat == beat), None)
    entry = shot_entry(chapter, key, record) if key is not None else None
    stop = (len(record.prefixes) - 1, record.prefixes[-1]) if record.stopped else None
    return ShotPart(task.window, clip, entry, probe, record.wall_seconds, tuple(record.prefixes), stop)
