"""Shot kinds of the memory ledger: bytes per parameter built block by block, the precision
switch, one card's ledger as inputs change (sequence length, checkpointing, fp8), the map."""

# Over 400 lines (issue 61): four kinds that build and rebuild one card's ledger, sharing its blocks and legend
# (a kind splits into a folder of its own when it grows)

from __future__ import annotations

import itertools
from collections.abc import Callable

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Animation,
    Arrow,
    GrowFromEdge,
    LaggedStart,
    Rectangle,
    RoundedRectangle,
    Transform,
    VGroup,
)

from dtfilm.cost.estimate import MEMORY_PARTS
from dtfilm.cost.inputs import SPECS
from dtfilm.cost.memory import STATE_PARTS
from dtfilm.numbers import Numbers
from dtfilm.phrases import Phrase, plain
from dtfilm.scene import SLIDE_UNITS, ShotContext
from dtfilm.shots.common.draw import legend
from dtfilm.shots.strategies import STRATEGIES, Strategy
from dtfilm.storyboard import Shot
from dtfilm.storyboard.layers import input_paths
from dtfilm.storyboard.load import chapter_title_phrases
from dtfilm.visuals.fade import appear, reword, swap
from dtfilm.visuals.icons import strategy_icon
from dtfilm.visuals.ledger import (
    STACK_NAMES,
    ByteStack,
    LedgerBar,
    StateColumn,
    capacity_note,
    clear_of_line,
    state_scale,
)
from dtfilm.visuals.stats import CountTo
from dtfilm.visuals.text import clamp_x, label, relabel, wrapped
from dtfilm.visuals.theme import FRAME_WIDTH, Theme

STACK_X, STACK_BOTTOM = -5.6, -2.35
COLUMN_X, COLUMN_BOTTOM = 3.3, -2.35
BAR_LEFT, BAR_Y, BAR_ROOM = -5.9, 1.0, 10.4
COMPUTE_Y, COMPUTE_UNIT = -1.45, 0.62
EMPTY_ROW_OPACITY = 1.0  # a row of the ledger not yet counted: its outline
BYTE_MARKS = ("gradients", "master_weights", "adam_m")  # adam_v follows adam_m at once
MAP_MARKS = ("dp", "tp", "pp", "fsdp", "cp", "ep", "3d")  # chapter ids the map's marks name
MAP_ONE_ROW = 7  # the most tiles the map draws in one row
MAP_TWO_ROW_HEIGHT = 2.45  # a tile's height when the map takes two rows (the caveat still fits under them)
MAP_ROW_GAP = 0.25
# A swept input's stat heading where its help (`dtfilm estimate --help`) is too long for one
STAT_HEADINGS = {"plan.zero": "ZeRO stage"}  # by the input's section and name
MAP_TWO_ROW_ICON = 0.6  # the loaf's scale in two rows


def part_name(numbers: Numbers, part: str) -> Phrase:
    """A state part with the number format it is kept in, from the cost model: "fp32 Adam m"."""
    return numbers(f"{{formats.{part}}} {STACK_NAMES[part]}")


def _stack(ctx: ShotContext, numbers: Numbers) -> ByteStack:
    sizes = {part: float(numbers.get(f"bytes_per_param.{part}")) for part in STATE_PARTS}
    names = {
        part: numbers(f"{{bytes_per_param.{part}:int}}")
        + (" byte" if sizes[part] == 1 else " bytes")
        + " · "
        + part_name(numbers, part)
        for part in STATE_PARTS
    }
    stack = ByteStack(ctx.theme, sizes, names)
    stack.shift([STACK_X - stack.blocks.get_center()[0], STACK_BOTTOM - stack.blocks.get_bottom()[1], 0])
    return stack


def _stack_total(ctx: ShotContext, numbers: Numbers, stack: ByteStack) -> VGroup:
    total = label(
        ctx.theme, numbers("{bytes_per_param.total:int} bytes per parameter"), ctx.theme.caption_size, weight="BOLD"
    )
    total.move_to([STACK_X - 0.5, stack.blocks.get_top()[1] + 0.35, 0], aligned_edge=LEFT)
    return total


def _fill_stack(ctx: ShotContext, stack: ByteStack, optimizer: VGroup) -> None:
    """Each block of the stack grown as the voice names it (Adam's v right after its m), with its
    name, and lit across; the optimizer's place lit first where the voice gives its share."""
    for name in stack.names:  # each block as the voice names it (Adam's v right after its m)
        if name.part == "master_weights" and ctx.has_mark("share"):  # where the optimizer's share will stand
            ctx.until("share")
            ctx.highlight(optimizer, across=True, hold=0.2)
        if name.part in BYTE_MARKS:
            ctx.until(name.part)
        block = stack.block(name.part)
        if name.part == "weights" and ctx.has_mark("weights"):
            # the block as the shot opens, lit as the voice names the weight, named with its
            # bytes as the voice says them
            ctx.scene.play(GrowFromEdge(block, DOWN), run_time=0.8)
            if ctx.has_mark("weight"):
                ctx.until("weight")
                ctx.highlight(block, across=True, hold=0.2)
            ctx.reveal(name, at="weights")
        else:
            ctx.scene.play(GrowFromEdge(block, DOWN), appear(name, shift=RIGHT * SLIDE_UNITS), run_time=0.8)
        if name.part != "adam_v":  # (Adam's v is named with its m)
            ctx.highlight(VGroup(block, name), across=True)


def _model_state_column(theme: Theme, numbers: Numbers) -> StateColumn:
    """The whole model's training state (the bytes per parameter times the parameters), a column
    against one card's memory, at the right of the stage."""
    totals = [float(numbers.get("state.total"))]
    scale = state_scale(totals, float(numbers.get("memory.capacity")), 2.75, 4.3)
    params = float(numbers.get("params"))
    sizes = [params * float(numbers.get(f"bytes_per_param.{part}")) for part in STATE_PARTS]
    column = StateColumn(
        theme,
        sizes,
        float(numbers.get("memory.capacity")),
        numbers("{~one} card: {memory.capacity:GB}"),
        numbers("{state.total:bytes}"),  # as the voice says it: GB, or TB past a thousand GB
        scale,
    )
    column.shift([COLUMN_X - column.blocks.get_center()[0], COLUMN_BOTTOM - column.blocks.get_bottom()[1], 0])
    return column


def _mark_past_the_card(ctx: ShotContext, column: StateColumn) -> None:
    """What passes the card's line, in the one colour for "bad", as the voice says it does not fit."""
    ctx.until("verdict")
    over = Rectangle(
        width=column.blocks.width,
        height=column.blocks.get_top()[1] - column.line.get_y(),
        fill_color=ctx.theme.oom,
        fill_opacity=0.45,
        stroke_width=0,
    ).move_to(column.blocks, aligned_edge=UP)
    ctx.scene.play(GrowFromEdge(over, DOWN), run_time=0.6)
    ctx.highlight(over, column.total, across=True, hold=0.2)
    column.add(over)


def play_bytes_per_param(ctx: ShotContext, shot: Shot) -> None:
    """The training state of one parameter, block by block; then times the parameter count,
    in GB against one card."""
    theme, numbers = ctx.theme, shot.numbers
    stack = _stack(ctx, numbers)
    # the ledger's rows, empty, come in as the title card goes: each is filled as the voice names
    # it, where one block stood alone on an empty stage for 6 s after the title (issue 58)
    rows = _empty_rows(ctx, stack)
    ctx.clear_stage((), LaggedStart(*[appear(row, shift=UP * SLIDE_UNITS) for row in rows], lag_ratio=0.2))
    ctx.open_shot(shot.caption, clear_stats=True, clear=False)
    optimizer = VGroup(*[stack.block(part) for part in ("master_weights", "adam_m", "adam_v")])
    _fill_stack(ctx, stack, optimizer)
    total = _stack_total(ctx, numbers, stack)
    ctx.until("optimizer")
    ctx.scene.play(appear(total), run_time=0.6)
    ctx.highlight(optimizer, across=True)

    column = _model_state_column(theme, numbers)
    start = stack.names.get_right()[0] + 0.3
    arrow = Arrow([start, -0.6, 0], [column.blocks.get_left()[0] - 0.6, -0.6, 0], buff=0, color=theme.muted)
    times = label(theme, numbers("× {params:si} parameters"), theme.label_size, theme.text)
    times.next_to(arrow, UP, buff=0.1)
    ctx.until("times")  # the arrow and the column at once, as the voice multiplies
    ctx.scene.play(
        GrowFromEdge(arrow, LEFT),
        appear(times),
        *[GrowFromEdge(b, DOWN) for b in column.blocks if b.fill_opacity],
        run_time=1.2,
    )
    ctx.scene.play(appear(column.total, shift=UP * SLIDE_UNITS), run_time=0.6)
    ctx.point_at(column.blocks, scale=1.1)
    ctx.until("card")
    ctx.scene.play(appear(column.line), appear(column.card, shift=LEFT * SLIDE_UNITS), run_time=0.8)
    ctx.highlight(VGroup(column.line, column.card), across=True)
    if ctx.has_mark("verdict") and float(numbers.get("state.total")) > float(numbers.get("memory.capacity")):
        _mark_past_the_card(ctx, column)
    ctx.scene.remove(*rows)  # (under the blocks that fill them)
    ctx.leave(stack=VGroup(stack, total), column=VGroup(column, arrow, times))


def _empty_rows(ctx: ShotContext, stack: ByteStack) -> VGroup:
    """Each block of the stack as an empty row, outlined in its part's colour: the ledger before
    it is counted."""
    return VGroup(
        *[
            Rectangle(width=block.width, height=block.height, stroke_color=block.get_fill_color(), stroke_width=2)
            .set_stroke(opacity=EMPTY_ROW_OPACITY)
            .move_to(block)
            for block in stack.blocks
            if block.fill_opacity
        ]
    )


def play_precision_switch(ctx: ShotContext, shot: Shot) -> None:
    """The byte stack under each precision: blocks grow, shrink or go, the total is shown."""
    ctx.open_shot(shot.caption)
    steps = shot.steps

    def values(n: Numbers) -> list[Phrase]:
        return [n("{inputs.precision}"), n("{bytes_per_param.total:int} bytes"), n("{state.total:GB}")]

    recipe = ctx.has_mark("recipe") and float(steps[-1].get("memory.fp8_weight_copies")) > 0
    with_copies = _with_recipe_copies(steps[-1]) if recipe else []
    ctx.set_sweep_stats(
        [("Precision", False), ("State a parameter", True), ("Whole state", False)],
        values,
        steps,
        later=(with_copies,) if recipe else (),
    )
    stack = _stack(ctx, steps[0])
    total = _stack_total(ctx, steps[0], stack)
    ctx.scene.play(appear(stack), appear(total), run_time=0.8)
    for i, numbers in enumerate(steps[1:], start=1):
        ctx.until(f"value{i + 1}", share=i / len(steps))
        before = {part: stack.block(part).height for part in STATE_PARTS}
        fresh = _stack(ctx, numbers)
        fresh_total = _stack_total(ctx, numbers, fresh)
        # each block's name moves with it; the names that change go before the new come (a
        # cross-fade drew "4 bytes · fp32 gradients" over "… master copy of the weights")
        ctx.scene.play(
            *[Transform(old, new) for old, new in zip(stack.blocks, fresh.blocks, strict=True)],
            *reword(list(stack.names), list(fresh.names)),
            *ctx.count_stats(values(numbers)),
            run_time=1.4,
        )
        relabel(total, fresh_total)
        stack.remove(stack.names)
        stack.names = fresh.names
        stack.add(stack.names)
        changed = [stack.block(p) for p in STATE_PARTS if abs(stack.block(p).height - before[p]) > 1e-6]
        kept = [stack.block(p) for p in STATE_PARTS if stack.block(p) not in changed and stack.block(p).height > 0]
        if changed:  # what this precision changed, then (when the voice says so) what it did not
            ctx.point_at(*[b for b in changed if b.height > 1e-6] or changed)
        if i == 1 and ctx.has_mark("still"):  # the bytes a parameter, as the voice weighs them
            ctx.until("still")
            ctx.highlight(total, across=True, hold=0.2)
        if i == len(steps) - 1 and kept:  # what stayed, as the voice names it
            moments = [b for b in kept if b in (stack.block("adam_m"), stack.block("adam_v"))]
            master = [b for b in kept if b is stack.block("master_weights")]
            first = (master or [b for b in kept if b not in moments]) if ctx.has_mark("moments") and moments else kept
            ctx.until("same")
            ctx.highlight(VGroup(*first), across=True, hold=0.2)
            if first is not kept:
                ctx.until("moments")
                ctx.highlight(VGroup(*moments), across=True, hold=0.2)
    shown = VGroup(stack, total)
    if recipe:
        # what an fp8 recipe keeps beside the fp8 weights (dtfilm.cost.ledger), as the voice says it
        shown.add(_recipe_copies(ctx, steps, stack, total, with_copies))
    ctx.leave(stack=shown)


def _with_recipe_copies(fp8: Numbers) -> list[Phrase]:
    """The stats once an fp8 recipe's copies are counted: its precision, then its bytes a
    parameter with the copies added ("15 + 3 bytes") and its whole state with them (126 GB):
    the stats' 15 bytes and 105 GB alone read as a saving the voice then denies (a teacher's read)."""
    return [
        fp8("{inputs.precision}"),
        fp8("{bytes_per_param.total:int} + {memory.fp8_weight_copy_bytes_per_param:int} bytes"),
        fp8("{state.with_fp8_copies:GB}"),
    ]


def _recipe_parts(mixed: Numbers, fp8: Numbers) -> list[tuple[float, Phrase, str]]:
    """The copies an fp8 recipe keeps, each (bytes a parameter, its words, the mark it comes
    at): a {~bf16} copy of each weight (the mixed-precision step's weight bytes) and a transposed
    {~fp8} copy (the fp8 step's); one part of the copies' bytes where those two do not add up."""

    def named(numbers: Numbers, what: str) -> Phrase:
        one = float(numbers.get("bytes_per_param.weights")) == 1
        return numbers("{bytes_per_param.weights:int}") + (" byte · " if one else " bytes · ") + numbers(what)

    parts = [
        (float(mixed.get("bytes_per_param.weights")), named(mixed, "{formats.weights} copy"), "kept"),
        (float(fp8.get("bytes_per_param.weights")), named(fp8, "{~fp8}, transposed"), "transposed"),
    ]
    extra = float(fp8.get("memory.fp8_weight_copy_bytes_per_param"))
    if abs(sum(p[0] for p in parts) - extra) > 1e-9:
        return [(extra, fp8("{memory.fp8_weight_copy_bytes_per_param:int} bytes · the recipe's copies"), "transposed")]
    return parts


def _recipe_copies(
    ctx: ShotContext, steps: list[Numbers], stack: ByteStack, total: VGroup, with_copies: list[Phrase]
) -> VGroup:
    """What an fp8 recipe keeps beside the fp8 weights (_recipe_parts), drawn as blocks of their
    bytes beside the stack as the voice names them (marks `recipe`, `bf16`, `transposed`, `more`,
    `speed`), and counted into the stats (`with_copies`) as the voice adds them."""
    theme, last = ctx.theme, steps[-1]
    weights = stack.block("weights")
    per_byte = weights.height / float(last.get("bytes_per_param.weights"))
    parts = _recipe_parts(steps[0], last)
    ctx.until("recipe")
    ctx.highlight(weights, across=True, hold=0.2)  # the fp8 weights the recipe keeps copies of
    x = stack.names.get_right()[0] + 0.5
    bottom = weights.get_bottom()[1]
    drawn = VGroup()
    for nbytes, words, mark in parts:
        block = Rectangle(
            width=weights.width,
            height=per_byte * nbytes,
            fill_color=theme.memory["weights"],
            fill_opacity=0.55,
            stroke_color=theme.memory["weights"],
            stroke_width=2,
        )
        block.move_to([x + weights.width / 2, bottom + block.height / 2, 0])
        bottom = block.get_top()[1]
        name = label(theme, words, theme.small_size, theme.text)
        name.next_to(block, RIGHT, buff=0.25)
        if ctx.has_mark(mark):
            ctx.until(mark)
        ctx.scene.play(GrowFromEdge(block, DOWN), appear(name, shift=RIGHT * SLIDE_UNITS), run_time=0.8)
        ctx.highlight(VGroup(block, name), across=True, hold=0.2)
        drawn.add(block, name)
    note = label(
        theme,
        last("+ {memory.fp8_weight_copy_bytes_per_param:int} bytes per parameter beside them: the recipe's copies"),
        theme.label_size,
        theme.accent,
    )
    note.next_to(stack.blocks, DOWN, buff=0.3, aligned_edge=LEFT)
    ctx.reveal(note, at="more" if ctx.has_mark("more") else None, run_time=0.6)
    if ctx.stats is not None:  # the copies counted into the stats as the voice adds them
        counts = zip(ctx.stats.stats[1:], with_copies[1:], strict=True)
        ctx.scene.play(*[CountTo(stat, value) for stat, value in counts])
    ctx.highlight(note, across=True, hold=0.2)
    if ctx.has_mark("speed"):  # what fp8 buys, and what it does not: the copies and the total
        ctx.until("speed")
        ctx.highlight(VGroup(drawn, total), across=True, hold=0.2)
    return VGroup(drawn, note)


def _activation_formula(numbers: Numbers) -> Phrase:
    """Where the activation bytes come from, in the terms this configuration needs."""
    whole_model = numbers.get("plan.tp") == 1 and numbers.get("plan.cp") == 1
    if whole_model and numbers.get("memory.micro_batches_in_flight") == 1:
        # b sequences of s tokens: the micro-batch size is a factor whenever it is above 1.
        batch = " × {inputs.micro_batch_size:int} sequences" if numbers.get("inputs.micro_batch_size") > 1 else ""
        return numbers(
            "{memory.activation_bytes_per_token_per_hidden:int} bytes × {inputs.seq_len:int} tokens"
            + batch
            + " × {model.hidden:int} hidden × {memory.layers:int} layers"
        )
    # A pipeline keeps several micro-batches' activations; the ledger comes before dp defines
    # the word, so it is defined here in passing (and left out where one is in flight).
    in_flight = (
        " × {memory.micro_batches_in_flight:int} micro-batches (slices of a batch) in flight"
        if numbers.get("memory.micro_batches_in_flight") > 1
        else ""
    )
    return numbers("{memory.activations_per_layer:GB} a layer × {memory.layers:int} layers" + in_flight)


def _ledger_picture(ctx: ShotContext, numbers: Numbers, scale: float) -> VGroup:
    theme = ctx.theme
    sizes = {part: float(numbers.get(f"memory.{part}")) for part in MEMORY_PARTS}
    capacity = float(numbers.get("memory.capacity"))
    bar = LedgerBar(theme, sizes, capacity, numbers("{memory.total:GB}"), scale)
    bar.shift([BAR_LEFT - bar.segments.get_left()[0], BAR_Y, 0])
    note = capacity_note(theme, bar, numbers("{cluster.gpu_label} holds {memory.capacity:GB}"))
    act = label(theme, numbers("activations {memory.activations:GB}"), theme.label_size, theme.memory["activations"])
    act.next_to(bar.segments, DOWN, buff=0.2)
    act.set_x(max(bar.activations.get_center()[0], BAR_LEFT + act.width / 2))
    source = label(theme, _activation_formula(numbers), theme.small_size, theme.muted)
    source.next_to(act, DOWN, buff=0.1)
    source.set_x(max(act.get_center()[0], BAR_LEFT + source.width / 2))
    clamp_x(act)
    clamp_x(source)
    for text in (act, source):  # the capacity line runs through neither
        clamp_x(clear_of_line(text, bar.line, BAR_LEFT))
    k = float(numbers.get("compute.flops_per_token_per_param"))
    ink = theme.compute_ink  # the work a card does, not the accent (issue 58: one colour, one meaning)
    compute = Rectangle(width=k * COMPUTE_UNIT, height=0.45, fill_color=ink, fill_opacity=0.85, stroke_width=0)
    compute.move_to([BAR_LEFT + compute.width / 2, COMPUTE_Y, 0])
    flops = numbers("{compute.flops_per_token_per_param:int} FLOPs per parameter per token")
    if numbers.get("inputs.checkpointing"):
        flops = flops + numbers(": the forward pass runs {compute.forward_passes:times}")
    compute_text = label(theme, flops, theme.small_size, theme.text)
    compute_text.next_to(compute, RIGHT, buff=0.2)
    return VGroup(bar, note, act, source, compute, compute_text)


def _swept_inputs(shot: Shot) -> list[str]:
    if shot.options.get("set"):
        return [shot.options["set"]]
    paths = input_paths()
    names: list[str] = []
    for value in shot.options["values"]:
        names += [paths[k] for k in value if paths[k] not in names]
    return names


STAYING = ("master_weights", "adam_m", "adam_v")  # what fp8 weights leave as it was: the master copy, the moments


def _said_verdict(ctx: ShotContext, bar: LedgerBar, capacity: VGroup) -> None:
    """The card's total and its capacity as the voice says them, then both as it says whether
    it fits: each at its mark where the narration has it."""
    # (each lit across the stage: the total and the capacity are short words, whose highlight
    # alone left the picture still at 480p while the voice said them)
    marks = [m for m in ("total", "capacity", "verdict") if ctx.has_mark(m)]
    if "total" in marks:
        ctx.until("total")
        ctx.highlight(bar.total, across=True)
        ctx.relight(bar.total, across=True)
    if "capacity" in marks:
        ctx.until("capacity")
        ctx.point_at(capacity, bar.line)
        if _room_before(ctx, marks, "capacity"):
            ctx.highlight(capacity, across=True, hold=0.1)
    if "verdict" in marks:
        ctx.until("verdict")
        ctx.highlight(bar.total, capacity, across=True)


def _room_before(ctx: ShotContext, marks: list[str], mark: str) -> bool:
    """Whether a short highlight (0.8 s) fits before the mark after `mark` (or the voice's end)."""
    later = marks[marks.index(mark) + 1 :]
    until = ctx.mark_seconds(later[0]) if later else ctx.said_seconds()
    return until - (ctx.scene.time - ctx.shot_start) >= 0.85


def _knob_stats(ctx: ShotContext, shot: Shot, steps: tuple[Numbers, ...]) -> Callable[[Numbers], list[Phrase]]:
    """The stats over the ledger: each input the sweep (and its `also:`) turns, by its heading,
    and the card's total. What they read at a step."""
    names = _swept_inputs(shot)
    if shot.also_steps:
        names += [n for n in _also_inputs(shot) if n not in names]

    def values(n: Numbers) -> list[Phrase]:
        return [*[n(f"{{inputs.{name}}}") for name in names], n("{memory.total:GB}")]

    headings = [
        (
            STAT_HEADINGS.get(f"{SPECS[name].section}.{name}") or SPECS[name].help[:1].upper() + SPECS[name].help[1:],
            False,
        )
        for name in names
    ]
    ctx.set_sweep_stats([*headings, ("Per card", True)], values, steps)
    return values


def _open_ledger(ctx: ShotContext, numbers: Numbers, scale: float, key: VGroup) -> VGroup:
    """The first ledger drawn with the legend, then its busiest part and the activations' formula
    as the voice names them (the hidden size, the scores it leaves out, the square), then its
    verdict. The picture (`_ledger_picture`)."""
    picture = _ledger_picture(ctx, numbers, scale)
    bar = picture[0]
    ctx.scene.play(appear(key), *[GrowFromEdge(s, LEFT) for s in bar.segments if s.fill_opacity], run_time=1.2)
    formula = picture[3]
    ctx.scene.play(
        appear(VGroup(*[m for m in picture if m is not bar and m is not formula])),
        appear(VGroup(bar.line, bar.total)),
        run_time=0.8,
    )
    ctx.until("busiest")
    ctx.highlight(bar.activations, picture[2], across=True, hold=0.2)
    ctx.reveal(formula, at="formula")
    ctx.highlight(formula, across=True, hold=0.2)
    if ctx.has_mark("hidden"):  # the hidden size in it, as the voice says what a hidden unit is
        ctx.until("hidden")
        ctx.highlight(formula, across=True, hold=0.2)
    if ctx.has_mark("scores"):  # what the bytes leave out (FlashAttention's scores), as it is said
        ctx.until("scores")
        ctx.point_at(formula, scale=1.08)
    if ctx.has_mark("squared"):
        ctx.until("squared")
        ctx.highlight(formula, across=True, hold=0.2)
    _said_verdict(ctx, bar, picture[1])
    return picture


def _ledger_moves(
    ctx: ShotContext, picture: VGroup, fresh: VGroup, stats: Callable[[], list[Animation]], split: bool
) -> tuple[list[Animation], list[Animation]]:
    """The ledger's parts to the next step's (`fresh`) and the stats counted to it (`stats`: the
    switch and the total with the bar, so no counter reads what the bar does not show); the
    totals, labels and formula give way to their new values in place, never stacked. Where the
    step is `split`, the compute bar's moves apart, for its own mark."""
    bar = picture[0]
    moves = [Transform(old, new) for old, new in zip(bar.segments, fresh[0].segments, strict=True)]
    moves += stats()
    compute_moves: list[Animation] = []
    if split:
        compute_moves = [Transform(picture[4], fresh[4]), swap(picture[5], fresh[5])]
    else:
        moves.append(Transform(picture[4], fresh[4]))
    # the totals, labels and formula give way to their new values in place, never stacked
    before, after = VGroup(bar.total, *picture[1:4]), VGroup(fresh[0].total, *fresh[1:4])
    if not split:
        before.add(picture[5])
        after.add(fresh[5])
    moves.append(swap(before, after))
    return moves, compute_moves


def _turn_knob(ctx: ShotContext, shot: Shot, steps: tuple[Numbers, ...], i: int, picture: VGroup, scale: float,
               key: VGroup, values: Callable[[Numbers], list[Phrase]]) -> VGroup:  # fmt: skip
    """Step `i`'s ledger in place of the last, as the voice reaches it: the parts it changed lit
    again, or (the `also:` step told at `collapse`) its switch counted, then the ledger, then the
    recompute's price on the compute bar. The picture now shown."""
    numbers, bar = steps[i], picture[0]
    if shot.also_steps and i == len(steps) - 1:
        ctx.until("also")
    else:
        ctx.until(f"value{i + 1}", share=i / len(steps))
    # the `also:` step told as the voice tells it (mark `collapse`): the activations it keeps
    # lit as it is named, then its switch, the ledger and the card's total (drawn as one: no
    # counter reads what the bar does not show; the switch read "on" for 4 s beside the bar's
    # old 188 GB, issue 58) as the voice says what it does, and the compute bar at `compute`
    split = bool(shot.also_steps) and i == len(steps) - 1 and ctx.has_mark("collapse")
    if split:
        ctx.highlight(bar.activations, across=True, hold=0.2)
        ctx.relight(bar.activations, across=True)  # what it keeps and recomputes, while it is said
        ctx.until("collapse")
    fresh = _ledger_picture(ctx, numbers, scale)
    widths = [segment.width for segment in bar.segments]
    moves, compute_moves = _ledger_moves(ctx, picture, fresh, lambda: ctx.count_stats(values(numbers)), split)
    if i == 1:
        ctx.caption_after_legend(shot.caption, key, *moves, run_time=1.4)
    else:
        ctx.scene.play(*moves, run_time=1.4)
    bar.remove(bar.total)
    bar.total = fresh[0].total
    bar.add(bar.total)
    picture = VGroup(bar, *fresh[1:4], picture[4], picture[5] if split else fresh[5])
    if split:  # the recompute's price, as the voice names it
        ctx.highlight(bar.activations, bar.total, across=True, hold=0.2)
        if ctx.has_mark("compute"):
            ctx.until("compute")
        ctx.scene.play(*compute_moves, run_time=1.0)
        picture = VGroup(bar, *picture[1:4], picture[4], fresh[5])
        ctx.highlight(picture[4], picture[5], across=True, hold=0.2)
    else:
        ctx.point_at(bar.segments, scale=1.05)
        # the parts the first step changed, lit again while the voice is still on it, before
        # it prices the step at [recompute] (3d's ZeRO-1: the optimizer state shrinking stood
        # still 2.8 s as the voice named it)
        changed = [s for s, w in zip(bar.segments, widths, strict=True) if abs(s.width - w) > 0.05 * max(w, 0.1)]
        if changed and i == 1 and ctx.has_mark("recompute"):
            ctx.relight(*changed, across=True)
    if i == 1 and ctx.has_mark("recompute"):  # the compute bar and its FLOPs, as the recompute is priced
        ctx.until("recompute")
        ctx.highlight(picture[4], picture[5])
    if i == 1 and ctx.has_mark("verdict2"):  # the card's total against its capacity after the first step
        ctx.until("verdict2")
        ctx.highlight(bar.total, picture[1], across=True)  # (two short labels: lit across, to be seen at 480p)
    return picture


def _come_back_to_parts(ctx: ShotContext, shot: Shot, picture: VGroup) -> None:
    """The parts the voice comes back to once the knobs are turned: the compute (unless shown at
    its mark), the state and what of it stays, and what an fp8 recipe keeps beside the weights."""
    bar = picture[0]
    told = ctx.has_mark("collapse") and bool(shot.also_steps)  # the compute was shown at its mark
    for mark, piece in (("compute", picture[4]), ("state", VGroup(*bar.segments[: len(STATE_PARTS)]))):
        if ctx.has_mark(mark) and not (told and mark == "compute"):  # the voice comes back to it
            ctx.until(mark)
            ctx.point_at(piece, scale=1.1)
        if mark == "state" and ctx.has_mark("stay"):  # the master copy and the moments, lit as they stay
            ctx.until("stay")
            ctx.highlight(VGroup(*[bar.segments[MEMORY_PARTS.index(p)] for p in STAYING]), across=True)
    if ctx.has_mark("copies"):  # what an fp8 recipe keeps beside the weights, in the grey part, as said
        ctx.until("copies")
        ctx.highlight(bar.segments[MEMORY_PARTS.index("buffers")], bar.total, across=True)
        ctx.relight(bar.total, picture[1], across=True)  # the total they come to, said last


def play_ledger_knobs(ctx: ShotContext, shot: Shot) -> None:
    """One card's ledger as a bar against its capacity, and its compute per token, as inputs
    change step by step; a sweep's `also:` (checkpointing, say) is played after the last step.
    The legend names the parts of the first ledger; the caption takes its place as the first knob
    turns (the two at once, beside the counters and labels, were four layers of text; issue 58: 3)."""
    theme = ctx.theme
    ctx.open_shot(None)
    steps = (*shot.steps, *shot.also_steps[-1:])
    values = _knob_stats(ctx, shot, steps)
    totals = [float(n.get("memory.total")) for n in steps]
    scale = min(BAR_ROOM / max(totals), BAR_ROOM * 0.62 / float(steps[0].get("memory.capacity")))
    key = legend(theme)
    picture = _open_ledger(ctx, steps[0], scale, key)
    for i in range(1, len(steps)):
        picture = _turn_knob(ctx, shot, steps, i, picture, scale, key, values)
    _come_back_to_parts(ctx, shot, picture)
    if len(steps) == 1:  # no knob turned: the caption comes after the verdict
        ctx.caption_after_legend(shot.caption, key)
    ctx.leave(ledger=picture)


def _also_inputs(shot: Shot) -> list[str]:
    first, second = shot.steps[-1], shot.also_steps[-1]
    return [n for n in first.data["inputs"] if first.get(f"inputs.{n}") != second.get(f"inputs.{n}")]


def map_entries(film_chapters: list[str], later: list[str]) -> list[str]:
    """What the map draws, in order: the chapters after this one, and each strategy the film has
    no chapter for (expert parallelism, before film.yaml lists an `ep` chapter) just before the
    first chapter that is no strategy's (3d, which combines them); with the chapter listed, its
    tile is the chapter's. Either way the map names all six strategies."""
    entries = list(later)
    missing = [s.chapter for s in STRATEGIES if s.chapter and s.chapter not in film_chapters]
    if not missing or not entries:
        return entries
    keys = {s.chapter for s in STRATEGIES}
    at = next((i for i, chapter in enumerate(entries) if chapter not in keys), len(entries))
    return entries[:at] + missing + entries[at:]


def map_tile_name(chapter: str, strategy: Strategy | None, titles: dict[str, Phrase]) -> Phrase:
    """A map tile's name: the strategy as the voice names it ("then context parallelism, the
    sequence"), where the chapter cuts one, whatever the chapter's title ("Sequence too long" is a
    wall, not a strategy); else the chapter's title (3d's "3D parallelism")."""
    if strategy is not None:
        return plain(strategy.called)
    return titles[chapter] if chapter in titles else plain(chapter)


def _map_tile(theme: Theme, name: Phrase, strategy: Strategy | None, uncut: bool, size: tuple[float, float],
              rows: int) -> VGroup:  # fmt: skip
    """A chapter's tile, `size` wide and tall: its loaf cut as the strategy cuts it (whole where
    no cut comes yet, every cut for the chapters that combine), its name and what it cuts; the
    loaf smaller where the map takes two rows, so the words keep their size."""
    width, height = size
    box = RoundedRectangle(corner_radius=0.12, width=width, height=height, stroke_color=theme.faint, stroke_width=2)
    box.set_fill(theme.panel, opacity=1)
    icon = strategy_icon(
        theme, strategy.slicing if strategy else "shard", width=min(1.3, width - 0.3), slice_height=0.16
    )
    if rows > 1:  # two rows: the loaf smaller, the words at their size
        icon.scale(MAP_TWO_ROW_ICON)
    if uncut:
        icon = strategy_icon(theme, "whole", width=min(1.3, width - 0.3), slice_height=0.16)
        icon.scale(MAP_TWO_ROW_ICON if rows > 1 else 1)
    elif strategy is None:  # the chapters that combine: every way at once
        icon = VGroup(*[strategy_icon(theme, s, width=0.7, slice_height=0.16) for s in ("columns", "rows")])
        icon.arrange(RIGHT, buff=0.15)
        icon.scale_to_fit_width(min(icon.width, width - 0.3) * (MAP_TWO_ROW_ICON if rows > 1 else 1))
    title = wrapped(theme, name, theme.caption_size, width - 0.2, theme.text)
    cuts = wrapped(
        theme,
        plain(strategy.shards if strategy else "no cut yet" if uncut else "every cut together"),
        theme.small_size,
        width - 0.2,
        theme.muted,
    )
    inner = VGroup(icon, title, cuts).arrange(DOWN, buff=0.25 if rows == 1 else 0.15)
    if inner.height > height - 0.2:
        inner.scale_to_fit_height(height - 0.2)
    inner.move_to(box)
    return VGroup(box, inner)


def _map_arrows(theme: Theme, tiles: VGroup, rows: int, columns: int) -> VGroup:
    """An arrow from each tile to the next; none from the end of one row to the start of the
    next (the reading order says it)."""
    return VGroup(
        *[
            Arrow(
                a.get_right(),
                b.get_left(),
                buff=0.04,
                color=theme.muted,
                stroke_width=3,
                max_tip_length_to_length_ratio=0.5,
                # from the end of one row to the start of the next: the reading order says it, no arrow
            ).set_opacity(0 if rows > 1 and i % columns == columns - 1 else 1)
            for i, (a, b) in enumerate(itertools.pairwise(tiles))
        ]
    )


def _fill_tiles(ctx: ShotContext, later: list[str], tiles: VGroup, arrows: VGroup) -> None:
    """Each tile filled as the voice names its chapter (with the arrow to it), and the tiles named
    since the last lit together as the voice says what they cut."""
    named: list[VGroup] = []  # the tiles named since the last "which cuts ..."
    for i, (chapter, tile) in enumerate(zip(later, tiles, strict=True)):
        if chapter in MAP_MARKS:
            ctx.until(chapter, share=i / len(later))
        else:
            ctx.spread(None, None, i, len(later))
        ctx.scene.play(appear(tile[1], shift=UP * SLIDE_UNITS), *([appear(arrows[i - 1])] if i else []), run_time=0.7)
        ctx.point_at(tile[1][0], scale=1.3)
        named.append(tile)
        if ctx.has_mark(f"{chapter}_cuts"):  # what the tiles named cut, as the voice says it
            ctx.until(f"{chapter}_cuts")
            ctx.highlight(*named, hold=0.3)
            named = []


def play_chapter_map(ctx: ShotContext, shot: Shot) -> None:
    """The chapters that follow, left to right: each a tile with its loaf and what it cuts,
    filled as the voice names it and highlighted as it says what it cuts (mark `KEY_cuts`);
    at `caveat` the whiteboard's caveat is written under them all."""
    theme = ctx.theme
    ctx.open_shot(shot.caption, clear_stats=True)
    film = ctx.chapter.film
    chapters = list(film.chapters)
    # a chapter outside the film's list (a talk's, checked by its path): the film's every chapter
    later = chapters[chapters.index(ctx.chapter.id) + 1 :] if ctx.chapter.id in chapters else chapters
    if not later:
        return
    later = map_entries(chapters, later)
    titles = chapter_title_phrases(film, ctx.chapter.overrides)
    by_chapter = {s.chapter: s for s in STRATEGIES if s.chapter}
    room = FRAME_WIDTH - 0.9
    # one row up to MAP_ONE_ROW tiles (the film's seven from the ledger); more (a talk's map of the
    # film's every chapter) take two rows, so their words keep their size
    rows = 1 if len(later) <= MAP_ONE_ROW else 2
    columns = -(-len(later) // rows)
    buff = 0.35 if columns < 7 else 0.22  # seven tiles (the sixth strategy's) keep their words' size
    width = min(2.6, (room - buff * (columns - 1)) / columns)
    height = 3.6 if rows == 1 else MAP_TWO_ROW_HEIGHT
    tiles = VGroup()
    first_cut = next((i for i, chapter in enumerate(later) if chapter in by_chapter), len(later))
    for at, chapter in enumerate(later):
        strategy = by_chapter.get(chapter)
        uncut = strategy is None and at < first_cut  # a chapter before any cut (a talk's map of why, ledger)
        name = map_tile_name(chapter, strategy, titles)
        tiles.add(_map_tile(theme, name, strategy, uncut, (width, height), rows))
    tiles.arrange_in_grid(rows, columns, buff=(buff, MAP_ROW_GAP), flow_order="rd")
    if tiles.width > room:  # more tiles than fit at their icons' width
        tiles.scale_to_fit_width(room)
    tiles.move_to([0, 0.2 if rows == 1 else 0.55, 0])
    # the empty tiles as the voice says "cutting that ledger", then each filled as it is named
    ctx.scene.play(*[appear(tile[0], shift=UP * SLIDE_UNITS) for tile in tiles], run_time=0.9)
    arrows = _map_arrows(theme, tiles, rows, columns)
    _fill_tiles(ctx, later, tiles, arrows)
    drawn = VGroup(tiles, arrows)
    if ctx.has_mark("caveat"):  # what every figure in those chapters is, under them all
        ctx.until("caveat")
        note = label(theme, plain("every figure ahead: a first-order estimate"), theme.label_size, theme.accent)
        note.next_to(tiles, DOWN, buff=0.3)
        ctx.reveal(note, direction=UP, run_time=0.7)
        ctx.highlight(tiles, note, hold=0.3)
        drawn.add(note)
    ctx.leave(map=drawn)
