"""What is on screen, and where: a piece's box (in Manim units), whether it is drawn, the
texts, the outlines and the blocks of a scene. The layout check (dtfilm.onscreen.layout) and the
cross-fade finder (dtfilm.onscreen.crossfades) read the screen through these."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from manim import DecimalNumber, Mobject, Polygram, Scene, Text, VMobject

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
        return cls.of_drawn(drawn_members(mob), mob)

    @classmethod
    def of_drawn(cls, drawn: list[Mobject], mob: Mobject) -> Box:
        """`Box.of(mob)`, where `drawn` are its family's members with points (drawn_members),
        listed already."""
        if not drawn:
            center = mob.get_center()
            return cls(center[0], center[0], center[1], center[1])
        stacked = np.concatenate([m.points for m in drawn]) if len(drawn) > 1 else drawn[0].points
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


def drawn_members(mob: Mobject) -> list[Mobject]:
    """The members of `mob`'s family with points (Manim's `has_points`), in its order."""
    return [m for m in mob.get_family() if len(m.points)]


def first_drawn(mob: Mobject) -> Mobject | None:
    """The first member of `mob`'s family with points (a text's first glyph), found without
    listing the family; None where none has points."""
    stack = [mob]
    while stack:
        member = stack.pop()
        if len(member.points):
            return member
        stack.extend(reversed(member.submobjects))
    return None


def visible(mob: Mobject) -> bool:
    return any_seen(drawn_members(mob))


def any_seen(drawn: list[Mobject]) -> bool:
    """Whether any of `drawn` (members with points) is drawn: its fill or its stroke more opaque
    than 0.05."""
    return any(fill_opacity(m) > 0.05 or stroke_opacity(m) > 0.05 for m in drawn)


@functools.cache
def _reads_first_rows(kind: type) -> bool:
    """Whether `kind` answers `get_fill_opacity` and `get_stroke_opacity` with VMobject's own
    methods (each the first row's alpha of its colours), none of them overridden."""
    own = (getattr(kind, name) is getattr(VMobject, name) for name in _OPACITY_METHODS)
    return issubclass(kind, VMobject) and all(own)


_OPACITY_METHODS = (
    "get_fill_opacity",
    "get_fill_opacities",
    "get_fill_rgbas",
    "get_stroke_opacity",
    "get_stroke_opacities",
    "get_stroke_rgbas",
)


def fill_opacity(mob: Mobject) -> float:
    """`mob.get_fill_opacity()`, the same number; a VMobject's read from its colours' first row
    (Manim reaches it through three calls, each a screen's every member after every animation)."""
    if not _reads_first_rows(type(mob)):
        return float(mob.get_fill_opacity())
    rgbas = vars(mob).get("fill_rgbas")
    return 0.0 if rgbas is None else float(rgbas[0, 3])


def stroke_opacity(mob: Mobject) -> float:
    """`mob.get_stroke_opacity()`, the same number, as `fill_opacity` reads it."""
    if not _reads_first_rows(type(mob)):
        return float(mob.get_stroke_opacity())
    rgbas = vars(mob).get("stroke_rgbas")
    return 0.0 if rgbas is None else float(rgbas[0, 3])


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
        return walk_pieces(scene, kinds)
    kept = scene.__dict__.setdefault("_pieces_seen", {})
    if kept.get("screen") != screen:
        kept.clear()
        kept["screen"] = screen
    if kinds not in kept:
        kept[kinds] = walk_pieces(scene, kinds)
    return list(kept[kinds])


def walk_pieces(scene: Scene, kinds: tuple[type[Mobject], ...], drawn_only: bool = True) -> list[Mobject]:
    """Every piece of these kinds in the scene with a width, each once; with `drawn_only` off,
    drawn or not (a text halfway through a swap is unseen). No walk goes inside a piece of a kind."""
    found: list[Mobject] = []
    seen: set[int] = set()

    def walk(mob: Mobject) -> None:
        if id(mob) in seen:
            return
        seen.add(id(mob))
        if isinstance(mob, kinds):
            if (not drawn_only or visible(mob)) and has_width(mob):
                found.append(mob)
            return
        for sub in mob.submobjects:
            walk(sub)

    for top in scene.mobjects:
        walk(top)
    return found


def has_width(mob: Mobject) -> bool:
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
    if not (
        isinstance(mob, Polygram)
        and fill_opacity(mob) <= 0.05
        and stroke_opacity(mob) > 0.05
        and mob.get_stroke_width() > 0
    ):
        return False
    width, height = extent(mob)
    return width >= OUTLINE_MIN and height >= OUTLINE_MIN


def extent(mob: Mobject) -> tuple[float, float]:
    """`(mob.width, mob.height)`, the same numbers; for a shape without submobjects, from one
    pass over its points (the layout check sizes every shape on screen after every animation:
    why's calendars are a thousand squares)."""
    points = mob.points
    if mob.submobjects or not len(points):
        return float(mob.width), float(mob.height)
    flat = points[:, :2]
    low, high = flat.min(axis=0), flat.max(axis=0)
    left, bottom = low.tolist()
    right, top = high.tolist()
    if math.isnan(left + bottom + right + top):
        return float(mob.width), float(mob.height)  # (Manim's answer where a coordinate is NaN)
    return right - left, top - bottom


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
        if len(mob.points):
            if outline(mob):
                outlines.append((mob, top))
            elif fill_opacity(mob) >= OPAQUE and _closed(mob) and min(extent(mob)) > TOLERANCE:
                blocks.append((mob, top))
        for sub in mob.submobjects:
            walk(sub, top)

    for top in scene.mobjects:
        walk(top, top)
    return outlines, blocks
