"""A quicker `Mobject.get_family`. Manim lists a mobject's family with a recursive generator
(`_iter_family`): every member is yielded up through each level above it, so a stage of 350
members took about 280 µs and a single glyph 1 µs. A frame asks for families several times (the
camera flattens every moving mobject's family, each animation its own), and a cold preview film
asked 1.6 million times: profiled, a tenth of its time.

This walk returns the same list, member for member: depth first, each mobject before its
submobjects, a mobject already on the path above skipped (a cycle), and a member reached twice
kept where it was reached last (Manim's `remove_list_redundancies`). It takes a fifth of the
time on large families, and a glyph is answered at once.
"""

from __future__ import annotations

from typing import Any

from manim import Mobject
from manim.utils.iterables import remove_list_redundancies

_manims_get_family = Mobject.get_family


def quick_family(self: Mobject, recurse: bool = True) -> list[Mobject]:
    """`Mobject.get_family`, the same list, walked without generators."""
    if not self.submobjects:
        return [self]
    members: list[Mobject] = []
    _walk(self, set(), members)
    return members if len(set(members)) == len(members) else remove_list_redundancies(members)


def _walk(mob: Any, path: set[Any], members: list[Mobject]) -> None:
    path.add(mob)
    members.append(mob)
    for sub in mob.submobjects:
        if sub in path:  # (an ancestor of itself: Manim's walk skips it too)
            continue
        if sub.submobjects:
            _walk(sub, path, members)
        else:
            members.append(sub)
    path.discard(mob)


def install() -> None:
    """Every family listed after this is listed by `quick_family` (dtfilm.engine.drawing installs it)."""
    Mobject.get_family = quick_family  # type: ignore[method-assign]


def uninstall() -> None:
    Mobject.get_family = _manims_get_family  # type: ignore[method-assign]
