"""Sphinx: `extensions = ["dtfilm.sphinx"]`, then `.. dtfilm:: dp` (or, with MyST,
```` ```{dtfilm} dp ``` ````) embeds a rendered chapter: its poster, its clip, its subtitles.

- The film is found from `dtfilm_project = "PATH"` in conf.py (relative to conf.py), or by
  walking up from the docs' source folder to a `storyboard/film.yaml`.
- The renders come from that project's `renders/`, or from `dtfilm_renders` if set.
- The clip, poster, subtitles and numbers sidecar are copied into the build (`_dtfilm/`), and
  each page links them relative to itself, wherever it sits (html and dirhtml builders).
- A missing or stale clip is a warning with the page and line (so `-W` fails the build);
  `dtfilm_render = True` renders it first.

Unlike Manim's `.. manim::` directive, nothing renders at build time unless asked, and the
player carries a poster, a subtitle track and the clip's own size, responsive to the column.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.osutil import relative_uri

from dtfilm.cache import clip_stale_reasons
from dtfilm.embed import FILES, clip_size, video_tag
from dtfilm.errors import DtfilmError

logger = logging.getLogger(__name__)
BUILD_FOLDER = "_dtfilm"


def project_root(app: Sphinx) -> Path:
    """The film project: conf.py's `dtfilm_project`, else the nearest parent of the docs' source
    folder that holds storyboard/film.yaml."""
    from dtfilm.storyboard.load import find_root

    configured = app.config.dtfilm_project
    if configured:
        root = (Path(app.confdir) / configured).resolve()
        if not (root / "storyboard" / "film.yaml").is_file():
            raise DtfilmError(f"dtfilm_project = {configured!r}: no storyboard/film.yaml in {root}")
        return root
    return find_root(Path(app.srcdir))


def renders_folder(app: Sphinx, root: Path) -> Path:
    configured = app.config.dtfilm_renders
    return (Path(app.confdir) / configured).resolve() if configured else root / "renders"


class DtfilmDirective(SphinxDirective):
    """`.. dtfilm:: CHAPTER`: the chapter's clip with its poster and subtitles."""

    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        from dtfilm.cache import read_manifest
        from dtfilm.storyboard.load import chapter_titles, load_film

        chapter_id = self.arguments[0]
        app = self.env.app
        try:
            root = project_root(app)
            renders = renders_folder(app, root)
            film = load_film(root / "storyboard" / "film.yaml")
        except DtfilmError as error:
            logger.warning("dtfilm: %s", error.line(), location=self.get_location())
            return []
        titles = chapter_titles(film)
        if chapter_id not in titles:
            logger.warning(
                "dtfilm: no chapter %r; valid: %s", chapter_id, ", ".join(titles), location=self.get_location()
            )
            return []
        reasons = self._fresh(root, renders, chapter_id)
        clip = renders / f"{chapter_id}.mp4"
        if not clip.is_file():
            logger.warning(
                "dtfilm: %s is not rendered (dtfilm render %s, or dtfilm_render = True in conf.py)",
                clip,
                chapter_id,
                location=self.get_location(),
            )
            return []
        if reasons:
            logger.warning(
                "dtfilm: %s is stale: %s (dtfilm render %s)",
                clip,
                "; ".join(reasons),
                chapter_id,
                location=self.get_location(),
            )
        used: dict[str, str] = self.env.dtfilm_chapters  # type: ignore[attr-defined]
        used[chapter_id] = str(renders)
        page = app.builder.get_target_uri(self.env.docname)
        base = relative_uri(page, BUILD_FOLDER + "/").rstrip("/") or "."
        size = clip_size(read_manifest(renders)["chapters"].get(chapter_id))
        tag = video_tag(chapter_id, titles[chapter_id], base, size=size)
        return [nodes.raw("", f'<div class="dtfilm">\n{tag}\n</div>', format="html")]

    def _fresh(self, root: Path, renders: Path, chapter_id: str) -> list[str]:
        """Stale reasons; with `dtfilm_render = True`, renders a missing or stale clip first."""
        try:
            reasons = clip_stale_reasons(root, renders, chapter_id)
        except DtfilmError as error:
            return [error.line()]
        if reasons and self.config.dtfilm_render:
            done = subprocess.run(
                [sys.executable, "-m", "dtfilm", "render", chapter_id, "--out", str(renders)],
                cwd=root,
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                logger.warning("dtfilm: render %s failed: %s", chapter_id, done.stderr.strip())
            reasons = clip_stale_reasons(root, renders, chapter_id)
        return reasons


def _init_env(app: Sphinx, env: Any, docnames: list[str]) -> None:
    if not hasattr(env, "dtfilm_chapters"):
        env.dtfilm_chapters = {}


def _merge(app: Sphinx, env: Any, docnames: set[str], other: Any) -> None:
    env.dtfilm_chapters.update(getattr(other, "dtfilm_chapters", {}))


def copy_files(app: Sphinx, exception: Exception | None) -> None:
    """Every embedded chapter's clip, poster, subtitles and numbers, into the build's _dtfilm/."""
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / BUILD_FOLDER
    target.mkdir(parents=True, exist_ok=True)
    for chapter_id, renders in getattr(app.env, "dtfilm_chapters", {}).items():
        for ext in FILES:
            source = Path(renders) / f"{chapter_id}.{ext}"
            if source.is_file():
                shutil.copyfile(source, target / source.name)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("dtfilm_project", None, "env")
    app.add_config_value("dtfilm_renders", None, "env")
    app.add_config_value("dtfilm_render", False, "env")
    app.add_directive("dtfilm", DtfilmDirective)
    app.connect("env-before-read-docs", _init_env)
    app.connect("env-merge-info", _merge)
    app.connect("build-finished", copy_files)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
