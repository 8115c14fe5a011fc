"""An animation skipped without pixels (a dry run's every one) draws and copies no frame; one
skipped with pixels, or drawn, still does (dtfilm.engine.renderer.FilmRenderer)."""

from __future__ import annotations

from typing import Any

import pytest
from manim import FadeIn, Square, tempconfig

from dtfilm.engine.renderer import FilmRenderer
from dtfilm.engine.scene import FilmScene


class _Fading(FilmScene):
    def construct(self) -> None:
        self.play(FadeIn(Square()), run_time=0.2)


@pytest.mark.parametrize(("pixels", "frames"), [(False, 0), (True, 1)])
def test_a_skipped_animation_copies_a_frame_only_with_pixels(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any, pixels: bool, frames: int
) -> None:
    fetched: list[int] = []
    manims = FilmRenderer.get_frame

    def counted(self: FilmRenderer) -> Any:
        fetched.append(1)
        return manims(self)

    monkeypatch.setattr(FilmRenderer, "get_frame", counted)
    renderer = FilmRenderer(skip_animations=True, pixels_when_skipped=pixels)
    with tempconfig({"media_dir": str(tmp_path), "write_to_movie": False, "disable_caching": True}):
        scene = _Fading(renderer=renderer)
        scene.render()
    assert len(fetched) == frames
    assert scene.time == pytest.approx(0.2, abs=0.07)  # (the clock moves either way)
