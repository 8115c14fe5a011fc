"""The page's pictures, one a distinct state and theme: drawn once into renders/cache/explore (in
processes, each a batch of the same rack and theme) and reused from there while their facts hold."""

from __future__ import annotations

import json
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from dtfilm.publish.explore.picture import PictureFacts, draw_picture

STILLS_CACHE = Path("cache") / "explore"
THEME_NAMES = ("dark", "light")


def stills(distinct: list[PictureFacts], cache: Path) -> tuple[list[list[str]], list[tuple[PictureFacts, str, str]]]:
    """Each distinct state's picture names, one a theme, and the pictures the cache lacks (facts,
    theme, where to draw it)."""
    names: list[list[str]] = []
    todo: list[tuple[PictureFacts, str, str]] = []
    for facts in distinct:
        row = []
        for theme in THEME_NAMES:
            name = f"{facts.key(theme)}.webp"
            row.append(name)
            if not (cache / name).is_file():
                todo.append((facts, theme, str(cache / name)))
        names.append(row)
    return names, todo


def draw_chunk(root: Path, items: list[tuple[PictureFacts, str, str]]) -> int:
    """Draw a batch of pictures in one process (its parts are built once and reused): labels
    typeset once per project, as renders do, Manim's own files in a folder of this process."""
    # (here: it loads Manim, which only drawing needs)
    from manim import tempconfig

    from dtfilm.engine.drawing import drawing
    from dtfilm.visuals.text import TYPESET_FOLDER, keep_typeset_in

    keep_typeset_in(root / TYPESET_FOLDER)
    with tempfile.TemporaryDirectory(prefix="dtfilm-page-") as media, tempconfig({"media_dir": media}), drawing():
        for facts, theme, target in items:
            draw_picture(facts, theme, Path(target))
    return len(items)


def draw_missing(root: Path, todo: list[tuple[PictureFacts, str, str]], jobs: int) -> None:
    """Pictures grouped so that each process draws states of the same rack and theme."""
    todo.sort(key=lambda item: (item[1], json.dumps(item[0].numbers.get("cluster"), sort_keys=True)))
    if jobs <= 1 or len(todo) < 8:
        draw_chunk(root, todo)
        return
    size = max(4, -(-len(todo) // (jobs * 4)))
    chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        done = 0
        for count in pool.map(draw_chunk, [root] * len(chunks), chunks):
            done += count
            if sys.stderr.isatty():
                print(f"\rpage: {done} of {len(todo)} pictures drawn", end="", file=sys.stderr)
    if sys.stderr.isatty():
        print(file=sys.stderr)
