"""Texts drawn over each other inside an animation (issue 58: a text that changes is swapped
or morphed in place, never stacked): a cross-fade's stack, both texts part-faded, and a text drawn
whole that moves across one fading. The layout check reports both at the dry run's moments
(dtfilm.onscreen.layout.LayoutCheck.moment)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
from manim import Scene, Text

from dtfilm.onscreen.boxes import NUMBERS_AND_TEXTS, Box, fill_opacity, first_drawn, pieces_on_screen, walk_pieces

FADED = (0.05, 0.95)  # a text whose glyphs' opacity lies between these is part-way faded


def _part_faded(text: Text) -> bool:
    """Whether the text is drawn part-way faded."""
    return FADED[0] < _drawn_opacity(text) < FADED[1]


def crossfade_stacks(scene: Scene) -> list[tuple[Text, Text]]:
    """At a moment inside an animation: pairs of different texts drawn over each other while
    both are part-way faded, one going as the other comes in its place. A cross-fade stacks them
    ("4.29 GB" over "73 GB"); a text that changes is swapped in turn (`dtfilm.visuals.fade.swap`),
    the old gone before the new comes (issue 58: it never stacks). The same words faded out and
    in at one place read as one text, and are not counted."""
    shown = pieces_on_screen(scene, NUMBERS_AND_TEXTS)  # (the values drawn walk the same pieces)
    fading = [text for text in shown if isinstance(text, Text) and _part_faded(text)]
    boxes = {id(text): Box.of(text) for text in fading}
    return [
        (a, b)
        for a, b in combinations(fading, 2)
        if a.original_text != b.original_text and boxes[id(a)].overlaps(boxes[id(b)])
    ]


AT_END = "_texts_at_end"  # a scene's texts at its last animation's end, by id: (the text, its box)
MOVED = 0.02  # a text whose box moved this far since the animation began is moving
PATH_SAMPLES = 17  # places along a moving text's way at which it is tried against the fading ones


def keep_texts_at_end(scene: Scene, texts: list[Text], boxes: dict[int, Box]) -> None:
    """The texts drawn at an animation's end, where the next animation starts them (`crossings`)."""
    if hasattr(scene, "__dict__"):
        scene.__dict__[AT_END] = {id(t): (t, boxes[id(t)]) for t in texts}


def crossings(scene: Scene) -> list[tuple[Text, Text]]:
    """At a moment inside an animation: a text drawn whole that moves (its box has moved since
    the animation began) across the place of another text fading there, part-way drawn (issue
    58: dp's "GPU 7" kept its words and slid over "GPU 6" going and "GPU 8" coming). Its way runs
    from where it began through where it is now to where it will be, taken as far again (a
    moment at half an animation's length, whose easing is symmetric: Manim's smooth). A fading
    text's places are where it began and where it is now (a Reshape fades a text out where it
    stood and in where it will stand)."""
    began: dict[int, tuple[Text, Box]] = getattr(scene, "__dict__", {}).get(AT_END, {})
    if not began:
        return []
    share = float(getattr(scene, "moment_share", 0.5)) or 0.5
    movers = []
    for text in pieces_on_screen(scene, NUMBERS_AND_TEXTS):
        start = began.get(id(text))
        if not isinstance(text, Text) or start is None or start[0] is not text or _drawn_opacity(text) < FADED[1]:
            continue
        now = Box.of(text)
        if max(abs(a - b) for a, b in zip(_edges_of(now), _edges_of(start[1]), strict=True)) > MOVED:
            movers.append((text, start[1], now))
    if not movers:
        return []
    places: list[tuple[Text, Box]] = []
    for text in walk_pieces(scene, (Text,), drawn_only=False):
        opacity = _drawn_opacity(text)
        start = began.get(id(text))
        drawn_before = start is not None and start[0] is text
        if FADED[0] < opacity < FADED[1] or (opacity <= FADED[0] and drawn_before):
            places.append((text, Box.of(text)))
            if drawn_before:
                places.append((text, start[1]))
    found: list[tuple[Text, Text]] = []
    for mover, start, now in movers:
        way = _way(start, now, 1.0 / share)
        for other, place in places:
            if other is mover or other.original_text == mover.original_text or (mover, other) in found:
                continue
            if any(box.overlaps(place) for box in way):
                found.append((mover, other))
    return found


def _edges_of(box: Box) -> tuple[float, float, float, float]:
    return box.left, box.right, box.bottom, box.top


def _way(start: Box, now: Box, reach: float) -> list[Box]:
    """Boxes along a straight way from `start` through `now`, to `reach` times as far as `now`."""
    a, b = np.array(_edges_of(start)), np.array(_edges_of(now))
    return [Box(*(a + (b - a) * f).tolist()) for f in np.linspace(0.0, reach, PATH_SAMPLES)]


def _drawn_opacity(text: Text) -> float:
    """The fill opacity of a text's first glyph (boxes.first_drawn: listing the family was a
    third of the check's cost); 0 for none."""
    glyph = first_drawn(text)
    return 0.0 if glyph is None else fill_opacity(glyph)
