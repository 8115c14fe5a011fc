"""`dtfilm status` at shot level: which shots of a stale chapter a render would draw, and why.

Two depths:
- from the storyboard alone (no manim): the shots whose words changed since the last render
  (kind, options, caption, narration, duration), the new ones and the removed ones, compared
  with the shot of the same beat in the manifest. When the chapter's numbers changed, which
  shots show them is known only by playing the chapter, and the lines say so.
- played (`dtfilm status --shots`): the chapter is dry-run as a render would dry-run it
  (dtfilm.render.shot_render.dry_run_keys: no frames, no clips; a changed narration is spoken into the
  audio cache and probes of cached shots noted, as a render would), each shot's real key is
  looked up in the shot cache, and each missing one is named with its reason
  (dtfilm.render.shot_cache.shot_stale_reasons).
"""

from __future__ import annotations

from typing import Any

from dtfilm.render.cache import RenderWork
from dtfilm.render.shot_cache import PART_WORDS, said_parts, shot_stale_reasons
from dtfilm.render.shot_render import dry_run_keys
from dtfilm.storyboard import Chapter

INDENT = "  "


def _last_shots(entry: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    return {shot["beat"]: shot for shot in (entry or {}).get("shots", [])}


def said_changes(chapter: Chapter, entry: dict[str, Any] | None) -> list[tuple[str, list[str]]]:
    """Each shot whose storyboard words differ from its last render's, with what differs; a
    shot not rendered before is new, and one the storyboard no longer has is removed."""
    last = _last_shots(entry)
    changes = []
    for shot in chapter.shots:
        old = last.get(shot.beat, {}).get("parts")
        if old is None:
            changes.append((shot.beat, ["new shot"] if last else ["not drawn yet"]))
            continue
        now = said_parts(shot)
        words = [said for part, said in PART_WORDS if part in now and old.get(part) != now[part]]
        if words:
            changes.append((shot.beat, words))
    beats = {shot.beat for shot in chapter.shots}
    changes += [(beat, ["removed from the storyboard"]) for beat in last if beat not in beats]
    return changes


def played_changes(work: RenderWork, chapter: Chapter, entry: dict[str, Any] | None) -> list[tuple[str, list[str]]]:
    """Each shot whose key the shot cache lacks, found by the dry run a render does first for a
    chapter whose numbers changed (imports manim), with why it changed since its last render."""
    dry_run = dry_run_keys(chapter.id, work.job)
    last = _last_shots(entry)
    changes = []
    for key in (p.key for p in dry_run):
        reasons = shot_stale_reasons(key, last.get(key.beat), work.job.out_dir)
        if reasons:
            changes.append((key.beat, reasons))
    return changes


def shot_lines(
    work: RenderWork,
    chapter: Chapter,
    entry: dict[str, Any] | None,
    renumbered: bool,
    played: bool,
    what_changed: str = "its numbers changed",
) -> list[str]:
    """The lines under a stale chapter whose cached shots may serve: its stale shots as
    `chapter:beat  why`."""
    if played:
        changes = played_changes(work, chapter, entry)
    else:
        changes = said_changes(chapter, entry)
    lines = [f"{INDENT}{chapter.id}:{beat:<12} {'; '.join(why)}" for beat, why in changes]
    if renumbered and not played:
        lines.append(
            f"{INDENT}({what_changed}: the shots that show it are found by playing it;"
            " dtfilm status --shots names them)"
        )
    if played and not changes:
        lines.append(f"{INDENT}every shot is in the shot cache: the chapter is only joined again")
    return lines
