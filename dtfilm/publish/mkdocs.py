"""MkDocs: `plugins: [dtfilm]` in mkdocs.yml, then `![dtfilm](dp)` on a page embeds a rendered
chapter: its poster, its clip, its subtitles.

The marker is Markdown's own image syntax with the alt text `dtfilm`, so a page still reads
sensibly where the plugin is not installed. The plugin:
- finds the film from the plugin's `project` option (relative to mkdocs.yml), or by walking up
  from the docs folder to a `storyboard/film.yaml`; the renders come from its `renders/`, or
  from the `renders` option;
- writes the player with paths relative to each page's own URL, with either setting of
  `use_directory_urls` (MkDocs rewrites Markdown links, not raw HTML, so one `--base` cannot
  serve both; the plugin computes each page's);
- copies each embedded chapter's clip, poster, subtitles and numbers into `_dtfilm/`;
- warns (so `mkdocs build --strict` fails) when a clip is missing or stale.
"""

from __future__ import annotations

import logging
import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.config import config_options
from mkdocs.config.base import Config
from mkdocs.plugins import BasePlugin

from dtfilm.errors import DtfilmError
from dtfilm.publish.docs_embed import BUILD_FOLDER, copy_clip_files, page_player
from dtfilm.storyboard.film import find_root

log = logging.getLogger("mkdocs.plugins.dtfilm")
MARKER = re.compile(r"!\[dtfilm\]\(\s*([a-z0-9][a-z0-9_-]*)\s*\)")
# A marker inside a fenced block or a code span is an example of the syntax, shown as written:
# at each place the first alternative that matches wins, so code is consumed whole.
_CODE_OR_MARKER = re.compile(
    r"^[ \t]*(?P<ticks>`{3,}|~{3,}).*?(?:^[ \t]*(?P=ticks)[ \t]*$|\Z)"  # a fenced block
    r"|(?P<span>`+)(?!`).+?(?<!`)(?P=span)(?!`)"  # a code span
    r"|!\[dtfilm\]\(\s*(?P<chapter>[a-z0-9][a-z0-9_-]*)\s*\)",  # MARKER
    re.M | re.S,
)


class DtfilmConfig(Config):
    project = config_options.Optional(config_options.Type(str))
    renders = config_options.Optional(config_options.Type(str))


def page_base(page_url: str) -> str:
    """The folder `_dtfilm/` as a URL relative to a page's URL: "" for the site root's index,
    "guide/deep/" (directory URLs) or "guide/deep/page.html" two folders deep."""
    folder = page_url if page_url.endswith("/") or not page_url else posixpath.dirname(page_url) + "/"
    depth = folder.strip("/").count("/") + 1 if folder.strip("/") else 0
    return "../" * depth + BUILD_FOLDER


class DtfilmPlugin(BasePlugin[DtfilmConfig]):
    def on_config(self, config: Any) -> Any:
        here = Path(config.config_file_path or ".").resolve().parent
        self.root: Path | None = None
        try:
            if self.config.project:
                self.root = (here / self.config.project).resolve()
                if not (self.root / "storyboard" / "film.yaml").is_file():
                    raise DtfilmError(f"project: {self.config.project!r} holds no storyboard/film.yaml")
            else:
                self.root = find_root(Path(config.docs_dir))
        except DtfilmError as error:
            log.warning("dtfilm: %s", error.line())
        base = self.root / "renders" if self.root else here / "renders"
        self.renders = (here / self.config.renders).resolve() if self.config.renders else base
        self.used: set[str] = set()
        return config

    def on_page_markdown(self, markdown: str, page: Any, config: Any, files: Any) -> str:
        def embed(match: re.Match[str]) -> str:
            if match.group("chapter") is None:
                return match.group(0)  # code: left as written
            line = markdown.count("\n", 0, match.start()) + 1  # (named in its warnings, as Sphinx does)
            return self._player(match.group("chapter"), page, line)

        return _CODE_OR_MARKER.sub(embed, markdown)

    def _player(self, chapter_id: str, page: Any, line: int) -> str:
        if self.root is None:
            return ""
        player = page_player(self.root, self.renders, chapter_id, page_base(page.url))
        for warning in player.warnings:
            log.warning("dtfilm: %s:%d: %s", page.file.src_uri, line, warning)
        if player.html:
            self.used.add(chapter_id)
        return f"\n{player.html}\n" if player.html else ""

    def on_post_build(self, config: Any) -> None:
        for warning in copy_clip_files(((c, self.renders) for c in sorted(self.used)), Path(config.site_dir)):
            log.warning("dtfilm: %s", warning)
