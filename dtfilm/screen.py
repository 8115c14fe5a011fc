"""What is on screen, as a digest: the facts a shot's key is made of.

A shot's frames are a function of the screen it starts from and of every state its animations
reach, with how long each takes (the drawing code turns these into frames, and its digest is in
the key as well). So a shot is keyed by what it draws, not by what it reads: a number changed in
the storyboard makes stale exactly the shots whose screens show it, whatever the code looked up
on the way. Positions and colours are rounded, so a digest does not depend on float noise.
"""

from __future__ import annotations

import hashlib
import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # (a render that draws nothing never imports manim)
    from manim import Mobject

# Values are rounded on a grid of 1/GRID, about 3e-4 scene units (a tenth of a pixel at 4K).
# Not a decimal grid: layouts are full of binary fractions (1.68125), which lie exactly on a
# decimal grid's rounding boundaries, where float noise of 1e-16 (a shot drawn, or skipped)
# would flip them. A multiple of 1/e is never such a fraction.
GRID = 10_000 / math.e
EMPTY = "0" * 32  # the screen before a chapter's first shot


_ARRAYS = ("points", "fill_rgbas", "stroke_rgbas", "background_stroke_rgbas")
_WIDTHS = ("stroke_width", "background_stroke_width")


def screen_digest(mobjects: list[Mobject]) -> str:
    """The digest of a screen: every mobject shown, in drawing order, with its family: its
    kind, depth, points, colours, widths and pixels. Every value goes into one array, rounded
    once (a mobject at a time cost 16 ms a screen in dp). An empty screen is EMPTY."""
    if not mobjects:
        return EMPTY
    kinds: list[str] = []
    sizes: list[int] = []
    values: list[np.ndarray] = []
    pixels = hashlib.blake2b(digest_size=16)
    for top in mobjects:
        kinds.append("[")
        for mob in top.get_family():
            kinds.append(type(mob).__name__)
            values.append(np.array([float(getattr(mob, "z_index", 0.0))]))
            for name in _ARRAYS:
                array = getattr(mob, name, None)
                array = np.zeros(0) if array is None else np.asarray(array).reshape(-1)
                sizes.append(len(array))
                values.append(array)
            for name in _WIDTHS:
                width = getattr(mob, name, None)
                width = np.zeros(0) if width is None else np.atleast_1d(np.asarray(width, dtype=np.float64)).reshape(-1)
                sizes.append(len(width))
                values.append(width)
            image = getattr(mob, "pixel_array", None)
            if image is not None:
                pixels.update(np.ascontiguousarray(image).tobytes())
        kinds.append("]")
    h = hashlib.blake2b(digest_size=16)
    h.update(" ".join(kinds).encode())
    h.update(np.asarray(sizes, dtype=np.int64).tobytes())
    if values:
        rounded = np.round(np.concatenate(values).astype(np.float64) * GRID) + 0.0  # + 0.0: no -0.0
        h.update(rounded.tobytes())
    h.update(pixels.digest())
    return h.hexdigest()


def play_digest(animations: tuple[Any, ...], seconds: float) -> bytes:
    """What an animation call adds besides the state it ends in: which animations and rate
    functions (how the frames between get there) and how long it takes."""
    names = [f"{type(a).__name__}:{getattr(getattr(a, 'rate_func', None), '__name__', '')}" for a in animations]
    return f"{'|'.join(names)}@{seconds:.4f}".encode()
