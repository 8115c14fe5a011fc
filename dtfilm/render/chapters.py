"""`dtfilm render`: stale chapters to renders/<chapter>.mp4 with their sidecars, then the film.

A chapter whose cache key (dtfilm.render.cache) is unchanged is fresh: nothing is done. A stale one is
made from its shots: the shots whose keys the shot cache (dtfilm.render.shot_cache) lacks are drawn,
across processes with --jobs (dtfilm.render.schedule), and the chapter is joined from the cached clips
without re-encoding (dtfilm.render.assemble). Every output is written to a temporary file and renamed;
the manifest is updated after each chapter, so an interrupted run leaves every earlier output
and the manifest as they were (and the shots it finished, in the cache). A lock keeps two runs
from writing at once.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dtfilm.render.assemble import assemble_chapter, stored_sound
from dtfilm.render.cache import NOT_RENDERED, RenderWork, output_names, outputs, record_files, write_manifest
from dtfilm.render.cluster import cluster_address, connect
from dtfilm.render.embed import write_gallery
from dtfilm.render.film_join import film_chapters, join_film
from dtfilm.render.film_sound import FilmSoundAhead
from dtfilm.render.job import RenderRequest
from dtfilm.render.lock import render_lock
from dtfilm.render.schedule import ChapterShots, draw_stale_shots
from dtfilm.render.shot_cache import ShotKey, cache_folder, cached, clip_path
from dtfilm.render.sidecars import FORMATS, ShotClip, write_gif, write_webm
from dtfilm.render.stale import cache_may_serve, find_work, numbers_changed_since_render, shown
from dtfilm.storyboard import Chapter
from dtfilm.storyboard.film import film_titles
from dtfilm.system.forked import forked
from dtfilm.system.terminal import for_terminal
from dtfilm.units import counted
from dtfilm.voice.track import narration_track


@dataclass(frozen=True)
class Rendered:
    chapter: str
    path: Path
    film_seconds: float
    wall_seconds: float
    shots: tuple[ShotClip, ...] = ()
    keys: tuple[ShotKey, ...] = ()  # every shot's key in the cache
    drawn: tuple[str, ...] = ()  # the beats drawn in this run (the rest came from the cache)
    join_seconds: float = 0.0  # joining its shots' clips and sound (benchmarks/cluster_speed.py)
    task_seconds: float = 0.0  # the tasks that drew its shots: their wall times, summed
    tasks: int = 0


def numbers_sidecar(chapter: Chapter) -> dict[str, Any]:
    """Every input and output of the cost model behind a clip, sweeps included."""
    return {
        "chapter": chapter.id,
        "title": chapter.title.text,
        "overrides": dict(chapter.overrides),
        "numbers": chapter.numbers.data,
        "sweeps": {
            shot.beat: [{"overrides": dict(step.overrides), "numbers": step.data} for step in shot.steps]
            for shot in chapter.shots
            if shot.steps
        },
    }


def _record(work: RenderWork, result: Rendered) -> None:
    """The chapter's entry in the manifest, written last (the render's commit point), with a
    record of every file it wrote (cache.record_files)."""
    key = work.keys[result.chapter]
    out = work.job.out_dir
    previous = work.manifest["chapters"].get(result.chapter, {}).get("files")
    entry = work.manifest["chapters"][result.chapter] = {
        "key": key.key,
        "title": work.chapter(result.chapter).title.text,
        "subtitle": subtitle.text if (subtitle := work.chapter(result.chapter).subtitle) is not None else "",
        "parts": key.parts,
        "film": key.film,
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
                "narration": _narration(work, result.chapter, c.index),
                "key": k.key,
                "parts": k.parts,
                "cache": str(clip_path(out, k.key).relative_to(out)),
                "drawn_now": c.beat in result.drawn,
                **_drawn_when(out, k.key),
            }
            for c, k in zip(result.shots, result.keys, strict=True)
        ],
        "render_seconds": round(result.wall_seconds, 2),
        "join_seconds": round(result.join_seconds, 2),
        "task_seconds": round(result.task_seconds, 2),
        "tasks": result.tasks,
        "quality": work.job.quality,
        "rendered_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    entry["files"] = record_files(out, output_names(entry, result.chapter), previous)
    write_manifest(work.job.out_dir, work.manifest)


def _drawn_when(out_dir: Path, key: str) -> dict[str, Any]:
    entry = cached(out_dir, key)
    return {"render_seconds": round(entry.render_seconds, 2), "drawn_at": entry.rendered_at} if entry else {}


def _narration(work: RenderWork, chapter_id: str, index: int) -> str:
    narration = work.chapter(chapter_id).shots[index].narration
    return narration.text if narration is not None else ""


def _report(result: Rendered, reasons: list[str]) -> None:
    why = "; ".join("its first render" if reason == NOT_RENDERED else reason for reason in reasons)
    shots = len(result.keys)
    drew = f"drew {len(result.drawn)} of {shots} shots" + (
        f": {', '.join(result.drawn)}" if 0 < len(result.drawn) < shots else ""
    )
    line = f"{shown(result.path)}: {result.film_seconds:.1f} s of film in {result.wall_seconds:.1f} s ({why}; {drew})"
    print(for_terminal(line, keep_newlines=False))  # (a reason quotes the manifest, read back: not trusted)


def _render_stale(
    work: RenderWork,
    jobs: int,
    force: bool,
    cluster: str | None = None,
    ahead: FilmSoundAhead | None = None,
    cluster_wait_seconds: float | None = None,
) -> list[Rendered]:
    """Draw the stale chapters' stale shots (dtfilm.render.schedule), here or on the Dask scheduler at
    `cluster` (dtfilm.render.cluster), and join each chapter as soon as its shots are in the cache (and
    hand it to `ahead`, which encodes the film's sound as the chapters come)."""
    stale = work.stale
    results: list[Rendered] = []
    if not stale:
        return results
    started = time.perf_counter()

    def join(state: ChapterShots) -> None:
        result, sound_encoded = _join_chapter(work, state, force, started)
        _record(work, result)
        _report(result, work.reasons[result.chapter])
        results.append(result)
        if ahead is not None:
            ahead.joined(result.chapter, sound_encoded)

    job = work.job
    reusable = {c.id for c in stale if cache_may_serve(work, c, force)}
    renumbered = {c for c in reusable if numbers_changed_since_render(work, work.chapter(c))}
    if cluster is None:
        draw_stale_shots(job, stale, reusable, renumbered, work.manifest, max(1, jobs), join)
        return results

    voice = stale[0].film.voice
    waiting = {} if cluster_wait_seconds is None else {"wait_seconds": cluster_wait_seconds}
    with connect(cluster, job, voice, **waiting) as remote:
        print(f"{cluster}: {remote.jobs} Dask worker threads draw the stale shots")
        draw_stale_shots(job, stale, reusable, renumbered, work.manifest, remote.jobs, join, remote)
    return results


def _join_chapter(work: RenderWork, state: ChapterShots, force: bool, started: float) -> tuple[Rendered, bool]:
    """A chapter joined from its shots' cached clips, with its narration (dtfilm.render.assemble):
    what was rendered, timed from `started`, and whether its sound was encoded this time."""
    chapter = state.chapter
    keys = state.ordered_keys()
    joining = time.perf_counter()
    track = narration_track(chapter, chapter.film.voice)
    last = work.manifest["chapters"].get(chapter.id, {}).get("files")
    made = assemble_chapter(
        chapter, [k.key for k in keys], work.job.out_dir, track, numbers_sidecar(chapter), keep=not force, last=last
    )
    wall = time.perf_counter() - started
    joined = time.perf_counter() - joining
    drawn = tuple(state.drawn)
    result = Rendered(
        chapter.id,
        made.path,
        made.seconds,
        wall,
        made.shots,
        tuple(keys),
        drawn,
        joined,
        state.wall_seconds,
        state.tasks,
    )
    return result, made.sound_encoded


def render_chapters(
    chapter_ids: list[str],
    request: RenderRequest | None = None,
    jobs: int = 1,
    force: bool = False,
    formats: tuple[str, ...] = (),
    cluster: str | None = None,
    cluster_wait_seconds: float | None = None,
) -> list[Rendered]:
    """Render what is stale (everything with `force`), then join the film if it changed, make
    the GIF or WebM copies asked for, and write the gallery page. The stale shots are drawn on
    the Dask scheduler that `cluster` (--cluster), $DTFILM_CLUSTER or film.yaml's `scheduler:`
    names, if any (dtfilm.render.cluster.cluster_address); else here, by `jobs` processes."""
    work = find_work(chapter_ids, request or RenderRequest())
    overrides = work.job.overrides
    film_titles(work.film, overrides)  # (the gallery's, at the end: a template error before a frame is drawn)
    address = cluster_address(cluster, work.film.scheduler)  # (checked even when nothing is stale)
    for chapter in work.chapters:
        for warning in chapter.warnings:
            print(f"dtfilm: warning: {chapter.id}: {warning}", file=sys.stderr)
    with render_lock(work.job.out_dir):
        if force:
            for chapter in work.chapters:
                work.reasons[chapter.id] = work.reasons[chapter.id] or ["--force"]
        for chapter in work.chapters:
            if not work.reasons[chapter.id]:
                print(f"{chapter.id}: fresh")
        ahead = _film_sound_ahead(work)
        # the other chapters, loaded in a forked process (or on a thread) while this one finds its keys and draws
        whole = functools.partial(film_chapters, work)
        # Named chapters all fresh: no chapter the film shows changed, so the film is not looked
        # at (loading every other chapter to learn so took most of a no-op's second of CPU)
        film_too = not work.film_is_named_part or bool(work.stale)
        try:
            with forked(whole) if work.film_is_named_part and film_too else contextlib.nullcontext(whole) as every:
                results = _render_stale(work, jobs, force, address, ahead, cluster_wait_seconds)
                film = join_film(work, every, ahead) if film_too else None
        finally:
            if ahead is not None:
                ahead.close()
        if film is not None:
            count = len(work.film.chapters)
            print(f"{shown(film)}: {counted(count, 'chapter')} joined, with chapter markers")
        _write_formats(work, formats)
        gallery = write_gallery(work.job.out_dir, work.film, work.manifest, overrides)
        if gallery is not None:
            print(f"{shown(gallery)}: the gallery of every rendered chapter")
    return results


def _film_sound_ahead(work: RenderWork) -> FilmSoundAhead | None:
    """For a render of the whole film with something to draw: the film's sound, encoded as its
    chapters are joined (dtfilm.render.film_sound), the fresh ones at once."""
    film_ids = list(work.film.chapters)
    if work.film_is_named_part or not work.stale:
        return None

    folder = cache_folder(work.job.out_dir)
    clips = {i: work.job.out_dir / f"{i}.mp4" for i in film_ids}
    sound = functools.partial(stored_sound, folder)
    ahead = FilmSoundAhead(film_ids, clips, sound, work.job.out_dir / "film.mp4", folder)
    for chapter in work.chapters:
        if not work.reasons[chapter.id]:
            ahead.fresh(chapter.id)
    return ahead


def _write_formats(work: RenderWork, formats: tuple[str, ...]) -> None:
    """GIF and WebM copies of each chapter, made again only when its MP4 is newer: those asked
    for, and those a render made before (a copy left older than its clip is one no longer showing it)."""
    for chapter in work.chapters:
        movie = work.job.out_dir / f"{chapter.id}.mp4"
        for fmt in FORMATS:
            target = work.job.out_dir / f"{chapter.id}.{fmt}"
            if fmt not in formats and not target.is_file():
                continue
            if target.is_file() and target.stat().st_mtime >= movie.stat().st_mtime:
                continue
            if fmt == "gif":
                size, width, fps = write_gif(movie, target)
                print(f"{shown(target)}: {size / 1e6:.1f} MB ({width} px wide, {fps} frames a second)")
            else:
                size = write_webm(movie, target)
                print(f"{shown(target)}: {size / 1e6:.1f} MB (VP9)")
