"""FilmRenderer: Manim's Cairo renderer, with the few controls dtfilm's scenes draw with.

dtfilm draws some shots and plays others without frames (the shot cache's stale shots, a shot's
window, a still), and a dry run plays a whole chapter without any. Manim's renderer decides per
animation from private state (`_original_skipping_status`, the section's `skip_animations`); this
subclass sets that state behind `skip_frames`, keeps the clock of a skipped animation as drawing it
would, draws frames from the still layer (dtfilm.engine.layers) and, for a scene that never needs
the pixels of a skipped animation, draws none. Its camera builds each outline's Cairo path once
(FilmCamera). What a render reads back from Manim's file writer (the movie, the sections' index)
is asked of it here too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from manim import config
from manim.renderer.cairo_renderer import CairoRenderer

from dtfilm.engine.layers import StillLayer
from dtfilm.engine.paths import FilmCamera


class FilmRenderer(CairoRenderer):
    """Manim's CairoRenderer with FilmCamera. `skip_animations`: every animation plays without
    frames until `skip_frames(False)`; `pixels_when_skipped=False`: a skipped animation draws no
    pixels either (nothing reads them: a dry run, a render of some shots)."""

    def __init__(self, skip_animations: bool = False, pixels_when_skipped: bool = True) -> None:
        super().__init__(camera_class=FilmCamera, skip_animations=skip_animations)
        self.pixels_when_skipped = pixels_when_skipped
        self.still_layer: StillLayer | None = None  # the playing animation's (FilmScene begins it)

    # -- what dtfilm's scenes ask ---------------------------------------------------------------
    def skip_frames(self, skip: bool) -> None:
        """Play the animations from the next on without frames (True) or with them (False); in a
        section begun with skip_animations every animation is skipped, whatever this says."""
        self._original_skipping_status = skip

    def draw_no_pixels_when_skipped(self) -> None:
        """From now on a skipped animation draws no pixels (its state still changes)."""
        self.pixels_when_skipped = False

    def set_clock(self, seconds: float) -> None:
        """Move the scene's clock (a scene resumed from a state kept at a shot's start)."""
        self.time = seconds

    def drop_empty_section(self) -> None:
        """The current section has no clip when none of its animations drew frames (a window
        in which no animation starts), rather than an empty one."""
        section = self.file_writer.sections[-1]
        if not section.get_clean_partial_movie_files():
            section.video = None

    def movie_path(self) -> Path:
        """The movie Manim wrote for the scene."""
        return Path(self.file_writer.movie_file_path)

    def frame_now(self, scene: Any) -> Any:
        """The scene as it stands, drawn as one frame (an RGBA array), even inside a skipped section
        whose animations draw no pixels: dtfilm preview's frame, at the moment its shot shows all."""
        self.pixels_when_skipped = True
        super().update_frame(scene, ignore_skipping=True)
        return self.get_frame()

    def section_index(self) -> Path:
        """The JSON index of the sections' clips Manim wrote (with `save_sections`)."""
        return Path(self.file_writer.output_plan.section_index)

    # -- Manim's renderer, overridden ------------------------------------------------------------
    def play(self, scene: Any, *args: Any, **kwargs: Any) -> None:
        before = self.time
        super().play(scene, *args, **kwargs)
        if self.skip_animations:  # skipped: advance the clock as drawing frames would
            self.time = before + drawn_clock(scene)

    def render(self, scene: Any, time: float, moving_mobjects: Any = None) -> None:
        """Manim's: the frame drawn and added. Skipped without pixels (a dry run's every animation),
        neither: Manim's `add_frame` drops a skipped frame, which `get_frame` had copied first."""
        if self.skip_animations and not self.pixels_when_skipped:
            return
        super().render(scene, time, moving_mobjects)

    def update_frame(self, scene: Any, mobjects: Any = None, *args: Any, **kwargs: Any) -> None:
        if self.skip_animations and not self.pixels_when_skipped:
            return
        layer = self.still_layer
        if layer is not None and mobjects is scene.moving_mobjects and not args and not kwargs and layer.draw():
            return
        super().update_frame(scene, mobjects, *args, **kwargs)


def drawn_clock(scene: Any) -> float:
    """How far drawing the last animation's frames moves the clock: Manim counts drawn time in
    whole frames (a wait's rounded down, an animation's up), skipped time exactly. So a shot
    skipped and the same shot drawn reach every moment at the same time, and the shots after
    them draw the same frames (and have the same keys)."""
    dt = 1 / scene.camera.frame_rate
    if scene.is_current_animation_frozen_frame():
        return int(scene.duration / dt) * dt
    clock = 0.0
    for _ in np.arange(0, scene.duration, 1 / config["frame_rate"]):
        clock += dt
    return clock
