"""Shot kinds of the opening chapter: won't fit, won't finish, the six strategies, the links."""

# Over 400 lines (issue 61): four kinds of the opening chapter, each short but sharing the chapter's rows and ladder
# (a kind splits into a folder of its own when it grows)

from __future__ import annotations

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    DashedLine,
    GrowFromEdge,
    LaggedStart,
    Line,
    Mobject,
    RoundedRectangle,
    Square,
    Succession,
    VGroup,
)

from dtfilm.cost.compute import BACKWARD_FLOPS_PER_TOKEN_PER_PARAM, FORWARD_FLOPS_PER_TOKEN_PER_PARAM
from dtfilm.cost.memory import MEMORY_PARTS, STATE_PARTS
from dtfilm.numbers import Numbers
from dtfilm.phrases import Phrase, formula, plain
from dtfilm.scene import SLIDE_UNITS, ShotContext
from dtfilm.shots.common.draw import legend, reveal_subtitle, title_picture
from dtfilm.shots.strategies import STRATEGIES, TIER_NOTES, tier_of
from dtfilm.storyboard import Shot
from dtfilm.visuals.card import CardBox
from dtfilm.visuals.cells import Calendar, CardWaffle, calendar_columns, calendar_scale
from dtfilm.visuals.fade import appear, vanish
from dtfilm.visuals.icons import strategy_icon
from dtfilm.visuals.regions import regions
from dtfilm.visuals.shapes import rectangle
from dtfilm.visuals.text import Label, label, left_column, wrapped
from dtfilm.visuals.theme import DARK, FRAME_WIDTH, Theme

WAFFLE_X = -2.6
WAFFLE_PER_LINE = 20
CELL, CELL_GAP = 0.3, 0.07


def state_pour(numbers: Numbers) -> tuple[float, list[tuple[str, float]], int]:
    """The card's capacity, the model's training state by part (bottom up, in bytes) and the
    cards it takes to hold it."""
    params = float(numbers.get("params"))
    parts = [(part, params * float(numbers.get(f"bytes_per_param.{part}"))) for part in STATE_PARTS]
    return float(numbers.get("memory.capacity")), parts, int(numbers.get("state.cards_needed"))


LINEUP_GAP = 0.45  # between one model's row and the next
TITLE_CARD_HEIGHT = 1.8  # the title's card (its capacity), under the title and its subtitle


@title_picture("card")
def title_card(ctx: ShotContext, shot: Shot, title: Mobject, subtitle: Mobject) -> None:
    """Why's title over the single card it is about: the card comes in with the title, and as
    the voice says the model does not fit, the training state fills its gauge (and spills past
    it, where it does not fit); the second clause is the subtitle's alone."""
    theme, numbers = ctx.theme, shot.numbers
    stage = ctx.regions.stage
    words = VGroup(title, subtitle)
    words.shift(UP * (stage.top - 0.1 - words.get_top()[1]))
    card = CardBox(theme, numbers("{cluster.gpu_label}"), width=1.3, height=TITLE_CARD_HEIGHT)
    card.move_to([0, stage.bottom + 0.1, 0], aligned_edge=DOWN)
    capacity, parts, _ = state_pour(numbers)
    gauge = card.gauge({**dict.fromkeys(MEMORY_PARTS, 0.0), **dict(parts)}, capacity)
    fill = [LaggedStart(*[GrowFromEdge(s, DOWN) for s in gauge.segments], lag_ratio=0.3)]
    if gauge.spill is not None:  # what passes the card, outlined in red as it passes
        fill.append(appear(VGroup(*[m for m in gauge if m is not gauge.segments])))
    ctx.scene.play(appear(title, shift=UP * SLIDE_UNITS), appear(card, shift=UP * SLIDE_UNITS), run_time=1.2)
    reveal_subtitle(ctx, subtitle, {"subtitle": [Succession(*fill)]})
    ctx.leave(title=words, card=VGroup(card, gauge))


def lineup_rows(rows: list[tuple[object, Numbers]]) -> list[tuple[object, Numbers]]:
    """The rows the lineup draws: the first (the viewer's model), then each other row that needs
    more cards than it. A reference that needs no more is the viewer's model again (at `--model
    llama3.1-405b` the 405B row was drawn twice) or a smaller one the voice does not speak of;
    the storyboard's words name the rows drawn by the same test (why.yaml's `[large]`)."""
    first = float(rows[0][1].get("state.cards_needed"))
    return [rows[0], *[row for row in rows[1:] if float(row[1].get("state.cards_needed")) > first]]


def play_model_lineup(ctx: ShotContext, shot: Shot) -> None:
    """Won't fit: the viewer's model's state poured into card-sized squares, and the count; then
    each model that needs more cards (lineup_rows)."""
    theme = ctx.theme
    ctx.open_shot(shot.caption, clear_stats=True)
    rows = lineup_rows(shot.options["rows"])
    first = rows[0][1]
    key = label(
        theme,
        first("each square is {~one} {cluster.gpu_label}: {memory.capacity:GB}"),
        theme.small_size,
        theme.muted,
    )
    key.move_to([WAFFLE_X, 2.55, 0], aligned_edge=LEFT)
    colours = legend(theme, parts=STATE_PARTS)
    strip = _bytes_strip(theme, first)
    ctx.until("state")  # the parts of the state and a parameter's bytes, as the voice names them
    grown = LaggedStart(*[GrowFromEdge(c, LEFT) for c in strip[0]], lag_ratio=0.2)
    ctx.scene.play(appear(colours, shift=UP * SLIDE_UNITS), grown, appear(strip[1]), run_time=0.8)
    ctx.highlight(VGroup(colours, strip), across=True)
    drawn = VGroup(key, colours)
    y = 1.95
    waffles = _lineup_waffles(theme, rows, room=y - colours.get_top()[1] - 0.25)
    for row, ((name, numbers), waffle) in enumerate(zip(rows, waffles, strict=True)):
        waffle.move_to([WAFFLE_X, y, 0], aligned_edge=LEFT + UP)
        title, state, tally = _lineup_row_words(theme, name, numbers, waffle)
        names = left_column(title, state, buff=0.06).move_to(
            [ctx.regions.side.left, y + 0.04, 0], aligned_edge=LEFT + UP
        )
        if row == 0:  # the small model as it is named, what it needs, the card's size, then the pour
            _name_first_row(ctx, title, state, key, waffle, strip)
        else:  # the large ones, one after the other, from when they are named (the last at `largest`)
            if row == len(rows) - 1 and row > 1 and ctx.has_mark("largest"):
                ctx.until("largest")
            else:
                ctx.spread("large", "largest" if ctx.has_mark("largest") else None, row - 1, len(rows))
        # the cards fill as the voice says the count: a larger model's row named, outlined and
        # filled at once, so the last row is full by the time the voice has named it (the 405B row
        # filled 7 s past the narration; issue 58, finding 5)
        fills = LaggedStart(*[GrowFromEdge(f, DOWN) for f in waffle.fills], lag_ratio=min(0.3, 6 / len(waffle.fills)))
        if row == 0:
            ctx.scene.play(fills, run_time=min(2.2, 0.8 + 0.03 * len(waffle.fills)))
            ctx.reveal(tally, direction=LEFT, run_time=0.4)
        else:  # (its count with it: the next row, or the highlight, follows at once)
            words = appear(names, shift=RIGHT * SLIDE_UNITS), appear(tally, shift=LEFT * SLIDE_UNITS)
            ctx.scene.play(*words, appear(waffle.outlines), fills, run_time=1.1)
        if row == 0 or row == len(rows) - 1:
            ctx.highlight(VGroup(names, waffle, tally), across=True, hold=0.2 if row else 0.35)
        drawn.add(names, waffle, tally)
        y = min(waffle.get_bottom()[1], names.get_bottom()[1]) - LINEUP_GAP
    ctx.leave(lineup=drawn)


def _lineup_waffles(theme: Theme, rows: list[tuple[object, Numbers]], room: float) -> list[CardWaffle]:
    """Each row's cards, drawn smaller until the rows fit in `room` above the legend (three rows
    of many cards, 405B's 82 on an 80 GB card twice, ran into the legend below them)."""
    waffles = [CardWaffle(theme, *state_pour(numbers), CELL, CELL_GAP, WAFFLE_PER_LINE) for _, numbers in rows]
    room -= LINEUP_GAP * (len(rows) - 1)
    tall = sum(max(w.height, 0.6) for w in waffles)
    if tall > room:
        for waffle in waffles:
            waffle.scale(room / tall)
    return waffles


def _lineup_row_words(theme: Theme, name: object, numbers: Numbers, waffle: CardWaffle) -> tuple[Label, Label, Label]:
    """A row's model name, its state's size and, right of its first line of cards, its count."""
    title = label(theme, name, theme.caption_size, theme.text, weight="BOLD")
    state = label(theme, numbers("{state.total:GB} of state"), theme.small_size, theme.muted)
    count = numbers("{state.cards_needed:int} cards") if numbers.get("state.cards_needed") > 1 else None
    count_text = numbers("{state.cards_needed:int} card") if count is None else count
    if waffle.elided:
        count_text = count_text + " (not all drawn)"
    tally = label(theme, count_text, theme.caption_size, theme.accent, weight="BOLD")
    tally.next_to(waffle.outlines[min(len(waffle.outlines), WAFFLE_PER_LINE) - 1], RIGHT, buff=0.3)
    return title, state, tally


BYTE_SIDE = 0.2  # a byte of a parameter's state, in the strip under the first row
BYTE_GAP = 0.05


def _bytes_strip(theme: Theme, numbers: Numbers) -> VGroup:
    """A parameter's training state as the voice gives its cost (mark `state`): a square a byte,
    each in its part's colour, and the count, in the middle of the stage, where the larger
    models' rows come after the pour (a second lecturer: from 6 to 20 s the voice gave 16 bytes,
    112 GB and 80 GB over labels alone). Returns (the squares, their count)."""
    cells = VGroup()
    for part in STATE_PARTS:
        for _ in range(round(float(numbers.get(f"bytes_per_param.{part}")))):
            cells.add(rectangle(BYTE_SIDE, BYTE_SIDE, fill_color=theme.memory[part], fill_opacity=1, stroke_width=0))
    cells.arrange(RIGHT, buff=BYTE_GAP)
    count = label(theme, numbers("{bytes_per_param.total:int} bytes a parameter"), theme.label_size, theme.text)
    count.next_to(cells, RIGHT, buff=0.3)
    return VGroup(cells, count).move_to([0, 0.1, 0])


def _name_first_row(
    ctx: ShotContext, title: Label, state: Label, key: Label, waffle: CardWaffle, strip: VGroup
) -> None:
    """The viewer's model named, what it needs, then the card drawn as the voice says what it
    holds, an empty square where the pour will fill it (a lecturer's review: the screen held only
    the legend and labels from 7 s to 23 s), and at `pour` the other cards' outlines, as the
    bytes a parameter go."""
    ctx.reveal(title, at="small")
    ctx.highlight(title, across=True)
    ctx.reveal(state, at="needs")
    ctx.highlight(state, across=True)
    aside = _activations_aside(ctx, waffle) if ctx.has_mark("activation") else None
    card = waffle.outlines[0]
    ctx.until("card")
    ctx.scene.play(
        appear(key, shift=LEFT * SLIDE_UNITS), appear(card), *([vanish(aside)] if aside else []), run_time=0.8
    )
    ctx.highlight(VGroup(key, card), across=True)
    ctx.until("pour")
    ctx.scene.play(*([appear(waffle.outlines[1:])] if len(waffle.outlines) > 1 else []), vanish(strip), run_time=0.4)


def _activations_aside(ctx: ShotContext, waffle: CardWaffle) -> VGroup:
    """What the state leaves out, where the voice says it (mark `activation`): a note in the
    place the first model's cards will take, gone when they are poured."""
    first, second = (
        label(ctx.theme, plain(words), ctx.theme.small_size, ctx.theme.muted)
        for words in ("not yet counted: the activations,", "stored by the forward pass for the backward")
    )
    note = left_column(first, second, buff=0.08)
    note.move_to([WAFFLE_X, waffle.get_top()[1] - 0.05, 0], aligned_edge=LEFT + UP)
    if ctx.has_mark("tensors"):  # what they are, as the voice says it
        ctx.reveal(first, at="activation")
        ctx.highlight(first, across=True, hold=0.2)
        ctx.reveal(second, at="tensors")
        ctx.highlight(second, across=True, hold=0.2)
    else:
        ctx.reveal(note, at="activation")
        ctx.highlight(note, across=True)
    return note


def _training_flops_words(theme: Theme, numbers: Numbers) -> tuple[Label, Label]:
    """6·P·D with the model's parameters and tokens put in, and what it comes to."""
    flops = label(
        theme,
        numbers("{compute.flops_per_token_per_param:int}")
        + formula(" × P × D")
        + numbers(" = {compute.flops_per_token_per_param:int} × {params:si} parameters × {inputs.tokens:si} tokens"),
        theme.caption_size,
        theme.text,
    )
    result = label(theme, numbers("= {compute.training_flops:sci} FLOPs"), theme.caption_size, theme.accent, "BOLD")
    return flops, result


def play_training_clock(ctx: ShotContext, shot: Shot) -> None:
    """Won't finish: 6·P·D FLOPs, one card's years as a calendar of months, then the cluster's days."""
    theme, numbers = ctx.theme, shot.numbers
    ctx.open_shot(shot.caption, clear_stats=True)
    flops, result = _training_flops_words(theme, numbers)
    top = left_column(flops, result, buff=0.12).move_to([ctx.regions.side.left, 2.75, 0], aligned_edge=LEFT + UP)
    ctx.reveal(flops, at="flops")
    # the 6 built as the voice counts it: the forward's operations, then the backward's
    passes = _forward_backward(ctx) if ctx.has_mark("forward") and ctx.has_mark("backward") else None
    ctx.until("per")
    ctx.point_at(flops, scale=1.1)
    if ctx.has_mark("tokens"):  # the tokens the FLOPs are for, lit as the voice says them
        ctx.until("tokens")
        ctx.highlight(flops, across=True)
    ctx.reveal(result, at="total")
    ctx.highlight(result, across=True)  # (a small text's swell, pointed at, read as a still to the eye)
    ctx.until("one_card")
    if passes is not None:  # the calendars take its room
        ctx.scene.play(vanish(passes), run_time=0.4)

    months = _calendar(
        theme, float(numbers.get("compute.training_seconds_one_card")), 1, ctx.regions.side.left, theme.muted
    )
    one_card = _play_calendar(
        ctx,
        months,
        numbers("{~one} {cluster.gpu_label} at an assumed {inputs.mfu:%} MFU"),
        months.scale.axis + (" (more than drawn)" if months.cut else ""),
        numbers("{compute.training_seconds_one_card:years}"),
        lag_ratio=min(0.02, 6.0 / max(len(months.fills), 1)),
        run_time=2.2,
        # seed 001's self-check: the card's peak beside the years it would take
        beside=numbers("at {cluster.peak_flops:TFLOP/s} peak, {inputs.mfu:%} of it busy"),
        # the peak and utilization as they are said, the heading's MFU pointed at as it is
        # named, and the years as they are said (else all at once, after the months fill)
        note_at="busy" if ctx.has_mark("busy") else None,
        heading_at="mfu" if ctx.has_mark("mfu") else None,
        total_at="years" if ctx.has_mark("years") else None,
    )
    ctx.until("split")
    if int(numbers.get("cluster.cards")) <= 1:  # the run is the one card: a second calendar would draw its years again
        ctx.leave(clock=VGroup(top, one_card))
        return
    x = max(months.get_right()[0] + 0.9, 1.6)
    month = _calendar(theme, float(numbers.get("compute.training_seconds")), 0, x, theme.accent)
    cluster = _play_calendar(
        ctx,
        month,
        numbers("{cluster.cards:int} cards, the same work split"),
        month.scale.axis + (" (more than drawn)" if month.cut else ""),
        numbers("{compute.training_seconds:days}"),
        lag_ratio=min(0.2, 6.0 / max(len(month.fills), 1)),
        run_time=1.5,
    )
    ctx.leave(clock=VGroup(top, one_card, cluster))


OPERATION_CELL, OPERATION_GAP = 0.42, 0.08  # one square per operation a parameter does for a token


def _forward_backward(ctx: ShotContext) -> VGroup:
    """One parameter's operations for one token: the forward's squares (a multiply and an add)
    as the voice names them, then the backward's, twice as many, at mark `backward`."""
    theme = ctx.theme
    rows = VGroup()
    for count, opacity, words in (
        (FORWARD_FLOPS_PER_TOKEN_PER_PARAM, 0.45, "forward: a multiply and an add"),
        (BACKWARD_FLOPS_PER_TOKEN_PER_PARAM, 0.9, "backward: input and weight gradients"),
    ):
        cells = VGroup(
            *[
                Square(OPERATION_CELL, fill_color=theme.accent, fill_opacity=opacity, stroke_width=0)
                for _ in range(count)
            ]
        ).arrange(RIGHT, buff=OPERATION_GAP)
        name = label(theme, words, theme.label_size, theme.text)
        rows.add(VGroup(cells, name))
    # the names in one column, right of the longer row of squares
    column_x = ctx.regions.side.left + max(r[0].width for r in rows) + 0.35
    for i, (cells, name) in enumerate(rows):
        y = 0.55 - i * 0.75
        cells.move_to([ctx.regions.side.left, y, 0], aligned_edge=LEFT)
        name.move_to([column_x, y, 0], aligned_edge=LEFT)
    for (cells, name), mark in zip(rows, ("forward", "backward"), strict=True):
        ctx.until(mark)
        ctx.scene.play(
            LaggedStart(*[GrowFromEdge(c, LEFT) for c in cells], lag_ratio=0.3),
            appear(name, shift=RIGHT * SLIDE_UNITS),
            run_time=0.9,
        )
        ctx.highlight(VGroup(cells, name), across=True)
    return rows


CALENDAR_TOP = 1.05
CALENDAR_RIGHT = regions(DARK).stage.right - 0.15  # the themes share their margins


def _calendar(theme: Theme, seconds: float, finest: int, x_left: float, color: str) -> Calendar:
    """A calendar of `seconds` at the finest scale that fits (months for years, days for weeks;
    decades and centuries for longer), its squares sized to the room right of `x_left`."""
    scale, filled, cut = calendar_scale(seconds, finest)
    columns = max(5 if scale.rows == 7 else 1, calendar_columns(filled, scale.rows))
    room = min(6.3, CALENDAR_RIGHT - x_left)
    size = min(0.3 if scale.rows == 7 else 0.17, room / columns - 0.04, 2.0 / scale.rows - 0.04)
    gap = 0.06 if size >= 0.3 else 0.04
    calendar = Calendar(theme, columns, scale.rows, filled, size, gap, color)
    calendar.move_to([x_left, CALENDAR_TOP, 0], aligned_edge=LEFT + UP)
    calendar.scale, calendar.cut = scale, cut
    return calendar


def _play_calendar(
    ctx: ShotContext,
    calendar: Calendar,
    title: Phrase,
    axis: str,
    took: Phrase,
    lag_ratio: float,
    run_time: float,
    beside: Phrase | None = None,
    note_at: str | None = None,
    heading_at: str | None = None,
    total_at: str | None = None,
) -> VGroup:
    """A calendar with its title above and what each cell is below; its cells fill, then the
    time it took appears large, in the calendar's colour. With marks: the note `beside` it
    at `note_at` (its place under the time kept), the heading pointed at at `heading_at`, the
    time at `total_at`."""
    theme = ctx.theme
    heading = label(theme, title, theme.label_size, theme.text)
    heading.next_to(calendar, UP, buff=0.15).align_to(calendar, LEFT)
    key = label(theme, axis, theme.small_size, theme.muted)
    room = CALENDAR_RIGHT - calendar.get_left()[0]
    if key.width > room:  # a long scale ("each column a millennium, ...") wraps inside the frame
        key = wrapped(theme, plain(axis), theme.small_size, room, theme.muted, left_aligned=True)
    key.next_to(calendar, DOWN, buff=0.15).align_to(calendar, LEFT)
    ctx.scene.play(appear(heading, shift=RIGHT * SLIDE_UNITS), appear(calendar.cells), appear(key), run_time=0.8)
    ctx.scene.play(LaggedStart(*[appear(f) for f in calendar.fills], lag_ratio=lag_ratio), run_time=run_time)
    total = label(theme, took, theme.stat_value_size, calendar.color, "BOLD")
    total.next_to(key, DOWN, buff=0.15).align_to(calendar, LEFT)
    shown = VGroup(calendar, heading, key, total)
    if beside is not None:  # what the time assumes, under it in small type
        note = label(theme, beside, theme.small_size, theme.muted)
        note.next_to(total, DOWN, buff=0.1).align_to(calendar, LEFT)
        if note_at is not None:
            ctx.highlight(heading, across=True)  # the card it counts for, as the voice names its peak
            ctx.reveal(note, at=note_at, run_time=0.6)
            ctx.highlight(note, across=True)
        else:
            total = VGroup(total, note)
        shown.add(note)
    if heading_at is not None:
        ctx.until(heading_at)
        ctx.highlight(heading, across=True)
    if total_at is not None:
        ctx.until(total_at)
    ctx.reveal(total, run_time=0.6)
    ctx.highlight(total, across=True, hold=0.2)
    return shown


def play_strategy_table(ctx: ShotContext, shot: Shot) -> None:
    """The six strategies: how each slices the loaf, what it cuts, how it talks, what it solves.
    A row's loaf and name come as the voice names it; what it cuts, how it talks and what it
    solves as the voice says each (marks `KEY_cuts`, `KEY_talks`, `KEY_solves`), each highlighted
    across as it lands, so the table moves with the voice (issue 58)."""
    theme = ctx.theme
    ctx.open_shot(shot.caption, clear_stats=True)
    columns = (("cuts", -2.7, 3.6), ("talks by", 1.05, 3.3), ("solves", 4.55, 2.2))
    name_x = ctx.regions.side.left + 1.05
    heads = VGroup(*[label(theme, title, theme.small_size, theme.muted) for title, _, _ in columns])
    for head, (_, x, _) in zip(heads, columns, strict=True):
        head.move_to([x, 2.6, 0], aligned_edge=LEFT)
    rule = Line([ctx.regions.side.left, 2.35, 0], [CALENDAR_RIGHT, 2.35, 0], stroke_color=theme.faint, stroke_width=1.5)
    ctx.scene.play(appear(heads), appear(rule), run_time=0.6)
    drawn = VGroup(heads, rule)
    gap = min(1.02, (1.8 - TABLE_LOWEST) / max(len(STRATEGIES) - 1, 1))
    for i, strategy in enumerate(STRATEGIES):
        y = 1.8 - i * gap
        icon = strategy_icon(theme, strategy.slicing, width=0.7, slice_height=0.09)
        icon.move_to([ctx.regions.side.left + 0.38, y, 0])
        name = label(theme, strategy.name, theme.label_size, theme.text, weight="BOLD")
        name.move_to([name_x, y, 0], aligned_edge=LEFT)
        cells = VGroup(name)
        for text, (_, x, width) in zip((strategy.shards, strategy.talks, strategy.solves), columns, strict=True):
            colour = theme.accent if text is strategy.solves else theme.text
            cell = wrapped(theme, plain(text), theme.small_size, width, colour, left_aligned=True)
            cell.move_to([x, y, 0], aligned_edge=LEFT)
            cells.add(cell)
        # each cell from the mark that says it (KEY, KEY_cuts, KEY_talks, KEY_solves); a cell whose
        # mark the narration lacks comes with the one before it
        steps: list[tuple[str, VGroup]] = []
        for cell, mark in zip(cells, ("", "_cuts", "_talks", "_solves"), strict=True):
            if not steps or (mark and ctx.has_mark(strategy.key + mark)):
                steps.append((strategy.key + mark, VGroup(icon) if not steps else VGroup()))
            steps[-1][1].add(cell)
        for n, (mark, shown) in enumerate(steps):
            ctx.until(mark)
            if n == 0:
                ctx.scene.play(
                    appear(icon, shift=RIGHT * 0.15), appear(shown[1:], shift=LEFT * SLIDE_UNITS), run_time=0.9
                )
                ctx.highlight(shown, across=True)
            else:
                ctx.reveal(shown, direction=LEFT, run_time=0.7)
                ctx.highlight(shown, across=True, hold=0.2)
        drawn.add(icon, cells)
    ctx.leave(table=drawn)


TABLE_LOWEST = -2.45  # the last row's centre: above the caption's two lines


LADDER_TOP, LADDER_BOTTOM = 2.35, -2.75  # the pipes' room, above the caption
# The widest link's pipe, and the thinnest drawn as a pipe (1 px at the 854×480 preview):
# every pipe at least that thick is to scale, so its ratio to another reads true at 480p
# (HDR half of NDR: 5.3 and 10.7 px, where 1.0 unit for NVLink drew them 3.3 and 6.7, which
# the preview's pixels made 1.5x apart); a link thinner than that is a dashed hairline.
PIPE_WIDEST, PIPE_FLOOR = 1.6, 8 / 480


def pipe_thicknesses(bandwidths: list[float], widest_units: float = PIPE_WIDEST) -> list[float]:
    """Each link's pipe thickness in units, in proportion to its bandwidth (the widest at
    `widest_units`); a pipe under PIPE_FLOOR is drawn as a hairline, its thickness kept here."""
    widest = max(bandwidths)
    return [widest_units * b / widest for b in bandwidths]


def _pipe(theme: Theme, thickness: float, length: float) -> Mobject:
    """A link's pipe, as thick as its bandwidth; thinner than a pixel at 480p, a dashed hairline,
    not a pipe drawn wrong."""
    if thickness >= PIPE_FLOOR:
        return RoundedRectangle(
            corner_radius=min(0.08, thickness / 2.2),
            width=length,
            height=thickness,
            fill_color=theme.traffic_ink,
            fill_opacity=0.85,
            stroke_width=0,
        )
    return DashedLine(LEFT * length / 2, RIGHT * length / 2, dash_length=0.08,
                      stroke_color=theme.traffic_ink, stroke_width=1.5)  # fmt: skip


def _link_words(theme: Theme, numbers: Numbers, name: str, shared_by_node: bool) -> tuple[Label, Label]:
    """A link's name, and its bandwidth per card (and per node, where the node's cards share it)."""
    title = label(theme, numbers(f"{{links.{name}.label}}"), theme.label_size, theme.text, weight="BOLD")
    value_text = numbers(f"{{links.{name}.per_card_bandwidth:GB/s}}")
    if shared_by_node:
        value_text = value_text + numbers(f" ({{links.{name}.bandwidth:GB/s}} a node)")
    return title, label(theme, value_text, theme.small_size, theme.muted)


def play_bandwidth_ladder(ctx: ShotContext, shot: Shot) -> None:
    """The links as pipes as thick as their bandwidth per card, and which strategies each carries."""
    theme, numbers = ctx.theme, shot.numbers
    ctx.open_shot(shot.caption, clear_stats=True)
    links = list(numbers.data["links"])
    pipe_left, pipe_length = -3.7, 3.4
    heading = label(theme, "bandwidth each way, per card: pipe thickness to scale", theme.small_size, theme.muted)
    heading.move_to([pipe_left, 2.7, 0], aligned_edge=LEFT)
    ctx.scene.play(appear(heading), run_time=0.5)
    drawn, y, seen = VGroup(heading), LADDER_TOP, set()
    rows = pipe_thicknesses([float(numbers.get(f"links.{n}.per_card_bandwidth")) for n in links])
    # the gap between rows shrinks when a film's catalog adds links, so the ladder keeps its room
    gap = min(0.72, (LADDER_TOP - LADDER_BOTTOM - sum(max(t, 0.3) for t in rows)) / max(len(rows) - 1, 1))
    catalog_links = ctx.chapter.film.catalog.links  # the film's: its catalog.yaml may add links
    tiers = [tier_of(catalog_links[name]) for name in links]
    pending: tuple[Label, VGroup] | None = None  # a tier's first title and its note, still to come
    for i, (name, thickness) in enumerate(zip(links, rows, strict=True)):
        # each tier's rows from when the voice names it, spread until the next tier is named
        tier = tiers[i]
        first_of_tier = tier not in seen
        later = [t for t in dict.fromkeys(tiers) if tiers.index(t) > tiers.index(tier)]
        # the last tier's rows come before the voice says what lives on them, not after it ends
        # (the Ethernet row was drawn 7 s past the narration's end)
        until = later[0] if later else (f"{tier}_use" if ctx.has_mark(f"{tier}_use") else None)
        ctx.spread(tier, until, tiers[: i + 1].count(tier) - 1, tiers.count(tier))
        pipe = _pipe(theme, thickness, pipe_length)
        thickness = max(thickness, PIPE_FLOOR)
        y -= max(thickness, 0.3) / 2
        pipe.move_to([pipe_left + pipe_length / 2, y, 0])
        title, value = _link_words(theme, numbers, name, catalog_links[name].shared_by_node)
        title.move_to([ctx.regions.side.left, y, 0], aligned_edge=LEFT)
        value.next_to(pipe, RIGHT, buff=0.25)
        row = VGroup(title, pipe, value)
        ctx.scene.play(
            appear(title, shift=RIGHT * SLIDE_UNITS), GrowFromEdge(pipe, LEFT), run_time=0.9 if first_of_tier else 0.6
        )
        if first_of_tier:
            ctx.highlight(VGroup(title, pipe), across=True)
        said = first_of_tier and ctx.has_mark(f"{tier}_speed")
        # from the right, out of the open room past it: sliding in from the left, the value crossed
        # its own pipe's end (issue 58: 'Ethernet 100G's value overlaps its dashed line')
        ctx.reveal(value, at=f"{tier}_speed" if said else None, run_time=0.8 if said else 0.4, direction=LEFT)
        if said:  # the speed, as the voice says it
            ctx.highlight(VGroup(pipe, value), across=True, hold=0.2)
        if first_of_tier:  # what lives on this tier, as the voice says it
            seen.add(tier)
            note = wrapped(theme, plain(TIER_NOTES[tier]), theme.small_size, 3.2, theme.accent, left_aligned=True)
            note.move_to([FRAME_WIDTH / 2 - 3.65, y, 0], aligned_edge=LEFT)
            row.add(note)
            pending = (title, note)
        # the last tier's note once its rows are in: waiting for it at the first row held the
        # tier's other rows past the narration's end (Omni-Path's two Ethernet rows, 1.8 s)
        if pending is not None and (later or i == len(tiers) - 1):
            ctx.reveal(pending[1], at=f"{tier}_use" if ctx.has_mark(f"{tier}_use") else None, direction=LEFT)
            ctx.highlight(VGroup(*pending), across=True, hold=0.2)
            pending = None
        drawn.add(row)
        y -= max(thickness, 0.3) / 2 + gap
    ctx.leave(ladder=drawn)
