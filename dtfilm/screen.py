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
import struct
from typing import Any

import numpy as np
from manim import Mobject

# Values are rounded on a grid of 1/GRID, about 3e-4 scene units (a tenth of a pixel at 4K).
# Not a decimal grid: layouts are full of binary fractions (1.68125), which lie exactly on a
# decimal grid's rounding boundaries, where float noise of 1e-16 (a shot drawn, or skipped)
# would flip them. A multiple of 1/e is never such a fraction.
GRID = 10_000 / math.e
EMPTY = "0" * 32  # the screen before a chapter's first shot


def _rounded(values: np.ndarray) -> bytes:
    return (np.round(np.asarray(values, dtype=np.float64) * GRID) + 0.0).tobytes()  # + 0.0: no -0.0


def add_mobject(h: Any, mob: Mobject) -> None:
    """Feed one mobject (alone, not its family) into the hash `h`: kind, points, colours, widths."""
    h.update(type(mob).__name__.encode())
    h.update(struct.pack("<d", float(getattr(mob, "z_index", 0.0))))
    if len(mob.points):
        h.update(_rounded(mob.points))
    for name in ("fill_rgbas", "stroke_rgbas", "background_stroke_rgbas"):
        values = getattr(mob, name, None)
        if values is not None:
            h.update(_rounded(values))
    for name in ("stroke_width", "background_stroke_width"):
        value = getattr(mob, name, None)
        if value is not None:
            h.update(_rounded(np.atleast_1d(value)))
    pixels = getattr(mob, "pixel_array", None)
    if pixels is not None:
        h.update(hashlib.blake2b(np.ascontiguousarray(pixels).tobytes(), digest_size=16).digest())


def screen_digest(mobjects: list[Mobject]) -> str:
    """The digest of a screen: every mobject shown, in drawing order, with its family."""
    h = hashlib.blake2b(digest_size=16)
    for top in mobjects:
        h.update(b"[")
        for mob in top.get_family():
            add_mobject(h, mob)
        h.update(b"]")
    return h.hexdigest()


def play_digest(animations: tuple[Any, ...], seconds: float) -> bytes:
    """What an animation call adds besides the state it ends in: which animations and rate
    functions (how the frames between get there) and how long it takes."""
    names = [f"{type(a).__name__}:{getattr(getattr(a, 'rate_func', None), '__name__', '')}" for a in animations]
    return f"{'|'.join(names)}@{seconds:.4f}".encode()
