"""The path cache (dtfilm.engine.paths.FilmCamera) draws the same pixels as Manim's own path building."""

from __future__ import annotations

import numpy as np
from manim import Camera, Circle, DashedLine, Rectangle, VGroup

from dtfilm.engine import paths
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import THEMES


def _picture() -> VGroup:
    theme = THEMES["dark"]
    caption = label(theme, "The ring averages 13.5 GB of gradients", theme.caption_size)
    ring = Circle(radius=1.2, color=theme.accent, stroke_width=6).shift([2, 0.3, 0])
    bar = Rectangle(width=3.1, height=0.4, fill_color=theme.text, fill_opacity=0.7, stroke_width=2)
    dashed = DashedLine([-3, -1, 0], [-1, -1.5, 0], stroke_width=3)
    return VGroup(caption.shift([0, -2.5, 0]), ring, bar.shift([-3, 1, 0]), dashed)


def _frame(
    mob: VGroup, pixel_width: int = 854, pixel_height: int = 480, camera_class: type = paths.FilmCamera
) -> np.ndarray:
    camera = camera_class(pixel_width=pixel_width, pixel_height=pixel_height, background_color="#101018")
    camera.capture_mobjects([mob])
    return camera.pixel_array.copy()


def test_cached_paths_draw_the_same_pixels_as_manim() -> None:
    picture = _picture()
    built = _frame(picture, camera_class=Camera)  # Manim's own camera
    moved = _frame(picture.copy().shift([0.37, -0.21, 0]), camera_class=Camera)
    big = _frame(picture, 1920, 1080, camera_class=Camera)
    paths.clear()
    assert _frame(picture).tobytes() == built.tobytes()  # every path built, then kept
    assert _frame(picture).tobytes() == built.tobytes()  # every path replayed
    assert paths._paths, "the second frame drew from the cache"
    # a moved outline is another path, and another camera another transform: never confused
    assert _frame(picture.copy().shift([0.37, -0.21, 0])).tobytes() == moved.tobytes()
    assert _frame(picture, 1920, 1080).tobytes() == big.tobytes()
    assert built.tobytes() != moved.tobytes()


def test_the_cache_is_bounded() -> None:
    paths.clear()
    before = paths.MAX_CACHED_BYTES
    paths.MAX_CACHED_BYTES = 4096
    try:
        for step in range(40):
            _frame(VGroup(Circle(radius=0.5 + step / 50)), 160, 90)
        assert paths._cached_bytes <= 4096 + 2 * Circle().points.nbytes
    finally:
        paths.MAX_CACHED_BYTES = before
        paths.clear()
