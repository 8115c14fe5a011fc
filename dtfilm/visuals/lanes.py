"""One card's step as two lanes, compute over communication, time left to right: a block's width
is its duration, and the compute lane's gaps (the traffic the step waits for) are drawn as the
exposed part. Plain values in: spans in seconds, colours and the Phrases shown."""

from __future__ import annotations

from dataclasses import dataclass

from manim import DOWN, LEFT, UP, Line, Rectangle, Triangle, VGroup

from dtfilm.phrases import Phrase
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import Theme

PIXEL_WIDTH = 14.2 / 854  # a pixel at 480p, in frame units
HAIRLINE_STROKE = 2.5  # about two pixels at 480p: a block narrower than a pixel still shows
SEPARATED_WIDTH = 0.12  # blocks at least this wide get a hairline between neighbours
MARKER_WIDTH = 0.06  # exposed parts narrower than this get a marker above, so the eye finds them
MARKED_WAITS = 4  # ... when they are few (a first gather, a last bucket); many make a band of their own


@dataclass(frozen=True)
class Span:
    """Something one lane does from `start` to `end` (seconds): `kind` picks its colour."""

    start: float
    end: float
    kind: str

    @property
    def seconds(self) -> float:
        return self.end - self.start


class Block(Rectangle):
    """A drawn span, which keeps what it stands for."""

    span: Span


def gaps(busy: list[Span], end: float) -> list[Span]:
    """The stretches of [0, end] that no busy span covers: where compute waits."""
    found: list[Span] = []
    cursor = 0.0
    for span in sorted(busy, key=lambda s: s.start):
        if span.start > cursor:
            found.append(Span(cursor, span.start, "wait"))
        cursor = max(cursor, span.end)
    if end > cursor:
        found.append(Span(cursor, end, "wait"))
    return found


class Lanes(VGroup):
    """`compute` and `comm` hold the blocks, `waits` the exposed parts in the compute lane,
    `markers` the pointers over the narrow ones. `units_per_second` is the scale: every block
    is `span.seconds * units_per_second` wide, its left edge `span.start` from the lanes' left.
    `colours` gives each kind its colour and fill opacity; `edges` the kinds edged in their own
    colour, and how wide (a reduce-scatter hollow, as dtfilm.visuals.collectives draws it)."""

    def __init__(
        self,
        theme: Theme,
        compute: list[Span],
        comm: list[Span],
        colours: dict[str, tuple[str, float]],
        names: tuple[Phrase | str, Phrase | str],
        width: float,
        lane_height: float = 0.5,
        lane_gap: float = 0.6,
        edges: dict[str, float] | None = None,
    ) -> None:
        super().__init__()
        self.edges = edges or {}
        self.seconds = max(s.end for s in [*compute, *comm])  # compute is never empty
        self.units_per_second = width / self.seconds
        self.left_x = 0.0
        self.compute = self._lane(compute, colours, 0.0, lane_height)
        comm_y = -(lane_height + lane_gap)
        self.comm = self._lane(comm, colours, comm_y, lane_height)
        self.waits = self._lane(gaps(compute, self.seconds), colours, 0.0, lane_height)
        self.markers = VGroup(
            *[
                Triangle(fill_color=theme.oom, fill_opacity=1, stroke_width=0)
                .rotate(3.14159)
                .scale(0.09)
                .next_to(w, UP, buff=0.05)
                for w in self.waits
                if w.width < MARKER_WIDTH and len(self.waits) <= MARKED_WAITS
            ]
        )
        self.tracks = VGroup(
            *[
                Line([0, y, 0], [width, y, 0], stroke_color=theme.faint, stroke_width=1)
                for y in (-lane_height / 2, comm_y - lane_height / 2)
            ]
        )
        self.names = VGroup(
            *[
                label(theme, name, theme.small_size, theme.muted).next_to([0, y, 0], LEFT, buff=0.15)
                for name, y in zip(names, (0.0, comm_y), strict=True)
            ]
        )
        self.add(self.tracks, self.compute, self.comm, self.waits, self.markers, self.names)

    def _lane(self, spans: list[Span], colours: dict[str, tuple[str, float]], y: float, height: float) -> VGroup:
        lane = VGroup()
        for span in spans:
            if span.seconds <= 0:
                continue
            colour, opacity = colours[span.kind]
            width = span.seconds * self.units_per_second
            separated = width >= SEPARATED_WIDTH
            hairline = width < PIXEL_WIDTH  # its own colour's stroke shows it; its width stays its time
            edge = self.edges.get(span.kind)
            block = Block(
                width=width,
                height=height,
                fill_color=colour,
                fill_opacity=opacity,
                stroke_color=colour if hairline or edge else "#000000",
                stroke_width=HAIRLINE_STROKE if hairline else edge or (1 if separated else 0),
                stroke_opacity=opacity if hairline else 1.0 if edge else 0.5,
            )
            block.span = span
            block.move_to([span.start * self.units_per_second + width / 2, y, 0])
            lane.add(block)
        return lane

    def x_of(self, seconds: float) -> float:
        """Where a time falls, in frame units (the lanes may have moved)."""
        return self.tracks[0].get_left()[0] + seconds * self.units_per_second

    def bracket(self, theme: Theme, start: float, end: float, text: Phrase, below: bool, colour: str) -> VGroup:
        """A bracket along the lanes from `start` to `end` seconds, named: a scale the eye reads."""
        lane = self.comm if below else self.compute
        edge = lane.get_bottom()[1] - 0.12 if below else lane.get_top()[1] + 0.12
        direction = DOWN if below else UP
        left, right = self.x_of(start), self.x_of(end)
        tick = 0.1 * (-1 if below else 1)
        line = VGroup(
            Line([left, edge, 0], [right, edge, 0], stroke_color=colour, stroke_width=2),
            Line([left, edge, 0], [left, edge - tick, 0], stroke_color=colour, stroke_width=2),
            Line([right, edge, 0], [right, edge - tick, 0], stroke_color=colour, stroke_width=2),
        )
        name = label(theme, text, theme.small_size, colour).next_to(line, direction, buff=0.08)
        name.set_x(min(max((left + right) / 2, left + name.width / 2), self.x_of(self.seconds) - name.width / 2))
        return VGroup(line, name)
