"""Test clips written as Manim writes a shot's: 15 fps in ticks of 1/15360 s, each frame's
picture from a callback (frame index -> RGB array), with a frame that may be short."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

TICKS_A_SECOND = 15360  # Manim's clips' time base
TICKS_A_FRAME = TICKS_A_SECOND // 15


def manim_clip(path: Path, frames: int, picture: Callable[[int], np.ndarray], short_at: int | None = None) -> Path:
    """A 15 fps clip of `frames` frames, frame i showing `picture(i)` (all one size), with frame
    `short_at` 5 ticks short, as Manim's clips hold where two of its partial movies meet."""
    height, width = picture(0).shape[:2]
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=15, options={"threads": "1"})
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.time_base = stream.codec_context.time_base = Fraction(1, TICKS_A_SECOND)
        for index in range(frames):
            frame = av.VideoFrame.from_ndarray(picture(index), format="rgb24")
            frame.pts = index * TICKS_A_FRAME - (5 if short_at is not None and index > short_at else 0)
            frame.time_base = stream.time_base
            out.mux(stream.encode(frame))
        out.mux(stream.encode())
    return path


def grey(level: int, width: int = 64, height: int = 64) -> np.ndarray:
    """A picture of one grey."""
    return np.full((height, width, 3), level, dtype=np.uint8)
