"""The quick copy (dtfilm.engine.copying) makes what Manim's own deepcopy makes of real dtfilm
pieces: the same tree of the same kinds, the same points, colours and settings, the same sharing
between parts, and nothing of the original's that anything changes in place."""

from __future__ import annotations

import dataclasses
import functools
import types
from typing import Any

import numpy as np
import pytest
from manim import Mobject, VGroup

from dtfilm.cost import estimate
from dtfilm.engine import copying
from dtfilm.engine.drawing import drawing
from dtfilm.phrases import plain
from dtfilm.publish.explore.picture import picture_facts, picture_mobject
from dtfilm.publish.explore.states import State, state_values
from dtfilm.storyboard.film import load_film
from dtfilm.visuals.stats import Stat, StatsPanel
from dtfilm.visuals.text import label, wrapped
from dtfilm.visuals.theme import THEMES
from tests.conftest import ROOT


def _pieces() -> dict[str, Mobject]:
    """What chapters draw: a label, a wrapped caption, a stats row, and the explorer's rack of
    a pipeline (cards, the loaf's pieces, gauges, the legend, the timeline)."""
    theme = THEMES["dark"]
    film = load_film(ROOT / "storyboard" / "film.yaml")
    values = state_values(State("llama-7b", "h100-sxm-80gb", "PP", 8, "bf16", False), 16, film.defaults)
    stats = StatsPanel(theme, [Stat(theme, "memory", plain("112 GB"), True), Stat(theme, "step", plain("1.2 s"))])
    return {
        "label": label(theme, "The ring averages 13.5 GB of gradients", theme.caption_size),
        "caption": wrapped(theme, plain("Each card holds a whole copy of the model, and " * 2), 24, 8.0),
        "stats": stats,
        "picture": picture_mobject(picture_facts(estimate(values)), "dark"),
    }


def _same(a: Any, b: Any, pairs: dict[int, int], path: str) -> None:
    """`a` (Manim's copy) and `b` (the quick one) hold the same values, and where `a` holds one
    object twice, `b` does too (`pairs`: each of a's objects met, to b's)."""
    assert type(a) is type(b), path
    if isinstance(a, (Mobject, list, dict, np.ndarray)):
        if id(a) in pairs:
            assert pairs[id(a)] == id(b), f"{path}: shared in one copy, not in the other"
            return
        pairs[id(a)] = id(b)
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and np.array_equal(a, b), path
    elif isinstance(a, Mobject):
        assert vars(a).keys() == vars(b).keys(), path
        for key, value in vars(a).items():
            if key != "original_id":  # (the id of the mobject copied: the same, as a string)
                _same(value, vars(b)[key], pairs, f"{path}.{key}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, pairs, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for key in a:
            _same(a[key], b[key], pairs, f"{path}[{key!r}]")
    elif isinstance(a, types.MethodType):
        assert a.__func__ is b.__func__, path
        _same(a.__self__, b.__self__, pairs, f"{path}.__self__")
    elif isinstance(a, functools.partial):
        assert a.func is b.func, path
        _same((a.args, a.keywords), (b.args, b.keywords), pairs, f"{path}(partial)")
    elif dataclasses.is_dataclass(a) and not isinstance(a, type):
        for field in dataclasses.fields(a):
            _same(getattr(a, field.name), getattr(b, field.name), pairs, f"{path}.{field.name}")
    else:
        assert a == b, path


def _arrays_and_members(mob: Mobject) -> set[int]:
    """Ids of a mobject's family and of every array its members hold."""
    ids = set()
    for member in mob.get_family():
        ids.add(id(member))
        ids.update(id(v) for v in vars(member).values() if isinstance(v, np.ndarray))
    return ids


@pytest.mark.parametrize("name", ["label", "caption", "stats", "picture"])
def test_a_quick_copy_is_manims_deepcopy(name: str) -> None:
    with drawing():
        piece = _pieces()[name]
        assert Mobject.__deepcopy__ is copying.quick_deepcopy
        quick = piece.copy()
    manims = piece.copy()  # (outside drawing(): Manim's own deepcopy)
    assert len(piece.get_family()) > (30 if name == "picture" else 3)
    _same(manims, quick, {}, name)
    assert quick.original_id == manims.original_id == str(id(piece))
    original = _arrays_and_members(piece)
    assert not original & _arrays_and_members(quick), "the quick copy shares no member or array"
    quick.shift([1.0, 0.5, 0.0]).set_color("#ff0000")  # changing the copy leaves the piece as it was
    _same(manims, piece.copy(), {}, name)


def test_a_copy_keeps_what_is_shared_between_parts() -> None:
    theme = THEMES["dark"]
    shared = label(theme, "GPU 0")
    group = VGroup(VGroup(shared), VGroup(shared))
    group.submobjects[1].extra = group.submobjects[0]  # an attribute naming another part
    with drawing():
        quick = group.copy()
    assert quick.submobjects[0].submobjects[0] is quick.submobjects[1].submobjects[0]
    assert quick.submobjects[1].extra is quick.submobjects[0]
    _same(group.copy(), quick, {}, "group")
