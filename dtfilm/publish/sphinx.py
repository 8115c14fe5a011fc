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

from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.osutil import relative_uri

from dtfilm.errors import DtfilmError
from dtfilm.publish.docs_embed import BUILD_FOLDER, copy_clip_files, page_player
from dtfilm.storyboard.film import find_root

logger = logging.getLogger(__name__)


def project_root(app: Sphinx) -> Path:
    """The film project: conf.py's `dtfilm_project`, else the nearest parent of the docs' source
    folder that holds storyboard/film.yaml."""
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
        chapter_id = self.arguments[0]
        app = self.env.app
        try:
            root = project_root(app)
        except DtfilmError as error:
            logger.warning("dtfilm: %s", error.line(), location=self.get_location())
            return []
        renders = renders_folder(app, root)
        page = app.builder.get_target_uri(self.env.docname)
        base = relative_uri(page, BUILD_FOLDER + "/").rstrip("/") or "."
        player = page_player(root, renders, chapter_id, base, render_stale=self.config.dtfilm_render)
        for warning in player.warnings:
            logger.warning("dtfilm: %s", warning, location=self.get_location())
        if not player.html:
            return []
        used: dict[str, str] = self.env.dtfilm_chapters  # type: ignore[attr-defined]
        used[chapter_id] = str(renders)
        return [nodes.raw("", player.html, format="html")]


def _init_env(app: Sphinx, env: Any, docnames: list[str]) -> None:
    if not hasattr(env, "dtfilm_chapters"):
        env.dtfilm_chapters = {}


def _merge(app: Sphinx, env: Any, docnames: set[str], other: Any) -> None:
    env.dtfilm_chapters.update(getattr(other, "dtfilm_chapters", {}))


def copy_files(app: Sphinx, exception: Exception | None) -> None:
    """Every embedded chapter's clip, poster, subtitles and numbers, into the build's _dtfilm/."""
    if exception is None and app.builder.format == "html":
        chapters = getattr(app.env, "dtfilm_chapters", {})
        for warning in copy_clip_files(((c, Path(r)) for c, r in chapters.items()), Path(app.outdir)):
            logger.warning("dtfilm: %s", warning)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("dtfilm_project", None, "env")
    app.add_config_value("dtfilm_renders", None, "env")
    app.add_config_value("dtfilm_render", False, "env")
    app.add_directive("dtfilm", DtfilmDirective)
    app.connect("env-before-read-docs", _init_env)
    app.connect("env-merge-info", _merge)
    app.connect("build-finished", copy_files)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
