"""`dtfilm render`: chapters to renders/<chapter>.mp4 with their sidecars, atomically."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dtfilm.errors import DtfilmError, Where
from dtfilm.storyboard import Chapter, find_root, load_chapter, load_film
from dtfilm.video import atomic_path, remux_faststart, write_text_atomic

QUALITIES: dict[str, dict[str, int]] = {
    "preview": {"pixel_width": 854, "pixel_height": 480, "frame_rate": 15},
    "final": {"pixel_width": 1920, "pixel_height": 1080, "frame_rate": 60},
}


@dataclass(frozen=True)
class Rendered:
    chapter: str
    path: Path
    film_seconds: float
    wall_seconds: float


def numbers_sidecar(chapter: Chapter) -> dict[str, Any]:
    """Every input and output of the cost model behind a clip, sweeps included."""
    return {
        "chapter": chapter.id,
        "title": chapter.title,
        "overrides": dict(chapter.overrides),
        "numbers": chapter.numbers.data,
        "sweeps": {
            shot.beat: [{"overrides": dict(step.overrides), "numbers": step.data} for step in shot.steps]
            for shot in chapter.shots
            if shot.steps
        },
    }


def render_chapter(chapter: Chapter, root: Path, quality: str, out_dir: Path, theme: str | None = None) -> Rendered:
    """Render one loaded chapter. Outputs appear only once complete (temp file, rename)."""
    from manim import tempconfig

    from dtfilm.scene import chapter_scene_class

    started = time.perf_counter()
    settings = {
        **QUALITIES[quality],
        "disable_caching": True,  # dtfilm caches whole chapters (see README); manim's own is off
        "verbosity": "WARNING",
        "progress_bar": "display" if sys.stderr.isatty() else "none",
    }
    with tempfile.TemporaryDirectory(prefix=f"dtfilm-{chapter.id}-") as media:
        with tempconfig({**settings, "media_dir": media}):
            cls = chapter_scene_class(chapter.id, root, dict(chapter.overrides), theme)
            scene = cls()
            scene.render()
            movie = Path(scene.renderer.file_writer.movie_file_path)
        target = out_dir / f"{chapter.id}.mp4"
        with atomic_path(target) as temp:
            remux_faststart(movie, temp)
        subtitles = movie.with_suffix(".srt")
        if subtitles.is_file():
            with atomic_path(out_dir / f"{chapter.id}.srt") as temp:
                shutil.copyfile(subtitles, temp)
    write_text_atomic(out_dir / f"{chapter.id}.numbers.json", json.dumps(numbers_sidecar(chapter), indent=2))
    return Rendered(chapter.id, target, scene.time, time.perf_counter() - started)


def render_chapters(
    chapter_ids: list[str],
    quality: str = "preview",
    out_dir: Path | None = None,
    overrides: dict[str, Any] | None = None,
    theme: str | None = None,
) -> list[Rendered]:
    """Load and check every chapter first, so bad input stops before any frame is drawn."""
    root = find_root()
    film = load_film(root / "storyboard" / "film.yaml")
    ids = chapter_ids or list(film.chapters)
    for chapter_id in ids:
        if chapter_id not in film.chapters:
            raise DtfilmError(
                f"no chapter {chapter_id!r} in the film; valid: {', '.join(film.chapters)}",
                Where("storyboard/film.yaml"),
                "chapters",
            )
    chapters = [load_chapter(chapter_id, overrides, root) for chapter_id in ids]
    out = out_dir or root / "renders"
    results = []
    for chapter in chapters:
        for warning in chapter.warnings:
            print(f"dtfilm: warning: {chapter.id}: {warning}", file=sys.stderr)
        result = render_chapter(chapter, root, quality, out, theme)
        print(
            f"{_shown(result.path)}: {result.film_seconds:.1f} s of film at {quality} quality,"
            f" rendered in {result.wall_seconds:.1f} s"
        )
        results.append(result)
    return results


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
