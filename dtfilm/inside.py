"""Names read back from renders/ and the caches, checked before they become paths.

A manifest, a probe, a cache entry or a clip's comment is data anyone could have written (a
renders folder restored from a CI cache, downloaded, shared): a name in it is used only when it
has the shape dtfilm writes (a hex digest, a chapter id, a file in the renders folder) and, once
resolved, links followed, still lies inside the folder it is meant to be in.
"""

from __future__ import annotations

import re
from pathlib import Path

# \Z, not $: `$` matches before a trailing newline (chapters: ["memory\n"] passed)
HEX_NAME = re.compile(r"^[0-9a-f]{16,64}\Z")  # a cache key or a content digest, as dtfilm names files
CHAPTER_ID_CHARS = 64  # an id is a file name in storyboard/ and renders/: far below the 255 bytes one may have
# a storyboard's id (dtfilm.storyboard.load checks with it)
CHAPTER_ID = re.compile(rf"^[a-z0-9][a-z0-9_-]{{0,{CHAPTER_ID_CHARS - 1}}}\Z")


def is_hex_name(text: object) -> bool:
    return isinstance(text, str) and HEX_NAME.match(text) is not None


def is_chapter_id(text: object) -> bool:
    return isinstance(text, str) and CHAPTER_ID.match(text) is not None


def within(folder: Path, path: Path) -> bool:
    """Whether `path`, every link followed, lies inside `folder` (also resolved)."""
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):  # (a link loop)
        return False


def inside(folder: Path, relative: object) -> Path | None:
    """`folder / relative` when `relative` is a relative name that stays inside `folder`; else None."""
    if not isinstance(relative, str) or not relative or "\0" in relative or "\\" in relative:
        return None
    if Path(relative).is_absolute() or ".." in Path(relative).parts:
        return None
    path = folder / relative
    return path if within(folder, path) else None
