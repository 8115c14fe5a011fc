"""The layout check: after every animation no two texts overlap or run together on a row, no
box's outline runs through a text or a drawn block, and nothing leaves the frame; and the design
check's (dtfilm.onscreen.design): no text too small or too faint, at most three layers of text."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from manim import DecimalNumber, Mobject, Polygram, Scene, Text

from dtfilm.onscreen.design import design_findings
from dtfilm.visuals.theme import FRAME_HEIGHT, FRAME_WIDTH

TOLERANCE = 0.01  # manim units; one pixel row at 480p is 1/60 = 0.0167
TEXT_GAP = 0.04  # texts closer than this read as touching, so they count as overlapping
# Two texts side by side on one row read as one ("GPU 16376GPU 16377") unless the gap between
# them is clearly wider than a word space inside either: a word space is about a quarter of an
# em, and a label's box about 0.7 em tall, so this many of its heights is about two spaces.
ROW_GAP_HEIGHTS = 0.6
SAME_ROW = 0.5  # texts whose boxes share this much of the shorter one's height stand on one row
# An outline (a node's box, a slot's frame) smaller than this on either side is a marker drawn
# around one piece on purpose (the loaf's current layer), not a box that holds pieces.
OUTLINE_MIN = 0.3
# A block fainter than this (a highlighter's band, a spill's wash) lets an outline under it show.
OPAQUE = 0.5


@dataclass(frozen=True)
class Box:
    left: float
    right: float
    bottom: float
    top: float

    @classmethod
    def of(cls, mob: Mobject) -> Box:
        """The bounding box of a mobject and its family, in one pass over their points."""
        points = [m.points for m in mob.get_family() if m.has_points()]
        if not points:
            center = mob.get_center()
            return cls(center[0], center[0], center[1], center[1])
        stacked = np.concatenate(points)
        low, high = stacked.min(axis=0), stacked.max(axis=0)
        return cls(float(low[0]), float(high[0]), float(low[1]), float(high[1]))

    def overlaps(self, other: Box, gap: float = 0.0) -> bool:
        """True when the boxes intersect, or come closer than `gap` on both axes."""
        return (
            min(self.right, other.right) - max(self.left, other.left) > -gap + TOLERANCE
            and min(self.top, other.top) - max(self.bottom, other.bottom) > -gap + TOLERANCE
        )

    @property
    def height(self) -> float:
        return self.top - self.bottom

    @property
    def centre(self) -> tuple[float, float]:
        return (self.left + self.right) / 2, (self.bottom + self.top) / 2

    @property
    def width(self) -> float:
        return self.right - self.left

    def runs_into(self, other: Box) -> bool:
        """True when the two stand on one row and the gap between them is no wider than a word
        space or two: a reader takes them for one label."""
        shared = min(self.top, other.top) - max(self.bottom, other.bottom)
        shorter = min(self.height, other.height)
        if shorter <= 0 or shared < SAME_ROW * shorter:
            return False
        gap = max(self.left, other.left) - min(self.right, other.right)
        return gap < ROW_GAP_HEIGHTS * shorter - TOLERANCE

    def cuts(self, other: Box) -> bool:
        """True when this box's edge runs through `other`: they share more than a hairline on
        both axes, and `other` reaches out of this box without holding all of it (a piece wholly
        inside or wholly outside a box is where it belongs; a box drawn on a larger piece too)."""
        if not self.overlaps(other, -TOLERANCE):
            return False
        out = max(self.left - other.left, other.right - self.right, self.bottom - other.bottom, other.top - self.top)
        holds = (
            other.left <= self.left + TOLERANCE
            and other.right >= self.right - TOLERANCE
            and other.bottom <= self.bottom + TOLERANCE
            and other.top >= self.top - TOLERANCE
        )
        return out > TOLERANCE and not holds

    def inside_frame(self) -> bool:
        return (
            self.left >= -FRAME_WIDTH / 2 - TOLERANCE
            and self.right <= FRAME_WIDTH / 2 + TOLERANCE
            and self.bottom >= -FRAME_HEIGHT / 2 - TOLERANCE
            and self.top <= FRAME_HEIGHT / 2 + TOLERANCE
        )


def visible(mob: Mobject) -> bool:
    family = [m for m in mob.get_family() if m.has_points()]
    if not family:
        return False
    return any(m.get_fill_opacity() > 0.05 or m.get_stroke_opacity() > 0.05 for m in family)


# The pieces the values drawn are read from at each moment inside an animation (dtfilm.onscreen.drawn):
# the cross-fade check at those moments reads its texts from the same walk
NUMBERS_AND_TEXTS: tuple[type[Mobject], ...] = (DecimalNumber, Text)


def pieces_on_screen(scene: Scene, kinds: tuple[type[Mobject], ...] = (Text,)) -> list[Mobject]:
    """Every visible piece of these kinds in the scene, each once (a Text's glyphs are not
    counted separately: the walk stops at a piece of a kind). A ChapterScene's observers ask
    this of one screen up to three times (the layout check, the text log, the values drawn):
    the walk is made once a screen (`scene.observed` says which)."""
    screen = getattr(scene, "observed", None)
    if screen is None:
        return _walk_pieces(scene, kinds)
    kept = scene.__dict__.setdefault("_pieces_seen", {})
    if kept.get("screen") != screen:
        kept.clear()
        kept["screen"] = screen
    if kinds not in kept:
        kept[kinds] = _walk_pieces(scene, kinds)
    return list(kept[kinds])


def _walk_pieces(scene: Scene, kinds: tuple[type[Mobject], ...]) -> list[Mobject]:
    found: list[Mobject] = []
    seen: set[int] = set()

    def walk(mob: Mobject) -> None:
        if id(mob) in seen:
            return
        seen.add(id(mob))
        if isinstance(mob, kinds):
            if visible(mob) and _has_width(mob):
                found.append(mob)
            return
        for sub in mob.submobjects:
            walk(sub)

    for top in scene.mobjects:
        walk(top)
    return found


def _has_width(mob: Mobject) -> bool:
    """`mob.width > 0`, answered by the first member drawn wider than a point (a glyph, as a
    rule); Manim's width walks the family once for each end of the axis: 3.6 s of a profiled
    30 s check."""
    for member in mob.get_family():
        points = member.points
        if len(points) and points[:, 0].max() > points[:, 0].min():
            return True
    return Box.of(mob).width > 0


def texts_on_screen(scene: Scene) -> list[Text]:
    """Every visible Text in the scene (a Text's glyphs are not counted separately)."""
    return [piece for piece in pieces_on_screen(scene) if isinstance(piece, Text)]


def outline(mob: Mobject) -> bool:
    """A drawn box that is only an outline (a node's box, a slot's frame): a closed shape with a
    visible stroke and no fill, large enough to hold pieces."""
    return (
        isinstance(mob, Polygram)
        and mob.get_fill_opacity() <= 0.05
        and mob.get_stroke_opacity() > 0.05
        and mob.get_stroke_width() > 0
        and mob.width >= OUTLINE_MIN
        and mob.height >= OUTLINE_MIN
    )


def _closed(mob: Mobject) -> bool:
    """Manim's `VMobject.is_closed`: whether its first and last points are equal to within
    `np.allclose` (|a - b| <= atol + 1e-5 |b|, atol its tolerance), without NumPy's cost for
    a call on three numbers (half the layout check's walk over shapes)."""
    atol = mob.tolerance_for_point_equality
    for a, b in zip(mob.points[0].tolist(), mob.points[-1].tolist(), strict=True):
        if not (math.isfinite(a) and math.isfinite(b)):
            return bool(mob.is_closed())
        if abs(a - b) > atol + 1e-5 * abs(b):
            return False
    return True


def shapes_on_screen(scene: Scene) -> tuple[list[tuple[Mobject, Mobject]], list[tuple[Mobject, Mobject]]]:
    """The outlines and the opaque blocks on screen, each with the top-level piece it belongs
    to (its name in a problem). A Text counts as text, never as the blocks of its glyphs; a
    piece marked `overflows` (a gauge past its card's capacity) runs past its box by design."""
    outlines: list[tuple[Mobject, Mobject]] = []
    blocks: list[tuple[Mobject, Mobject]] = []
    seen: set[int] = set()

    def walk(mob: Mobject, top: Mobject) -> None:
        if id(mob) in seen or isinstance(mob, Text) or getattr(mob, "overflows", False):
            return
        seen.add(id(mob))
        if mob.has_points():
            if outline(mob):
                outlines.append((mob, top))
            elif mob.get_fill_opacity() >= OPAQUE and _closed(mob) and min(mob.width, mob.height) > TOLERANCE:
                blocks.append((mob, top))
        for sub in mob.submobjects:
            walk(sub, top)

    for top in scene.mobjects:
        walk(top, top)
    return outlines, blocks


@dataclass
class LayoutCheck:
    """An observer for ChapterScene: records every overlap and every escape from the frame."""

    problems: list[str] = field(default_factory=list)
    # The design check's findings (dtfilm.onscreen.design), said apart from the problems as
    # `design:` lines; `check` fails on either (dtfilm.check.chapters.ChapterCheck.failed).
    design: list[str] = field(default_factory=list)
    checks: int = 0
    _seen: dict[str, int] = field(default_factory=dict)  # a problem without its coordinates -> index

    def __call__(self, scene: Scene, beat: str) -> None:
        self.checks += 1
        texts = texts_on_screen(scene)
        boxes = {id(t): Box.of(t) for t in texts}
        for a, b in combinations(texts, 2):
            if boxes[id(a)].overlaps(boxes[id(b)], TEXT_GAP):
                self._report(f"{beat}: text {_name(a)} overlaps {_name(b)}")
            elif boxes[id(a)].runs_into(boxes[id(b)]):
                self._report(f"{beat}: text {_name(a)} runs into {_name(b)} (one row, no word space between)")
        self._check_outlines(scene, texts, boxes, beat)
        centres = {key: box.centre for key, box in boxes.items()}
        for finding in design_findings(scene, texts, _name, centres):
            self._report(f"{beat}: {finding}", self.design)
        for mob in scene.mobjects:
            if visible(mob) and not Box.of(mob).inside_frame():
                self._report(f"{beat}: {_name(mob)} leaves the frame ({_edges(mob)})")
        keep_texts_at_end(scene, texts, boxes)

    def moment(self, scene: Scene, beat: str) -> None:
        """At a moment inside an animation (the dry run's `moments`): the texts a cross-fade draws
        over each other there, half-faded, as design findings (issue 58: a text that changes is
        swapped or morphed in place, never stacked)."""
        for a, b in crossfade_stacks(scene):
            self._report(
                f"{beat}: text {_name(a)} is drawn over {_name(b)}, both part-faded (a cross-fade's stack);"
                " a text that changes goes before its next words come (dtfilm.visuals.fade.swap)",
                self.design,
            )
        for mover, other in crossings(scene):
            self._report(
                f"{beat}: text {_name(mover)} moves across {_name(other)}, drawn whole over it while it"
                " fades (a cross-fade's stack); a text that moves fades with the others or goes round"
                " them (dtfilm.visuals.fade.Reshape)",
                self.design,
            )

    def _check_outlines(self, scene: Scene, texts: list[Text], boxes: dict[int, Box], beat: str) -> None:
        """A box's outline that runs through a text, or through a block another piece draws
        (a rack's node box under the loaf): the two are drawn on top of one another."""
        outlines, blocks = shapes_on_screen(scene)
        if not outlines:
            return
        block_boxes = [Box.of(block) for block, _ in blocks]
        for frame, owner in outlines:
            edge = Box.of(frame)
            for text in texts:
                if edge.cuts(boxes[id(text)]):
                    self._report(f"{beat}: the outline of {_piece(frame, owner)} runs through text {_name(text)}")
            for (block, other), box in zip(blocks, block_boxes, strict=True):
                if other is not owner and edge.cuts(box):
                    self._report(f"{beat}: the outline of {_piece(frame, owner)} runs through {_piece(block, other)}")

    def _report(self, problem: str, into: list[str] | None = None) -> None:
        """Record a problem once (in `into`, the problems by default): the same kind of piece
        leaving the frame in the same beat (180 blocks of a timeline, say) is one problem with a count."""
        found = self.problems if into is None else into
        key = re.sub(r" \(x .*\)$", "", problem)
        if key not in self._seen:
            self._seen[key] = len(found)
            found.append(problem)
            return
        at = self._seen[key]
        count = re.search(r" \(×(\d+)\)$", found[at])
        first = found[at][: count.start()] if count else found[at]
        found[at] = f"{first} (×{int(count.group(1)) + 1 if count else 2})"


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
    for text in _all_texts(scene):
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
    """The fill opacity of a text's first glyph (the first member of its family with points,
    found without listing the family, a third of the check's cost); 0 for none."""
    stack: list[Mobject] = [text]
    while stack:
        mob = stack.pop()
        if mob.has_points():
            return float(mob.get_fill_opacity())
        stack.extend(reversed(mob.submobjects))
    return 0.0


def _all_texts(scene: Scene) -> list[Text]:
    """Every Text in the scene with a width, drawn or not (a text halfway through a swap is unseen)."""
    found: list[Text] = []
    seen: set[int] = set()

    def walk(mob: Mobject) -> None:
        if id(mob) in seen:
            return
        seen.add(id(mob))
        if isinstance(mob, Text):
            if _has_width(mob):
                found.append(mob)
            return
        for sub in mob.submobjects:
            walk(sub)

    for top in scene.mobjects:
        walk(top)
    return found


def texts_meet(these: list[Mobject], those: list[Mobject]) -> bool:
    """Whether a text among `these` pieces and a different text among `those` stand in one place
    (their boxes overlap): faded out and in together, they would be drawn over each other."""

    def texts(pieces: list[Mobject]) -> list[tuple[str, Box]]:
        found = [m for piece in pieces for m in piece.get_family() if isinstance(m, Text)]
        return [(text.original_text, Box.of(text)) for text in found if _has_width(text)]

    theirs = texts(those)
    return any(a != b and box.overlaps(other) for a, box in texts(these) for b, other in theirs)


def _name(mob: Mobject) -> str:
    if isinstance(mob, Text):
        return repr(getattr(mob, "phrase", None).text if hasattr(mob, "phrase") else mob.original_text)
    texts = [t for t in mob.get_family() if isinstance(t, Text)]
    inner = f" holding {_name(texts[0])}" if texts else ""
    return f"{type(mob).__name__}{inner}"


def _piece(mob: Mobject, owner: Mobject) -> str:
    """A drawn shape by its kind and the top-level piece it is part of."""
    kind = type(mob).__name__
    return kind if owner is mob else f"a {kind} of {_name(owner)}"


def _edges(mob: Mobject) -> str:
    box = Box.of(mob)
    return f"x {box.left:.2f}..{box.right:.2f}, y {box.bottom:.2f}..{box.top:.2f}"
