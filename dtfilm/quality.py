"""The render qualities: each one's frame size (also the players' size) and frame rate."""

from __future__ import annotations

CLIP_SIZES = {"preview": (854, 480), "final": (1920, 1080), "4k": (3840, 2160)}
FRAME_RATES = {"preview": 15, "final": 60, "4k": 60}
QUALITY_NAMES = tuple(CLIP_SIZES)  # what --quality takes
