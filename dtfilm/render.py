"""`dtfilm render`: stale chapters to renders/<chapter>.mp4 with their sidecars, then the film.

Only chapters whose cache key changed are rendered (see dtfilm.cache); each in its own process
with its own media folder when --jobs > 1. Every output is written to a temporary file and
renamed; the manifest is updated after each chapter, so an interrupted run leaves every earlier
output and the manifest as they were. A lock keeps two runs from writing at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import logging
import os
import queue
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from dtfilm.cache import (
    ChapterKey,
    chapter_key,
    film_key,
    outputs,
    read_manifest,
    stale_reasons,
    write_manifest,
)
from dtfilm.embed import read_report, write_gallery
from dtfilm.errors import DtfilmError, Where
from dtfilm.progress import film_progress
from dtfilm.quality import CLIP_SIZES, FRAME_RATES
from dtfilm.sidecars import ShotClip, frame_at, poster_seconds, write_gif, write_png, write_shot_clips, write_webm
from dtfilm.storyboard import Chapter, Film, find_root, load_chapter, load_film
from dtfilm.video import (
    AUDIO_RATE,
    atomic_path,
    chapters_vtt,
    decoded_audio,
    encoded_within_peak,
    join_with_chapters,
    mux_with_audio,
    remux_faststart,
    srt_to_vtt,
    write_text_atomic,
)

# the clips' sizes are the players' (dtfilm.embed.CLIP_SIZES: 854x480 and 1920x1080)
QUALITIES: dict[str, dict[str, int]] = {
    quality: {"pixel_width": w, "pixel_height": h, "frame_rate": FRAME_RATES[quality]}
    for quality, (w, h) in CLIP_SIZES.items()
}
LOCK = ".dtfilm.lock"


@dataclass(frozen=True)
class Rendered:
    chapter: str
    path: Path
    film_seconds: float
    wall_seconds: float
    shots: tuple[ShotClip, ...] = ()


@dataclass(frozen=True)
class Plan:
    """What a render run would do: every chapter's key and why each stale one is stale."""

    film: Film
    root: Path
    out_dir: Path
    quality: str
    theme: str
    chapters: list[Chapter]
    keys: dict[str, ChapterKey]
    reasons: dict[str, list[str]]
    manifest: dict[str, Any]

    def chapter(self, chapter_id: str) -> Chapter:
        return next(c for c in self.chapters if c.id == chapter_id)

    @property
    def stale(self) -> list[Chapter]:
        return [c for c in self.chapters if self.reasons[c.id]]


def numbers_sidecar(chapter: Chapter) -> dict[str, Any]:
    """Every input and output of the cost model behind a clip, sweeps included."""
    return {
        "chapter": chapter.id,
        "title": chapter.title,
        "overrides": dict(chapter.overrides),
        "numbers": chapter.numbers.data,
        "sweeps": {
            shot.beat: [{"overrides": dict(step.overrides), "numbers": step.data} for step in shot.steps]
            for shot in chapter.shots
            if shot.steps
        },
    }


@functools.cache
def _quiet_muxer_note() -> None:
    """Once per process: Manim passes muxer options PyAV does not use when a scene has sound,
    and says so at every render."""
    for handler in logging.getLogger("manim").handlers:
        handler.addFilter(lambda record: "Some options were not used" not in record.getMessage())


def render_chapter(
    chapter_id: str,
    root: Path,
    overrides: dict[str, Any],
    quality: str,
    out_dir: Path,
    theme: str | None,
    updates: Any = None,
) -> Rendered:
    """Render one chapter (in this process). Outputs appear only once complete. `updates`
    (a queue) receives (chapter, seconds of film drawn) after every animation."""
    from manim import tempconfig

    from dtfilm.inspect import inspect_loaded
    from dtfilm.scene import chapter_scene_class
    from dtfilm.voice.loudness import normalised

    started = time.perf_counter()
    _quiet_muxer_note()
    chapter = load_chapter(chapter_id, overrides, root)
    # A dry run first (no frames, a few seconds): every template of every shot, those inside
    # shot code too, is resolved before the first frame, so a render never stops half way.
    inspect_loaded(chapter, theme)
    settings = {
        **QUALITIES[quality],
        # dtfilm caches whole chapters; Manim's per-animation cache is off (see README)
        "disable_caching": True,
        "save_sections": True,  # one clip per shot, for slides (manim cuts them as it draws)
        "verbosity": "WARNING",
        "progress_bar": "none",  # the film's own display shows progress (dtfilm.progress)
    }
    with tempfile.TemporaryDirectory(prefix=f"dtfilm-{chapter.id}-") as media:
        with tempconfig({**settings, "media_dir": media}):
            cls = chapter_scene_class(chapter, theme)
            if updates is not None:
                cls.observers = [lambda scene, beat: updates.put((chapter_id, scene.time))]
            scene = cls()
            scene.render()
            movie = Path(scene.renderer.file_writer.movie_file_path)
        target = out_dir / f"{chapter.id}.mp4"
        # the narration, brought to -16 LUFS with its peaks limited, encoded once per file
        sound = normalised(decoded_audio(movie, AUDIO_RATE), AUDIO_RATE)[0] if scene.track else None
        with atomic_path(target) as temp:
            if sound is not None:
                sound = encoded_within_peak(
                    lambda pcm: mux_with_audio(movie, temp, pcm, AUDIO_RATE), temp, sound, AUDIO_RATE
                )
            else:
                remux_faststart(movie, temp)
        section_index = scene.renderer.file_writer.output_plan.section_index
        clips = write_shot_clips(section_index, scene.shot_times, out_dir, chapter.id, sound, AUDIO_RATE)
        write_png(frame_at(target, poster_seconds(scene.shot_times, chapter.poster)), out_dir / f"{chapter.id}.png")
        subtitles = movie.with_suffix(".srt")
        srt = subtitles.read_text(encoding="utf-8") if subtitles.is_file() else ""
        write_text_atomic(out_dir / f"{chapter.id}.srt", srt)
        write_text_atomic(out_dir / f"{chapter.id}.vtt", srt_to_vtt(srt))
    write_text_atomic(out_dir / f"{chapter.id}.numbers.json", json.dumps(numbers_sidecar(chapter), indent=2))
    return Rendered(chapter.id, target, scene.time, time.perf_counter() - started, tuple(clips))


@contextlib.contextmanager
def render_lock(out_dir: Path) -> Iterator[None]:
    """One render at a time per output folder; a second says who holds it and stops."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / LOCK
    handle = open(path, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise DtfilmError(
            f"another dtfilm render is writing here ({holder}); wait for it to finish", Where(str(path))
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}")
    handle.flush()
    for leftover in out_dir.glob(".*.tmp*"):  # from a run that was killed mid-write
        leftover.unlink(missing_ok=True)
    try:
        yield
    finally:
        handle.truncate(0)
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def make_plan(
    chapter_ids: list[str],
    quality: str,
    out_dir: Path | None,
    overrides: dict[str, Any] | None,
    theme: str | None,
) -> Plan:
    """Load and check every chapter first, so bad input stops before any frame is drawn."""
    root = find_root()
    film = load_film(root / "storyboard" / "film.yaml")
    for chapter_id in chapter_ids:
        if chapter_id not in film.chapters:
            raise DtfilmError(
                f"no chapter {chapter_id!r} in the film; valid: {', '.join(film.chapters)}",
                Where("storyboard/film.yaml"),
                "chapters",
            )
    ids = chapter_ids or list(film.chapters)
    chapters = [load_chapter(chapter_id, overrides, root) for chapter_id in ids]
    out = out_dir or root / "renders"
    chosen_theme = theme or film.theme
    manifest = read_manifest(out)
    keys = {c.id: chapter_key(c, quality, chosen_theme) for c in chapters}
    reasons = {c.id: stale_reasons(keys[c.id], manifest, out) for c in chapters}
    return Plan(film, root, out, quality, chosen_theme, chapters, keys, reasons, manifest)


def _record(plan: Plan, result: Rendered) -> None:
    key = plan.keys[result.chapter]
    plan.manifest["chapters"][result.chapter] = {
        "key": key.key,
        "title": plan.chapter(result.chapter).title,
        "parts": key.parts,
        "inputs": key.inputs,
        "outputs": outputs(result.chapter),
        "duration": round(result.film_seconds, 3),
        "shots": [
            {
                "beat": c.beat,
                "start": round(c.start, 3),
                "end": round(c.end, 3),
                "clip": c.clip,
                "still": c.still,
                "narration": _narration(plan, result.chapter, c.index),
            }
            for c in result.shots
        ],
        "render_seconds": round(result.wall_seconds, 2),
        "quality": plan.quality,
        "rendered_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    write_manifest(plan.out_dir, plan.manifest)


def _narration(plan: Plan, chapter_id: str, index: int) -> str:
    narration = plan.chapter(chapter_id).shots[index].narration
    return narration.text if narration is not None else ""


def _report(result: Rendered, reasons: list[str]) -> None:
    why = "; ".join(reasons)
    print(f"{_shown(result.path)}: {result.film_seconds:.1f} s of film in {result.wall_seconds:.1f} s ({why})")


def _render_stale(plan: Plan, overrides: dict[str, Any], theme: str | None, jobs: int) -> list[Rendered]:
    stale = plan.stale
    results: list[Rendered] = []
    if not stale:
        return results
    workers = max(1, min(jobs, len(stale)))
    if workers == 1:  # in this process: a plain queue carries the progress
        updates: Any = queue.Queue()
        with film_progress(stale, plan.manifest, updates):
            for chapter in stale:
                result = render_chapter(chapter.id, plan.root, overrides, plan.quality, plan.out_dir, theme, updates)
                _record(plan, result)
                _report(result, plan.reasons[result.chapter])
                results.append(result)
        return results
    context = get_context("spawn")
    with context.Manager() as manager:
        updates = manager.Queue()
        args = [(c.id, plan.root, overrides, plan.quality, plan.out_dir, theme, updates) for c in stale]
        with film_progress(stale, plan.manifest, updates), ProcessPoolExecutor(workers, mp_context=context) as pool:
            pending = {pool.submit(render_chapter, *arg) for arg in args}
            try:
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        result = future.result()
                        _record(plan, result)
                        _report(result, plan.reasons[result.chapter])
                        results.append(result)
            except BaseException:
                for future in pending:
                    future.cancel()
                raise
    return results


def _join_film(plan: Plan, overrides: dict[str, Any], theme: str | None) -> Path | None:
    """renders/film.mp4 from every chapter, rebuilt only when a chapter changed. After a run
    of named chapters it is joined too when every other chapter's clip is fresh; otherwise the
    run says that the film is stale, and which chapters it waits for."""
    film_ids = list(plan.film.chapters)
    if [c.id for c in plan.chapters] != film_ids:
        whole = make_plan([], plan.quality, plan.out_dir, overrides, theme)
        waiting = [c.id for c in whole.chapters if whole.reasons[c.id]]
        if waiting:
            print(
                f"{_shown(plan.out_dir / 'film.mp4')}: stale until {', '.join(waiting)}"
                f" {'is' if len(waiting) == 1 else 'are'} rendered too (dtfilm render)"
            )
            return None
        plan = whole
    keys = [plan.keys[i] for i in film_ids]
    key = film_key(keys)
    target = plan.out_dir / "film.mp4"
    if plan.manifest["film"].get("key") == key and target.is_file():
        return None
    parts = [(c.title, plan.out_dir / f"{c.id}.mp4") for c in plan.chapters]
    with atomic_path(target) as temp:
        chapters = join_with_chapters(parts, temp)
    write_text_atomic(plan.out_dir / "film.chapters.vtt", chapters_vtt(chapters))
    plan.manifest["film"] = {
        "key": key,
        "output": "film.mp4",
        "chapters": [
            {"id": i, "title": t, "start": s, "end": e} for i, (t, s, e) in zip(film_ids, chapters, strict=True)
        ],
    }
    write_manifest(plan.out_dir, plan.manifest)
    return target


def render_chapters(
    chapter_ids: list[str],
    quality: str = "preview",
    out_dir: Path | None = None,
    overrides: dict[str, Any] | None = None,
    theme: str | None = None,
    jobs: int = 1,
    force: bool = False,
    formats: tuple[str, ...] = (),
) -> list[Rendered]:
    """Render what is stale (everything with `force`), then join the film if it changed, make
    the GIF or WebM copies asked for, and write the gallery page."""
    overrides = dict(overrides or {})
    plan = make_plan(chapter_ids, quality, out_dir, overrides, theme)
    for chapter in plan.chapters:
        for warning in chapter.warnings:
            print(f"dtfilm: warning: {chapter.id}: {warning}", file=sys.stderr)
    with render_lock(plan.out_dir):
        if force:
            for chapter in plan.chapters:
                plan.reasons[chapter.id] = plan.reasons[chapter.id] or ["--force"]
        for chapter in plan.chapters:
            if not plan.reasons[chapter.id]:
                print(f"{chapter.id}: fresh")
        results = _render_stale(plan, overrides, theme, jobs)
        film = _join_film(plan, overrides, theme)
        if film is not None:
            print(f"{_shown(film)}: {len(plan.film.chapters)} chapters joined, with chapter markers")
        _write_formats(plan, formats)
        gallery = write_gallery(plan.out_dir, plan.film, plan.manifest)
        print(f"{_shown(gallery)}: the gallery of every rendered chapter")
    return results


def _write_formats(plan: Plan, formats: tuple[str, ...]) -> None:
    """GIF and WebM copies of each chapter, made again only when its MP4 is newer."""
    for chapter in plan.chapters:
        movie = plan.out_dir / f"{chapter.id}.mp4"
        for fmt in formats:
            target = plan.out_dir / f"{chapter.id}.{fmt}"
            if target.is_file() and target.stat().st_mtime >= movie.stat().st_mtime:
                continue
            if fmt == "gif":
                size, width, fps = write_gif(movie, target)
                print(f"{_shown(target)}: {size / 1e6:.1f} MB ({width} px wide, {fps} frames a second)")
            else:
                size = write_webm(movie, target)
                print(f"{_shown(target)}: {size / 1e6:.1f} MB (VP9)")


def status_lines(quality: str, out_dir: Path | None, overrides: dict[str, Any] | None, theme: str | None) -> list[str]:
    """Every chapter, fresh or stale and why (no manim import)."""
    plan = make_plan([], quality, out_dir, overrides, theme)
    lines = []
    for chapter in plan.chapters:
        reasons = plan.reasons[chapter.id]
        lines.append(f"{chapter.id:<10} {'stale: ' + '; '.join(reasons) if reasons else 'fresh'}")
    film = plan.manifest["film"]
    keys = [plan.keys[c.id] for c in plan.chapters]
    film_fresh = film.get("key") == film_key(keys) and (plan.out_dir / "film.mp4").is_file()
    lines.append(f"{'film':<10} {'fresh' if film_fresh else 'stale: joined again after the chapters'}")
    report = read_report(plan.out_dir)
    if report is not None:
        verdicts = [row["verdict"] for row in report["rows"]]
        summary = (
            "every row agrees or is explained" if report["all_agree"] else f"{verdicts.count('DIFFERS')} rows DIFFER"
        )
        lines.append(
            f"{'validate':<10} {report['measured_at']}: {len(verdicts)} rows on {report['ranks']} ranks, {summary}"
        )
    return lines


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
