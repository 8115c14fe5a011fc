"""A quicker copy of a mobject. Manim copies a mobject (every Label made, every Transform's
start, every fade) with `copy.deepcopy`, which walks every colour object and every setting of
every glyph: profiled, a third of a chapter's dry run. This copy keeps what deepcopy keeps (a
new mobject tree, new point and colour arrays, the same sharing between parts) but shares what
nothing changes in place: colours, strings, numbers and functions.
"""

from __future__ import annotations

import copy
import enum
import types
from typing import Any

import numpy as np
import svgelements as se
from manim import Mobject
from manim.utils.color import ManimColor

# shared, not copied: values nothing changes in place (a glyph's parsed SVG path is read once,
# when its points are made)
_SHARED = (
    str, int, float, bool, complex, bytes, type(None), enum.Enum, ManimColor, se.Path,
    types.FunctionType, types.MethodType, type,
)  # fmt: skip


def _copied(value: Any, memo: dict[int, Any]) -> Any:
    if isinstance(value, _SHARED):
        return value
    done = memo.get(id(value))
    if done is not None:
        return done
    kind = type(value)
    if kind is np.ndarray:
        out: Any = value.copy()
    elif isinstance(value, Mobject):
        return value.__deepcopy__(memo)
    elif kind is list:
        out = []
        memo[id(value)] = out
        out.extend(_copied(item, memo) for item in value)
        return out
    elif kind is dict:
        out = {}
        memo[id(value)] = out
        out.update((key, _copied(item, memo)) for key, item in value.items())
        return out
    elif kind is tuple:
        out = tuple(_copied(item, memo) for item in value)
    else:
        return copy.deepcopy(value, memo)
    memo[id(value)] = out
    return out


def quick_deepcopy(self: Mobject, memo: dict[int, Any]) -> Mobject:
    """Mobject.__deepcopy__, with the shortcuts above."""
    cls = self.__class__
    result = cls.__new__(cls)
    memo[id(self)] = result
    result.__dict__.update((key, _copied(value, memo)) for key, value in self.__dict__.items())
    result.original_id = str(id(self))
    return result


_manims_deepcopy = Mobject.__deepcopy__


def install() -> None:
    """Every mobject copy made after this uses `quick_deepcopy` (dtfilm.engine.drawing installs it)."""
    Mobject.__deepcopy__ = quick_deepcopy  # type: ignore[method-assign]


def uninstall() -> None:
    Mobject.__deepcopy__ = _manims_deepcopy  # type: ignore[method-assign]
