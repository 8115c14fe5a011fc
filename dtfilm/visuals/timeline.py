"""The pipeline timeline: stages by rows, time by columns, forward and backward blocks coloured
by micro-batch, the idle slots drawn as the bubble. Drawn from `simulate_schedule`."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from manim import RIGHT, UP, Mobject, Rectangle, VGroup

from dtfilm.cost.pipeline import BACKWARD_SLOTS, FORWARD_SLOTS, simulate_schedule
from dtfilm.phrases import Phrase
from dtfilm.visuals.shapes import rectangle
from dtfilm.visuals.text import ink_on, label
from dtfilm.visuals.theme import Theme

MAX_LABELLED_WIDTH = 0.34  # blocks narrower than this carry no micro-batch number


MAX_ROWS = 16  # beyond this, the first and last MAX_ROWS // 2 stages, with a gap between
MAX_BLOCKS = 2400  # beyond this, each stage's back-to-back work is drawn as one run
LABEL_PITCH = 0.3  # a card's name at full size takes this much height: closer rows are named every few
MARK_Z = 1  # a block's micro-batch number, over every block


def drawn_stages(pp: int) -> list[int | None]:
    """The stages drawn as rows; None marks the gap where middle stages are left out."""
    if pp <= MAX_ROWS:
        return list(range(pp))
    half = MAX_ROWS // 2
    return [*range(half), None, *range(pp - half, pp)]


@dataclass(frozen=True)
class TimelineWords:
    """What a timeline writes: each stage's card, and each block's pass and micro-batch."""

    stage: Callable[[int], Phrase]  # stage -> "GPU 2"
    block: Callable[[str, int], Phrase]  # ("F", 3) -> "F3" (micro-batches counted from 1)


class Timeline(VGroup):
    """`busy` holds the work blocks, `idle` the bubble's blocks; their widths are time. Rows fit
    `height`; many stages show the first and the last; many micro-batches merge into runs.
    `numbered` False: no block carries a micro-batch's number (interleaving's chunks)."""

    def __init__(
        self,
        theme: Theme,
        pp: int,
        micro_batches: int,
        schedule: str,
        words: TimelineWords,
        width: float = 10.0,
        row_height: float = 0.42,
        height: float = 3.4,
        numbered: bool = True,
    ) -> None:
        super().__init__()
        m = micro_batches
        blocks = simulate_schedule(pp, m, schedule)
        span = max(end for stage in blocks for (_, _, _, end) in stage)
        self.span_slots = span
        self.slot_width = width / span
        rows = drawn_stages(pp)
        pitch = min(row_height + 0.1, height / len(rows))
        row_height = pitch * 0.8
        dense = 2 * m * len(rows) > MAX_BLOCKS
        self.micro_batches, self.dense = m, dense
        # room for a micro-batch's number on its block (`numbered` False: its blocks are no micro-batch's)
        self.labelled = numbered and not dense and m <= 16 and pitch >= 0.4
        label_every = max(1, math.ceil(LABEL_PITCH / pitch - 1e-9))
        self.busy, self.idle, self.names, self.marks = VGroup(), VGroup(), VGroup(), VGroup()
        named = -label_every  # the row last named (or the gap's)
        for row, stage in enumerate(rows):
            y = -row * pitch
            if stage is None:
                gap = label(theme, "⋮", theme.small_size, theme.muted)
                self.names.add(gap.move_to([-0.45, y, 0]))
                named = row
                continue
            # every few rows and the last, each name at full size (scaled to a row of pp 16, it
            # was 10 px high at 480p), none closer to the one before, the gap or the last than that
            if stage == pp - 1 or (row - named >= label_every and len(rows) - 1 - row >= label_every):
                named = row
                name = label(theme, words.stage(stage), theme.small_size, theme.muted)
                name.move_to([-0.2, y, 0], aligned_edge=RIGHT)
                self.names.add(name)
            work = _runs(blocks[stage]) if dense else blocks[stage]
            cursor = 0
            for kind_, micro, start, end in work:
                if start > cursor:
                    self.idle.add(self._block(theme, cursor, start, y, row_height, None, False))
                block = self._block(theme, start, end, y, row_height, micro, kind_ == "B")
                block.micro_batch, block.kind = micro, kind_
                self.busy.add(block)
                self.marks.add(*self._mark(theme, block, words))
                cursor = end
            if cursor < span:
                self.idle.add(self._block(theme, cursor, span, y, row_height, None, False))
        # the numbers drawn over their blocks even after a shot re-adds the blocks to the scene (an
        # Indicate on a row does): drawn in the scene's order, GPU 0's and the last card's were hidden
        self.marks.set_z_index(MARK_Z)
        self.add(self.idle, self.busy, self.marks, self.names)

    def _block(
        self, theme: Theme, start: int, end: int, y: float, height: float, micro: int | None, backward: bool
    ) -> Rectangle:
        width = (end - start) * self.slot_width
        if micro is None:
            block = rectangle(
                width, height, fill_color=theme.oom, fill_opacity=0.14,
                stroke_color=theme.oom, stroke_width=1, stroke_opacity=0.6,
            )  # fmt: skip
        else:
            color = theme.pass_color(backward)  # the pass; the micro-batch is the number written on it
            block = rectangle(
                width - 0.02, height, fill_color=color, fill_opacity=1.0,
                stroke_color=theme.background, stroke_width=1.5,
            )  # fmt: skip
        block.move_to([(start + end) / 2 * self.slot_width, y, 0])
        return block

    def _mark(self, theme: Theme, block: Rectangle, words: TimelineWords) -> list[Mobject]:
        """A work block's micro-batch number, over it (none where the block has no room for it)."""
        if not self.labelled or block.width + 0.02 < MAX_LABELLED_WIDTH:
            return []
        ink = ink_on(theme, theme.pass_color(block.kind == "B"))  # (the light theme's forward is dark on light)
        mark = label(theme, words.block(block.kind, block.micro_batch), theme.least_size, ink)
        return [mark.move_to(block)] if mark.width < block.width - 0.02 else []

    def packed_row(
        self, theme: Theme, words: TimelineWords, number: Callable[[int], Phrase], most_numbers: int = 16
    ) -> SlotRow:
        """The first card's row packed into the slots the bubble's formula counts, laid over that
        row (the caller moves it): a slot is one micro-batch's forward and backward, micro-batch
        i's pair in slot i, and after them the row's idle time as its empty slots, outlined in the
        bad colour. Each slot's edges are its blocks' edges, so the slots and the empty ones can
        be counted (a grid drawn over the schedule cut through its blocks, a backward being 2
        units: issue 58). The slots are numbered above (`number(i)`, 1-based; past
        `most_numbers`, every few and the last)."""
        pair = FORWARD_SLOTS + BACKWARD_SLOTS
        slot, count = pair * self.slot_width, round(self.span_slots / pair)
        top = self.row_busy(0)
        y, height = top[0].get_center()[1], top[0].height
        left = VGroup(*self.busy, *self.idle).get_left()[0]  # time 0 (the last row starts idle)
        work, marks = VGroup(), VGroup()
        for micro in range(1, self.micro_batches + 1):  # (counted from 1, as the schedule counts them)
            first = (micro - 1) * pair
            for kind, start, end in (("F", 0, FORWARD_SLOTS), ("B", FORWARD_SLOTS, pair)):
                block = self._block(theme, first + start, first + end, 0.0, height, micro, kind == "B")
                block.shift([left, y, 0])
                block.micro_batch, block.kind = micro, kind
                work.add(block)
                marks.add(*self._mark(theme, block, words))
        outlines, empty = VGroup(), VGroup()
        for i in range(count):
            box = rectangle(slot, height + 0.1, fill_opacity=0.0, stroke_color=theme.muted, stroke_width=1.2)
            outlines.add(box.move_to([left + (i + 0.5) * slot, y, 0]))
            if i >= self.micro_batches:  # the row's idle time, a slot at a time
                hole = rectangle(
                    slot - 0.06,
                    height,
                    fill_color=theme.oom,
                    fill_opacity=0.14,
                    stroke_color=theme.oom,
                    stroke_width=2.5,
                )
                empty.add(hole.move_to(outlines[-1]))
        numbers = VGroup()
        for i in _numbered(count, most_numbers):
            mark = label(theme, number(i), theme.least_size, theme.muted)
            numbers.add(mark.move_to([left + (i - 0.5) * slot, outlines.get_top()[1], 0]).shift(UP * 0.17))
        marks.set_z_index(MARK_Z)
        return SlotRow(outlines, work, marks, empty, numbers)

    def row_busy(self, row: int) -> VGroup:
        """The work blocks of one drawn row (0: the top one)."""
        ys = sorted({round(b.get_center()[1], 3) for b in self.busy}, reverse=True)
        return VGroup(*[b for b in self.busy if round(b.get_center()[1], 3) == ys[row]])

    def row_idle(self, row: int) -> VGroup:
        """The bubble's blocks of one drawn row (0: the top one)."""
        ys = sorted({round(b.get_center()[1], 3) for b in self.busy}, reverse=True)
        return VGroup(*[b for b in self.idle if round(b.get_center()[1], 3) == ys[row]])

    def idle_fraction(self) -> float:
        """The bubble as drawn: idle width over all rows' width (measured from the blocks)."""
        idle = sum(b.width for b in self.idle)
        busy = sum(b.width + 0.02 for b in self.busy)
        return idle / (idle + busy)


class SlotRow(VGroup):
    """A row packed into slots (Timeline.packed_row): `outlines` (every slot), `work` (each
    micro-batch's forward and backward in its slot) with their numbers `marks`, `empty` (the
    idle slots) and `numbers` (the slots counted)."""

    def __init__(self, outlines: VGroup, work: VGroup, marks: VGroup, empty: VGroup, numbers: VGroup) -> None:
        super().__init__(outlines, work, marks, empty, numbers)
        self.outlines, self.work, self.marks, self.empty, self.numbers = outlines, work, marks, empty, numbers


def _numbered(count: int, most: int) -> list[int]:
    """The slots (1-based) numbered of `count`: each, or past `most` every few and the last, in
    place of a neighbour too close to it."""
    every = max(1, -(-count // most))
    shown = list(range(1, count + 1, every))
    if shown[-1] != count:
        shown[-1 if count - shown[-1] < every else len(shown) :] = [count]
    return shown


def _runs(work: list[tuple[str, int, int, int]]) -> list[tuple[str, int, int, int]]:
    """Back-to-back work merged into runs (too many micro-batches to draw each): a run is
    drawn in the first micro-batch's colour, forward if it holds only forwards."""
    runs: list[tuple[str, int, int, int]] = []
    for kind, micro, start, end in work:
        if runs and runs[-1][3] == start:
            last_kind, first, run_start, _ = runs[-1]
            runs[-1] = (last_kind if last_kind == kind else "B", first, run_start, end)
        else:
            runs.append((kind, micro, start, end))
    return runs
