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
    GrowFromEdge,
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
from dtfilm.visuals.columns import Column, MemoryColumns
from dtfilm.visuals.fade import appear, vanish
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
    chart = _placed_chart(ctx, steps[0], columns, key)

    def values(n: Numbers) -> list[Phrase]:
        return [n("{memory.total:GB}"), n("{memory.activations:GB}")]

    ctx.set_sweep_stats([("Per card", True), ("Activations", False)], values, steps)
    ctx.scene.play(appear(key), appear(VGroup(chart.baseline, chart.line, chart.line_label)), run_time=0.8)
    beat = ctx.beat_seconds(shot, len(steps), fixed_seconds=3.0, least=1.4, most=3.5)
    for i, numbers in enumerate(steps):
        if i == 1:
            beat = _after_first_column(ctx, chart, beat, len(steps), steps[0])
        start = ctx.scene.time
        grows = [GrowFromEdge(segment, DOWN) for segment in chart.bars[i]]
        words = [chart.names[i], *([chart.notes[i]] if len(chart.notes) > i else [])]
        grow = min(GROW_SECONDS, 0.65 * beat)  # quickly enough to be seen growing
        growing = [*grows, *[appear(w) for w in words], *ctx.count_stats(values(numbers), grow)]
        if i == 1:
            ctx.caption_after_legend(shot.caption, key, *growing, run_time=grow)
        else:
            ctx.scene.play(*growing, run_time=grow)
        ctx.scene.play(appear(chart.totals[i], shift=UP * SLIDE_UNITS / 2), run_time=0.4)
        _light_column(ctx, chart, i, i == len(steps) - 1, start - ctx.shot_start + beat)
    if len(steps) == 1:
        ctx.caption_after_legend(shot.caption, key)
    ctx.leave(chart=chart)


def _placed_chart(ctx: ShotContext, first: Numbers, columns: list[Column], key: Mobject) -> MemoryColumns:
    """The columns right of where the card's line is named, over the legend `key`: the names and
    notes under the baseline decide how much of the stage the columns get."""
    chart_area = ctx.regions.stage.part(left=ctx.regions.stage.left + COLUMN_ROOM, top=ctx.regions.stage.top - 0.45)

    def draw(height: float) -> MemoryColumns:
        return MemoryColumns(
            ctx.theme,
            columns,
            capacity=float(first.get("memory.capacity")),
            capacity_label=first("{memory.capacity:GB} card"),
            width=chart_area.width,
            height=height,
        )

    below = -draw(1.0).get_bottom()[1]
    chart_area = chart_area.part(bottom=key.get_top()[1] + below + 0.15)
    chart = draw(chart_area.height)
    chart.shift(chart_area.point(DOWN + LEFT) - chart.baseline.get_start())
    return chart


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
        state = words.next_to(chart.totals[0], RIGHT, buff=0.25)
        ctx.scene.play(appear(state, shift=LEFT * SLIDE_UNITS), run_time=0.5)
        ctx.highlight(VGroup(*chart.bars[0][: len(STATE_PARTS)], state), across=True)
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
HIGHLIGHT_ROOM_SECONDS = 1.3  # a highlight's time (ShotContext.highlight: 1.05 s) and a breath


def column_pieces(chart: MemoryColumns, index: int) -> VGroup:
    """Column `index` of the chart: its bar, its total over it, its name and note under it."""
    notes = [chart.notes[index]] if len(chart.notes) > index else []
    return VGroup(chart.bars[index], chart.totals[index], chart.names[index], *notes)


# -- ring_attention --------------------------------------------------------------------------
