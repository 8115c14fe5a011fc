"""renders/film.mp4: every chapter's clip joined, with chapter markers and the film's subtitles."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dtfilm.errors import DtfilmError
from dtfilm.render.assemble import stored_sound
from dtfilm.render.cache import ChapterKey, RenderWork, files_reasons, film_key, record_files, write_manifest
from dtfilm.render.film_sound import FilmSoundAhead
from dtfilm.render.film_subtitles import film_vtt, placed_subtitles, recorded_cues, recorded_lines
from dtfilm.render.shot_cache import cache_folder
from dtfilm.render.stale import find_work, shown
from dtfilm.system.atomic import atomic_path, write_text_atomic
from dtfilm.system.records import matches
from dtfilm.system.video import join_with_chapters
from dtfilm.system.webvtt import chapters_vtt

if TYPE_CHECKING:
    import srt


@dataclass(frozen=True)
class FilmChapters:
    """What joining the film needs of all its chapters: their keys and titles, in film order,
    and which of them (not rendered by this run) are stale."""

    keys: dict[str, ChapterKey]
    titles: dict[str, str]
    stale: list[str]


def film_chapters(work: RenderWork) -> FilmChapters | str:
    """Every chapter of the film as `work`'s run finds it, or why the others cannot be loaded
    (flags that the named chapters take and another does not)."""
    named = {c.id for c in work.chapters}
    if work.film_is_named_part:
        try:
            work = find_work([], work.job.request())
        except DtfilmError as error:
            return str(error)
    return FilmChapters(
        {c.id: work.keys[c.id] for c in work.chapters},
        {c.id: c.title.text for c in work.chapters},
        [c.id for c in work.chapters if work.reasons[c.id] and c.id not in named],
    )


def join_film(
    work: RenderWork, every_chapter: Callable[[], FilmChapters | str], ahead: FilmSoundAhead | None = None
) -> Path | None:
    """renders/film.mp4 from every chapter, rebuilt only when a chapter changed. After a run
    of named chapters it is joined too when every other chapter's clip is fresh; otherwise the
    run says that the film is stale, and which chapters it waits for. `every_chapter` gives them
    all as the run found them at its start (film_chapters, loaded while shots drew)."""
    film_ids = list(work.film.chapters)
    whole = every_chapter()
    if isinstance(whole, str):
        film = shown(work.job.out_dir / "film.mp4")
        print(f"{film}: stale; the film's other chapters do not take these flags ({whole})")
        return None
    if whole.stale:
        print(
            f"{shown(work.job.out_dir / 'film.mp4')}: stale until {', '.join(whole.stale)}"
            f" {'is' if len(whole.stale) == 1 else 'are'} rendered too (dtfilm render)"
        )
        return None
    keys = [whole.keys[i] for i in film_ids]
    key = film_key(keys)
    target = work.job.out_dir / "film.mp4"
    if work.manifest["film"].get("key") == key and not film_reasons(work.manifest, work.job.out_dir):
        return None
    said = {i: recorded_cues(work.job.out_dir / f"{i}.srt", _record(work.manifest, i, "srt")) for i in film_ids}
    changed = [f"{i}.srt" for i, cues in said.items() if cues is None]
    if changed:  # (made stale by its digest as the run began: so changed while it ran)
        print(f"{shown(target)}: stale: {', '.join(changed)} changed since rendered (dtfilm render)")
        return None
    # the film it replaces lends its sound only if it is what its join wrote
    previous = target if matches(target, work.manifest["film"].get("files", {}).get("film.mp4")) else None

    parts = [(whole.titles[i], work.job.out_dir / f"{i}.mp4") for i in film_ids]
    encoded_from = functools.partial(stored_sound, cache_folder(work.job.out_dir))
    joining = time.perf_counter()
    encoded = ahead.finished(parts) if ahead is not None else None
    try:
        with atomic_path(target) as temp:
            chapters = join_with_chapters(parts, temp, previous=previous, encoded_from=encoded_from, ahead=encoded)
    finally:
        if encoded is not None:
            encoded.unlink(missing_ok=True)
    joined = time.perf_counter() - joining
    write_text_atomic(work.job.out_dir / "film.chapters.vtt", chapters_vtt(chapters))
    _write_subtitles(work, [(said[i] or [], s, e) for i, (_, s, e) in zip(film_ids, chapters, strict=True)])
    names = ["film.mp4", "film.chapters.vtt", "film.srt", "film.vtt"]
    work.manifest["film"] = {
        "key": key,
        "output": "film.mp4",
        "files": record_files(work.job.out_dir, names, work.manifest["film"].get("files")),
        "join_seconds": round(joined, 2),
        "chapters": [
            {"id": i, "title": t, "start": s, "end": e} for i, (t, s, e) in zip(film_ids, chapters, strict=True)
        ],
    }
    write_manifest(work.job.out_dir, work.manifest)
    return target


def _write_subtitles(work: RenderWork, chapters: list[tuple[list[srt.Subtitle], float, float]]) -> None:
    """film.srt and film.vtt from each chapter's (cues, start, end) in the film, in the film's
    order; each cue where its chapter's .vtt placed it (read back only when that file is what
    the chapter's render wrote)."""
    out = work.job.out_dir
    placed = []
    for chapter_id, (said, start, end) in zip(work.film.chapters, chapters, strict=True):
        lines = recorded_lines(out / f"{chapter_id}.vtt", _record(work.manifest, chapter_id, "vtt"), len(said))
        placed.append((said, lines, start, end))
    subtitles, cue_lines = placed_subtitles(placed)
    write_text_atomic(out / "film.srt", subtitles)
    write_text_atomic(out / "film.vtt", film_vtt(subtitles, cue_lines))


def _record(manifest: dict[str, Any], chapter_id: str, suffix: str) -> Any:
    """The manifest's record of a chapter's .srt or .vtt (None when it has none)."""
    files = manifest["chapters"].get(chapter_id, {}).get("files")
    return files.get(f"{chapter_id}.{suffix}") if isinstance(files, dict) else None


def film_reasons(manifest: dict[str, Any], out_dir: Path, verify: bool = False) -> list[str]:
    """Why the film's files are not what its last join wrote (empty when they are)."""
    files = manifest["film"].get("files")
    if not isinstance(files, dict):
        return [] if (out_dir / "film.mp4").is_file() else ["missing film.mp4"]
    return files_reasons(files, list(files), out_dir, verify)
