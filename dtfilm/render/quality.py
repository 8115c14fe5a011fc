"""The render qualities: each one's frame size (also the players' size) and frame rate."""

from __future__ import annotations

import functools
import logging

CLIP_SIZES = {"preview": (854, 480), "final": (1920, 1080), "4k": (3840, 2160)}
FRAME_RATES = {"preview": 15, "final": 60, "4k": 60}
QUALITY_NAMES = tuple(CLIP_SIZES)  # what --quality takes
# Manim's settings for each quality: the clips' sizes are the players' (dtfilm.render.embed)
QUALITIES: dict[str, dict[str, int]] = {
    quality: {"pixel_width": w, "pixel_height": h, "frame_rate": FRAME_RATES[quality]}
    for quality, (w, h) in CLIP_SIZES.items()
}

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
X264_PRESETS = {"preview": "veryfast", "final": "superfast", "4k": "superfast"}


def encoder_settings(quality: str) -> dict[str, object]:
    """The Manim settings every shot of `quality` is encoded with."""
    return {
        "video_encoder_options": {"crf": "23", "preset": X264_PRESETS[quality], "threads": "1"},
        "max_inflight_encoders": 4,
    }


@functools.cache
def quiet_muxer_note() -> None:
    """Once per process: Manim passes muxer options PyAV does not use when a scene has sound,
    and says so at every render."""
    for handler in logging.getLogger("manim").handlers:
        handler.addFilter(lambda record: "Some options were not used" not in record.getMessage())
