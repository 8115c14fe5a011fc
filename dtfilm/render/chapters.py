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
import errno
import fcntl
import functools
import os
import re
import stat
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dtfilm import beneath
from dtfilm.errors import DtfilmError, Where, did_you_mean
from dtfilm.render.assemble import assemble_chapter, stored_sound
from dtfilm.render.cache import (
    NOT_RENDERED,
    ChapterKey,
    Plan,
    chapter_key,
    files_reasons,
    film_changes,
    film_key,
    output_names,
    outputs,
    read_manifest,
    record_files,
    stale_reasons,
    write_manifest,
)
from dtfilm.render.cluster import cluster_address, connect
from dtfilm.render.derived import derived_lines
from dtfilm.render.embed import write_gallery
from dtfilm.render.film_sound import FilmSoundAhead
from dtfilm.render.film_subtitles import film_vtt, placed_srt, recorded_cues
from dtfilm.render.schedule import ChapterShots, ShotJob, draw_stale_shots
from dtfilm.render.shot_cache import NUMBER_PARTS, ShotKey, cache_folder, cached, clip_path, numbers_changed
from dtfilm.render.shot_status import shot_lines
from dtfilm.render.sidecars import FORMATS, ShotClip, write_gif, write_webm
from dtfilm.storyboard import Chapter, find_root, load_chapter, load_film
from dtfilm.storyboard.film import film_titles
from dtfilm.system.atomic import atomic_path, sweep_scratch, write_text_atomic
from dtfilm.system.forked import forked
from dtfilm.system.lifeline import parent_only, released
from dtfilm.system.records import matches
from dtfilm.system.report_schema import read_report
from dtfilm.system.terminal import for_terminal
from dtfilm.system.video import chapters_vtt, join_with_chapters
from dtfilm.units import counted
from dtfilm.voice.track import check_speakable, narration_track

if TYPE_CHECKING:
    from dtfilm.render.film_sound import FilmSoundAhead

LOCK = ".dtfilm.lock"


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


def _reusable(plan: Plan, chapter: Chapter, force: bool) -> bool:
    """Whether any cached shot may serve: a chapter rendered before at this quality, theme and
    code (each in every shot's key) can keep the shots whose keys did not change."""
    entry = plan.manifest["chapters"].get(chapter.id)
    if force or entry is None:
        return False
    old, new = entry.get("parts", {}), plan.keys[chapter.id].parts
    return all(old.get(part) == new[part] for part in ("quality", "theme", "code"))


def _numbers_changed(plan: Plan, chapter: Chapter) -> bool:
    """Whether what a chapter computes its pictures from changed since its last render."""
    old = plan.manifest["chapters"].get(chapter.id, {}).get("parts", {})
    return numbers_changed(old, plan.keys[chapter.id].parts)


def _what_changed(plan: Plan, chapter: Chapter) -> str:
    """What changed of what a chapter's pictures are computed from, in words: the film's title
    alone is not "its numbers"."""
    entry = plan.manifest["chapters"].get(chapter.id, {})
    old, key = entry.get("parts", {}), plan.keys[chapter.id]
    changed = {part for part in NUMBER_PARTS if old.get(part) != key.parts[part]}
    if changed == {"film"}:
        return film_changes(entry.get("film"), key.film, values=False)
    return "its numbers changed"


_held: set[Path] = set()  # the lock files this process holds (a POSIX lock never refuses its owner)


@contextlib.contextmanager
def render_lock(out_dir: Path) -> Iterator[None]:
    """One render at a time per output folder; a second says who holds it and stops.

    A POSIX record lock (fcntl.lockf), which belongs to this process alone: a forked child does
    not inherit it (as it would inherit flock's open file), and the kernel releases it when this
    process dies, however it dies. (flock's lock outlived a render killed with SIGKILL, held by
    its drawing processes.) The lock file names its holder; a holder that died without
    releasing it is named as its lock is taken over. Taken, the lock's first work is to sweep
    the temporary files that killed runs left (dtfilm.system.atomic.sweep_scratch)."""
    beneath.check_renders_folder(out_dir, given=False, may_make=True, writes=True, where=Where(_shown(out_dir)))
    beneath.mark(out_dir)  # (made if missing: a renders folder dtfilm writes in)
    path = out_dir / LOCK
    where = Where(_shown(path))
    key = path.resolve()
    if key in _held:  # this process's own render, not finished (opening the file again and
        # closing it would release the lock: POSIX locks go with any of the owner's descriptors)
        raise DtfilmError(f"another dtfilm render is writing here (pid {os.getpid()}); wait for it to finish", where)
    fd = _open_lock(out_dir, where)
    handle = os.fdopen(fd, "r+")
    try:
        fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # BlockingIOError, or PermissionError (EACCES) on some systems
        holder = _holder(fd)
        handle.close()
        raise DtfilmError(f"another dtfilm render is writing here ({holder}); wait for it to finish", where) from None
    _held.add(key)
    parent_only(fd)  # (a forked child's copy holds no lock, but keeps nothing open either)
    try:
        previous = _holder(fd, "")
        if previous and previous != f"pid {os.getpid()}":
            print(
                f"dtfilm: {_shown(path)}: taken over from the render that held it ({previous}), which ended"
                " without releasing it",
                file=sys.stderr,
            )
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
        sweep_scratch(out_dir)  # what runs that were killed mid-write left
        yield
    finally:
        _held.discard(key)
        released(fd)
        handle.truncate(0)
        fcntl.lockf(handle, fcntl.LOCK_UN)
        handle.close()


LOCK_MAX_BYTES = 64  # "pid N": what a lock file holds; a longer one is not dtfilm's
_HOLDER = re.compile(r"pid [0-9]{1,10}")


def _open_lock(out_dir: Path, where: Where) -> int:
    """The lock file, opened (made) beneath the renders folder: a link there is refused, never
    followed (a link to a file outside would be truncated), and a FIFO or a device is refused
    without waiting or reading from it. One with other names (hard links: a renders folder
    copied with `cp -al`, or a file of someone else's linked in) is replaced by a file of its
    own, as it is truncated and written."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        with beneath.folder(out_dir) as dir_fd:
            fd = os.open(LOCK, flags, 0o644, dir_fd=dir_fd)
            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                os.close(fd)
                os.unlink(LOCK, dir_fd=dir_fd)  # (this name only: the other names keep their file)
                fd = os.open(LOCK, flags | os.O_EXCL, 0o644, dir_fd=dir_fd)
                info = os.fstat(fd)
    except beneath.Refused as refused:
        raise refused.line_error("a folder dtfilm makes, not a link") from None
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.EMLINK):
            raise DtfilmError(
                "is a link, never followed; valid: the lock file dtfilm makes (remove the link)", where
            ) from None
        if isinstance(error, IsADirectoryError):
            raise DtfilmError("this is a folder where dtfilm keeps its lock file: remove it", where) from None
        raise DtfilmError(f"cannot open the lock file: {error.strerror}", where) from None
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        what = beneath.kind(info.st_mode)
        raise DtfilmError(f"is {what}, not the lock file dtfilm makes; valid: remove it (dtfilm makes it again)", where)
    os.set_blocking(fd, True)
    return fd


def _holder(fd: int, unknown: str = "another process") -> str:
    """Who holds the lock, as its file says ("pid N"): at most LOCK_MAX_BYTES read, and only
    text of that shape is shown (nothing else a stranger wrote reaches the terminal)."""
    try:
        text = os.pread(fd, LOCK_MAX_BYTES, 0).decode("ascii", "replace").strip()
    except OSError:
        return unknown
    return text if _HOLDER.fullmatch(text) else ("an unknown process" if text else unknown)


def make_plan(
    chapter_ids: list[str],
    quality: str,
    out_dir: Path | None,
    overrides: dict[str, Any] | None,
    theme: str | None,
    verify: bool = False,
) -> Plan:
    """Load and check every chapter first, so bad input stops before any frame is drawn. With
    `verify`, every output's digest is checked against the manifest's record."""
    root = find_root()
    film = load_film(root / "storyboard" / "film.yaml")
    for chapter_id in chapter_ids:
        if chapter_id not in film.chapters:
            raise DtfilmError(
                f"no chapter {chapter_id!r} in the film{did_you_mean(chapter_id, film.chapters)};"
                f" valid: {', '.join(film.chapters)}",
                Where("storyboard/film.yaml"),
                "chapters",
            )
    ids = chapter_ids or list(film.chapters)
    chapters = [load_chapter(chapter_id, overrides, root) for chapter_id in ids]
    for chapter in chapters:  # (else a render refuses it only when it joins, after drawing)
        check_speakable(chapter, chapter.film.voice)
    out = out_dir or root / "renders"
    chosen_theme = theme or film.theme
    manifest = read_manifest(out)
    keys = {c.id: chapter_key(c, quality, chosen_theme) for c in chapters}
    reasons = {c.id: stale_reasons(keys[c.id], manifest, out, verify) for c in chapters}
    return Plan(film, root, out, quality, chosen_theme, chapters, keys, reasons, manifest)


def _record(plan: Plan, result: Rendered) -> None:
    """The chapter's entry in the manifest, written last (the render's commit point), with a
    record of every file it wrote (cache.record_files)."""
    key = plan.keys[result.chapter]
    out = plan.out_dir
    previous = plan.manifest["chapters"].get(result.chapter, {}).get("files")
    entry = plan.manifest["chapters"][result.chapter] = {
        "key": key.key,
        "title": plan.chapter(result.chapter).title.text,
        "subtitle": subtitle.text if (subtitle := plan.chapter(result.chapter).subtitle) is not None else "",
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
                "narration": _narration(plan, result.chapter, c.index),
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
        "quality": plan.quality,
        "rendered_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    entry["files"] = record_files(out, output_names(entry, result.chapter), previous)
    write_manifest(plan.out_dir, plan.manifest)


def _drawn_when(out_dir: Path, key: str) -> dict[str, Any]:
    entry = cached(out_dir, key)
    return {"render_seconds": round(entry.render_seconds, 2), "drawn_at": entry.rendered_at} if entry else {}


def _narration(plan: Plan, chapter_id: str, index: int) -> str:
    narration = plan.chapter(chapter_id).shots[index].narration
    return narration.text if narration is not None else ""


def _report(result: Rendered, reasons: list[str]) -> None:
    why = "; ".join("its first render" if reason == NOT_RENDERED else reason for reason in reasons)
    shots = len(result.keys)
    drew = f"drew {len(result.drawn)} of {shots} shots" + (
        f": {', '.join(result.drawn)}" if 0 < len(result.drawn) < shots else ""
    )
    line = f"{_shown(result.path)}: {result.film_seconds:.1f} s of film in {result.wall_seconds:.1f} s ({why}; {drew})"
    print(for_terminal(line, keep_newlines=False))  # (a reason quotes the manifest, read back: not trusted)


def _render_stale(
    plan: Plan,
    overrides: dict[str, Any],
    theme: str,
    jobs: int,
    force: bool,
    cluster: str | None = None,
    ahead: FilmSoundAhead | None = None,
    cluster_wait_seconds: float | None = None,
) -> list[Rendered]:
    """Draw the stale chapters' stale shots (dtfilm.render.schedule), here or on the Dask scheduler at
    `cluster` (dtfilm.render.cluster), and join each chapter as soon as its shots are in the cache (and
    hand it to `ahead`, which encodes the film's sound as the chapters come)."""
    stale = plan.stale
    results: list[Rendered] = []
    if not stale:
        return results
    started = time.perf_counter()

    def join(state: ChapterShots) -> None:
        chapter = state.chapter
        keys = state.ordered_keys()
        joining = time.perf_counter()
        track = narration_track(chapter, chapter.film.voice)
        last = plan.manifest["chapters"].get(chapter.id, {}).get("files")
        made = assemble_chapter(
            chapter, [k.key for k in keys], plan.out_dir, track, numbers_sidecar(chapter), keep=not force, last=last
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
        _record(plan, result)
        _report(result, plan.reasons[chapter.id])
        results.append(result)
        if ahead is not None:
            ahead.joined(chapter.id, made.sound_encoded)

    job = ShotJob(plan.root, overrides, plan.quality, plan.out_dir, theme, plan.film.voice)
    reusable = {c.id for c in stale if _reusable(plan, c, force)}
    renumbered = {c for c in reusable if _numbers_changed(plan, plan.chapter(c))}
    if cluster is None:
        draw_stale_shots(job, stale, reusable, renumbered, plan.manifest, max(1, jobs), join)
        return results

    voice = stale[0].film.voice
    waiting = {} if cluster_wait_seconds is None else {"wait_seconds": cluster_wait_seconds}
    with connect(cluster, job, voice, **waiting) as remote:
        print(f"{cluster}: {remote.jobs} Dask worker threads draw the stale shots")
        draw_stale_shots(job, stale, reusable, renumbered, plan.manifest, remote.jobs, join, remote)
    return results


@dataclass(frozen=True)
class FilmChapters:
    """What joining the film needs of all its chapters: their keys and titles, in film order,
    and which of them (not rendered by this run) are stale."""

    keys: dict[str, ChapterKey]
    titles: dict[str, str]
    stale: list[str]


def film_chapters(plan: Plan, overrides: dict[str, Any], theme: str | None) -> FilmChapters | str:
    """Every chapter of the film as `plan`'s run finds it, or why the others cannot be loaded
    (flags that the named chapters take and another does not)."""
    named = {c.id for c in plan.chapters}
    if plan.film_is_named_part:
        try:
            plan = make_plan([], plan.quality, plan.out_dir, overrides, theme)
        except DtfilmError as error:
            return str(error)
    return FilmChapters(
        {c.id: plan.keys[c.id] for c in plan.chapters},
        {c.id: c.title.text for c in plan.chapters},
        [c.id for c in plan.chapters if plan.reasons[c.id] and c.id not in named],
    )


def _join_film(
    plan: Plan, every_chapter: Callable[[], FilmChapters | str], ahead: FilmSoundAhead | None = None
) -> Path | None:
    """renders/film.mp4 from every chapter, rebuilt only when a chapter changed. After a run
    of named chapters it is joined too when every other chapter's clip is fresh; otherwise the
    run says that the film is stale, and which chapters it waits for. `every_chapter` gives them
    all as the run found them at its start (film_chapters, loaded while shots drew)."""
    film_ids = list(plan.film.chapters)
    whole = every_chapter()
    if isinstance(whole, str):
        film = _shown(plan.out_dir / "film.mp4")
        print(f"{film}: stale; the film's other chapters do not take these flags ({whole})")
        return None
    if whole.stale:
        print(
            f"{_shown(plan.out_dir / 'film.mp4')}: stale until {', '.join(whole.stale)}"
            f" {'is' if len(whole.stale) == 1 else 'are'} rendered too (dtfilm render)"
        )
        return None
    keys = [whole.keys[i] for i in film_ids]
    key = film_key(keys)
    target = plan.out_dir / "film.mp4"
    if plan.manifest["film"].get("key") == key and not film_reasons(plan.manifest, plan.out_dir):
        return None
    said = {i: recorded_cues(plan.out_dir / f"{i}.srt", _srt_record(plan.manifest, i)) for i in film_ids}
    changed = [f"{i}.srt" for i, cues in said.items() if cues is None]
    if changed:  # (made stale by its digest as the run began: so changed while it ran)
        print(f"{_shown(target)}: stale: {', '.join(changed)} changed since rendered (dtfilm render)")
        return None
    # the film it replaces lends its sound only if it is what its join wrote
    previous = target if matches(target, plan.manifest["film"].get("files", {}).get("film.mp4")) else None

    parts = [(whole.titles[i], plan.out_dir / f"{i}.mp4") for i in film_ids]
    encoded_from = functools.partial(stored_sound, cache_folder(plan.out_dir))
    joining = time.perf_counter()
    encoded = ahead.finished(parts) if ahead is not None else None
    try:
        with atomic_path(target) as temp:
            chapters = join_with_chapters(parts, temp, previous=previous, encoded_from=encoded_from, ahead=encoded)
    finally:
        if encoded is not None:
            encoded.unlink(missing_ok=True)
    joined = time.perf_counter() - joining
    write_text_atomic(plan.out_dir / "film.chapters.vtt", chapters_vtt(chapters))
    subtitles = placed_srt([(said[i] or [], s, e) for i, (_, s, e) in zip(film_ids, chapters, strict=True)])
    write_text_atomic(plan.out_dir / "film.srt", subtitles)
    write_text_atomic(plan.out_dir / "film.vtt", film_vtt(subtitles))
    names = ["film.mp4", "film.chapters.vtt", "film.srt", "film.vtt"]
    plan.manifest["film"] = {
        "key": key,
        "output": "film.mp4",
        "files": record_files(plan.out_dir, names, plan.manifest["film"].get("files")),
        "join_seconds": round(joined, 2),
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
    cluster: str | None = None,
    cluster_wait_seconds: float | None = None,
) -> list[Rendered]:
    """Render what is stale (everything with `force`), then join the film if it changed, make
    the GIF or WebM copies asked for, and write the gallery page. The stale shots are drawn on
    the Dask scheduler that `cluster` (--cluster), $DTFILM_CLUSTER or film.yaml's `scheduler:`
    names, if any (dtfilm.render.cluster.cluster_address); else here, by `jobs` processes."""
    overrides = dict(overrides or {})
    plan = make_plan(chapter_ids, quality, out_dir, overrides, theme)
    film_titles(plan.film, overrides)  # (the gallery's, at the end: a template error before a frame is drawn)
    address = cluster_address(cluster, plan.film.scheduler)  # (checked even when nothing is stale)
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
        ahead = _film_sound_ahead(plan)
        # the other chapters, loaded in a forked process (or on a thread) while this one plans and draws
        whole = functools.partial(film_chapters, plan, overrides, theme)
        # Named chapters all fresh: no chapter the film shows changed, so the film is not looked
        # at (loading every other chapter to learn so took most of a no-op's second of CPU)
        film_too = not plan.film_is_named_part or bool(plan.stale)
        try:
            with forked(whole) if plan.film_is_named_part and film_too else contextlib.nullcontext(whole) as every:
                results = _render_stale(plan, overrides, plan.theme, jobs, force, address, ahead, cluster_wait_seconds)
                film = _join_film(plan, every, ahead) if film_too else None
        finally:
            if ahead is not None:
                ahead.close()
        if film is not None:
            count = len(plan.film.chapters)
            print(f"{_shown(film)}: {counted(count, 'chapter')} joined, with chapter markers")
        _write_formats(plan, formats)
        gallery = write_gallery(plan.out_dir, plan.film, plan.manifest, overrides)
        if gallery is not None:
            print(f"{_shown(gallery)}: the gallery of every rendered chapter")
    return results


def _film_sound_ahead(plan: Plan) -> FilmSoundAhead | None:
    """For a render of the whole film with something to draw: the film's sound, encoded as its
    chapters are joined (dtfilm.render.film_sound), the fresh ones at once."""
    film_ids = list(plan.film.chapters)
    if plan.film_is_named_part or not plan.stale:
        return None

    folder = cache_folder(plan.out_dir)
    clips = {i: plan.out_dir / f"{i}.mp4" for i in film_ids}
    sound = functools.partial(stored_sound, folder)
    ahead = FilmSoundAhead(film_ids, clips, sound, plan.out_dir / "film.mp4", folder)
    for chapter in plan.chapters:
        if not plan.reasons[chapter.id]:
            ahead.fresh(chapter.id)
    return ahead


def _write_formats(plan: Plan, formats: tuple[str, ...]) -> None:
    """GIF and WebM copies of each chapter, made again only when its MP4 is newer: those asked
    for, and those a render made before (a copy left older than its clip is one no longer showing it)."""
    for chapter in plan.chapters:
        movie = plan.out_dir / f"{chapter.id}.mp4"
        for fmt in FORMATS:
            target = plan.out_dir / f"{chapter.id}.{fmt}"
            if fmt not in formats and not target.is_file():
                continue
            if target.is_file() and target.stat().st_mtime >= movie.stat().st_mtime:
                continue
            if fmt == "gif":
                size, width, fps = write_gif(movie, target)
                print(f"{_shown(target)}: {size / 1e6:.1f} MB ({width} px wide, {fps} frames a second)")
            else:
                size = write_webm(movie, target)
                print(f"{_shown(target)}: {size / 1e6:.1f} MB (VP9)")


def status_lines(
    quality: str,
    out_dir: Path | None,
    overrides: dict[str, Any] | None,
    theme: str | None,
    played: bool = False,
    verify: bool = False,
    chapter_ids: list[str] | None = None,
) -> list[str]:
    """Every chapter, fresh or stale and why, and under a stale one the shots a render would
    draw (dtfilm.render.shot_status): from the storyboard alone (no manim import), or `played`, from a
    dry run of each stale chapter. With `verify`, every output's digest and every cached clip's
    of the shots rendered is checked (else sizes, and digests where times changed)."""
    plan = make_plan(chapter_ids or [], quality, out_dir, overrides, theme, verify)
    lines = []
    for chapter in plan.chapters:
        reasons = plan.reasons[chapter.id]
        lines.append(f"{chapter.id:<10} {'stale: ' + '; '.join(reasons) if reasons else 'fresh'}")
        if reasons and _reusable(plan, chapter, force=False):  # (else every shot is drawn, as its line says)
            entry = plan.manifest["chapters"].get(chapter.id)
            renumbered = _numbers_changed(plan, chapter)
            lines += shot_lines(plan, chapter, entry, renumbered, played, overrides or {}, _what_changed(plan, chapter))
    if plan.film_is_named_part:  # (the film's line needs every chapter)
        return lines
    film = plan.manifest["film"]
    keys = [plan.keys[c.id] for c in plan.chapters]
    film_changed = film_reasons(plan.manifest, plan.out_dir, verify) if film.get("key") else []
    if film.get("key") == film_key(keys) and not film_changed:
        lines.append(f"{'film':<10} fresh")
    else:
        lines.append(f"{'film':<10} stale: {'; '.join(film_changed) or 'joined again after the chapters'}")
    if verify:
        lines += _cache_lines(plan)
    stale = {c for c, why in plan.reasons.items() if why}
    lines += _copy_lines(plan, stale)
    title = film_titles(plan.film)[0].text  # (the deck's, as `dtfilm slides` writes it)
    lines += derived_lines(plan.root, plan.out_dir, plan.manifest, title, plan.film.theme, stale, verify)
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


def _copy_lines(plan: Plan, stale: set[str]) -> list[str]:
    """The GIF and WebM copies that no longer show their chapter's clip (older than it, or of a
    chapter a render draws again): `dtfilm render` makes them again at its end."""
    lines = []
    for chapter in plan.chapters:
        movie = plan.out_dir / f"{chapter.id}.mp4"
        for fmt in FORMATS:
            copy = plan.out_dir / f"{chapter.id}.{fmt}"
            if not copy.is_file():
                continue
            older = movie.is_file() and copy.stat().st_mtime < movie.stat().st_mtime
            if older or chapter.id in stale:
                why = f"{chapter.id} will be rendered again" if chapter.id in stale else "older than its clip"
                lines.append(f"{fmt:<10} {copy.name}: stale: {why}; `dtfilm render` makes it again at its end")
    return lines


def _srt_record(manifest: dict[str, Any], chapter_id: str) -> Any:
    """The manifest's record of a chapter's .srt (None when it has none)."""
    files = manifest["chapters"].get(chapter_id, {}).get("files")
    return files.get(f"{chapter_id}.srt") if isinstance(files, dict) else None


def film_reasons(manifest: dict[str, Any], out_dir: Path, verify: bool = False) -> list[str]:
    """Why the film's files are not what its last join wrote (empty when they are)."""
    files = manifest["film"].get("files")
    if not isinstance(files, dict):
        return [] if (out_dir / "film.mp4").is_file() else ["missing film.mp4"]
    return files_reasons(files, list(files), out_dir, verify)


def _cache_lines(plan: Plan) -> list[str]:
    """Under `status --verify`: the cached clips of the shots last rendered that no longer match
    their entries (a render draws them again when it needs them)."""
    bad = []
    for chapter in plan.chapters:
        for shot in plan.manifest["chapters"].get(chapter.id, {}).get("shots", []):
            key = shot.get("key", "")
            if clip_path(plan.out_dir, key).is_file() and cached(plan.out_dir, key, verify=True) is None:
                bad.append(f"{chapter.id}:{shot.get('beat')}")
    if not bad:
        return []
    return [f"{'cache':<10} the cached clips of {', '.join(bad)} do not match their records: drawn again when needed"]


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
