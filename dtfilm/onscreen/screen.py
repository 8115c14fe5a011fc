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


# What a member draws with: its outline, its colours and its widths
_SLOTS = ("points", "fill_rgbas", "stroke_rgbas", "background_stroke_rgbas", "stroke_width", "background_stroke_width")
SCALAR = -1  # a slot holding one plain number
OTHER = -2  # a slot holding an array of another shape: OTHER less its count of values


def screen_digest(mobjects: list[Mobject]) -> str:
    """The digest of a screen: every mobject shown, in drawing order, with its family: its
    kind, depth, points, colours, widths and pixels. The values go into one array per shape
    (points, colours, the rest), each rounded once: a mobject at a time cost 16 ms a screen in
    dp. Each member's state is read from its instance dictionary, as Manim's `__getattr__`
    answers a missing attribute slowly. An empty screen is EMPTY."""
    if not mobjects:
        return EMPTY
    kinds: list[str] = []
    sizes: list[int] = []  # each slot's count of rows or values; SCALAR for a plain number
    scalars: list[float] = []
    rows: dict[int, list[np.ndarray]] = {3: [], 4: []}  # points; colours
    others: list[np.ndarray] = []
    pixels = hashlib.blake2b(digest_size=16)
    for top in mobjects:
        kinds.append("[")
        for mob in top.get_family():
            state = vars(mob)
            kinds.append(type(mob).__name__)
            scalars.append(state.get("z_index", 0.0))
            for name in _SLOTS:
                value = state.get(name)
                if value is None:
                    sizes.append(0)
                elif isinstance(value, (int, float)):
                    sizes.append(SCALAR)
                    scalars.append(value)
                elif type(value) is np.ndarray and value.ndim == 2 and value.shape[1] in rows:
                    sizes.append(value.shape[0])  # (its width is told by the kinds and the slot)
                    rows[value.shape[1]].append(value)
                else:
                    array = np.asarray(value, dtype=np.float64).reshape(-1)
                    sizes.append(OTHER - array.size)
                    others.append(array)
            image = state.get("pixel_array")
            if image is not None:
                pixels.update(np.ascontiguousarray(image).tobytes())
        kinds.append("]")
    h = hashlib.blake2b(digest_size=16)
    h.update(" ".join(kinds).encode())
    h.update(np.asarray(sizes, dtype=np.int64).tobytes())
    for values in (scalars, *(np.concatenate(r) for r in rows.values() if r), *others):
        h.update((np.round(np.asarray(values, dtype=np.float64) * GRID) + 0.0).tobytes())  # + 0.0: no -0.0
    h.update(pixels.digest())
    return h.hexdigest()


def play_digest(animations: tuple[Any, ...], seconds: float) -> bytes:
    """What an animation call adds besides the state it ends in: which animations and rate
    functions (how the frames between get there) and how long it takes."""
    names = [f"{type(a).__name__}:{getattr(getattr(a, 'rate_func', None), '__name__', '')}" for a in animations]
    return f"{'|'.join(names)}@{seconds:.4f}".encode()
