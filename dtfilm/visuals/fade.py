"""Fades that change opacity in place. Manim's FadeIn and FadeOut interpolate against a deep
copy of the whole mobject (a rack with every glyph), which was a third of a render's time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from manim import (
    DL,
    UR,
    Animation,
    FadeIn,
    FadeOut,
    Group,
    Mobject,
    ReplacementTransform,
    Text,
    Transform,
    VGroup,
    VMobject,
)

from dtfilm.visuals.text import Label, relabel
from dtfilm.visuals.theme import FRAME_HEIGHT, FRAME_WIDTH

EDGE_UNITS = 0.1  # a slide starts or ends at least this far inside the frame's edge


class _Fade(Animation):
    def __init__(self, mobject: Mobject, appearing: bool, **kwargs: Any) -> None:
        self.appearing = appearing
        super().__init__(mobject, introducer=appearing, remover=not appearing, **kwargs)

    def create_starting_mobject(self) -> Mobject:
        return Mobject()  # no copy: interpolation only scales the recorded opacities

    def begin(self) -> None:
        self.saved = [
            (m, np.array(m.get_fill_opacities(), dtype=float), np.array(m.get_stroke_opacities(), dtype=float))
            for m in self.mobject.get_family()
            if isinstance(m, VMobject)
        ]
        super().begin()

    def interpolate_mobject(self, alpha: float) -> None:
        factor = self.rate_func(alpha)
        factor = factor if self.appearing else 1.0 - factor
        for mob, fill, stroke in self.saved:
            _set_opacities(mob, "fill", fill * factor)
            _set_opacities(mob, "stroke", stroke * factor)

    def clean_up_from_scene(self, scene: Any) -> None:
        super().clean_up_from_scene(scene)
        # back to full strength, so a faded-out mobject can be shown again
        for mob, fill, stroke in self.saved:
            mob.set_fill(opacity=fill, family=False)
            mob.set_stroke(opacity=stroke, family=False)


def _set_opacities(mob: VMobject, part: str, opacities: np.ndarray) -> None:
    """What `set_fill(opacity=...)` or `set_stroke(opacity=...)` (`part`: "fill" or "stroke")
    with family=False does, written straight into the colours' alpha channel. Manim's way builds
    a colour object per value on every frame: 141,000 such calls were an eighth of drawing the dp
    chapter."""
    rgbas = getattr(mob, f"{part}_rgbas", None)
    if rgbas is None or len(rgbas) != len(opacities):
        getattr(mob, f"set_{part}")(opacity=opacities, family=False)
        return
    rgbas[:, 3] = opacities
    setattr(mob, f"{part}_opacity", opacities)


def appear(mobject: Mobject, shift: Any = None, scale: float = 1.0, **kwargs: Any) -> Animation:
    """Fade in; with a shift or scale, Manim's FadeIn (which needs its copy). A slide starts
    inside the frame: a label at its edge slides in a shorter way rather than from outside it."""
    if shift is not None or scale != 1.0:
        shift = None if shift is None else -within_frame(mobject, -np.asarray(shift, dtype=float))
        return FadeIn(mobject, shift=shift, scale=scale, **kwargs)
    return _Fade(mobject, True, **kwargs)


def vanish(mobject: Mobject, shift: Any = None, scale: float = 1.0, **kwargs: Any) -> Animation:
    """Fade out and remove; with a shift or scale, Manim's FadeOut (a slide ending inside the frame)."""
    if shift is not None or scale != 1.0:
        shift = None if shift is None else within_frame(mobject, np.asarray(shift, dtype=float))
        return FadeOut(mobject, shift=shift, scale=scale, **kwargs)
    return _Fade(mobject, False, **kwargs)


def within_frame(mobject: Mobject, offset: np.ndarray) -> np.ndarray:
    """`offset` shortened on each axis so `mobject` moved by it stays EDGE_UNITS inside the
    frame (or no further out than it already is): a slide toward an edge stops there instead of
    cutting the words off at the frame's edge while they move (a teacher's review: why's model
    names and ep's node rows slid in from outside)."""
    low, high = mobject.get_corner(DL), mobject.get_corner(UR)
    half = np.array([FRAME_WIDTH / 2 - EDGE_UNITS, FRAME_HEIGHT / 2 - EDGE_UNITS])
    kept = np.array(offset, dtype=float)
    for axis in (0, 1):
        if kept[axis] < 0:
            kept[axis] = max(kept[axis], min(0.0, -half[axis] - low[axis]))
        elif kept[axis] > 0:
            kept[axis] = min(kept[axis], max(0.0, half[axis] - high[axis]))
    return kept


class _Swap(Animation):
    """One text giving way to its next value where it stands: the old fades out over the first
    half, the new fades in over the second, so the two are never on screen together (a
    cross-fade stacked "4.29 GB" over "73 GB" for half its length)."""

    def __init__(self, old: Mobject, new: Mobject, **kwargs: Any) -> None:
        self.old, self.new = old, new
        # The scene adds the pair (which takes the old out of whatever group held it on the
        # scene); at the end the pair leaves and the new stays, by itself.
        super().__init__(Group(old, new), **kwargs)

    def create_starting_mobject(self) -> Mobject:
        return Mobject()

    def begin(self) -> None:
        def saved(mobject: Mobject) -> list:
            return [
                (m, np.array(m.get_fill_opacities(), dtype=float), np.array(m.get_stroke_opacities(), dtype=float))
                for m in mobject.get_family()
                if isinstance(m, VMobject)
            ]

        self.saved_old, self.saved_new = saved(self.old), saved(self.new)
        super().begin()

    def interpolate_mobject(self, alpha: float) -> None:
        t = self.rate_func(alpha)
        for records, factor in ((self.saved_old, max(0.0, 1 - 2 * t)), (self.saved_new, max(0.0, 2 * t - 1))):
            for mob, fill, stroke in records:
                _set_opacities(mob, "fill", fill * factor)
                _set_opacities(mob, "stroke", stroke * factor)

    def clean_up_from_scene(self, scene: Any) -> None:
        self.interpolate(1)
        scene.remove(self.mobject)
        scene.add(self.new)
        for records in (self.saved_old, self.saved_new):
            for mob, fill, stroke in records:
                mob.set_fill(opacity=fill, family=False)
                mob.set_stroke(opacity=stroke, family=False)


def swap(old: Mobject | None, new: Mobject, **kwargs: Any) -> Animation:
    """`old` gives way to `new` in place, never both at once: a value that changes, not a stack.
    With no `old` (the first of a shot's headings, its first row of counters), `new` fades in."""
    return _Swap(old, new, **kwargs) if old is not None else appear(new, **kwargs)


def _family_opacities(mobject: Mobject) -> list[tuple[VMobject, np.ndarray, np.ndarray]]:
    """Each drawn member of `mobject`'s family with its fill and stroke opacities now."""
    return [
        (m, np.array(m.get_fill_opacities(), dtype=float), np.array(m.get_stroke_opacities(), dtype=float))
        for m in mobject.get_family()
        if isinstance(m, VMobject)
    ]


class _Rewrite(Animation):
    """A label's words giving way to `fresh`'s in place, the label one object throughout (what
    points at it later, a highlight or the next change, finds it): the words shown fade out over
    the first half and the next fade in over the second, as a counter changes
    (dtfilm.visuals.stats.CountTo) and as `swap` does, so a label changed beside them turns at
    the same moment they do (issue 58: pp's "Bubble: 60% ..." was swapped at the start of a
    1.3 s step, named the next value while the counter still read 75%)."""

    def __init__(self, target: Label, fresh: Label, **kwargs: Any) -> None:
        self.fresh = fresh
        self.turned = False
        super().__init__(target, **kwargs)

    def create_starting_mobject(self) -> Mobject:
        return Mobject()  # no copy: interpolation only scales the recorded opacities

    def begin(self) -> None:
        self.saved = _family_opacities(self.mobject)
        self.turned = False
        super().begin()

    def _turn(self) -> None:
        """The next words in the label's place, at their full opacities (recorded for the fade in).
        The old glyphs stay unseen: a frame draws the family listed at the animation's start
        (Manim's moving mobjects, flattened), the old glyphs with it, over the new."""
        for mob, fill, stroke in self.saved:
            if mob is self.mobject:  # (the label's own colours, which the new glyphs keep)
                mob.set_fill(opacity=fill, family=False)
                mob.set_stroke(opacity=stroke, family=False)
                continue
            _set_opacities(mob, "fill", np.zeros(len(mob.get_fill_opacities())))
            _set_opacities(mob, "stroke", np.zeros(len(mob.get_stroke_opacities())))
        relabel(self.mobject, self.fresh)
        self.saved = _family_opacities(self.mobject)
        self.turned = True

    def _restore(self) -> None:
        for mob, fill, stroke in self.saved:
            mob.set_fill(opacity=fill, family=False)
            mob.set_stroke(opacity=stroke, family=False)

    def interpolate_mobject(self, alpha: float) -> None:
        t = self.rate_func(alpha)
        if t >= 0.5 and not self.turned:
            self._turn()
        factor = 2 * t - 1 if self.turned else 1 - 2 * t
        for mob, fill, stroke in self.saved:
            _set_opacities(mob, "fill", fill * max(0.0, factor))
            _set_opacities(mob, "stroke", stroke * max(0.0, factor))

    def clean_up_from_scene(self, scene: Any) -> None:
        super().clean_up_from_scene(scene)
        if not self.turned:
            self._turn()
        self._restore()


def rewrite(target: Label, fresh: Label, **kwargs: Any) -> Animation:
    """`target` comes to show `fresh`'s words where it stands, over the animation: the old words
    go over its first half and the new come over its second, never both at once; `target`
    stays the one object on the scene (unlike `swap`, which leaves `fresh` there)."""
    return _Rewrite(target, fresh, **kwargs)


def _scaled_opacities(mob: VMobject, factor: float) -> None:
    """`mob`'s fill and stroke drawn at `factor` of the opacities it has now."""
    _set_opacities(mob, "fill", np.array(mob.get_fill_opacities(), dtype=float) * factor)
    _set_opacities(mob, "stroke", np.array(mob.get_stroke_opacities(), dtype=float) * factor)


def _words_by_member(mobject: Mobject) -> dict[int, str]:
    """Each member of `mobject`'s family inside a text, by id, with the words of the text it is part of."""
    return {member: text.original_text for member, text in _texts_by_member(mobject).items()}


class Reshape(Transform):
    """Manim's Transform (with `replace`, its ReplacementTransform), save for words: where it
    carries a glyph of one text onto a glyph of other words (or onto a shape, or a shape onto a
    glyph), the first fades out where it stands over the first half and the second fades in
    where it will stand over the second. Shapes morph and a text keeping its words moves, as
    before; words never morph into other words, nor stand half-faded over them (issue 58: dp's
    rack of 8 cards becoming two nodes drew "GPU 3" over "GPU 0" and the node's name as a blur)."""

    def __init__(self, mobject: Mobject, target: Mobject, replace: bool = False, **kwargs: Any) -> None:
        super().__init__(mobject, target, replace_mobject_with_target_in_scene=replace, **kwargs)
        self.reworded: set[int] = set()

    def begin(self) -> None:
        super().begin()  # (aligns the two: the members zipped below are the pairs it morphs)
        before, after = _words_by_member(self.starting_mobject), _words_by_member(self.target_copy)
        zipped = list(self.get_all_families_zipped())
        self.reworded = {id(start) for _, start, end in zipped if before.get(id(start)) != after.get(id(end))}
        self.reworded |= _crossing_members(zipped, self.reworded, self.starting_mobject)

    def interpolate_submobject(
        self, submobject: Mobject, starting_submobject: Mobject, target_copy: Mobject, alpha: float
    ) -> Reshape:
        if id(starting_submobject) not in self.reworded or not isinstance(submobject, VMobject):
            submobject.interpolate(starting_submobject, target_copy, alpha, self.path_func)
            return self
        going = alpha < 0.5
        submobject.interpolate(starting_submobject, target_copy, 0.0 if going else 1.0, self.path_func)
        _scaled_opacities(submobject, 1 - 2 * alpha if going else 2 * alpha - 1)
        return self


WAY_SAMPLES = 17  # places along a kept text's way at which it is tried against the fading texts


def _box(members: Sequence[Mobject]) -> np.ndarray:
    """The points' box of `members` (each with points): left, bottom, right, top."""
    stacked = np.concatenate([m.points for m in members])
    return np.concatenate([stacked[:, :2].min(axis=0), stacked[:, :2].max(axis=0)])


def _meet(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3])


def _texts_by_member(mobject: Mobject) -> dict[int, Text]:
    """Each member of `mobject`'s family inside a text, by id, with that text."""
    owners: dict[int, Text] = {}

    def walk(mob: Mobject, inside: Text | None) -> None:
        inside = mob if isinstance(mob, Text) else inside
        if inside is not None:
            owners[id(mob)] = inside
        for sub in mob.submobjects:
            walk(sub, inside)

    walk(mobject, None)
    return owners


def _crossing_members(
    zipped: list[tuple[Mobject, Mobject, Mobject]], reworded: set[int], starting: Mobject
) -> set[int]:
    """The members (of the starting copy `starting`, by id) of each text that keeps its words but
    whose way crosses a place where a reworded text fades out or in: drawn whole there, it would
    pass over the half-faded words (issue 58: dp's "GPU 7" slid across "GPU 6" going and "GPU 8"
    coming, from 8 cards to 16). Such a text fades with the others: out where it stood, in where
    it goes. (A text's glyphs are the members zipped, each with its place to go.)"""
    owners = _texts_by_member(starting)
    glyphs: dict[int, tuple[list[Mobject], list[Mobject]]] = {}
    for _, start, end in zipped:
        owner = owners.get(id(start))
        if owner is not None:
            pair = glyphs.setdefault(id(owner), ([], []))
            pair[0].append(start)
            pair[1].append(end)
    fading, kept = [], []
    for starts, ends in glyphs.values():
        places = (_box(starts), _box(ends))
        if any(id(m) in reworded for m in starts):
            fading.extend(places)
        elif not np.allclose(*places, atol=0.02):
            kept.append((starts, places))
    crossing: set[int] = set()
    for starts, (a, b) in kept:
        way = [a + (b - a) * f for f in np.linspace(0.0, 1.0, WAY_SAMPLES)]
        if any(_meet(place, box) for place in way for box in fading):
            crossing.update(id(m) for m in starts)
    return crossing


def reword(old: Sequence[Text], new: Sequence[Text]) -> list[Animation]:
    """Texts giving way to the next ones (a stack's names when its blocks change): a text whose
    words come again moves to where they stand now; the others go over the first half and the
    new ones come over the second (`swap`), never drawn half-faded over one another."""
    going, coming, moves = list(old), [], []
    for text in new:
        same = next((o for o in going if o.original_text == text.original_text), None)
        if same is None:
            coming.append(text)
            continue
        going.remove(same)
        moves.append(ReplacementTransform(same, text))
    if going:
        moves.append(swap(VGroup(*going), VGroup(*coming)) if coming else vanish(VGroup(*going)))
    elif coming:
        moves.append(appear(VGroup(*coming)))
    return moves
