"""Run a chapter's scene without rendering frames, and look at what it puts on screen."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from manim import Scene, tempconfig

from dtfilm.engine.renderer import FilmRenderer
from dtfilm.onscreen.drawn import DrawnValues
from dtfilm.onscreen.layout import LayoutCheck, texts_on_screen
from dtfilm.phrases import Phrase
from dtfilm.scene import ChapterScene
from dtfilm.scene_brief import chapter_brief
from dtfilm.shots.plays import SHOTS
from dtfilm.storyboard import Chapter, load_chapter


@dataclass
class TextLog:
    """Every distinct text shown, with the Phrase behind it and the beat it appeared in."""

    shown: dict[tuple[str, str], tuple[str, Phrase | None]] = field(default_factory=dict)

    def __call__(self, scene: Scene, beat: str) -> None:
        for text in texts_on_screen(scene):
            phrase = getattr(text, "phrase", None)
            key = (text.original_text, repr(phrase))
            self.shown.setdefault(key, (beat, phrase))


@dataclass
class Inspection:
    layout: LayoutCheck
    texts: TextLog
    drawn: DrawnValues  # the numbers shown at each animation's end and moments inside it
    duration: float
    shot_times: list[tuple[str, float, float]]
    drawn_times: list[tuple[str, str, float]]  # beat, kind, seconds of animation before any hold


def inspect_chapter(
    chapter_id: str, root: Path, overrides: dict[str, Any] | None = None, theme: str | None = None
) -> Inspection:
    """Play the chapter in a dry run with the layout check and the text log attached."""
    return inspect_loaded(load_chapter(chapter_id, overrides, root), theme)


def inspect_loaded(chapter: Chapter, theme: str | None = None) -> Inspection:
    """`inspect_chapter` for a chapter already loaded."""
    layout, texts, drawn = LayoutCheck(), TextLog(), DrawnValues()
    scene = dry_run(chapter, theme, [layout, texts, drawn], moments=[drawn, layout.moment])
    return Inspection(layout, texts, drawn, scene.time, scene.shot_times, scene.drawn_times)


def dry_run(
    chapter: Chapter,
    theme: str | None,
    observers: list[Any],
    digests: bool = False,
    frame_rate: int = 15,
    moments: list[Any] | None = None,
    chapter_parts: dict[str, str] | None = None,
    **hooks: Any,
) -> ChapterScene:
    """Play a chapter without frames; `observers` see the scene after each animation, `moments`
    at a few moments inside each too, and with `digests` each shot records what it draws (the
    shot cache's keys; `chapter_parts`, the chapter key's, are its probes'). Its clock counts
    whole frames at `frame_rate`, as a render at that rate does. `hooks` are more of the brief's
    fields (a check reusing kept shots: start_from, keep_start, rest_known)."""
    brief = chapter_brief(
        chapter,
        SHOTS,
        theme,
        observers=tuple(observers),
        moment_observers=tuple(moments or ()),
        digests=digests,
        chapter_parts=chapter_parts or {},
        **hooks,
    )
    with (
        tempfile.TemporaryDirectory() as media,
        tempconfig(
            {
                "dry_run": True,
                "media_dir": media,
                "verbosity": "ERROR",
                "progress_bar": "none",
                "disable_caching": True,
                "pixel_height": 480,
                "pixel_width": 854,
                "frame_rate": frame_rate,
            }
        ),
    ):
        # A dry run needs the scene's state after each animation, never its pixels or the
        # frames in between: jump to each animation's end.
        scene = ChapterScene(brief, renderer=FilmRenderer(skip_animations=True, pixels_when_skipped=False))
        scene.render()
    return scene
