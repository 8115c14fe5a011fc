"""What a run finds before it draws: every chapter loaded, checked and keyed, and why each is stale."""

from __future__ import annotations

from pathlib import Path

from dtfilm.errors import DtfilmError, Where, did_you_mean
from dtfilm.render.cache import RenderWork, chapter_key, film_changes, read_manifest, stale_reasons
from dtfilm.render.job import RenderRequest
from dtfilm.render.shot_cache import NUMBER_PARTS, numbers_changed
from dtfilm.storyboard import Chapter, find_root, load_chapter, load_film
from dtfilm.voice.track import check_speakable


def find_work(chapter_ids: list[str], request: RenderRequest, verify: bool = False) -> RenderWork:
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
    chapters = [load_chapter(chapter_id, request.overrides, root) for chapter_id in ids]
    for chapter in chapters:  # (else a render refuses it only when it joins, after drawing)
        check_speakable(chapter, chapter.film.voice)
    job = request.job(root, film)
    manifest = read_manifest(job.out_dir)
    keys = {c.id: chapter_key(c, job.quality, job.theme) for c in chapters}
    reasons = {c.id: stale_reasons(keys[c.id], manifest, job.out_dir, verify) for c in chapters}
    return RenderWork(film, job, chapters, keys, reasons, manifest)


def cache_may_serve(work: RenderWork, chapter: Chapter, force: bool) -> bool:
    """Whether any cached shot may serve: a chapter rendered before at this quality, theme and
    code (each in every shot's key) can keep the shots whose keys did not change."""
    entry = work.manifest["chapters"].get(chapter.id)
    if force or entry is None:
        return False
    old, new = entry.get("parts", {}), work.keys[chapter.id].parts
    return all(old.get(part) == new[part] for part in ("quality", "theme", "code"))


def numbers_changed_since_render(work: RenderWork, chapter: Chapter) -> bool:
    """Whether what a chapter computes its pictures from changed since its last render."""
    old = work.manifest["chapters"].get(chapter.id, {}).get("parts", {})
    return numbers_changed(old, work.keys[chapter.id].parts)


def what_changed(work: RenderWork, chapter: Chapter) -> str:
    """What changed of what a chapter's pictures are computed from, in words: the film's title
    alone is not "its numbers"."""
    entry = work.manifest["chapters"].get(chapter.id, {})
    old, key = entry.get("parts", {}), work.keys[chapter.id]
    changed = {part for part in NUMBER_PARTS if old.get(part) != key.parts[part]}
    if changed == {"film"}:
        return film_changes(entry.get("film"), key.film, values=False)
    return "its numbers changed"


def shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
