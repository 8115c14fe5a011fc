"""Travel: a piece moving along a path, with the path measured once."""

from __future__ import annotations

from typing import Any

import numpy as np
from manim import MoveAlongPath


class Travel(MoveAlongPath):
    """Manim's MoveAlongPath, frame for frame, with the path's curves and their lengths measured
    once when it begins. Manim's `point_from_proportion` measures every curve of the path again
    at every frame: about a tenth of drawing the dp ring shot, whose chunks travel on arcs. (The
    path must not change while it plays.)"""

    def begin(self) -> None:
        self._curves: tuple[tuple[Any, float], ...] = tuple(self.path.get_curve_functions_with_lengths())
        super().begin()

    def interpolate_mobject(self, alpha: float) -> None:
        self.mobject.move_to(self.point_at(self.rate_func(alpha)))

    def point_at(self, alpha: float) -> np.ndarray:
        """`self.path.point_from_proportion(alpha)`, as Manim computes it, from the kept lengths."""
        if alpha < 0 or alpha > 1:
            raise ValueError(f"Alpha {alpha} not between 0 and 1.")
        if alpha == 1:
            return self.path.points[-1]
        target_length = alpha * sum(length for _, length in self._curves)
        current_length = 0.0
        for curve, length in self._curves:
            if current_length + length >= target_length:
                return curve((target_length - current_length) / length if length != 0 else 0)
            current_length += length
        raise AssertionError("a proportion past the path's end")
