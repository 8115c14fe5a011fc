"""The render qualities: each one's frame size (also the players' size), frame rate and encoding."""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

# How Manim encodes each shot's clip (the same for every shot of a quality, so clips join
# without re-encoding). Measured on the dp ring shot at preview (21.6 s of film, 2 cores):
# Manim's default (x264 medium, crf 23, one clip encoded at a time) drew it in 8.2 s into
# 1.01 MB; veryfast with one thread, encoding up to four clips while the next is drawn: 6.1-6.5 s
# into 0.98 MB. superfast was no faster and 30% larger; tune=animation 9% larger. One x264 thread
# each also makes a clip the same bytes on every machine.
# At 1080p60 encoding is a third of a render's CPU once frames are cheap (outlines' paths
# cached): dp's 4,720 final frames took 10.6 ms each with veryfast into 6.09 MB, 6.7 ms with
# superfast into 8.61 MB (ultrafast 4.4 ms, 22.9 MB; superfast at crf 25 6.6 ms, 7.72 MB). So
# final and 4K take superfast: 37% less encoding for 41% more bytes, at the same crf.


@dataclass(frozen=True)
class Quality:
    """One render quality. `name` is what --quality takes and the shot keys' `quality` part."""

    name: str
    width_pixels: int
    height_pixels: int
    frame_rate: int  # frames a second
    x264_preset: str

    @property
    def clip_size(self) -> tuple[int, int]:
        return (self.width_pixels, self.height_pixels)

    def frame_settings(self) -> dict[str, int]:
        """Manim's settings for the frames: their size and rate."""
        return {"pixel_width": self.width_pixels, "pixel_height": self.height_pixels, "frame_rate": self.frame_rate}

    def encoder_settings(self) -> dict[str, object]:
        """The Manim settings every shot of this quality is encoded with."""
        return {
            "video_encoder_options": {"crf": "23", "preset": self.x264_preset, "threads": "1"},
            "max_inflight_encoders": 4,
        }

    def manim_settings(self) -> dict[str, object]:
        """What Manim's config takes for drawing a shot at this quality: frames and encoding."""
        return {**self.frame_settings(), **self.encoder_settings()}


QUALITY: dict[str, Quality] = {
    q.name: q
    for q in (
        Quality("preview", 854, 480, 15, "veryfast"),
        Quality("final", 1920, 1080, 60, "superfast"),
        Quality("4k", 3840, 2160, 60, "superfast"),
    )
}
QUALITY_NAMES = tuple(QUALITY)  # what --quality takes
# The same values by name, for readers of one of them
CLIP_SIZES = {name: q.clip_size for name, q in QUALITY.items()}
FRAME_RATES = {name: q.frame_rate for name, q in QUALITY.items()}
X264_PRESETS = {name: q.x264_preset for name, q in QUALITY.items()}


def encoder_settings(quality: str) -> dict[str, object]:
    """The Manim settings every shot of `quality` is encoded with."""
    return QUALITY[quality].encoder_settings()


@functools.cache
def quiet_muxer_note() -> None:
    """Once per process: Manim passes muxer options PyAV does not use when a scene has sound,
    and says so at every render."""
    for handler in logging.getLogger("manim").handlers:
        handler.addFilter(lambda record: "Some options were not used" not in record.getMessage())
