"""The sequence chapter's memory columns (memory_columns): each card's memory stacked by part for
each setting of a sweep, against the card's capacity, grown as the voice names them; the state
they share named beside the first.
"""

from __future__ import annotations

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Animation,
    Mobject,
    VGroup,
)

from dtfilm.cost.estimate import MEMORY_PARTS
from dtfilm.cost.memory import STATE_PARTS
from dtfilm.numbers import Numbers
from dtfilm.phrases import Phrase
from dtfilm.scene import SLIDE_UNITS, ShotContext
from dtfilm.shots.common.draw import legend
from dtfilm.storyboard import Shot
from dtfilm.storyboard.timing import beat_seconds
from dtfilm.visuals.columns import Column, MemoryColumns, growing_spans, rise
from dtfilm.visuals.fade import Reshape, appear, vanish
from dtfilm.visuals.text import label

COLUMN_ROOM = 2.3  # at the chart's left: the card's line is named there


def column_of(theme_memory: dict[str, str], numbers: Numbers, name: Phrase, note: Phrase | None) -> Column:
    """One setting's column: its ledger per card, part by part, and whether it fits."""
    parts = tuple((theme_memory[part], float(numbers.get(f"memory.{part}"))) for part in MEMORY_PARTS)
    over = not numbers.get("memory.fits")
    capacity, card = float(numbers.get("memory.capacity")), numbers("{memory.capacity:GB} card")
    return Column(parts, numbers("{memory.total:GB}"), name, over, note, capacity, card)


def play_memory_columns(ctx: ShotContext, shot: Shot) -> None:
    """One column per value of the sweep, left to right: each card's memory stacked by part,
    against the card's capacity, with the value's name and note under it. The legend names the
    parts of the first column; the caption takes its place as the second grows (the two at once,
    beside the counters and labels, were four layers of text; issue 58 allows three)."""
    theme, steps = ctx.theme, shot.steps
    ctx.open_shot(None)
    notes = shot.options.get("note") or [None] * len(steps)
    names = shot.options["label"]
    columns = [column_of(theme.memory, n, name, note) for n, name, note in zip(steps, names, notes, strict=True)]
    key = legend(theme)
    charts = _ZoomingChart(ctx, steps[0], columns, key)
    chart = charts.chart

    def values(n: Numbers) -> list[Phrase]:
        return [n("{memory.total:GB}"), n("{memory.activations:GB}")]

    ctx.set_sweep_stats([("Per card", True), ("Activations", False)], values, steps)
    ctx.scene.play(appear(key), appear(VGroup(chart.baseline, chart.line, chart.line_label)), run_time=0.8)
    beat = ctx.beat_seconds(shot, len(steps), fixed_seconds=3.0, least=1.4, most=3.5)
    for i, numbers in enumerate(steps):
        if i == 1:
            beat = _after_first_column(ctx, chart, beat, len(steps), steps[0])
        start = ctx.scene.time
        zoom = charts.zoom_out(i)  # the columns so far shrink as this one outgrows the chart
        chart = charts.chart
        grows = [rise(chart.bars[i])]
        words = [chart.names[i], *([chart.notes[i]] if len(chart.notes) > i else [])]
        grow = min(ZOOM_SECONDS if zoom else GROW_SECONDS, 0.65 * beat)  # quickly enough to be seen growing
        growing = [*zoom, *grows, *[appear(w) for w in words], *ctx.count_stats(values(numbers), grow)]
        if i == 1:
            ctx.caption_after_legend(shot.caption, key, *growing, run_time=grow)
        else:
            ctx.scene.play(*growing, run_time=grow)
        charts.settle(i)
        ctx.scene.play(appear(chart.totals[i], shift=UP * SLIDE_UNITS / 2), run_time=0.4)
        _light_column(ctx, chart, i, i == len(steps) - 1, start - ctx.shot_start + beat)
    if len(steps) == 1:
        ctx.caption_after_legend(shot.caption, key)
    ctx.leave(chart=chart)


class _ZoomingChart:
    """The columns right of where the card's line is named, over the legend `key` (the names and
    notes under the baseline decide how much of the stage the columns get), drawn at the scale
    the columns grown so far need (growing_spans): the first columns of a sweep that ends at
    609 GB are not slivers under an 80 GB line a tenth of the chart high (issue 58: cp's first
    4.3 s read as a still). `chart` is the one on screen."""

    def __init__(self, ctx: ShotContext, first: Numbers, columns: list[Column], key: Mobject) -> None:
        self.ctx, self.first, self.columns = ctx, first, columns
        self.spans = growing_spans(columns, float(first.get("memory.capacity")))
        area = ctx.regions.stage.part(left=ctx.regions.stage.left + COLUMN_ROOM, top=ctx.regions.stage.top - 0.45)
        self.area = area
        below = -self._draw(area.height, None).get_bottom()[1]  # (the words under the baseline)
        self.area = area.part(bottom=key.get_top()[1] + below + 0.15)
        self.chart = self._placed(self.spans[0])
        self.before: MemoryColumns | None = None  # the chart a zoom replaces, until it settles

    def _draw(self, height: float, span: float | None) -> MemoryColumns:
        first = self.first
        return MemoryColumns(
            self.ctx.theme,
            self.columns,
            capacity=float(first.get("memory.capacity")),
            capacity_label=first("{memory.capacity:GB} card"),
            width=self.area.width,
            height=height,
            span=span,
        )

    def _placed(self, span: float) -> MemoryColumns:
        chart = self._draw(self.area.height, span)
        chart.shift(self.area.point(DOWN + LEFT) - chart.baseline.get_start())
        return chart

    def zoom_out(self, i: int) -> list[Animation]:
        """Where column `i` outgrows the chart: the chart at its new scale becomes `chart`, and the
        animations that carry the columns before it (their bars and figures) and the card's line
        there, played as column `i` grows. None where the scale holds."""
        if i == 0 or self.spans[i] == self.spans[i - 1]:
            return []
        old, new = self.chart, self._placed(self.spans[i])
        self.before, self.chart = old, new
        moved = [(old.bars[j], new.bars[j]) for j in range(i)] + [(old.totals[j], new.totals[j]) for j in range(i)]
        moved += [(old.line, new.line), (old.line_label, new.line_label)]
        return [Reshape(a, b, replace=True) for a, b in moved]

    def settle(self, i: int) -> None:
        """After a zoom: the pieces that stood still (names, notes, baseline) are the new chart's
        from here on, in the same places, so that lighting and leaving find them on screen."""
        old, new = self.before, self.chart
        if old is None:
            return
        pairs = [(old.baseline, new.baseline), *((old.names[j], new.names[j]) for j in range(i))]
        pairs += [(old.notes[j], new.notes[j]) for j in range(min(i, len(old.notes)))]
        for was, now in pairs:
            self.ctx.scene.remove(was)
            self.ctx.scene.add(now)
        self.before = None


def _after_first_column(ctx: ShotContext, chart: MemoryColumns, beat: float, columns: int, first: Numbers) -> float:
    """Before the second column: the state every column shares named beside the first column
    and lit as the voice says it (`static`; at the scale the longest sequence needs, its parts
    are a few pixels high, and a lecturer saw the 4.3 s of it as a still), the first column
    relit; then the name goes and the rest grow as the voice says they do (`grow`), over what
    is left of the narration. The beat a column from here."""
    state = VGroup()
    if ctx.has_mark("static"):
        ctx.until("static")
        words = label(ctx.theme, first("state {memory.static:bytes}"), ctx.theme.small_size, ctx.theme.muted)
        parts = VGroup(*chart.bars[0][: len(STATE_PARTS)])
        state = words.next_to(parts, RIGHT, buff=0.25)  # beside the state's own parts, at the column's foot
        ctx.scene.play(appear(state, shift=LEFT * SLIDE_UNITS), run_time=0.5)
        ctx.highlight(VGroup(parts, state), across=True)  # (a band at the foot: the state, not the column)
        ctx.relight(column_pieces(chart, 0), across=True)  # the voice still on the first column
    if ctx.has_mark("grow"):
        ctx.until("grow")
    if len(state):
        ctx.scene.play(vanish(state), run_time=0.3)
    if ctx.has_mark("grow"):
        left = ctx.said_seconds() - (ctx.scene.time - ctx.shot_start)
        beat = beat_seconds(left, columns - 1, 0.0, least=1.4, most=3.5)
    return beat


def _light_column(ctx: ShotContext, chart: MemoryColumns, i: int, last: bool, next_second: float) -> None:
    """Column `i`, just grown, lit while the voice is on it (the first until [static], when said),
    then a wait until `next_second` of the shot; the last relit while the voice stays on it (the
    ring leaving the node, say), its note lit as its figures are said (`last`)."""
    due = ctx.mark_seconds("static") if i == 0 and ctx.has_mark("static") else next_second
    if due - (ctx.scene.time - ctx.shot_start) >= HIGHLIGHT_ROOM_SECONDS:
        ctx.highlight(column_pieces(chart, i))
    if not last:
        ctx.until_second(next_second)
        return
    ctx.relight(column_pieces(chart, i))
    if ctx.has_mark("last") and len(chart.notes) > i:
        ctx.until("last")
        ctx.highlight(chart.notes[i], across=True)
        ctx.relight(chart.notes[i], across=True)  # lit again while the voice stays on them


GROW_SECONDS = 0.5  # a column's growth: slower, and at 480p it moves too little a frame to be seen
ZOOM_SECONDS = 0.9  # a growth that rescales the chart: long enough to see the columns before it shrink
HIGHLIGHT_ROOM_SECONDS = 1.3  # a highlight's time (ShotContext.highlight: 1.05 s) and a breath


def column_pieces(chart: MemoryColumns, index: int) -> VGroup:
    """Column `index` of the chart: its bar, its total over it, its name and note under it."""
    notes = [chart.notes[index]] if len(chart.notes) > index else []
    return VGroup(chart.bars[index], chart.totals[index], chart.names[index], *notes)


# -- ring_attention --------------------------------------------------------------------------
