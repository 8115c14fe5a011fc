"""What the Sphinx directive and the MkDocs plugin share: a page's player for a chapter, with
the warnings it owes (unknown chapter, missing or stale clip), and copying the clips into the
built site. No Sphinx or MkDocs here; each integration only finds the page's base URL and
reports the warnings its own way."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from dtfilm import beneath
from dtfilm.errors import DtfilmError
from dtfilm.render.cache import clip_stale_reasons, read_manifest
from dtfilm.render.embed import FILES, clip_size, video_tag
from dtfilm.storyboard.film import load_film
from dtfilm.storyboard.load import chapter_titles
from dtfilm.system.terminal import for_terminal

BUILD_FOLDER = "_dtfilm"  # where the built site keeps the clips, posters, subtitles and numbers


@dataclass(frozen=True)
class PagePlayer:
    """The HTML to put in the page ("" when there is nothing to show) and what to warn about."""

    html: str
    warnings: list[str] = field(default_factory=list)


def _stale(root: Path, renders: Path, chapter_id: str) -> list[str]:
    """Why the chapter's clip is stale, as the docs build's warnings print it: a reason quotes
    the manifest (read back, not trusted), so with no control character a terminal acts on."""
    try:
        return [for_terminal(reason, keep_newlines=False) for reason in clip_stale_reasons(root, renders, chapter_id)]
    except DtfilmError as error:
        return [error.line()]


def page_player(root: Path, renders: Path, chapter_id: str, base: str, render_stale: bool = False) -> PagePlayer:
    """The player of `chapter_id` for a page that finds the build's clips at `base`;
    `render_stale` renders a missing or stale clip first."""
    try:
        titles = chapter_titles(load_film(root / "storyboard" / "film.yaml"))
    except DtfilmError as error:
        return PagePlayer("", [error.line()])
    if chapter_id not in titles:
        return PagePlayer("", [f"no chapter {chapter_id!r}; valid: {', '.join(titles)}"])
    warnings = []
    reasons = _stale(root, renders, chapter_id)
    if reasons and render_stale:
        done = subprocess.run(
            [sys.executable, "-m", "dtfilm", "render", chapter_id, "--out", str(renders)],
            cwd=root,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            warnings.append(f"render {chapter_id} failed: {done.stderr.strip()}")
        reasons = _stale(root, renders, chapter_id)
    clip = renders / f"{chapter_id}.mp4"
    if not clip.is_file():
        return PagePlayer("", [*warnings, f"{clip} is not rendered (dtfilm render {chapter_id})"])
    if reasons:
        warnings.append(f"{clip} is stale: {'; '.join(reasons)} (dtfilm render {chapter_id})")
    size = clip_size(read_manifest(renders)["chapters"].get(chapter_id))
    tag = video_tag(chapter_id, titles[chapter_id], base, size=size)
    return PagePlayer(f'<div class="dtfilm">\n{tag}\n</div>', warnings)


# The most a file copied into a site may hold, by kind (docs/security.md): a chapter's clip,
# its poster, subtitles and numbers. Anything larger is not one dtfilm wrote.
COPY_LIMITS_BYTES = {"mp4": 4 * 2**30, "png": 64 * 2**20, "vtt": 4 * 2**20, "numbers.json": 16 * 2**20}


def copy_clip_files(chapters: Iterable[tuple[str, Path]], site: Path) -> list[str]:
    """Each (chapter, renders folder)'s clip, poster, subtitles and numbers into the site's
    BUILD_FOLDER: regular files from inside the renders folder only, opened beneath it with no
    link followed (dtfilm.beneath). A link, a FIFO or an oversized file there is not
    copied: returned as a warning line (a missing one is not: the page warned of it)."""
    target = site / BUILD_FOLDER
    target.mkdir(parents=True, exist_ok=True)
    warnings = []
    for chapter_id, renders in chapters:
        for ext in FILES:
            name = f"{chapter_id}.{ext}"
            try:
                beneath.copy_out(renders, name, target / name, COPY_LIMITS_BYTES[ext])
            except beneath.Refused as refused:
                warnings.append(f"{refused.shown}: {refused.what}; not copied into the site")
            except FileNotFoundError:
                pass
    return warnings
