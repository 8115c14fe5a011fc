"""Shot kinds of the pipeline chapter: stages on cards, the timeline, the micro-batch slider."""

# Over 400 lines (issue 61): three kinds on one timeline of stages and micro-batches, sharing its blocks
# (a kind splits into a folder of its own when it grows)

from __future__ import annotations

import itertools

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UL,
    UP,
    Animation,
    DashedLine,
    FadeIn,
    Indicate,
    LaggedStart,
    Line,
    Mobject,
    ReplacementTransform,
    RoundedRectangle,
    Square,
    Transform,
    VGroup,
)

from dtfilm.cost.pipeline import BACKWARD_SLOTS, FORWARD_SLOTS
from dtfilm.numbers import Numbers
from dtfilm.phrases import Phrase, formula, plain
from dtfilm.scene import ShotContext
from dtfilm.shots.common.draw import legend, loaf_ends, stage_gpu, stage_ledgers
from dtfilm.storyboard import Shot
from dtfilm.storyboard.timing import beat_seconds
from dtfilm.visuals.card import SPILL_CAP, CardBox
from dtfilm.visuals.fade import appear, rewrite, swap, vanish
from dtfilm.visuals.loaf import Loaf
from dtfilm.visuals.slicing import become, carry, cut_across, play_cut
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import Theme
from dtfilm.visuals.timeline import Timeline, TimelineWords

TOKEN_SIZE, TOKEN_PITCH = 0.34, 0.38  # the micro-batch's squares: large enough to see travel
TOKEN_EXIT_SECONDS = 0.3  # the micro-batch's squares go once they are home
MAX_STAGES_DRAWN = 8
TIMELINE_HEIGHT = 3.3  # the rows' room between the stats and the key, whatever the stages
STAGE_ROW_WIDTH = 12.4
FEW_CARDS_MARGIN = 1.6  # left of two cards: the micro-batch's tokens wait there (at pp 2 the legend,
# squeezed beside the verdict under centred cards, was 10.8 px at 480p)
LOAF_HEIGHT = 1.9  # the loaf's slices at most: above the stage cards, under the stats


def _stage_ranges(numbers: Numbers) -> list[tuple[int, int]]:
    """First and last layer (1-based) of each stage."""
    counts = list(numbers.get_list("plan.stage_layers"))
    ranges, first = [], 1
    for count in counts:
        ranges.append((first, first + count - 1))
        first += count
    return ranges


def stage_breaks(ranges: list[tuple[int, int]], shown: list[int]) -> list[int]:
    """The layers (0-based) a slice of the loaf must begin at so that the cut between stages
    falls between slices: the first layer of every stage drawn, and of the stage after each."""
    starts = {ranges[stage][0] - 1 for stage in shown}
    starts |= {ranges[stage + 1][0] - 1 for stage in shown if stage + 1 < len(ranges)}
    return sorted(starts)


def stage_slices(loaf: Loaf, ranges: list[tuple[int, int]], shown: list[int]) -> list[list[int]]:
    """The loaf's slices (indices) each stage drawn takes, whole: those whose layers lie in its
    range. A loaf built with `stage_breaks` gives every stage at least one."""
    shares = []
    for stage in shown:
        first, last = ranges[stage]
        inside = [i for i, (start, count) in enumerate(loaf.groups) if first - 1 <= start and start + count <= last]
        shares.append(inside)
    return shares


def _stages_loaf(theme: Theme, numbers: Numbers, ranges: list[tuple[int, int]], shown: list[int]) -> Loaf:
    """The model's loaf with a break between the stages drawn, no taller than LOAF_HEIGHT."""
    loaf = Loaf(theme, int(numbers.get("model.layers")), numbers("{model.label} · {model.layers} layers"), width=2.0,
                slice_height=0.16, breaks=stage_breaks(ranges, shown))  # fmt: skip
    if loaf.slices.height > LOAF_HEIGHT:
        loaf.slices.stretch_to_fit_height(LOAF_HEIGHT)
        loaf.caption.next_to(loaf.slices, RIGHT, buff=0.25)
    return loaf.move_to([0, 1.6, 0])


def _stage_cards(
    theme: Theme, numbers: Numbers, ranges: list[tuple[int, int]], shown: list[int]
) -> tuple[VGroup, VGroup]:
    """A card per stage drawn, in a row, each named by its layers above it ("layers 1–8"), and
    "⋯" above the link that leaps the stages left out."""
    pp, drawn = int(numbers.get("plan.pp")), len(shown)
    cards, names = VGroup(), VGroup()
    gap = 0.9 if drawn <= 4 else 0.35
    card_width = min(1.9, (STAGE_ROW_WIDTH - gap * (drawn - 1)) / drawn)
    for stage in shown:
        card = CardBox(theme, stage_gpu(numbers, stage), width=card_width, height=1.3)
        cards.add(card)
    cards.arrange(RIGHT, buff=gap).move_to([0, -1.15, 0])
    if drawn <= 2:  # two wide cards, left of centre: room on their right for the legend at full size
        cards.shift(LEFT * (STAGE_ROW_WIDTH / 2 - FEW_CARDS_MARGIN - cards.width / 2))
    room = card_width + gap - 0.3  # a word space's width between neighbours' ranges

    def named(stage: int, word: str) -> Mobject:
        first, last = ranges[stage]
        text = numbers.index(word + "{}", first, "model.layers", one_based=True) + "–"
        text = text + numbers.index("{}", last, "model.layers", one_based=True)
        return label(theme, text, theme.small_size, theme.text)

    # "layers 1–4" over the first card; over the rest the range alone where the word leaves no
    # room (eight cards and more: scaled to fit, "layers 29–32" was 13 px high at 480p)
    full = [named(stage, "layers ") for stage in shown]
    short = any(name.width > room for name in full)
    for i, (stage, card) in enumerate(zip(shown, cards, strict=True)):
        name = named(stage, "") if short and i else full[i]
        if name.width > room:
            name.scale_to_fit_width(room)
        names.add(name.next_to(card.body, UP, buff=0.1))
    if drawn < pp:  # the stages left out: "⋯" above the link that leaps them (dashed, below)
        names.add(label(theme, "⋯", theme.caption_size, theme.muted).move_to(
            (cards[-2].body.get_right() + cards[-1].body.get_left()) / 2 + UP * 0.3))  # fmt: skip
    return cards, names


def _set_stage_stats(ctx: ShotContext, numbers: Numbers) -> None:
    """The stages and the layers a card holds (where pp does not divide the layers, 126 over 4:
    31, 32, 32, 31, no count is "per card": the first card's)."""
    even = int(numbers.get("model.layers")) % int(numbers.get("plan.pp")) == 0
    ctx.set_stats(
        [
            ("Stages", numbers("{plan.pp:int}"), False),
            ("Layers per card", numbers("{memory.layers:int}"), True)
            if even
            else ("First card's layers", numbers("{plan.stage_layers.0:int}"), True),
        ]
    )


def _stage_links(theme: Theme, cards: VGroup, leaps: bool) -> VGroup:
    """The lines from card to card; the last dashed where it `leaps` the stages left out."""
    links = VGroup(*[Line(a.body.get_right(), b.body.get_left(), stroke_color=theme.faint, stroke_width=4)
                     for a, b in itertools.pairwise(cards)])  # fmt: skip
    if leaps:
        leap = links[-1]
        links.submobjects[-1] = DashedLine(leap.get_start(), leap.get_end(), dash_length=0.05,
                                           stroke_color=theme.faint, stroke_width=4)  # fmt: skip
    return links


def _waiting_tokens(ctx: ShotContext, cards: VGroup) -> VGroup:
    """Three micro-batches waiting left of the first card (above it where there is no room)."""
    theme = ctx.theme
    tokens = VGroup(
        *[Square(TOKEN_SIZE, fill_color=theme.pass_color(False), fill_opacity=1, stroke_width=0) for j in range(3)]
    )
    for j, token in enumerate(tokens):
        token.move_to(cards[0].body.get_left() + LEFT * (0.45 + 0.35 * j))
    tokens.shift(RIGHT * max(0.0, ctx.regions.stage.left - tokens.get_left()[0]))
    if tokens.get_right()[0] > cards[0].body.get_left()[0]:  # no room at the left: wait above the card
        tokens.arrange(RIGHT, buff=0.08).next_to(cards[0].body, UP, buff=0.45)
    return tokens


def _flow_through_stages(ctx: ShotContext, tokens: VGroup, cards: VGroup, links: VGroup) -> None:
    """The micro-batches card to card as the voice tells it: forward until it turns to the
    gradients, then back, home by the voice's next mark; then, where the voice says so at
    [between], only an activation crossing between cards, card to card. (Without [between] in
    the narration, that crossing was placed by the marks' order and ran into [holds]: the
    gauges and "GPU 0 holds 103 GB" came after the voice had said it, issue 58.)"""
    theme, drawn = ctx.theme, len(cards)
    hop = beat_seconds(ctx.seconds_until("back"), drawn, 0.0, least=0.5, most=0.7)
    for stage in range(drawn):
        ctx.scene.play(*[t.animate.move_to(cards[stage].body.get_top() + DOWN * (0.3 + TOKEN_PITCH * j))
                         for j, t in enumerate(tokens)], run_time=hop)  # fmt: skip
    ctx.until("back")
    gradient = theme.memory["gradients"]
    following = ctx.next_mark("back")
    home = ctx.mark_seconds(following) if following else ctx.said_seconds()
    room = home - (ctx.scene.time - ctx.shot_start)
    hop = beat_seconds(room, drawn, 0.0, least=0.4, most=0.7)
    for stage in reversed(range(drawn)):  # (the first hop back turns them to gradients)
        ctx.scene.play(*[t.animate.move_to(cards[stage].body.get_bottom() + UP * (0.3 + TOKEN_PITCH * j))
                         .set_fill(gradient) for j, t in enumerate(tokens)], run_time=hop)  # fmt: skip
    if ctx.has_mark("between"):  # only an activation crosses between cards: the micro-batch, as activations
        ctx.until("between")
        ctx.scene.play(tokens.animate.set_fill(theme.memory["activations"]), Indicate(links, color=theme.accent))
        for stage in range(1, drawn):
            ctx.scene.play(*[t.animate.move_to(cards[stage].body.get_top() + DOWN * (0.3 + TOKEN_PITCH * j))
                             for j, t in enumerate(tokens)], run_time=0.5)  # fmt: skip


def play_loaf_to_stages(ctx: ShotContext, shot: Shot) -> None:
    """The loaf is sliced across its layers; each stage's slices land on their card; then
    micro-batches flow forward through the stages and their gradients flow back."""
    theme, numbers = ctx.theme, shot.numbers
    ctx.open_shot(shot.caption)
    pp = int(numbers.get("plan.pp"))
    shown = list(range(pp)) if pp <= MAX_STAGES_DRAWN else [*range(MAX_STAGES_DRAWN - 1), pp - 1]
    drawn = len(shown)
    ranges = _stage_ranges(numbers)
    loaf = _stages_loaf(theme, numbers, ranges, shown)
    ends = loaf_ends(theme, numbers, loaf)
    slices = list(loaf.slices)
    shares = stage_slices(loaf, ranges, shown)
    cut = cut_across(theme, loaf, shares)
    groups = cut.pieces
    cards, names = _stage_cards(theme, numbers, ranges, shown)
    # the loaf and the cards it is cut onto come in together: the voice names the first card's
    # layers from the shot's start, and each second here pushed the card's total past its sentence
    ctx.scene.play(appear(loaf, shift=DOWN * 0.2), appear(ends), appear(cards), run_time=0.9)
    ctx.until("first")
    pieces = play_cut(ctx.scene, loaf, cut, [theme.stage_color(stage) for stage in shown], run_time=1.0)
    ctx.scene.play(
        *[carry(g, card.body, fill=0.75) for g, card in zip(groups, cards, strict=False)],
        vanish(VGroup(*slices)),  # the loaf is now the cards' pieces
        vanish(loaf.caption),
        vanish(ends),
        appear(names),
        run_time=1.3,
    )
    _set_stage_stats(ctx, numbers)
    # the assembly line: micro-batches forward, then their gradients back
    links = _stage_links(theme, cards, leaps=drawn < pp)
    ctx.scene.play(appear(links), run_time=0.4)
    tokens = _waiting_tokens(ctx, cards)
    ctx.until("flow")
    ctx.scene.play(appear(tokens), run_time=0.4)
    _flow_through_stages(ctx, tokens, cards, links)
    held = VGroup()
    if ctx.has_mark("holds"):  # the micro-batch's squares go as the cards' gauges come
        held = _stage_memory(ctx, numbers, shown, cards, VGroup(*groups), names, vanish(tokens))
    else:
        ctx.scene.play(vanish(tokens), run_time=TOKEN_EXIT_SECONDS)
    ctx.leave(loaf=pieces if not len(held) else VGroup(), cards=cards, names=names, links=links, held=held)


def _stage_memory(
    ctx: ShotContext,
    numbers: Numbers,
    shown: list[int],
    cards: VGroup,
    slices: VGroup,
    names: VGroup,
    *going: Animation,
) -> VGroup:
    """What each card holds, as the voice says it: each card's stack of layers becomes its own
    stage's gauge, and the busiest card is named with its total (with `going`, what leaves)."""
    ctx.until("holds")
    theme = ctx.theme
    ledgers = stage_ledgers(numbers)
    capacity = float(numbers.get("memory.capacity"))
    held = [ledgers[min(stage, len(ledgers) - 1)] for stage in shown]  # each drawn card's stage's
    totals = [sum(ledger.values()) for ledger in held]
    gauges = VGroup(*[card.gauge(ledger, capacity) for ledger, card in zip(held, cards, strict=True)])
    busiest = max(range(len(shown)), key=totals.__getitem__)
    fits = bool(numbers.get("memory.fits"))
    words = (  # a card cannot hold more than it has: past it, what it needs and what it holds
        stage_gpu(numbers, shown[busiest], "GPU {} holds ") + numbers("{memory.total:GB} of {memory.capacity:GB}")
        if fits
        else stage_gpu(numbers, shown[busiest], "GPU {} needs ")
        + numbers("{memory.total:GB}, holds {memory.capacity:GB}")
    )
    said = label(theme, words, theme.label_size, theme.text if fits else theme.oom, weight="BOLD")
    said.next_to(cards[busiest].body, DOWN, buff=0.75)
    said.shift(RIGHT * max(0.0, ctx.regions.stage.left + 0.1 - said.get_left()[0]))
    lifts = []  # a layer range above a gauge that spills past its card rises clear of the spill
    for name in names:
        under = [g for g in gauges if g.get_left()[0] < name.get_center()[0] < g.get_right()[0]]
        top = max((g.get_top()[1] for g in under), default=-99.0)
        if top + 0.08 > name.get_bottom()[1]:
            lifts.append(name.animate.shift(UP * (top + 0.08 - name.get_bottom()[1])))
    key = legend(theme)
    # beside the busiest card's line, on the side with more room: under GPipe the busiest card
    # is the last, its line at the right, and the legend squeezed into what was left ran together
    right = ctx.regions.stage.right - said.get_right()[0] - 0.6
    left = said.get_left()[0] - ctx.regions.stage.left - 0.6
    room = max(right, left)
    if key.width * LEGEND_LEAST_SCALE > room:  # too narrow for one readable row: two rows
        key.arrange_in_grid(rows=2, buff=(0.45, 0.12), cell_alignment=LEFT)
    key.scale_to_fit_width(min(key.width, room))
    key.next_to(said, RIGHT if right >= left else LEFT, buff=0.5)
    # each card's stack of layers becomes what it costs, its gauge, as the voice gives the busiest
    # card's total: named with it, not after it (the total came a second after its sentence, issue 58)
    becomes = [become(stack, gauge) for stack, gauge in zip(slices, gauges, strict=True)]
    ctx.show_legend(key, *becomes, *lifts, appear(said), *going, run_time=1.0)  # (the caption, said, gives way to it)
    over = [i for i, total in enumerate(totals) if total > capacity]
    _light_holds(ctx, [gauges[i] for i in (over[:2] or [busiest])], cards[busiest].body, said)
    return VGroup(gauges, said, key)


def _light_holds(ctx: ShotContext, pointed: list[VGroup], busiest_body: Mobject, said: Mobject) -> None:
    """Each card past its capacity as the voice names it (the first two: the verdict names both),
    then the card's capacity (where two spill, what each holds past it), then the verdict, spread
    over what the voice says from [holds]."""
    steps = len(pointed) + 2
    for step, gauge in enumerate(pointed):
        if step:
            ctx.spread("holds", None, step, steps)
        ctx.point_at(gauge)
    ctx.spread("holds", None, steps - 2, steps)  # the card's capacity, as the voice sets it against them
    spills = [g.spill for g in pointed if g.spill is not None]
    if len(spills) > 1:  # "neither fits": what each holds past its card, lit together
        ctx.highlight(VGroup(*spills))
    else:
        ctx.point_at(busiest_body, scale=1.1)
    ctx.spread("holds", None, steps - 1, steps)  # the verdict as it is said (at the half, the picture stood 2.5 s)
    ctx.highlight(said, across=True)


LEGEND_LEAST_SCALE = 0.8  # a one-row legend scaled below this to fit is drawn in two rows


def _timeline_key(ctx: ShotContext) -> VGroup:
    """What the blocks' looks mean: the colour says the pass (forward, backward: the theme's
    passes), the number on a block the micro-batch, red the bubble (time exposed: bad)."""
    theme = ctx.theme
    forward = RoundedRectangle(corner_radius=0.03, width=0.3, height=0.22, fill_color=theme.pass_color(False),
                               fill_opacity=1.0, stroke_width=0)  # fmt: skip
    backward = forward.copy().set_fill(theme.pass_color(True))
    idle = forward.copy().set_fill(theme.bad, opacity=0.14).set_stroke(theme.bad, width=1)
    micro = label(theme, "F1 B1", theme.least_size, theme.text)
    items = VGroup()
    for swatch, word in (
        (forward, "forward"),
        (backward, "backward"),
        (micro, "the micro-batch"),
        (idle, "idle: the bubble"),
    ):
        items.add(VGroup(swatch, label(theme, word, theme.small_size, theme.muted)).arrange(RIGHT, buff=0.12))
    items.micro = micro
    return items.arrange(RIGHT, buff=0.45)


SCHEDULE_NAMES = {"1f1b": "1F1B", "gpipe": "GPipe"}  # as their papers write them (it drew "GPIPE")


def schedule_name(numbers: Numbers) -> str:
    """The schedule's name as it is written: 1F1B, GPipe."""
    schedule = str(numbers.get("plan.schedule"))
    return SCHEDULE_NAMES.get(schedule, schedule.upper())


def timeline_words(numbers: Numbers) -> TimelineWords:
    """A timeline's words: each stage's card as the layout gives it, each block's pass and micro-batch."""
    return TimelineWords(
        stage=lambda stage: stage_gpu(numbers, stage),
        block=lambda kind, micro: numbers.index(kind + "{}", micro, "inputs.micro_batches", one_based=True),
    )


def timeline_of(theme: Theme, numbers: Numbers, width: float, height: float) -> Timeline:
    """The pipeline schedule the cost model simulates, each stage's row named by the card the
    layout gives it (stage 1 of tp 8 runs on GPU 8, not GPU 1)."""
    words = timeline_words(numbers)
    pp, m = int(numbers.get("plan.pp")), int(numbers.get("inputs.micro_batches"))
    return Timeline(theme, pp, m, str(numbers.get("plan.schedule")), words, width=width, height=height)


def _timeline(ctx: ShotContext, numbers: Numbers, width: float, y_top: float, x_left: float) -> Timeline:
    line = timeline_of(ctx.theme, numbers, width, TIMELINE_HEIGHT)
    line.shift([x_left - line.busy.get_left()[0], y_top - line.get_top()[1], 0])
    return line


def _bubble_text(ctx: ShotContext, numbers: Numbers) -> VGroup:
    text = numbers("Bubble: {pipeline.bubble_fraction:%} of the timeline is idle, ") + formula("(p−1)/(m+p−1)")
    return label(ctx.theme, text, ctx.theme.label_size, ctx.theme.text)


def _interleaved_bubble_text(ctx: ShotContext) -> VGroup:
    """The bubble's formula with v virtual stages a card (Narayanan et al. 2021, 2.2.2): the fill
    and the drain shrink v times, so m counts v times over in the denominator."""
    text = plain("Interleaved, v thinner stages a card: ") + formula("(p−1)/(v·m+p−1)")
    return label(ctx.theme, text, ctx.theme.label_size, ctx.theme.text)


INTERLEAVED_V = 2  # the virtual stages a card in interleaving's picture (the voice says "several")


def interleaved_line(theme: Theme, numbers: Numbers, line: Timeline, v: int = INTERLEAVED_V) -> Timeline:
    """`line`, the schedule at `numbers`, with v virtual stages a card: each card's work cut into
    v times as many chunks, each 1/v as long, on `line`'s scale of time, so the row's work is as
    long and its fill and drain v times shorter: the cost model's interleaved row of v·m+p−1
    chunk slots, p−1 of them idle (Narayanan et al. 2021, 2.2.2). The chunks follow one another
    as 1F1B's micro-batches do; Megatron's order of chunks within a row is not drawn, and no
    chunk is numbered (none is a micro-batch)."""
    pp, m = int(numbers.get("plan.pp")), int(numbers.get("inputs.micro_batches"))
    span = (FORWARD_SLOTS + BACKWARD_SLOTS) * (v * m + pp - 1) / v  # in `line`'s units of time
    chunks = Timeline(theme, pp, v * m, str(numbers.get("plan.schedule")), timeline_words(numbers),
                      width=line.slot_width * span, height=TIMELINE_HEIGHT, numbered=False)  # fmt: skip
    rows, drawn = VGroup(*chunks.busy, *chunks.idle), VGroup(*line.busy, *line.idle)
    return chunks.shift(drawn.get_corner(UL) - rows.get_corner(UL))


def _name_rows(ctx: ShotContext, line: Timeline) -> None:
    """Each card's row named in turn: lit across one by one from the voice's "each card as a row"
    where it is marked, else all in the time the voice takes to say what the rows are."""
    if ctx.has_mark("rows"):  # each card's row named and lit across in turn, from the voice's "each card as a row"
        for i, name in enumerate(line.names):
            ctx.spread("rows", "wait", i, len(line.names))
            ctx.scene.play(appear(name, shift=RIGHT * 0.2), run_time=0.4)
            ctx.highlight(name, across=True, hold=0.2)
    else:  # each card's row named in turn while the voice says what the rows are
        naming = min(3.0, max(0.6, ctx.seconds_until("wait") - 0.2))
        ctx.scene.play(LaggedStart(*[appear(n, shift=RIGHT * 0.2) for n in line.names], lag_ratio=0.6), run_time=naming)


def play_timeline(ctx: ShotContext, shot: Shot) -> None:
    """The schedule drawn block by block, stage by stage, then the bubble named."""
    theme, numbers = ctx.theme, shot.numbers
    ctx.open_shot(shot.caption)
    ctx.set_stats(
        [
            ("Micro-batches", numbers("{inputs.micro_batches:int}"), False),
            ("Bubble", numbers("{pipeline.bubble_fraction:%}"), True),
        ]
    )
    line = _timeline(ctx, numbers, width=10.4, y_top=1.9, x_left=-4.6)
    key = _timeline_key(ctx).next_to(line, DOWN, buff=0.45)
    arrow = label(theme, "time →", theme.small_size, theme.muted).next_to(line.busy, UP, buff=0.15)
    arrow.align_to(line.busy, RIGHT)
    ctx.scene.play(appear(arrow), appear(key), run_time=0.6)
    _name_rows(ctx, line)
    by_start = sorted(line.busy, key=lambda b: b.get_left()[0])
    rows = sorted({round(b.get_center()[1], 3) for b in line.busy}, reverse=True)

    def row(index: int) -> VGroup:
        return VGroup(*[b for b in line.busy if round(b.get_center()[1], 3) == rows[index]])

    # the forward work, and the last card that waits for it; then the backward, and the first card
    for kind, mark, waits in (("F", "wait", -1), ("B", "backward", 0)):
        ctx.until(mark)
        blocks = [b for b in by_start if b.kind == kind]
        ctx.scene.play(LaggedStart(*[appear(b, shift=RIGHT * 0.6) for b in blocks], lag_ratio=0.05), run_time=1.6)
        ctx.point_at(row(waits), scale=1.1)
    ctx.scene.play(appear(line.marks), run_time=0.5)
    if ctx.has_mark("last"):  # the last card's forward work, as the voice says the first waits for it
        ctx.until("last")
        ctx.point_at(VGroup(*[b for b in row(-1) if b.kind == "F"]), scale=1.1)
    ctx.until("bubble")
    ctx.scene.play(appear(line.idle), run_time=0.8)
    ctx.point_at(line.idle)
    bubble = _bubble_text(ctx, numbers).next_to(key, DOWN, buff=0.3)
    ctx.scene.play(appear(bubble), run_time=0.6)
    if ctx.has_mark("sizes"):  # the stages (the rows' names) and the micro-batches, as the voice counts them
        ctx.until("sizes")
        ctx.highlight(line.names, across=True)  # p: the stages, a row each
        if ctx.has_mark("fraction"):  # m: the micro-batches, as the voice names them after the stages
            ctx.until_second((ctx.mark_seconds("sizes") + ctx.mark_seconds("fraction")) / 2)
        forwards = VGroup(*[b for b in row(0) if b.kind == "F"])
        ctx.point_at(forwards, scale=1.1)
        ctx.highlight(forwards, across=True)
    if ctx.has_mark("fraction"):  # the share of the timeline that does nothing, as it is said
        ctx.until("fraction")
        ctx.highlight(bubble, across=True)
        ctx.point_at(line.idle, scale=1.05)
    grid = VGroup()
    if ctx.has_mark("count"):  # the share counted: slots of one micro-batch's work, idle ones on a row
        bubble, grid = _count_slots(ctx, numbers, line, arrow, bubble)
        # (the arrow went as the slots were numbered: left to the next shot, its exit drew it
        # again, half-faded over the last slot's number)
        ctx.leave(line=line, key=key, bubble=bubble, grid=grid)
    else:
        ctx.leave(line=line, key=key, arrow=arrow, bubble=bubble, grid=grid)


def _count_slots(
    ctx: ShotContext, numbers: Numbers, line: Timeline, arrow: VGroup, bubble: VGroup
) -> tuple[VGroup, VGroup]:
    """The bubble's (p-1)/(m+p-1) counted: the first card's row, drawn again under the schedule,
    packs into slots of one micro-batch's forward and backward, numbered as the voice counts
    them (m+p-1); then its empty slots are outlined in the bad colour as the voice says how many
    (p-1). The slots' edges are the blocks' edges: counting on screen gives the numbers said."""
    ctx.until("count")
    theme = ctx.theme
    counted_label = _counted_text(ctx, numbers).move_to(bubble, aligned_edge=UP)
    packed = line.packed_row(
        theme, timeline_words(numbers), lambda i: numbers.index("{}", i, "pipeline.row_slots", one_based=True)
    )
    row = line.row_busy(0)
    below = packed.get_top()[1] - counted_label.get_bottom()[1] + PACKED_ROW_GAP
    if packed.get_bottom()[1] - below >= ctx.regions.stage.bottom:  # under the counted bubble
        packed.shift(DOWN * below)
        # named as what it is, the card's own blocks moved together, not a schedule (the fresh
        # review read "GPU 0 · F1 B1 F2 B2" as another order of its work)
        first = stage_gpu(numbers, 0)
        name = label(theme, Phrase(f"{first.text}, packed", first.facts), theme.small_size, theme.muted)
        name.move_to([line.names[0].get_right()[0], packed.outlines.get_center()[1], 0], aligned_edge=RIGHT)
        going = []
    else:  # no room under many rows: the first row packs where it is, the row drawn giving way to it
        name = VGroup()
        numbered = [m for m in line.marks if abs(m.get_y() - row.get_y()) < 0.05]
        going = [vanish(VGroup(*row, *line.row_idle(0), *numbered))]
    faint = packed.empty.copy().set_stroke(width=1, opacity=0.6)  # idle as the schedule draws it, until counted
    if line.dense:  # (its work drawn in runs: no block is one micro-batch's)
        moves = [appear(packed.work), FadeIn(faint)]
    else:
        targets = {(b.micro_batch, b.kind): b for b in packed.work}
        moves = [Transform(b.copy(), targets[b.micro_batch, b.kind]) for b in row]
        moves += [ReplacementTransform(line.row_idle(0).copy(), faint)]
    ctx.scene.play(vanish(arrow), appear(packed.outlines), appear(name), *moves, *going, run_time=0.9)
    ctx.scene.remove(*[m.mobject for m in moves if isinstance(m, Transform)])
    ctx.scene.add(packed.work, faint)
    # the slots counted as the voice counts them, up to the empty ones
    counting = ctx.seconds_until("idle") - 0.1 if ctx.has_mark("idle") else 1.0
    ctx.scene.play(
        appear(packed.marks),
        LaggedStart(*[appear(n, shift=DOWN * 0.15) for n in packed.numbers], lag_ratio=0.5),
        run_time=min(2.4, max(0.6, counting)),
    )
    if ctx.has_mark("idle"):
        ctx.until("idle")
    ctx.scene.play(ReplacementTransform(faint, packed.empty), swap(bubble, counted_label), run_time=0.6)
    ctx.point_at(packed.empty, scale=1.05)
    return counted_label, VGroup(packed, name)


PACKED_ROW_GAP = 0.3  # between the counted bubble's lines and the packed row's slot numbers


def _counted_text(ctx: ShotContext, numbers: Numbers) -> VGroup:
    """The bubble counted in slots, and the other definition in use (REFERENCES.md): Megatron-LM's
    paper (Narayanan et al. 2021) divides the idle slots by the busy ones, so a reader of it meets
    75% where the timeline has 42.9%."""
    counted = numbers(
        "Bubble: {pipeline.idle_slots:int} idle slots of {pipeline.row_slots:int} on every row, "
        "{pipeline.bubble_fraction:%} of the timeline, "
    ) + formula("(p−1)/(m+p−1)")
    counted_label = label(ctx.theme, counted, ctx.theme.label_size, ctx.theme.text)
    paper = numbers("Megatron-LM's paper divides by the busy slots instead: {pipeline.bubble_overhead:%}, ") + formula(
        "(p−1)/m"
    )
    paper_label = label(ctx.theme, paper, ctx.theme.small_size, ctx.theme.muted)
    return VGroup(counted_label, paper_label).arrange(DOWN, buff=0.12)


def _rows(line: Timeline) -> list[VGroup]:
    """Each drawn row with its name: its blocks, busy and idle, and the name level with them."""
    pieces = [*line.busy, *line.idle, *line.names]
    ys = sorted({round(b.get_center()[1], 3) for b in line.busy}, reverse=True)
    return [VGroup(*[p for p in pieces if abs(p.get_center()[1] - y) < 0.05]) for y in ys]


class _Slider(VGroup):
    """A track with a tick per value and a knob that moves between them."""

    def __init__(self, ctx: ShotContext, steps: tuple[Numbers, ...], name: str, width: float = 5.0) -> None:
        super().__init__()
        theme = ctx.theme
        self.track = Line(LEFT * width / 2, RIGHT * width / 2, stroke_color=theme.faint, stroke_width=6)
        self.count = len(steps)
        self.ticks = VGroup()
        for i, numbers in enumerate(steps):
            stop = self.stop(i)
            tick = label(theme, numbers("{inputs.micro_batches:int}"), theme.small_size, theme.muted)
            self.ticks.add(tick.next_to(stop, DOWN, buff=0.18))
        self.name = label(theme, name, theme.small_size, theme.muted).next_to(self.track, LEFT, buff=0.3)
        self.knob = RoundedRectangle(corner_radius=0.08, width=0.22, height=0.36, fill_color=theme.accent,
                                     fill_opacity=1, stroke_width=0).move_to(self.stop(0))  # fmt: skip
        self.add(self.track, self.ticks, self.name, self.knob)

    def stop(self, index: int):
        """Where the knob sits for value `index`, wherever the slider now is."""
        return self.track.point_from_proportion(index / (self.count - 1))


def _first_stage(numbers: Numbers, template: str, key: str) -> Phrase:
    """A value of the first stage's card (`memory.stages.0`), or of the fullest card where the
    estimate gives no stages."""
    path = f"memory.stages.0.{key}" if numbers.has(f"memory.stages.0.{key}") else f"memory.{key}"
    return numbers(template.replace("{:", "{" + path + ":"))


def _first_stage_gauge(ctx: ShotContext, numbers: Numbers, title: str, x: float) -> VGroup:
    theme = ctx.theme
    card = CardBox(theme, Phrase(title), width=0.8, height=1.5)
    card.move_to([x, -0.35, 0])
    # the first stage's own card, as the title over the gauges names it: under GPipe the fullest
    # card (`memory.total`) is the last, which holds the logits of every micro-batch too
    gauge = card.gauge(stage_ledgers(numbers)[0], float(numbers.get("memory.capacity")))
    flight = label(
        theme, _first_stage(numbers, "{:int} in flight", "micro_batches_in_flight"), theme.small_size, theme.text
    )
    flight.next_to(card.name, DOWN, buff=0.08)
    size = label(theme, _first_stage(numbers, "{:GB}", "total"), theme.small_size, theme.muted)
    size.next_to(card.body, UP, buff=0.1 + max(0.0, gauge.height - card.body.height))
    group = VGroup(card, gauge, flight, size)
    group.parts = (card, gauge, flight, size)
    return group


PRICE_STILL_SECONDS = 2.5  # a sentence about the price this long lights a row too (pacing's still)
SWEEP_MOVE_SECONDS = 0.45  # the quickest a gauge's sweep moves the knob a value (a move is seen)
INTERLEAVED_SECONDS = 0.6  # the bubble's share giving way to the interleaved formula


def _slider_stats(n: Numbers) -> list[Phrase]:
    """pipeline_slider's stats at one value: micro-batches, the sequences in each, the bubble."""
    return [n("{inputs.micro_batches:int}"), n("{inputs.micro_batch_size:int}"), n("{pipeline.bubble_fraction:%}")]


def _schedule_gauges(ctx: ShotContext, first: Numbers, second: Numbers) -> VGroup:
    """The first stage's gauge under each schedule (the slider's own, then the other's) and the
    title over them, above the tallest gauge any step draws (capped at SPILL_CAP above the card)."""
    gauges = VGroup()
    gauges.add(_first_stage_gauge(ctx, first, schedule_name(first), 4.55))
    gauges.add(_first_stage_gauge(ctx, second, schedule_name(second), 6.05))
    holds = stage_gpu(first, 0, "GPU {} holds")
    gauges_title = label(ctx.theme, holds, ctx.theme.small_size, ctx.theme.muted)
    # above the tallest gauge any step draws (capped at SPILL_CAP above the card) and its size
    gauges_title.next_to(VGroup(*[g.parts[0].body for g in gauges]), UP, buff=0.45 + SPILL_CAP * 1.5)
    gauges.add(gauges_title)
    return gauges


class _SliderSweep:
    """The slider's knob moved from value to value, with the timeline laid out again (`line`: the
    one shown now), the bubble's line, the schedules' gauges and the stats."""

    def __init__(
        self,
        ctx: ShotContext,
        shot: Shot,
        slider: _Slider,
        line: Timeline,
        bubble: VGroup,
        gauges: VGroup,
    ) -> None:
        self.ctx, self.steps, self.seconds = ctx, shot.steps, shot.also_steps
        self.slider, self.line, self.bubble, self.gauges = slider, line, bubble, gauges
        self.at = 0  # the value the knob is at

    def move_to(self, i: int, run_time: float = 1.3) -> None:
        """The knob to value `i`: the timeline laid out again, the bubble, gauges and stats with it."""
        ctx, steps, seconds, gauges = self.ctx, self.steps, self.seconds, self.gauges
        new_line = _timeline(ctx, steps[i], width=8.2, y_top=1.55, x_left=-5.2)
        new_bubble = _bubble_text(ctx, steps[i]).move_to(self.bubble)
        # the timeline laid out again in turn, never drawn over the last (its blocks stacked "F1" on "F2")
        swaps = [swap(self.line, new_line), self.slider.knob.animate.move_to(self.slider.stop(i))]
        if seconds:
            for j, (numbers, x) in enumerate(((steps[i], 4.55), (seconds[i], 6.05))):
                fresh = _first_stage_gauge(ctx, numbers, schedule_name(numbers), x)
                swaps += [Transform(gauges[j].parts[1], fresh.parts[1])]
                swaps += [rewrite(gauges[j].parts[k], fresh.parts[k]) for k in (2, 3)]  # in flight, its size
        # the labels turn to the next value over the step, with the counters and the timeline:
        # swapped at its start, the bubble's line named the next value for up to 1.3 s (issue 58)
        swaps.append(rewrite(self.bubble, new_bubble))
        ctx.scene.play(*swaps, *ctx.count_stats(_slider_stats(steps[i])), run_time=run_time)
        self.line, self.at = new_line, i


def _say_the_price(ctx: ShotContext, sweep: _SliderSweep) -> None:
    """The work the bubble shrinks against, its price as the voice says it (a row lit along where
    the sentence is long), then interleaving: each card's row, the bubble's formula with v stages
    a card, and the schedules' gauges."""
    if ctx.has_mark("shrink"):  # the bubble's blocks as the voice says they shrink against the work
        ctx.until("shrink")
        ctx.point_at(sweep.line.idle, sweep.bubble, scale=1.05)
    if ctx.has_mark("work"):  # the work the fill and drain shrink against
        ctx.until("work")
        ctx.point_at(sweep.line.busy, scale=1.05)
    ctx.until("price")
    ctx.point_at(sweep.line.busy, scale=1.05)
    following = ctx.next_mark("price")
    if following and ctx.mark_seconds(following) - ctx.mark_seconds("price") > PRICE_STILL_SECONDS:
        # the smaller blocks lit along a row while the price is said, not a still picture under it
        ctx.until_second((ctx.mark_seconds("price") + ctx.mark_seconds(following)) / 2)
        ctx.highlight(_rows(sweep.line)[0], across=True)
    bubble, gauges, seconds = sweep.bubble, sweep.gauges, sweep.seconds

    def interleave() -> None:  # each card's row lit, then its work cut into thinner chunks, the bubble shorter
        ctx.highlight(*_rows(sweep.line))
        following = ctx.next_mark("interleave")
        if following:
            ctx.until_second((ctx.mark_seconds("interleave") + ctx.mark_seconds(following)) / 2)
        chunks = interleaved_line(ctx.theme, sweep.steps[sweep.at], sweep.line)
        ctx.scene.play(swap(sweep.line, chunks), run_time=1.0)
        sweep.line = chunks

    def interleaved() -> None:  # the bubble's formula with v stages a card, where the share was
        ctx.scene.play(rewrite(bubble, _interleaved_bubble_text(ctx).move_to(bubble)), run_time=INTERLEAVED_SECONDS)
        ctx.highlight(bubble, across=True)
        ctx.point_at(sweep.line.idle, scale=1.05)

    for mark, show in (  # interleaving lights each card's row (several stages in it), then the bubble's formula
        ("interleave", interleave),
        ("again", interleaved),
        ("memory", lambda: ctx.point_at(*[g.parts[1] for g in gauges[:2]], scale=1.1) if seconds else None),
    ):
        if ctx.has_mark(mark):  # the price's sentences, each as it is said
            ctx.until(mark)
            show()


def _sweep_each_gauge(ctx: ShotContext, sweep: _SliderSweep) -> None:
    """Each schedule's gauge as the voice names it, GPipe's then 1F1B's, with the knob swept
    again from one micro-batch: the eye follows one gauge as the batch is cut finer, and the
    sweep ends at the last value by the time the voice gives that value (marks `grown` and
    `fallen`: a sweep spread to the sentence's end stood at 4 micro-batches, 1F1B's gauge at
    103 GB, as the voice said "falls to 48.4 GB")."""
    steps, gauges = sweep.steps, sweep.gauges
    for mark, ends, gauge in (("gauges", "grown", gauges[1]), ("onef", "fallen", gauges[0])):
        ctx.until(mark)
        ctx.point_at(gauge.parts[1])
        sweep.move_to(0, run_time=0.8)
        following = ends if ctx.has_mark(ends) else ctx.next_mark(mark)
        span = (ctx.mark_seconds(following) if following else ctx.said_seconds()) - ctx.mark_seconds(mark)
        each = min(0.9, max(SWEEP_MOVE_SECONDS, (span - 1.0) / max(len(steps) - 1, 1)))
        for i in range(1, len(steps)):
            ctx.spread(mark, following, i, len(steps))
            sweep.move_to(i, run_time=each)
        if ctx.has_mark(ends):  # the gauge's size lit as the voice gives it
            ctx.until(ends)
            ctx.highlight(gauge.parts[3])


def play_pipeline_slider(ctx: ShotContext, shot: Shot) -> None:
    """Micro-batches on a slider with the batch held fixed: the timeline is laid out again and
    the bubble shrinks; the first stage's gauge shows what 1F1B and GPipe keep in flight."""
    steps, seconds = shot.steps, shot.also_steps
    ctx.open_shot(shot.caption)
    ctx.set_sweep_stats([("Micro-batches", False), ("Sequences each", False), ("Bubble", True)], _slider_stats, steps)
    slider = _Slider(ctx, steps, "micro-batches", width=4.6)
    slider.move_to([-1.5, 2.35, 0])
    line = _timeline(ctx, steps[0], width=8.2, y_top=1.55, x_left=-5.2)
    bubble = _bubble_text(ctx, steps[0]).move_to([-1.4, -2.45, 0])
    gauges = _schedule_gauges(ctx, steps[0], seconds[0]) if seconds else VGroup()
    ctx.scene.play(appear(slider), appear(line), appear(bubble), appear(gauges), run_time=1.0)
    sweep = _SliderSweep(ctx, shot, slider, line, bubble, gauges)
    if ctx.has_mark("finer"):
        ctx.until("finer")
        ctx.point_at(slider.knob, VGroup(sweep.line.idle), scale=1.1)
    if ctx.has_mark("value1"):  # the first value's bubble, as the voice names it
        ctx.until("value1")
        ctx.highlight(bubble, across=True)
    for i in range(1, len(steps)):
        if ctx.has_mark(f"value{i + 1}"):  # the narration names each value as the knob reaches it
            ctx.until(f"value{i + 1}")
        else:
            ctx.spread("finer", "price", i - 1, len(steps) - 1)
        sweep.move_to(i)
    _say_the_price(ctx, sweep)
    if seconds:
        _sweep_each_gauge(ctx, sweep)
    ctx.leave(slider=slider, line=sweep.line, bubble=bubble, gauges=gauges)
