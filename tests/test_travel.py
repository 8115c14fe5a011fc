"""Travel moves a piece along a path exactly as Manim's MoveAlongPath does, frame for frame."""

from __future__ import annotations

import numpy as np
import pytest
from manim import TAU, ArcBetweenPoints, MoveAlongPath, Square, rate_functions

from dtfilm.visuals.travel import Travel


@pytest.mark.parametrize("angle", [-TAU / 8, -TAU / 3, 0.7])
def test_travel_reaches_the_points_move_along_path_does(angle: float):
    path = ArcBetweenPoints(np.array([-1.0, 0.3, 0.0]), np.array([2.0, -0.5, 0.0]), angle=angle)
    theirs, ours = Square(0.2), Square(0.2)
    manim_move = MoveAlongPath(theirs, path, rate_func=rate_functions.smooth)
    travel = Travel(ours, path, rate_func=rate_functions.smooth)
    manim_move.begin()
    travel.begin()
    for alpha in np.linspace(0.0, 1.0, 97):
        manim_move.interpolate(alpha)
        travel.interpolate(alpha)
        assert np.array_equal(ours.points, theirs.points), alpha
    assert np.allclose(ours.get_center(), path.points[-1])
