"""Grids of small cells that make a count felt: cards filled with a model's training state,
and a calendar of months or days filling as a training run goes on."""

from __future__ import annotations

import math
from dataclasses import dataclass

from manim import Rectangle, Square, VGroup

from dtfilm.units import SECONDS_PER_DAY, SECONDS_PER_YEAR
from dtfilm.visuals.theme import Theme

MAX_CELLS = 120  # beyond this a waffle draws this many cells and says how many it stands for


def cell_pours(capacity: float, part_bytes: list[tuple[str, float]], cells: int) -> list[list[tuple[str, float]]]:
    """For each card-sized cell the state (`part_bytes`, bottom up) pours into: the parts that
    land in it, bottom up, each with its share of the cell (the shares of the last, partial cell
    add up to less than 1). Every part shows in the cells it lands in, in proportion: a cell is
    not painted in the colour of the part filling most of it (7B's first card showed no weights
    and no gradients, 14 GB each of its 80)."""
    out = []
    for cell in range(cells):
        low, high = cell * capacity, (cell + 1) * capacity
        segments, below = [], 0.0
        for part, size in part_bytes:
            share = max(0.0, min(high, below + size) - max(low, below)) / capacity
            if share > 0:
                segments.append((part, share))
            below += size
        out.append(segments)
    return out


class CardWaffle(VGroup):
    """One square per card it takes to hold the state, filled bottom up with the parts of the
    state that land on it (weights, gradients, master, m, v), each in its colour and to scale,
    `per_line` squares to a line. `fills[i]` is square i's stack."""

    def __init__(
        self,
        theme: Theme,
        capacity: float,
        part_bytes: list[tuple[str, float]],
        needed: int,
        size: float = 0.22,
        gap: float = 0.06,
        per_line: int = 24,
    ):
        super().__init__()
        cells = min(needed, MAX_CELLS)
        self.elided = needed > cells
        self.outlines = VGroup()
        self.fills = VGroup()
        for i, segments in enumerate(cell_pours(capacity, part_bytes, cells)):
            x, y = (i % per_line) * (size + gap), -(i // per_line) * (size + gap)
            outline = Square(size, stroke_color=theme.card_edge, stroke_width=1.5, fill_opacity=0).move_to([x, y, 0])
            stack, bottom = VGroup(), y - size / 2
            for part, share in segments:
                piece = Rectangle(
                    width=size, height=size * share, fill_color=theme.memory[part], fill_opacity=1, stroke_width=0
                )
                piece.move_to([x, bottom + size * share / 2, 0])
                piece.part = part
                stack.add(piece)
                bottom += size * share
            self.outlines.add(outline)
            self.fills.add(stack)
        self.add(self.outlines, self.fills)


class Calendar(VGroup):
    """`columns` x `rows` cells (years by months, or weeks by days), of which `filled` (a
    fractional count) are filled column by column."""

    def __init__(
        self, theme: Theme, columns: int, rows: int, filled: float, size: float, gap: float, color: str
    ) -> None:
        super().__init__()
        self.color = color
        self.cells = VGroup()
        self.fills = VGroup()
        # Each cell is a copy of one square (and each whole fill of one fill), moved: the same
        # points as a square made in its place, for a fifth of the time (up to 480 of each).
        square = Square(size, stroke_color=theme.faint, stroke_width=1.2, fill_opacity=0)
        whole = _fill(size, 1.0, color)
        for i in range(columns * rows):
            column, row = divmod(i, rows)
            x, y = column * (size + gap), -row * (size + gap)
            self.cells.add(square.copy().move_to([x, y, 0]))
            share = min(1.0, filled - i)
            if share > 0:
                fill = whole.copy() if share == 1.0 else _fill(size, share, color)
                fill.align_to(self.cells[-1], direction=[0, 1, 0]).set_x(x)
                self.fills.add(fill)
        self.add(self.cells, self.fills)


def _fill(size: float, share: float, color: str) -> Rectangle:
    """A cell's fill, `share` of it filled (from the top, once aligned)."""
    return Rectangle(width=size, height=size * share, fill_color=color, fill_opacity=0.9, stroke_width=0)


def calendar_columns(filled: float, rows: int) -> int:
    return max(1, math.ceil(filled / rows))


@dataclass(frozen=True)
class CalendarScale:
    """What a calendar's square and column stand for, in seconds and in words."""

    cell_seconds: float
    rows: int
    cell: str
    column: str

    @property
    def axis(self) -> str:
        return f"each column {self.column}, each square {self.cell}"


# From the finest: a long time collapses to the first scale that draws it in MAX_CELLS squares.
CALENDAR_SCALES = (
    CalendarScale(SECONDS_PER_DAY, 7, "a day", "a week"),
    CalendarScale(SECONDS_PER_YEAR / 12, 12, "a month", "a year"),
    CalendarScale(SECONDS_PER_YEAR, 10, "a year", "a decade"),
    CalendarScale(10 * SECONDS_PER_YEAR, 10, "a decade", "a century"),
    CalendarScale(100 * SECONDS_PER_YEAR, 10, "a century", "a millennium"),
)
MAX_CELLS = 480


def calendar_scale(seconds: float, finest: int = 0) -> tuple[CalendarScale, float, bool]:
    """The scale that draws `seconds` in at most MAX_CELLS squares (starting at CALENDAR_SCALES
    [finest]), the squares filled, and whether even the coarsest scale had to be cut short."""
    for scale in CALENDAR_SCALES[finest:]:
        cells = seconds / scale.cell_seconds
        if cells <= MAX_CELLS:
            return scale, cells, False
    return CALENDAR_SCALES[-1], float(MAX_CELLS), True
