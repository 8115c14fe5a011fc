"""Manim imported without scipy (dtfilm.engine.start): the same rotations, and scipy untouched."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from dtfilm.engine.start import AxisRotation


def _rotation_vectors() -> list[np.ndarray]:
    rng = np.random.default_rng(17)
    axes = rng.normal(size=(300, 3))
    angles = rng.uniform(-12.0, 12.0, size=300) * rng.choice([1.0, 1e-3, 1e-9], size=300)
    vectors = [axis / np.linalg.norm(axis) * angle for axis, angle in zip(axes, angles, strict=True)]
    return [*vectors, np.zeros(3), np.array([0.0, 0.0, np.pi]), np.array([2 * np.pi, 0.0, 0.0])]


def test_axis_rotation_is_scipys_rotation_matrix() -> None:
    for vector in _rotation_vectors():
        ours = AxisRotation.from_rotvec(vector).as_matrix()
        np.testing.assert_allclose(ours, Rotation.from_rotvec(vector).as_matrix(), rtol=0, atol=1e-14)


def test_manims_rotations_are_unchanged() -> None:
    import manim
    from manim.utils.space_ops import rotation_matrix

    for vector in _rotation_vectors()[:50]:
        angle, axis = float(np.linalg.norm(vector)), vector if vector.any() else np.array([0.0, 0.0, 1.0])
        expected = Rotation.from_rotvec(angle * axis / np.linalg.norm(axis)).as_matrix()
        np.testing.assert_allclose(rotation_matrix(angle, axis), expected, rtol=0, atol=1e-14)
    square = manim.Square().rotate(0.7, axis=np.array([1.0, 2.0, 3.0]))
    turn = Rotation.from_rotvec(0.7 * np.array([1.0, 2.0, 3.0]) / np.sqrt(14.0)).as_matrix()
    centre = manim.Square().get_center()
    expected_points = (manim.Square().points - centre) @ turn.T + centre
    np.testing.assert_allclose(square.points, expected_points, atol=1e-12)


PROBE = """
import json, sys
import dtfilm.scene  # Manim with it
loaded = sorted(m for m in sys.modules if m.startswith("scipy.spatial"))
from scipy.spatial.transform import Rotation
from manim.utils import space_ops
print(json.dumps({"loaded": loaded, "rotation": Rotation.__module__, "manims": space_ops.Rotation.__module__}))
"""


def test_manim_loads_without_scipy_spatial_and_leaves_it_whole() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    seen = json.loads(done.stdout)
    assert seen["loaded"] == []  # Manim's import did not load scipy.spatial
    assert seen["rotation"].startswith("scipy.spatial.transform")  # imported after: scipy's own class
    assert seen["manims"] == "dtfilm.engine.start"


@pytest.mark.parametrize("scipy_first", [True, False])
def test_space_ops_uses_the_same_rotation_whichever_loads_first(scipy_first: bool) -> None:
    first = "import scipy.spatial.transform\n" if scipy_first else ""
    probe = first + "import dtfilm, manim\nfrom manim.utils import space_ops\nprint(space_ops.Rotation.__module__)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "dtfilm.engine.start"


SOUP_PROBE = """
import sys
import dtfilm.scene  # Manim with it, which imports Beautiful Soup
waiting = type(sys.modules["soupsieve"]).__name__
import bs4
picked = bs4.BeautifulSoup('<p class="a">x</p><p>y</p>', "html.parser").select("p.a")
print(waiting, [p.text for p in picked], type(sys.modules["soupsieve"]).__name__)
"""


def test_soup_sieve_loads_only_when_used() -> None:
    done = subprocess.run([sys.executable, "-c", SOUP_PROBE], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["_LazyModule", "['x']", "module"]  # loaded, and working, once used


NETWORKX_PROBE = """
import sys
import dtfilm.scene  # Manim with it, whose graph module imports networkx
waiting = "networkx" in sys.modules
from manim import Graph
from manim.mobject import graph
circle = Graph([1, 2, 3, 4], [(1, 2), (2, 3), (3, 4)], layout="circular")
tree = Graph([1, 2, 3], [(1, 2), (1, 3)], layout="tree", root_vertex=1)
import networkx
expected = networkx.layout.circular_layout(networkx.path_graph([1, 2, 3, 4]))
same = all(abs(circle[v].get_center()[:2] - 2 * expected[v]).max() < 1e-9 for v in (1, 2, 3, 4))
print(waiting, type(sys.modules["networkx"]).__name__, networkx.__name__, same, len(tree.vertices))
"""


def test_networkx_loads_only_when_a_graph_is_drawn() -> None:
    # the graph module's layouts look networkx up when called; a Graph is laid out as networkx
    # lays it out (Manim scales the layout by 2), and `import networkx` after is networkx's own
    done = subprocess.run([sys.executable, "-c", NETWORKX_PROBE], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "module", "networkx", "True", "3"]
