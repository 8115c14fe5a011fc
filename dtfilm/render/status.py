"""`dtfilm status`: every chapter fresh or stale and why, the shots a render would draw, and the rest of renders/."""

from __future__ import annotations

from dtfilm.render.cache import RenderWork, film_key
from dtfilm.render.derived import derived_lines
from dtfilm.render.film_join import film_reasons
from dtfilm.render.job import RenderRequest
from dtfilm.render.shot_cache import cached, clip_path
from dtfilm.render.shot_status import shot_lines
from dtfilm.render.sidecars import FORMATS
from dtfilm.render.stale import cache_may_serve, find_work, numbers_changed_since_render, what_changed
from dtfilm.storyboard.film import film_titles
from dtfilm.system.report_schema import read_report


def status_lines(
    request: RenderRequest,
    played: bool = False,
    verify: bool = False,
    chapter_ids: list[str] | None = None,
) -> list[str]:
    """Every chapter, fresh or stale and why, and under a stale one the shots a render would
    draw (dtfilm.render.shot_status): from the storyboard alone (no manim import), or `played`, from a
    dry run of each stale chapter. With `verify`, every output's digest and every cached clip's
    of the shots rendered is checked (else sizes, and digests where times changed)."""
    work = find_work(chapter_ids or [], request, verify)
    lines = []
    for chapter in work.chapters:
        reasons = work.reasons[chapter.id]
        lines.append(f"{chapter.id:<10} {'stale: ' + '; '.join(reasons) if reasons else 'fresh'}")
        if reasons and cache_may_serve(work, chapter, force=False):  # (else every shot is drawn, as its line says)
            entry = work.manifest["chapters"].get(chapter.id)
            renumbered = numbers_changed_since_render(work, chapter)
            lines += shot_lines(work, chapter, entry, renumbered, played, what_changed(work, chapter))
    if work.film_is_named_part:  # (the film's line needs every chapter)
        return lines
    film = work.manifest["film"]
    keys = [work.keys[c.id] for c in work.chapters]
    film_changed = film_reasons(work.manifest, work.job.out_dir, verify) if film.get("key") else []
    if film.get("key") == film_key(keys) and not film_changed:
        lines.append(f"{'film':<10} fresh")
    else:
        lines.append(f"{'film':<10} stale: {'; '.join(film_changed) or 'joined again after the chapters'}")
    if verify:
        lines += _cache_lines(work)
    stale = {c for c, why in work.reasons.items() if why}
    lines += _copy_lines(work, stale)
    title = film_titles(work.film)[0].text  # (the deck's, as `dtfilm slides` writes it)
    lines += derived_lines(work.job.root, work.job.out_dir, work.manifest, title, work.film.theme, stale, verify)
    report = read_report(work.job.out_dir)
    if report is not None:
        verdicts = [row["verdict"] for row in report["rows"]]
        summary = (
            "every row agrees or is explained" if report["all_agree"] else f"{verdicts.count('DIFFERS')} rows DIFFER"
        )
        lines.append(
            f"{'validate':<10} {report['measured_at']}: {len(verdicts)} rows on {report['ranks']} ranks, {summary}"
        )
    return lines


def _copy_lines(work: RenderWork, stale: set[str]) -> list[str]:
    """The GIF and WebM copies that no longer show their chapter's clip (older than it, or of a
    chapter a render draws again): `dtfilm render` makes them again at its end."""
    lines = []
    for chapter in work.chapters:
        movie = work.job.out_dir / f"{chapter.id}.mp4"
        for fmt in FORMATS:
            copy = work.job.out_dir / f"{chapter.id}.{fmt}"
            if not copy.is_file():
                continue
            older = movie.is_file() and copy.stat().st_mtime < movie.stat().st_mtime
            if older or chapter.id in stale:
                why = f"{chapter.id} will be rendered again" if chapter.id in stale else "older than its clip"
                lines.append(f"{fmt:<10} {copy.name}: stale: {why}; `dtfilm render` makes it again at its end")
    return lines


def _cache_lines(work: RenderWork) -> list[str]:
    """Under `status --verify`: the cached clips of the shots last rendered that no longer match
    their entries (a render draws them again when it needs them)."""
    bad = []
    for chapter in work.chapters:
        for shot in work.manifest["chapters"].get(chapter.id, {}).get("shots", []):
            key = shot.get("key", "")
            if clip_path(work.job.out_dir, key).is_file() and cached(work.job.out_dir, key, verify=True) is None:
                bad.append(f"{chapter.id}:{shot.get('beat')}")
    if not bad:
        return []
    return [f"{'cache':<10} the cached clips of {', '.join(bad)} do not match their records: drawn again when needed"]
