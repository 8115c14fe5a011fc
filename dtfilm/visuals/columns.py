"""Memory per card as columns side by side, one per setting, each against its card's capacity line.

Plain values in, nothing read from the estimate: each column is its stacked parts (colour,
bytes), the Phrase over it, the Phrase naming it and an optional note under the name.
"""

from __future__ import annotations

from dataclasses import dataclass

from manim import DOWN, LEFT, RIGHT, UP, Animation, DashedLine, Line, Mobject, Rectangle, ReplacementTransform, VGroup

from dtfilm.phrases import Phrase
from dtfilm.visuals.text import label, wrapped
from dtfilm.visuals.theme import Theme

MIN_SEGMENT = 0.02  # a part too small to see still shows as a sliver


@dataclass(frozen=True)
class Column:
    parts: tuple[tuple[str, float], ...]  # (colour, bytes), bottom to top
    total: Phrase  # over the column
    name: Phrase  # under it: the setting
    over: bool  # past the card's capacity: the total is drawn in the warning colour
    note: Phrase | None = None  # under the name
    capacity: float | None = None  # its card's memory, where the settings compare cards (else the chart's)
    capacity_label: Phrase | None = None  # "94 GB card"


class MemoryColumns(VGroup):
    """`bars[i]` the stacked segments of column i, `totals[i]` its figure, `names[i]` and
    `notes[i]` its words; `line` the capacities, dashed, with `line_label`: one line across
    the chart where every column's card is alike, else a line over each run of columns on the
    same card, each labelled (a 94 GB card's column never sits under an 80 GB line)."""

    def __init__(
        self,
        theme: Theme,
        columns: list[Column],
        capacity: float,
        capacity_label: Phrase,
        width: float,
        height: float,
        span: float | None = None,
    ) -> None:
        super().__init__()
        capacities = [capacity if c.capacity is None else c.capacity for c in columns]
        cap_labels = [capacity_label if c.capacity_label is None else c.capacity_label for c in columns]
        # bytes at the chart's full height: the tallest column or card, or `span` (growing_spans)
        scale = height / (span if span is not None else growing_spans(columns, capacity)[-1])
        pitch = width / len(columns)
        bar_width = min(1.1, pitch * 0.55)
        self.bars, self.totals, self.names, self.notes = VGroup(), VGroup(), VGroup(), VGroup()
        for i, column in enumerate(columns):
            self._add_column(theme, column, (i + 0.5) * pitch, scale, bar_width, pitch)
        self.capacities = capacities
        self.line, self.line_label = VGroup(), VGroup()
        runs = _card_runs(capacities)
        for n, run in enumerate(runs):
            start, end = (run[0] * pitch, (run[-1] + 1) * pitch) if len(runs) > 1 else (0.0, width)
            self._add_capacity_line(theme, run, cap_labels[run[0]], capacities[run[0]] * scale, (start, end), n)
        self.baseline = Line([0, 0, 0], [width, 0, 0], color=theme.faint, stroke_width=2)
        self.add(self.baseline, self.line, self.line_label, self.bars, self.totals, self.names, self.notes)

    def _add_column(self, theme: Theme, column: Column, x: float, scale: float, bar_width: float, pitch: float) -> None:
        """A column's stacked parts at `x`, its figure over it, its name and note under it."""
        bottom = 0.0
        bar = VGroup()
        for colour, size in column.parts:
            tall = max(size * scale, MIN_SEGMENT)
            segment = Rectangle(
                width=bar_width, height=tall, fill_color=colour, fill_opacity=1, stroke_width=0
            ).move_to([x, bottom + tall / 2, 0])
            bar.add(segment)
            bottom += tall
        self.bars.add(bar)
        colour = theme.oom if column.over else theme.text
        total = label(theme, column.total, theme.small_size, colour, weight="BOLD")
        self.totals.add(total.next_to(bar, UP, buff=0.08))
        name = label(theme, column.name, theme.label_size, theme.text)
        self.names.add(name.move_to([x, -0.25, 0]))
        if column.note is not None:
            note = wrapped(theme, column.note, theme.small_size, pitch * 0.85, theme.muted)
            self.notes.add(note.next_to(name, DOWN, buff=0.08))

    def _add_capacity_line(
        self, theme: Theme, run: list[int], words: Phrase, line_y: float, span: tuple[float, float], n: int
    ) -> None:
        """The `n`-th card's capacity line over its `run` of columns, labelled: the first at the
        chart's left, as a single line's; the others above (or below) their own line's right end,
        clear of the columns' figures. A figure never sits struck through by its card's line."""
        for i in run:
            total = self.totals[i]
            if total.get_bottom()[1] < line_y + 0.06 and total.get_top()[1] > line_y - 0.06:
                total.shift(UP * (line_y + 0.08 - total.get_bottom()[1]))
        start, end = span
        line = DashedLine([start + (0.04 if n else 0), line_y, 0], [end - 0.04, line_y, 0], color=theme.accent)
        line.capacity = self.capacities[run[0]]
        line.columns = tuple(run)
        self.line.add(line)
        line_label = label(theme, words, theme.small_size, theme.accent)
        if n == 0:
            line_label.next_to(line.get_start(), LEFT, buff=0.15)
        else:
            line_label.next_to(line.get_end(), UP, buff=0.06).align_to(line.get_end(), RIGHT)
            for i in run:
                total = self.totals[i]
                if (
                    total.get_right()[0] > line_label.get_left()[0] - 0.05
                    and abs(total.get_center()[1] - line_label.get_center()[1])
                    < (total.height + line_label.height) / 2 + 0.05
                ):
                    line_label.next_to(line.get_end(), DOWN, buff=0.06).align_to(line.get_end(), RIGHT)
        self.line_label.add(line_label)

    def column(self, i: int) -> VGroup:
        """Everything of column i (its segments, figure, name and note)."""
        parts = [self.bars[i], self.totals[i], self.names[i]]
        if len(self.notes) > i:
            parts.append(self.notes[i])
        return VGroup(*parts)


def rise(bar: Mobject) -> Animation:
    """A column growing up from its base: taller only, its parts stacked as it grows (Manim's
    GrowFromEdge scales its width too, and each part grown alone leaves gaps between them)."""
    return ReplacementTransform(bar.copy().stretch(RISE_FROM, 1, about_edge=DOWN), bar)


RISE_FROM = 1e-3  # a column's height as it starts to rise, of its full height


def growing_spans(columns: list[Column], capacity: float) -> list[float]:
    """The bytes the chart's height spans once column i has grown, for each i: every card's
    capacity (their lines stand from the start) and the tallest column so far. A chart drawn at
    each in turn zooms out only as a column outgrows it, so the first columns are not slivers
    under a scale only the last needs."""
    tallest = max(capacity if c.capacity is None else c.capacity for c in columns)
    spans = []
    for column in columns:
        tallest = max(tallest, sum(size for _, size in column.parts))
        spans.append(tallest)
    return spans


def _card_runs(capacities: list[float]) -> list[list[int]]:
    """The columns by run of neighbours on the same card: they share one capacity line."""
    runs: list[list[int]] = []
    for i, cap in enumerate(capacities):
        if runs and capacities[runs[-1][-1]] == cap:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs
