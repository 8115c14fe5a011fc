"""One shot on its own, for iterating on it in seconds.

`dtfilm render dp:ring` draws the shot `ring` of chapter dp alone. It starts from what the shots
before it leave on screen: the scene's state kept at its start by an earlier render
(dtfilm.onscreen.scene_state), or else those shots play as a dry run (Manim sections with their
animations skipped: no frames drawn, their end state kept). It is written to renders/one/dp-ring.mp4 with
its narration. `dtfilm still dp:ring --at 4.5` writes the frame 4.5 s into that shot as a PNG.
Neither touches the chapter's clips or the manifest: the chapter's cache stays as it was.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from dtfilm import beneath
from dtfilm.errors import DtfilmError, Where, did_you_mean
from dtfilm.render.cache import chapter_key, read_manifest, write_manifest
from dtfilm.render.derived import SINGLES, single_name, single_record
from dtfilm.render.job import RenderJob, RenderRequest
from dtfilm.render.lock import render_lock
from dtfilm.render.manim_log import manim_log
from dtfilm.render.sidecars import frame_at, write_png
from dtfilm.scene_brief import chapter_brief
from dtfilm.storyboard import Chapter, find_root, load_chapter
from dtfilm.storyboard.timing import LEAD_IN_SECONDS
from dtfilm.system.atomic import atomic_path
from dtfilm.system.quality import QUALITY
from dtfilm.system.sound import AUDIO_RATE, encoded_within_peak
from dtfilm.system.video import mux_with_audio, remux_faststart

ONE_FOLDER = "one"  # renders/one/: single shots and stills, outside the chapters' cache


def split_target(text: str) -> tuple[str, str] | None:
    """ "dp:ring" as (chapter, beat); None for a chapter alone."""
    if ":" not in text:
        return None
    chapter, beat = text.split(":", 1)
    return chapter, beat


def check_beat(chapter: Chapter, beat: str, flag: str) -> None:
    """A beat that names no shot of the chapter is an error listing those that do."""
    beats = [shot.beat for shot in chapter.shots]
    if beat not in beats:
        shots = [f"{chapter.id}:{b}" for b in beats]
        raise DtfilmError(
            f"chapter {chapter.id!r} has no shot {beat!r}{did_you_mean(f'{chapter.id}:{beat}', shots)};"
            f" valid: {', '.join(shots)}",
            Where(flag=flag),
        )


def shot_sound(wav: Path | None, lead_seconds: float, seconds: float) -> np.ndarray | None:
    """The shot's narration as it is heard in the chapter: after the lead-in, over the shot's
    length, at the film's loudness (normalised alone, so within a fraction of a dB of the
    chapter's level)."""
    # (here: pyloudnorm and SciPy, which only a still's sound needs)
    from dtfilm.render.assemble import placed_narration
    from dtfilm.system.loudness import normalised

    if wav is None:
        return None
    return normalised(placed_narration(wav, lead_seconds, seconds), AUDIO_RATE)[0].astype(np.float32)


@contextlib.contextmanager
def drawn_shot(
    chapter: Chapter, beat: str, job: RenderJob, stop_after: float | None = None
) -> Iterator[tuple[Path, float, Any]]:
    """The shot drawn alone into a temporary movie: (movie, the shot's length, the scene). It
    starts from the scene's state kept at its start in the shot cache of the job's renders, when a
    render left one for the shots before it as they now are (dtfilm.onscreen.scene_state); else the
    shots before it play first. `stop_after`: frames only until that many seconds in (the rest
    is played without frames)."""
    # (here: Manim, which only drawing needs)
    from manim import tempconfig

    from dtfilm.render.cache import chapter_key
    from dtfilm.render.shot_render import KeptStates
    from dtfilm.scene import ChapterScene
    from dtfilm.shots.plays import SHOTS
    from dtfilm.system.quality import quiet_muxer_note as _quiet_muxer_note

    check_beat(chapter, beat, f"{chapter.id}:{beat}")
    _quiet_muxer_note()
    quality, theme, renders = job.quality, job.theme, job.out_dir
    index = next(shot.index for shot in chapter.shots if shot.beat == beat)
    brief = chapter_brief(
        chapter,
        SHOTS,
        theme,
        quality=QUALITY[quality],
        draw_beats=frozenset({beat}),
        stop_after=stop_after,
        chapter_parts=chapter_key(chapter, quality, theme).parts,
        start_from=KeptStates(chapter, quality, theme, renders, index).start_from,
    )
    settings = {
        **brief.quality.manim_settings(),
        "disable_caching": True,
        "verbosity": "WARNING",
        "progress_bar": "none",
    }
    with (
        tempfile.TemporaryDirectory(prefix=f"dtfilm-{chapter.id}-{beat}-") as media,
        manim_log(renders, f"{chapter.id}:{beat}"),
    ):
        with tempconfig({**settings, "media_dir": media}):
            scene = ChapterScene(brief)
            scene.render()
        start, end = next((s, e) for b, s, e in scene.shot_times if b == beat)
        yield scene.renderer.movie_path(), end - start, scene


def _chapter_and_job(chapter_id: str, request: RenderRequest) -> tuple[Chapter, RenderJob]:
    """The chapter as the storyboard and flags have it, and the job the request asks for (its
    renders folder checked and marked: single shots go to its one/)."""
    root = find_root()
    chapter = load_chapter(chapter_id, request.overrides, root)
    job = request.job(root, chapter.film)
    renders = job.out_dir
    beneath.check_renders_folder(renders, given=False, may_make=True, writes=True, where=Where(str(renders)))
    beneath.mark(renders)  # (the storyboard read: a renders folder dtfilm writes in)
    return chapter, job


def render_one_shot(chapter_id: str, beat: str, request: RenderRequest | None = None) -> Path:
    """Draw one shot alone into renders/one/CHAPTER-BEAT-QUALITY.mp4, with its narration."""

    started = time.perf_counter()
    request = request or RenderRequest()
    chapter, job = _chapter_and_job(chapter_id, request)
    target = job.out_dir / ONE_FOLDER / single_name(chapter.id, beat, job.quality)
    with drawn_shot(chapter, beat, job) as (movie, seconds, scene):
        audio = scene.track.get(beat)
        sound = shot_sound(audio.path if audio else None, LEAD_IN_SECONDS, seconds)
        with atomic_path(target) as temp:
            if sound is not None:
                encoded_within_peak(lambda pcm: mux_with_audio(movie, temp, pcm, AUDIO_RATE), temp, sound, AUDIO_RATE)
            else:
                remux_faststart(movie, temp)
    _record_single(chapter, beat, request, job.out_dir, target.name, None)
    print(f"{target}: {chapter.id}:{beat}, {seconds:.1f} s of film in {time.perf_counter() - started:.1f} s")
    return target


def _record_single(
    chapter: Chapter, beat: str, request: RenderRequest, renders: Path, name: str, at_seconds: float | None
) -> None:
    """The manifest's record of a single shot or still (dtfilm.render.derived): its chapter's key
    as drawn, so that `status` says when it no longer shows the shot as the storyboard has it.
    It keeps the theme as asked (None: the film's), the flags `status` tells to make it again."""
    quality, theme = request.quality, request.theme
    key = chapter_key(chapter, quality, theme or chapter.film.theme).key
    with render_lock(renders):
        manifest = read_manifest(renders)
        records = manifest.get(SINGLES) if isinstance(manifest.get(SINGLES), dict) else {}
        shot = f"{chapter.id}:{beat}"
        old = records.get(name)
        records[name] = single_record(renders, name, key, shot, quality, theme, request.overrides, at_seconds, old)
        manifest[SINGLES] = records
        write_manifest(renders, manifest)


def write_still(chapter_id: str, beat: str, at_seconds: float, request: RenderRequest | None = None) -> Path:
    """The frame `at_seconds` into one shot as renders/one/CHAPTER-BEAT-Ts-QUALITY.png; frames are
    drawn only up to that moment."""

    if at_seconds < 0:
        raise DtfilmError(
            f"--at {at_seconds:g} is before the shot starts; valid: 0 or more seconds", Where(flag="--at")
        )
    started = time.perf_counter()
    request = request or RenderRequest()
    chapter, job = _chapter_and_job(chapter_id, request)
    target = job.out_dir / ONE_FOLDER / single_name(chapter.id, beat, job.quality, at_seconds)
    with drawn_shot(chapter, beat, job, stop_after=at_seconds) as (movie, seconds, _):
        if at_seconds > seconds:
            raise DtfilmError(
                f"--at {at_seconds:g} is outside the shot {chapter_id}:{beat}; valid: 0 to {seconds:.1f} seconds",
                Where(flag="--at"),
            )
        write_png(frame_at(movie, at_seconds), target)
    _record_single(chapter, beat, request, job.out_dir, target.name, at_seconds)
    print(f"{target}: the frame {at_seconds:g} s into {chapter_id}:{beat}, in {time.perf_counter() - started:.1f} s")
    return target
