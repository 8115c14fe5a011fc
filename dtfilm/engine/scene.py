"""FilmScene: the Manim Scene every dtfilm chapter is, drawn by FilmRenderer inside drawing()."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from manim import Scene

from dtfilm.engine.drawing import drawing
from dtfilm.engine.layers import StillLayer
from dtfilm.engine.renderer import FilmRenderer


class FilmScene(Scene):
    """A Scene drawn by a FilmRenderer (a new one unless one is given: `manim -ql scenes/dp.py
    DataParallel` constructs the scene itself), rendered inside `drawing()`, each animation's
    still furniture drawn once (StillLayer). A subclass may observe moments inside skipped
    animations (`moments`, `at_moment`)."""

    renderer: FilmRenderer

    def __init__(self, renderer: FilmRenderer | None = None, **kwargs: Any) -> None:
        if renderer is None:
            renderer = FilmRenderer(skip_animations=kwargs.get("skip_animations", False))
        super().__init__(renderer=renderer, **kwargs)

    def render(self, preview: bool = False) -> bool:
        with drawing():
            return super().render(preview)

    def moments(self) -> Sequence[float]:
        """Shares of a skipped animation's run time at which to stop and call `at_moment`
        before it jumps to its end (none here)."""
        return ()

    def at_moment(self) -> None:
        """Called at each of `moments` inside a skipped animation."""

    def get_moving_and_static_mobjects(self, animations: Any) -> tuple[list[Any], list[Any]]:
        """Manim's split of the screen into what the animations move and what stands still, which
        only drawing reads (the still image, each frame's moving layer); none for an animation
        skipped without pixels (a dry run's every one): 5% of a cold `check`'s CPU."""
        renderer = self.renderer
        if renderer.skip_animations and not renderer.pixels_when_skipped:
            return [], []
        return super().get_moving_and_static_mobjects(animations)

    def play_internal(self, skip_rendering: bool = False) -> None:
        renderer = self.renderer
        shares = self.moments() if renderer.skip_animations else ()
        if shares:
            # A skipped animation jumps to its end; step through the moments first (the
            # updaters' time adds up to the same run time, so the end is the same).
            run_time = self.get_run_time(self.animations)
            for share in shares:
                self.update_to_time(share * run_time)
                self.moment_share = share  # (how far into the animation an observer looks)
                self.at_moment()
        drawn = not (skip_rendering or renderer.skip_animations or self.skip_animation_preview)
        renderer.still_layer = StillLayer.begin(self) if drawn else None
        try:
            super().play_internal(skip_rendering)
        finally:
            renderer.still_layer = None
