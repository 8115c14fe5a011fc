"""A card: a GPU with its name and a stacked memory gauge against its capacity.

The card's body height is its capacity. Over capacity, the gauge spills past the top of the
card in red, up to a cap, so that a 405B gauge still stays in frame: past the cap the axis
is compressed above the card line (a break mark shows it), so every part still shows.
"""

from __future__ import annotations

from collections.abc import Callable

from manim import DOWN, UP, Line, RoundedRectangle, VGroup, VMobject

from dtfilm.cost.memory import MEMORY_PARTS
from dtfilm.phrases import Phrase
from dtfilm.visuals.shapes import rectangle
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import Theme

SPILL_CAP = 0.7  # the spill is drawn up to 70% of the card's height above it, then capped
MIN_SEGMENT = 0.004


def card_body(theme: Theme, width: float, height: float) -> RoundedRectangle:
    """A card's outline, filled: the same box wherever a card is drawn (a gauge's, a ring's)."""
    return RoundedRectangle(
        corner_radius=0.08,
        width=width,
        height=height,
        fill_color=theme.card_fill,
        fill_opacity=1,
        stroke_color=theme.card_edge,
        stroke_width=2,
    )


class CardBox(VGroup):
    """One GPU: a body (its capacity), a name under it, and a gauge that can be refilled."""

    def __init__(self, theme: Theme, name: Phrase, width: float = 0.95, height: float = 2.2) -> None:
        super().__init__()
        self.theme = theme
        self.body = card_body(theme, width, height)
        self.name = label(theme, name, theme.small_size, theme.muted)
        self.name.next_to(self.body, DOWN, buff=0.12)
        self.add(self.body, self.name)

    @property
    def inner_width(self) -> float:
        return self.body.width - 0.14

    def gauge(self, ledger: dict[str, float], capacity: float, outline: dict[str, str] | None = None) -> VGroup:
        """Stacked segments (one colour per memory part) for a ledger, plus the spill if any.
        `outline` draws some parts' edges in a colour (a shard in its card's colour)."""
        return gauge_for(self.theme, self.body, ledger, capacity, self.inner_width, outline)


GAUGE_INSET = 0.04  # the gauge sits this far inside the card's bottom and top edges


def gauge_mapping(total: float, capacity: float, inner: float):
    """Bytes (counted from the bottom of the stack) to drawn height: to scale up to the card's
    capacity, so a full card fills it exactly; above it, a ledger too tall for the cap is
    compressed to fit (a broken axis), so that every part still shows its share."""
    scale = inner / capacity
    excess = total - capacity
    room = SPILL_CAP * inner
    above = room / excess if excess * scale > room else scale

    def drawn(x: float) -> float:
        return x * scale if x <= capacity else inner + (x - capacity) * above

    return drawn, above < scale


def gauge_for(
    theme: Theme,
    body: VMobject,
    ledger: dict[str, float],
    capacity: float,
    width: float,
    outline: dict[str, str] | None = None,
) -> VGroup:
    inner = body.height - 2 * GAUGE_INSET
    total = sum(ledger[p] for p in MEMORY_PARTS)
    drawn, broken = gauge_mapping(total, capacity, inner)
    bottom = body.get_bottom()[1] + GAUGE_INSET
    segments, y = _segments(theme, body, ledger, drawn, width, outline, bottom, inner)
    group = VGroup(segments)
    group.segments = segments
    group.spill = None
    if total > capacity:
        top = bottom + inner
        spill_height = max(bottom + y - top, MIN_SEGMENT)
        spill = rectangle(
            width + 0.14,
            spill_height,
            fill_color=theme.oom,
            fill_opacity=0.12,
            stroke_color=theme.oom,
            stroke_width=3,
        )
        spill.move_to([body.get_center()[0], top + spill_height / 2, 0])
        spill.overflows = True
        group.spill = spill
        group.add(spill)
        if broken:
            group.add(*_broken_axis(theme, spill, top))
    return group


def _segments(
    theme: Theme,
    body: VMobject,
    ledger: dict[str, float],
    drawn: Callable[[float], float],
    width: float,
    outline: dict[str, str] | None,
    bottom: float,
    inner: float,
) -> tuple[VGroup, float]:
    """The ledger's parts stacked up from `bottom`, each as tall as `drawn` makes it (a part too
    thin to see left out), and the stack's height."""
    segments = VGroup()
    y, below = 0.0, 0.0
    for part in MEMORY_PARTS:
        height = drawn(below + ledger[part]) - drawn(below)
        below += ledger[part]
        if height < MIN_SEGMENT:
            continue
        edge = (outline or {}).get(part)
        rect = rectangle(
            width,
            height,
            fill_color=theme.memory[part],
            fill_opacity=1,
            stroke_color=edge or theme.memory[part],
            stroke_width=2.5 if edge else 0,
        )
        rect.move_to([body.get_center()[0], bottom + y + height / 2, 0])
        rect.part = part
        # A part past the card's capacity is drawn past its top, through whatever box holds the
        # card, by design: the layout check lets it (dtfilm.onscreen.layout).
        rect.overflows = y + height > inner + GAUGE_INSET
        segments.add(rect)
        y += height
    return segments, y


def _broken_axis(theme: Theme, spill: VMobject, top: float) -> list[VMobject]:
    """Past the cap the axis is compressed: a break mark at the card's line and a red arrow head
    say "more than drawn to scale"."""
    drawn: list[VMobject] = []
    for dy in (0.05, 0.13):
        mark = Line(
            [spill.get_left()[0] - 0.05, top + dy - 0.04, 0],
            [spill.get_right()[0] + 0.05, top + dy + 0.04, 0],
            stroke_color=theme.background,
            stroke_width=4,
        )
        mark.overflows = True
        drawn.append(mark)
    tip = VMobject(stroke_color=theme.oom, stroke_width=4)
    tip.set_points_as_corners(
        [
            spill.get_corner(UP + [-1, 0, 0]) + [0.1, 0, 0],
            spill.get_top() + [0, 0.18, 0],
            spill.get_corner(UP + [1, 0, 0]) - [0.1, 0, 0],
        ]
    )
    tip.overflows = True
    return [*drawn, tip]
