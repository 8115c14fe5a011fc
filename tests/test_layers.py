"""Still furniture drawn once per animation (dtfilm.engine.layers): every frame is the frame
Manim draws, pixel for pixel, whether a moving piece passes clear of the still ones, comes over
one, or counts a label's glyphs anew on every frame."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from manim import DOWN, LEFT, RIGHT, UP, Circle, Rectangle, Square, VGroup, tempconfig

from dtfilm.engine import layers
from dtfilm.engine.layers import StillLayer
from dtfilm.engine.scene import FilmScene
from dtfilm.phrases import Fact, Phrase
from dtfilm.units import format_quantity
from dtfilm.visuals.stats import CountTo, Stat
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import THEMES


class _Furniture(FilmScene):
    """A square that moves first in drawing order (so Manim redraws all after it each frame),
    a caption and a ring clear of its path, a bar it crosses, and a stat counting up."""

    def setup(self) -> None:
        self.frames: list[bytes] = []
        add_frame = self.renderer.add_frame

        def kept(frame: np.ndarray, num_frames: int = 1) -> None:
            self.frames.extend([frame.tobytes()] * num_frames)
            add_frame(frame, num_frames)

        self.renderer.add_frame = kept

    def construct(self) -> None:
        theme = THEMES["dark"]
        mover = Square(0.8, fill_opacity=1, color=theme.accent, stroke_width=6).shift(LEFT * 5)
        caption = label(theme, "The ring averages 13.5 GB of gradients", theme.caption_size).shift(DOWN * 3)
        ring = Circle(radius=0.9, stroke_width=8, color=theme.text).shift(UP * 2.5 + RIGHT * 4)
        crossed = Rectangle(width=0.6, height=2.5, fill_opacity=0.6, fill_color=theme.text).shift(RIGHT)
        self.add(mover, caption, ring, crossed)
        self.play(mover.animate.shift(RIGHT * 9), run_time=2)
        stat = Stat(theme, "memory", _gigabytes(14e9)).shift(UP * 2.5 + LEFT * 3)
        self.add(stat)
        self.play(CountTo(stat, _gigabytes(112e9)), mover.animate.shift(LEFT * 2), run_time=1)


def _gigabytes(value: float) -> Phrase:
    shown = format_quantity(value, "bytes")
    return Phrase(shown, (Fact("memory.total", "bytes", shown, value=value),))


def _frames(tmp_path: Path, still_layers: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[bytes], dict[str, int]]:
    seen = {"layered": 0, "manims": 0}
    draw = StillLayer.draw

    def counted(layer: StillLayer) -> bool:
        drawn = draw(layer)
        seen["layered" if drawn else "manims"] += 1
        return drawn

    monkeypatch.setattr(StillLayer, "draw", counted)
    if not still_layers:
        monkeypatch.setattr(StillLayer, "begin", classmethod(lambda cls, scene: None))
    settings = {"media_dir": str(tmp_path), "pixel_width": 640, "pixel_height": 360, "frame_rate": 15}
    with tempconfig({**settings, "verbosity": "ERROR", "progress_bar": "none"}):
        scene = _Furniture()
        scene.render()
    monkeypatch.undo()
    return scene.frames, seen


def test_frames_are_manims_pixel_for_pixel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manims, _ = _frames(tmp_path / "manim", False, monkeypatch)
    layered, seen = _frames(tmp_path / "layered", True, monkeypatch)
    assert len(layered) == len(manims) == 45
    assert [i for i, (a, b) in enumerate(zip(layered, manims, strict=True)) if a != b] == []
    assert seen["layered"] > 20, "frames drew from the still layer"
    assert seen["manims"] > 0, "frames where the square comes over the bar were drawn Manim's way"


def test_a_footprint_reaches_as_far_as_a_mitred_stroke() -> None:
    square = Square(1.0, stroke_width=10)
    box = layers._footprint(square, 0.01)
    reach = layers.MITER_REACH * 10 * 0.01 + layers.SMOOTH_PIXELS * 0.01
    assert np.allclose(box, [-0.5 - reach, -0.5 - reach, 0.5 + reach, 0.5 + reach])


def test_no_layer_with_nothing_still_after_the_first_moving_piece_or_an_updater(tmp_path: Path) -> None:
    # an updater may change any mobject (here a group's updater moves the label standing after
    # the square): every frame is drawn Manim's way
    class Alone(FilmScene):
        def setup(self) -> None:
            self.layers: list[Any] = []

        def construct(self) -> None:
            square = Square()
            self.add(square)
            self.play(square.animate.shift(RIGHT), run_time=0.2)
            moved = Circle(radius=0.3).shift(UP * 3 + LEFT * 4)
            group = VGroup(moved)
            group.add_updater(lambda g, dt: g.submobjects[0].shift(RIGHT * dt))
            self.add(group)
            self.play(square.animate.shift(LEFT), run_time=0.2)

        def play_internal(self, skip_rendering: bool = False) -> None:
            self.layers.append(StillLayer.begin(self))
            super().play_internal(skip_rendering)

    with tempconfig(
        {
            "media_dir": str(tmp_path),
            "write_to_movie": False,
            "verbosity": "ERROR",
            "pixel_width": 160,
            "pixel_height": 90,
        }
    ):
        scene = Alone()
        scene.render()
    assert scene.layers == [None, None]
