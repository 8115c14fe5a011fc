"""Shot kinds of the tensor-parallel chapter: the loaf cut down the middle, the split
matrices (to scale), and a layer's compute stalling for each all-reduce."""

# Over 400 lines (issue 61): three kinds whose loaf, matrices and rack are one continuous picture handed shot to shot
# (a kind splits into a folder of its own when it grows)

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    AnimationGroup,
    Arrow,
    Create,
    DashedLine,
    GrowFromEdge,
    LaggedStart,
    Mobject,
    Rectangle,
    ReplacementTransform,
    RoundedRectangle,
    Succession,
    Transform,
    VGroup,
    VMobject,
    Wait,
)

from dtfilm.numbers import Numbers
from dtfilm.onscreen.layout import texts_meet
from dtfilm.phrases import Phrase
from dtfilm.scene import SLIDE_UNITS, Facts, ShotContext
from dtfilm.shots.common.draw import (
    build_rack,
    facts_of,
    legend,
    loaf_ends,
    rack_gauges,
    rack_of,
    reveal_subtitle,
    title_picture,
)
from dtfilm.storyboard import Shot
from dtfilm.visuals.card import CardBox
from dtfilm.visuals.fade import Reshape, appear, vanish
from dtfilm.visuals.loaf import Loaf
from dtfilm.visuals.rack import Rack
from dtfilm.visuals.slicing import KNIFE_OVERHANG, KNIFE_WIDTH, become, carry, cut_lengthwise, knife_line, play_cut
from dtfilm.visuals.text import clamp_x, label
from dtfilm.visuals.theme import Theme

LOAF_WIDTH, LOAF_SLICE_HEIGHT, LOAF_MAX_SLICES = 4.0, 0.17, 8
LOAF_Y = 1.75  # the loaf above the rack (loaf_split)
OPENING_LOAF_Y = 0.1  # the loaf alone on the title's stage, lifted to LOAF_Y as the cards come
SLICE_RISE = 0.25  # each slice slides up this far into its place as the loaf is built


# The parts the voice lists after [fall], each with its mark: its segments highlighted.
FALLING_PARTS = (
    ("gradients", ("gradients",)),
    ("optimizer", ("master_weights", "adam_m", "adam_v")),
    ("activations", ("activations",)),
)


def _loaf(theme: Theme, numbers: Numbers) -> Loaf:
    """The model's loaf as this chapter draws it (the title's picture and loaf_split alike)."""
    return Loaf(theme, int(numbers.get("model.layers")), width=LOAF_WIDTH, slice_height=LOAF_SLICE_HEIGHT,
                gap=0.05, max_slices=LOAF_MAX_SLICES)  # fmt: skip


@title_picture("loaf")
def title_loaf(ctx: ShotContext, shot: Shot, title: Mobject, subtitle: Mobject) -> None:
    """Tensor parallelism's title card gives way to the loaf: it is built layer by layer as the
    voice names every layer, and at [again] ("each card holds a piece of each layer") a line is
    drawn down its middle, where loaf_split's knife then cuts. Handed on as "loaf"."""
    theme, numbers = ctx.theme, shot.numbers
    loaf = _loaf(theme, numbers).move_to([0, OPENING_LOAF_Y, 0])
    ends = loaf_ends(theme, numbers, loaf)
    ctx.scene.play(appear(title, shift=UP * SLIDE_UNITS), run_time=1.2)
    reveal_subtitle(ctx, subtitle)
    ctx.until("picture")
    built = [appear(piece, shift=UP * SLICE_RISE) for piece in loaf.slices]  # the input's end first
    # the subtitle stood where the loaf comes: it is gone before the slices reach its height
    going = AnimationGroup(vanish(subtitle), LaggedStart(*built, lag_ratio=0.12), lag_ratio=0.6)
    # the loaf's end labels once the title has risen past them: "layers 29–32" faded in under the
    # title as it slid across (a cross-fade's stack, issue 58)
    ends_after = Succession(Wait(0.6), appear(ends, run_time=0.9))
    ctx.header_from(title, going, ends_after, run_time=1.5)
    ctx.scene.add(loaf)
    top, bottom = loaf.slices.get_top()[1] + KNIFE_OVERHANG, loaf.slices.get_bottom()[1] - KNIFE_OVERHANG
    x = loaf.slices.get_center()[0]
    guide = DashedLine([x, top, 0], [x, bottom, 0], dash_length=0.15, stroke_color=theme.text)
    guide.set_stroke(width=KNIFE_WIDTH * 0.7)
    ctx.until("again")
    ctx.scene.play(Create(guide), run_time=0.8)
    # the loaf lit as the voice says each card holds a piece of each layer (a relight halfway to the
    # end needs more voice left than the title has: the card stood still 4.3 s)
    ctx.highlight(loaf.slices, hold=0.2)
    ctx.hand_on("loaf", VGroup(loaf, ends, guide), _loaf_facts(numbers))


def _loaf_facts(numbers: Numbers) -> Facts:
    return facts_of(numbers, "model.layers")


def _split_stats(n: Numbers) -> list[Phrase]:
    """loaf_split's stats at one t: the cards a layer is cut across, and each card's memory."""
    return [n("{plan.tp:int}"), n("{memory.total:GB}")]


def _cut_onto_cards(ctx: ShotContext, loaf: Loaf, rack: Rack, gauges: VGroup, t: int) -> None:
    """The knife cuts every layer lengthwise into t pieces, each card's piece flies onto it and
    becomes its gauge (what the piece costs); pieces past the cards drawn fade."""
    theme = ctx.theme
    cut = cut_lengthwise(theme, loaf, t)
    play_cut(ctx.scene, loaf, cut, [theme.card_color(i) for i in range(t)], run_time=1.4)
    cards = list(rack.cards.values())
    owners = cut.pieces[: len(cards)]
    ctx.scene.play(*[carry(owner, card.body, fill=0.6) for owner, card in zip(owners, cards, strict=False)],
                   run_time=1.2)  # fmt: skip
    # the pieces become what they cost: each card's column turns into its gauge
    ctx.scene.play(*[become(owner, gauge) for owner, gauge in zip(owners, gauges, strict=False)],
                   *[vanish(owner) for owner in cut.pieces[len(cards):]], run_time=0.9)  # fmt: skip
    ctx.scene.remove(*gauges)  # the gauges as one group from here, as the rack's
    ctx.scene.add(gauges)


def _name_falling_parts(ctx: ShotContext, gauges: VGroup) -> None:
    """The gauges pointed at as what falls as one over t, then each part across the rack as the
    voice lists it, and the activations where it says sequence parallelism splits them."""
    ctx.until("fall")
    ctx.point_at(gauges)
    for mark, parts in FALLING_PARTS:
        segments = VGroup(*[s for g in gauges for s in g.segments if s.part in parts])
        if ctx.has_mark(mark) and len(segments):  # each part across the rack, as it is named
            ctx.until(mark)
            ctx.highlight(segments)
    activations = VGroup(*[s for g in gauges for s in g.segments if s.part == "activations"])
    if ctx.has_mark("tokens") and len(activations):  # what sequence parallelism splits, as it is said
        ctx.until("tokens")
        ctx.point_at(activations)
        ctx.highlight(activations, across=True)


def play_loaf_split(ctx: ShotContext, shot: Shot) -> None:
    """Every layer cut lengthwise, t = 2, 4, 8: the knife goes down through the whole loaf, each
    card's column flies onto it and becomes its gauge; the next t morphs the rack and cuts again.
    The title's loaf (its picture), when drawn, is kept: it rises to make room for the cards."""
    theme, steps = ctx.theme, shot.steps
    first = steps[0]
    opening = ctx.take("loaf", _loaf_facts(first))
    # the legend names the parts of the first gauges; the caption takes its place as the second
    # t cuts (the two at once, beside the counters and labels, were four layers of text; issue 58: 3)
    ctx.open_shot(None, keep=("loaf",))
    ctx.set_sweep_stats([("Cards per layer", False), ("Per card", True)], _split_stats, steps)
    key = legend(theme)
    ctx.scene.play(appear(key), run_time=0.5)
    if opening is not None:  # the title's loaf, lifted to where it stands above the cards
        loaf, ends, guide = opening
        lift = UP * (LOAF_Y - loaf.get_center()[1])
    else:
        loaf = _loaf(theme, first).move_to([0, LOAF_Y, 0])
        ends, guide = loaf_ends(theme, first, loaf), None
    rack: VGroup | None = None
    gauges: VGroup | None = None
    caption: VGroup | None = None
    for step, numbers in enumerate(steps):
        t = int(numbers.get("plan.tp"))
        words = label(theme, numbers("each of the {model.layers} layers cut into {plan.tp:int} pieces"),
                      theme.small_size, theme.muted).next_to(loaf, RIGHT, buff=0.4)  # fmt: skip
        new_rack = build_rack(theme, numbers)
        new_gauges = rack_gauges(new_rack, numbers, theme)
        if step:
            ctx.until(f"value{step + 1}", share=step / len(steps))
        if rack is None and opening is not None:  # it rises (the line down its middle goes: the knife
            words.shift(lift)  # comes) and the cards come in under it, once it has made room
            rise = AnimationGroup(opening.animate.shift(lift), vanish(guide))
            ctx.scene.play(AnimationGroup(rise, AnimationGroup(appear(words), appear(new_rack)), lag_ratio=0.6),
                           run_time=1.2)  # fmt: skip
        elif rack is None:
            ctx.scene.play(appear(loaf), appear(ends), appear(words), appear(new_rack), run_time=1.0)
        else:  # the same rack, more cards; the cards' old share leaves; the loaf whole again
            turning = [ReplacementTransform(rack, new_rack), vanish(gauges), Transform(caption, words),
                       loaf.slices.animate.set_fill(opacity=1).set_stroke(opacity=1),
                       *ctx.count_stats(_split_stats(numbers))]  # fmt: skip
            if step == 1:
                ctx.caption_after_legend(shot.caption, key, *turning, run_time=1.2)
            else:
                ctx.scene.play(*turning, run_time=1.2)
            words = caption
        rack, caption = new_rack, words
        _cut_onto_cards(ctx, loaf, rack, new_gauges, t)
        gauges = new_gauges
    shown = VGroup(loaf, caption, rack, gauges if gauges is not None else VGroup())
    if gauges is not None:  # what falls as one over t: the gauges, as the voice lists their parts
        _name_falling_parts(ctx, gauges)
    if len(steps) == 1:
        ctx.caption_after_legend(shot.caption, key)
    ctx.stage.pop("loaf", None)  # the taken loaf is in `shown` (its line down the middle is gone)
    ctx.handed.pop("loaf", None)
    ctx.leave(shown=VGroup(shown, ends))


def _matrix(theme: Theme, width: float, height: float, shards: int, by_columns: bool, title: Phrase) -> VGroup:
    """A matrix drawn to scale, cut into equal shards by columns (or rows), coloured by card."""
    group = VGroup()
    group.shards = VGroup()
    for i in range(shards):
        if by_columns:
            block = Rectangle(width=width / shards, height=height)
            block.move_to([(i + 0.5) * width / shards - width / 2, 0, 0])
        else:
            block = Rectangle(width=width, height=height / shards)
            block.move_to([0, height / 2 - (i + 0.5) * height / shards, 0])
        block.set_fill(theme.card_color(i), opacity=0.75).set_stroke(theme.background, width=2)
        group.shards.add(block)
    group.add(group.shards)
    group.title = label(theme, title, theme.small_size, theme.text).next_to(group.shards, UP, buff=0.12)
    group.add(group.title)
    return group


def matrix_scale(numbers: Numbers, room: float = 11.0) -> float:
    """Units per matrix element, so that X, A and Y side by side fill `room` units."""
    hidden, ffn = int(numbers.get("model.hidden")), int(numbers.get("model.ffn"))
    return room / (hidden + 2 * ffn)


MATRIX_ROW_Y = 1.45  # the products' row, above the cards
CARDS_TOP_Y = -0.95  # the small rack the matrices' pieces land on
SMALL_CARD_HEIGHT = 0.95
TITLE_CLEARANCE = 0.06  # how far a knife runs above a matrix: its title sits 0.12 over it


def _small_rack(theme: Theme, numbers: Numbers) -> Rack:
    """The t cards the layer is cut across, small, under the products: what each holds."""
    rack = rack_of(theme, numbers, card_height=SMALL_CARD_HEIGHT, max_width=8.0)
    top = max(card.body.get_top()[1] for card in rack.cards.values())
    return rack.shift(UP * (CARDS_TOP_Y - top))


def _slot(card: VMobject, left: float, right: float, bottom: float, top: float) -> Rectangle:
    """A part of a card's body (shares of its width and height, from its bottom left), where a
    piece it holds is laid."""
    body = card.body
    x0, y0 = body.get_left()[0], body.get_bottom()[1]
    slot = Rectangle(width=body.width * (right - left), height=body.height * (top - bottom), stroke_width=0)
    return slot.move_to([x0 + body.width * (left + right) / 2, y0 + body.height * (bottom + top) / 2, 0])


def _knives(theme: Theme, shards: VGroup, by_columns: bool) -> VGroup:
    """The knife's lines between a matrix's shards, running past its edges (as the loaf's)."""
    lines = VGroup()
    for before, after in pairwise(list(shards)):
        if by_columns:
            x = (before.get_right()[0] + after.get_left()[0]) / 2
            # short of the title above the matrix
            top, bottom = shards.get_top()[1] + TITLE_CLEARANCE, shards.get_bottom()[1] - KNIFE_OVERHANG
            lines.add(knife_line(theme, np.array([x, top, 0.0]), np.array([x, bottom, 0.0])))
        else:
            y = (before.get_bottom()[1] + after.get_top()[1]) / 2
            left, right = shards.get_left()[0] - KNIFE_OVERHANG, shards.get_right()[0] + KNIFE_OVERHANG
            lines.add(knife_line(theme, np.array([left, y, 0.0]), np.array([right, y, 0.0])))
    return lines.set_z_index(4)


PART_SHIFT = 0.1  # how far a matrix's cut shards part, each from the next
PART_SPREAD = 0.3  # at most this far for the outermost (tp 16's rows parted 0.75 up and down, into the stats and cards)


def _cut_matrix(ctx: ShotContext, matrix: VGroup, by_columns: bool, below: VMobject | None = None) -> None:
    """The knife through a matrix drawn whole: its lines, then the shards part and take their
    cards' colours (the same cut as the loaf's, visuals/slicing.py). Rows part up and down:
    the title above and `below` (a note under the matrix) make room."""
    theme, shards = ctx.theme, matrix.shards
    knives = _knives(theme, shards, by_columns)
    ctx.scene.play(Create(knives, lag_ratio=0.35), run_time=0.7)
    n = len(shards)
    step = RIGHT if by_columns else DOWN
    apart = min(PART_SHIFT, 2 * PART_SPREAD / max(n - 1, 1))
    spread = apart * (n - 1) / 2
    room = [] if by_columns else [matrix.title.animate.shift(UP * spread)]
    if below is not None and not by_columns:
        room.append(below.animate.shift(DOWN * spread))
    ctx.scene.play(
        vanish(knives),
        *[s.animate.shift(step * apart * (i - (n - 1) / 2)).set_fill(theme.card_color(i), opacity=0.85)
          for i, s in enumerate(shards)],
        *room,
        run_time=0.7,
    )  # fmt: skip


# The MLP's nonlinearity by the model's own (Megatron-LM's paper draws GeLU; Llama's MLP is gated, SwiGLU):
# applied to each number alone, it is why A is cut by columns (Shoeybi et al. 2019, section 3).
NONLINEARITY = '{?count: model.mlp == "swiglu" => SwiGLU | GeLU}'
FLOW_BOX_HEIGHT = 0.8
# A gated MLP's A is a pair of matrices side by side, its gate and its up projection, cut alike
A_TITLE = (
    '{?count: model.mlp == "swiglu" => A, gate and up: {model.hidden:int} × {model.ffn:int} each'
    " | A: {model.hidden:int} × {model.ffn:int}}"
)


def _flow_box(theme: Theme, name: Phrase | str, width: float, edge: str) -> VGroup:
    """One step of the MLP's flow: a box with its name in it (on the panel's fill, which its
    text reads against in either theme)."""
    box = RoundedRectangle(corner_radius=0.08, width=width, height=FLOW_BOX_HEIGHT, stroke_color=edge, stroke_width=3)
    box.set_fill(theme.panel, opacity=1.0)
    return VGroup(box, label(theme, name, theme.label_size, theme.text).move_to(box))


def _mlp_flow(theme: Theme, numbers: Numbers) -> VGroup:
    """The MLP as it runs, before anything is cut: X into A, the nonlinearity, B, out Z, and
    under it the two products in symbols: Y = GeLU(X·A), Z = Y·B (SwiGLU for a gated MLP). Its parts by name
    (x, a, nonlinear, b, z, arrows, heading, formula), for the voice to name each."""
    flow = VGroup()
    flow.x = _flow_box(theme, "X", 0.8, theme.muted)
    flow.a = _flow_box(theme, "A", 1.2, theme.muted)
    flow.nonlinear = _flow_box(theme, numbers(NONLINEARITY), 1.5, theme.accent)
    flow.b = _flow_box(theme, "B", 1.2, theme.muted)
    flow.z = _flow_box(theme, "Z", 0.8, theme.accent)
    steps = [flow.x, flow.a, flow.nonlinear, flow.b, flow.z]
    VGroup(*steps).arrange(RIGHT, buff=0.75)
    flow.arrows = VGroup(*[Arrow(before.get_right(), after.get_left(), buff=0.1, color=theme.muted, stroke_width=3)
                           for before, after in pairwise(steps)])  # fmt: skip
    flow.heading = label(theme, "the MLP, a layer's feed-forward block", theme.small_size, theme.muted)
    flow.heading.next_to(VGroup(*steps), UP, buff=0.3)
    formula = numbers("Y = " + NONLINEARITY + "(X·A),   Z = Y·B")
    flow.formula = label(theme, formula, theme.caption_size, theme.text).next_to(VGroup(*steps), DOWN, buff=0.35)
    flow.add(flow.heading, *steps, flow.arrows, flow.formula)
    return flow


def _open_on_the_flow(ctx: ShotContext, flow: VGroup, x: VGroup, a: VGroup, times: Mobject, rack: Mobject) -> None:
    """The MLP drawn as the voice names it, step by step (issue 58: the stage stood nearly empty as
    the voice named the MLP), then its X and A become the matrices drawn to scale, which are cut."""
    steps = [flow.x, flow.a, flow.nonlinear, flow.b, flow.z]
    ctx.scene.play(appear(flow.heading), appear(rack), run_time=0.6)
    in_order = [steps[0], *[m for pair in zip(flow.arrows, steps[1:], strict=True) for m in pair]]  # X, →, A, → ...
    built = [appear(s, shift=RIGHT * SLIDE_UNITS) for s in in_order]
    ctx.scene.play(LaggedStart(*built, lag_ratio=0.3), run_time=1.6)
    if ctx.has_mark("x"):  # X, then the matrix A it meets, as the voice names each
        ctx.until("x")
        ctx.highlight(VGroup(flow.x, flow.a))
    if ctx.has_mark("gelu"):  # the nonlinearity between them: the products in symbols come in with it
        ctx.until("gelu")
    ctx.scene.play(appear(flow.formula, shift=UP * SLIDE_UNITS), run_time=0.6)
    if ctx.has_mark("gelu"):  # a band over it, read through (point_at's Indicate turned the filled
        ctx.highlight(flow.nonlinear)  # box the accent colour, hiding the word the voice was saying)
    if ctx.has_mark("b"):
        ctx.until("b")
        ctx.point_at(flow.b[1], flow.z[1], run_time=0.7)
    rest = VGroup(flow.heading, flow.nonlinear, flow.b, flow.z, flow.arrows, flow.formula)
    # the boxes become the matrices; their letters go where they stand and the matrices' titles
    # come where they will stand (Reshape): morphed, "A" slid whole across the heading as it faded.
    # The heading and the rest go over the first half, before the titles come where it stood.
    rest_going = Succession(vanish(rest), Wait())
    ctx.scene.play(Reshape(flow.x, x, replace=True), Reshape(flow.a, a, replace=True), rest_going, appear(times),
                   run_time=1.0)  # fmt: skip


def _set_all_reduce_stats(ctx: ShotContext, numbers: Numbers) -> None:
    """The stats beside the matrices: each all-reduce's bytes (named with its layout: the next
    shot cuts the layer across more cards, where each sends more) and their count a step."""
    ctx.set_stats(
        [
            (
                numbers("Each all-reduce, tp {plan.tp:int}"),
                numbers("{comm.collectives.tp_all_reduce.bytes_each:MB}"),
                False,
            ),
            ("All-reduces per step", numbers("{comm.collectives.tp_all_reduce.count:int}"), True),
        ]
    )


@dataclass
class _FirstProduct:
    """X × A = Y in the products' row, to scale: A and Y in t shards, the signs between them, and
    Y's title once the nonlinearity is applied (`applied`, not yet drawn)."""

    x: VGroup
    times: Mobject
    a: VGroup
    equals: Mobject
    y: VGroup
    applied: Mobject
    row: VGroup


def _first_product(theme: Theme, numbers: Numbers, t: int, k: float, rows: float) -> _FirstProduct:
    """X·A = Y laid out to scale (`k` units an element, X and Y `rows` tall), A whole until the
    knife: the cards' colours come with the cut."""
    hidden, ffn = int(numbers.get("model.hidden")), int(numbers.get("model.ffn"))
    x = _matrix(theme, hidden * k, rows, 1, True, numbers("X: tokens × {model.hidden:int}"))
    x.shards.set_fill(theme.muted, opacity=0.5)
    a = _matrix(theme, ffn * k, hidden * k, t, True, numbers(A_TITLE))
    a.shards.set_fill(theme.muted, opacity=0.75)  # whole until the knife: the cards' colours come with the cut
    y = _matrix(theme, ffn * k, rows, t, True, numbers("Y = X·A, {plan.tp:int} column slices"))
    # the slices' title once the nonlinearity is applied, as the voice says so: Y = GeLU(X·A)
    applied = label(theme, numbers("Y = " + NONLINEARITY + "(X·A), {plan.tp:int} column slices"), theme.small_size,
                    theme.text)  # fmt: skip
    times, equals = (label(theme, sign, theme.caption_size, theme.muted) for sign in ("×", "="))
    first = VGroup(x, times, a, equals, y).arrange(RIGHT, buff=0.3).move_to([0, MATRIX_ROW_Y, 0])
    for sign in (times, equals):
        sign.move_to([sign.get_center()[0], a.shards.get_center()[1], 0])
    return _FirstProduct(x, times, a, equals, y, applied, first)


def _born_on_cards(theme: Theme, cards: list[CardBox]) -> list[VMobject]:
    """A copy of each card's body in its colour: what comes out of the card that computes it."""
    return [card.body.copy().set_fill(theme.card_color(i), opacity=0.6) for i, card in enumerate(cards)]


def _cut_a_by_columns(
    ctx: ShotContext, numbers: Numbers, product: _FirstProduct, cards: list[CardBox]
) -> tuple[list[VMobject], Mobject]:
    """A cut by columns, each card taking its columns, and each card's slice of Y coming out of
    it with no exchange: the pieces held and the note that says so."""
    theme, a, y = ctx.theme, product.a, product.y
    ctx.until("columns")
    _cut_matrix(ctx, a, by_columns=True)
    # each card takes its columns of A: the cut pieces travel onto the cards they belong to
    held_a = [s.copy() for s in a.shards[: len(cards)]]
    ctx.scene.play(*[carry(piece, _slot(card, 0.06, 0.46, 0.08, 0.92), fill=1.0)
                     for piece, card in zip(held_a, cards, strict=False)], run_time=1.0)  # fmt: skip
    says = numbers("each card multiplies X by its own columns of A, then " + NONLINEARITY + ": no exchange")
    note = label(theme, says, theme.small_size, theme.muted).next_to(product.row, DOWN, buff=0.3)
    ctx.until("slice")
    # each card's slice of Y comes out of the card that holds its columns
    born = _born_on_cards(theme, cards)
    ctx.scene.play(
        *[ReplacementTransform(source, shard) for source, shard in zip(born, y.shards, strict=False)],
        *[appear(s) for s in y.shards[len(born) :]],
        appear(y.title),
        appear(product.equals),
        appear(note),
        run_time=1.2,
    )
    return held_a, note


def _apply_nonlinearity(ctx: ShotContext, product: _FirstProduct, note: Mobject) -> None:
    """A's columns apart, then Y's slices as they pass the nonlinearity (its title becomes
    `applied`), and the note that nothing is exchanged, as the voice says each."""
    a, y = product.a, product.y
    if ctx.has_mark("nonlinear"):
        ctx.point_at(a.shards)
        ctx.until("nonlinear")
        product.applied.move_to(y.title)
        ctx.scene.play(ReplacementTransform(y.title, product.applied), run_time=0.6)
        y.remove(y.title)
        y.title = product.applied
        y.add(product.applied)
        ctx.point_at(y.shards)
        ctx.until("none")
        ctx.highlight(note, across=True)
    else:
        ctx.until("none")
        ctx.point_at(y.shards)


def _cut_b_by_rows(
    ctx: ShotContext, numbers: Numbers, product: _FirstProduct, note: Mobject, cards: list[CardBox], k: float
) -> tuple[VGroup, Mobject, list[VMobject]]:
    """X and A go (A's columns stay on the cards), Y moves over for B, which comes in at half
    height and is cut by rows onto the same cards: B, its scale note and the pieces held."""
    theme, t = ctx.theme, len(product.a.shards)
    hidden, ffn = int(numbers.get("model.hidden")), int(numbers.get("model.ffn"))
    ctx.until("rows")
    # X and A have done their part (A's columns stay on the cards); Y moves over for B
    # in turn: Y's title slid whole across X's and A's as they faded (a cross-fade's stack, issue 58)
    gone = AnimationGroup(vanish(product.x), vanish(product.times), vanish(product.a), vanish(product.equals),
                          vanish(note), run_time=0.45)  # fmt: skip
    ctx.scene.play(Succession(gone, product.y.animate(run_time=0.75).move_to([-3.6, MATRIX_ROW_Y, 0])))
    b = _matrix(theme, hidden * k, ffn * k * 0.5, t, False, numbers("B: {model.ffn:int} × {model.hidden:int}"))
    b.shards.set_fill(theme.muted, opacity=0.75)
    b.move_to([0.4, MATRIX_ROW_Y, 0])
    scale_note = label(theme, numbers("(B drawn at {~half} height)"), theme.least_size, theme.muted)
    scale_note.next_to(b.shards, DOWN, buff=0.1)
    ctx.scene.play(appear(b), appear(scale_note), run_time=0.7)
    _cut_matrix(ctx, b, by_columns=False, below=scale_note)
    held_b = [s.copy() for s in b.shards[: len(cards)]]
    ctx.scene.play(*[carry(piece, _slot(card, 0.54, 0.94, 0.56, 0.92), fill=1.0)
                     for piece, card in zip(held_b, cards, strict=False)], run_time=1.0)  # fmt: skip
    return b, scale_note, held_b


def _partial_sums(
    theme: Theme, y: VGroup, b: VGroup, t: int, width: float, rows: float
) -> tuple[VGroup, Mobject, VGroup]:
    """The t partial sums stacked right of B (`width` by `rows` each), their title, and the ×
    and = between Y, B and them."""
    row_y = b.shards.get_center()[1]
    partials = VGroup()
    for i in range(t):
        part = Rectangle(width=width, height=rows, fill_color=theme.card_color(i), fill_opacity=0.35,
                         stroke_color=theme.card_color(i), stroke_width=2)  # fmt: skip
        part.move_to([4.3 + 0.12 * i, row_y - 0.12 * i, 0])
        partials.add(part)
    partial_title = label(theme, "partial sums, a sum per card", theme.small_size, theme.text)
    partial_title.next_to(partials, UP, buff=0.12)
    times_b, equals_b = (label(theme, sign, theme.caption_size, theme.muted) for sign in ("×", "="))
    times_b.move_to([(y.shards.get_right()[0] + b.shards.get_left()[0]) / 2, row_y, 0])
    equals_b.move_to([(b.shards.get_right()[0] + partials.get_left()[0]) / 2, row_y, 0])
    return partials, partial_title, VGroup(times_b, equals_b)


def _all_reduce_to_every_card(
    ctx: ShotContext,
    numbers: Numbers,
    partials: VGroup,
    cards: list[CardBox],
    size: tuple[float, float],
    scale_note: Mobject,
) -> tuple[Rectangle, Mobject, list[VMobject]]:
    """The partial sums all-reduced into Z, which travels onto every card: Z, the words under it
    and the copies the cards hold. B's scale note goes first where the words would stand on it
    (at tp 16, B's rows reach down to them)."""
    width, rows = size
    theme = ctx.theme
    z = Rectangle(width=width, height=rows, fill_color=theme.accent, fill_opacity=0.8, stroke_width=0)
    z.move_to(partials)
    sums_text = numbers(
        "all-reduce: {comm.collectives.tp_all_reduce.bytes_each:MB} per card, then every card holds the output Z = Y·B"
    )
    sums = label(theme, sums_text, theme.small_size, theme.accent).move_to([0.5, CARDS_TOP_Y + 0.38, 0])
    ctx.until("allreduce")
    if texts_meet([scale_note], [sums]):
        ctx.scene.play(vanish(scale_note), run_time=0.3)
    ctx.scene.play(ReplacementTransform(partials, z), appear(sums), run_time=1.2)
    ctx.until("same")
    # the joined output travels onto every card: each holds the same Z
    held_z = [z.copy() for _ in cards]
    ctx.scene.play(*[carry(piece, _slot(card, 0.54, 0.94, 0.08, 0.48), fill=1.0)
                     for piece, card in zip(held_z, cards, strict=False)], run_time=1.0)  # fmt: skip
    if ctx.has_mark("next"):  # every card holds Z, in the words under it
        ctx.until("next")
        ctx.highlight(sums, across=True)
    return z, sums, held_z


def play_split_matrices(ctx: ShotContext, shot: Shot) -> None:
    """X·A with A cut by columns, each column carried onto its card (each card its own slice of
    the activation, no exchange), then Y·B with B cut by rows onto the same cards: each card's
    partial sum, which an all-reduce adds so every card holds the output."""
    theme, numbers = ctx.theme, shot.numbers
    ctx.open_shot(shot.caption)
    t = int(numbers.get("plan.tp"))
    hidden = int(numbers.get("model.hidden"))
    k = matrix_scale(numbers)
    rows = min(hidden, int(numbers.get("inputs.seq_len"))) * k  # tokens drawn as tall as h
    _set_all_reduce_stats(ctx, numbers)
    product = _first_product(theme, numbers, t, k, rows)
    rack = _small_rack(theme, numbers)
    cards = [rack.cards[i] for i in range(t) if i in rack.cards]
    flow = _mlp_flow(theme, numbers).move_to([0, MATRIX_ROW_Y, 0])
    _open_on_the_flow(ctx, flow, product.x, product.a, product.times, rack)
    held_a, note = _cut_a_by_columns(ctx, numbers, product, cards)
    _apply_nonlinearity(ctx, product, note)
    b, scale_note, held_b = _cut_b_by_rows(ctx, numbers, product, note, cards, k)
    partials, partial_title, signs = _partial_sums(theme, product.y, b, t, hidden * k, rows)
    ctx.until("partial")
    # each card's partial sum comes out of the card: its slice of Y times its rows of B
    born = _born_on_cards(theme, cards)
    ctx.scene.play(
        appear(signs[0]),
        appear(signs[1]),
        *[ReplacementTransform(source, part) for source, part in zip(born, partials, strict=False)],
        *[appear(p) for p in partials[len(born) :]],
        appear(partial_title),
        run_time=1.2,
    )
    ctx.point_at(partials)
    z, sums, held_z = _all_reduce_to_every_card(ctx, numbers, partials, cards, (hidden * k, rows), scale_note)
    ctx.leave(
        y=product.y,
        b=b,
        z=z,
        sums=sums,
        partial_title=partial_title,
        **({"scale_note": scale_note} if scale_note in ctx.scene.mobjects else {}),  # (gone where it met the sums)
        signs=signs,
        rack=VGroup(rack, *held_a, *held_b, *held_z),
    )


# Under a row: the all-reduce's time, what of it the step waits for (all of it where the framework's
# overlap hides nothing: the across-nodes row, whose overlap needs one node), and the compute: like beside
# like (issue 58). The whiteboard's pricing (--overlap none) hides nothing anywhere and says no more.
DETAIL = (
    "{?seconds: comm.exposed_seconds_by_group.tp < comm.seconds_by_group.tp =>"
    " {comm.seconds_by_group.tp:time} of all-reduce per step on {comm.link_labels.tp},"
    " {comm.exposed_seconds_by_group.tp:time} of it exposed, against {compute.compute_seconds:time} of compute"
    ' | inputs.overlap == "framework" => {comm.seconds_by_group.tp:time} of all-reduce per step'
    " on {comm.link_labels.tp}, all of it exposed, against {compute.compute_seconds:time} of compute"
    " | {comm.seconds_by_group.tp:time} of all-reduce per step on {comm.link_labels.tp},"
    " against {compute.compute_seconds:time} of compute}"
)


def _exposed_share(numbers: Numbers) -> float:
    """The share of tensor parallelism's all-reduce time that the step waits for (1 unless overlapped)."""
    total = float(numbers.get("comm.seconds_by_group.tp"))
    return float(numbers.get("comm.exposed_seconds_by_group.tp")) / total if total > 0 else 1.0


def _layer_row(theme: Theme, numbers: Numbers, scale: float, y: float, x0: float, exposed: bool = True) -> VGroup:
    """One layer, forward then backward: compute blocks with an all-reduce stall after each
    matrix pair (2 forward, 2 backward), widths in seconds. `exposed`: a stall is what the step
    waits for; otherwise the whole all-reduce (before an overlap hides part of it)."""
    layers, m = int(numbers.get("memory.layers")), int(numbers.get("inputs.micro_batches"))
    compute = float(numbers.get("compute.compute_seconds")) / (layers * m)
    stall = float(numbers.get("comm.collectives.tp_all_reduce.seconds")) / numbers.get(
        "comm.collectives.tp_all_reduce.count"
    )
    stall *= (
        _exposed_share(numbers) if exposed else 1.0
    )  # a stall is what waits: under --overlap framework, less than the all-reduce
    # 2 all-reduces forward; 2 backward (4 with recomputation, which runs the forward again)
    forward, backward = int(numbers.get("comm.tp_exchanges.forward")), int(numbers.get("comm.tp_exchanges.backward"))
    pieces: list[tuple[str, float]] = []
    for _ in range(forward):
        pieces += [("compute", compute / 3 / forward), ("comm", stall)]
    for _ in range(backward):
        pieces += [("compute", compute * 2 / 3 / backward), ("comm", stall)]
    blocks = VGroup()
    x = x0
    for kind, seconds in pieces:
        width = max(seconds * scale, 0.02)
        color = theme.compute_ink if kind == "compute" else theme.bad
        block = Rectangle(width=width, height=0.42, fill_color=color, fill_opacity=0.75 if kind == "compute" else 0.7,
                          stroke_width=0)  # fmt: skip
        block.move_to([x + width / 2, y, 0])
        block.kind = kind
        blocks.add(block)
        x += width
    return blocks


LAYER_X0, LAYER_ROOM = -2.0, 8.5  # where a layer's row starts, and the width the longest row fills


def _layer_scale(rows: list[tuple[str, Numbers]]) -> float:
    """Units a second, so that the longest row (or the first drawn whole, before the overlap hides
    part of its all-reduce) fills LAYER_ROOM."""

    def layer_seconds(n: Numbers) -> float:
        layers, m = int(n.get("memory.layers")), int(n.get("inputs.micro_batches"))
        tp = float(n.get("comm.exposed_seconds_by_group.tp"))  # the stalls drawn
        return (float(n.get("compute.compute_seconds")) + tp) / (layers * m)

    def whole_seconds(n: Numbers) -> float:  # the first row as drawn before the overlap hides part of it
        layers, m = int(n.get("memory.layers")), int(n.get("inputs.micro_batches"))
        return (float(n.get("compute.compute_seconds")) + float(n.get("comm.seconds_by_group.tp"))) / (layers * m)

    longest = max(*(layer_seconds(n) for _, n in rows), whole_seconds(rows[0][1]))
    return LAYER_ROOM / longest


@dataclass
class _LayerRow:
    """One configuration's row: its name, its layer's blocks as the step waits for them, the words
    under it, and the blocks drawn first (`shown`: the whole all-reduce where the overlap hides part
    of it, else `blocks`) with their stalls. `built`: drawn as the voice walks the layer through."""

    title: Mobject
    blocks: VGroup
    detail: Mobject
    hidden: bool
    shown: VGroup
    stalls: VGroup
    forward: int
    built: bool


def _layer_row_of(ctx: ShotContext, name: str, numbers: Numbers, i: int, scale: float) -> _LayerRow:
    """Row `i` laid out: its title at the side, its blocks, and its words under the title."""
    theme = ctx.theme
    y = 1.3 - i * 1.6
    title = label(theme, name, theme.label_size, theme.text)
    title.move_to([ctx.regions.side.left, y, 0], aligned_edge=LEFT)
    blocks = _layer_row(theme, numbers, scale, y, LAYER_X0)
    detail = label(theme, numbers(DETAIL), theme.small_size, theme.muted)  # fmt: skip
    detail.next_to(title, DOWN, buff=0.32).align_to(title, LEFT)
    hidden = i == 0 and _exposed_share(numbers) < 1.0  # drawn whole first, then what the overlap leaves
    shown = _layer_row(theme, numbers, scale, y, LAYER_X0, exposed=False) if hidden else blocks
    stalls = VGroup(*[b for b in shown if b.kind == "comm"])
    forward = int(numbers.get("comm.tp_exchanges.forward"))
    built = i == 0 and ctx.has_mark("exchanges") and ctx.has_mark("backward")
    return _LayerRow(title, blocks, detail, hidden, shown, stalls, forward, built)


def _play_layer_row(ctx: ShotContext, row: _LayerRow, i: int) -> None:
    """The row's title, then its layer run: forward's blocks and stalls then backward's as the
    voice says each (the first row), played out block by block (a slower link's), or at once."""
    shown, stalls, forward = row.shown, row.stalls, row.forward
    ctx.scene.play(appear(row.title), run_time=0.4)
    if i:  # the next link's row, marked as the voice moves to it
        ctx.highlight(row.title, across=True)
    if row.built:  # the layer runs as the voice says it: forward's blocks and stalls, then backward's
        # Bands across the stage: a stall is too small for a swell to show.
        ctx.until("exchanges")
        ctx.scene.play(*[appear(b, shift=RIGHT * SLIDE_UNITS) for b in shown[: 2 * forward]], run_time=0.8)
        ctx.highlight(VGroup(*stalls[:forward]), across=True)
        ctx.until("backward")
        ctx.scene.play(*[appear(b, shift=RIGHT * SLIDE_UNITS) for b in shown[2 * forward :]], run_time=0.8)
        ctx.highlight(VGroup(*stalls[forward:]), across=True)
    elif i:  # the layer plays out on the slower link, each block as long as it takes: the waits
        # drawn in the time they take to the eye, not arriving at once (issue 58: tp's across row
        # stood still 2.5 s as the voice said nothing hides)
        ctx.scene.play(_played_out(shown, ROW_PLAY_SECONDS))
        ctx.highlight(stalls, across=True)  # nothing hides: the waits, lit
    else:
        ctx.scene.play(*[appear(b, shift=RIGHT * SLIDE_UNITS) for b in shown], run_time=1.6)
    ctx.scene.play(appear(row.detail), run_time=0.5)


def _shrink_to_exposed(ctx: ShotContext, row: _LayerRow, drawn: VGroup) -> VGroup:
    """Part of the all-reduce runs under the compute: the stalls shrink to the rest as the voice
    starts to say so, and are lit. The stalls now drawn."""
    ctx.until_second(ctx.mark_seconds("stall") + 0.35 * (ctx.mark_seconds("small") - ctx.mark_seconds("stall")))
    ctx.scene.play(ReplacementTransform(row.shown, row.blocks), run_time=0.9)
    drawn.submobjects[drawn.submobjects.index(row.shown)] = row.blocks
    stalls = VGroup(*[b for b in row.blocks if b.kind == "comm"])
    ctx.highlight(stalls, across=True)
    ctx.relight(stalls, across=True)  # the voice still on the overlap: what it leaves, lit again
    return stalls


def _weigh_one_all_reduce(ctx: ShotContext, numbers: Numbers, row: _LayerRow, count: VGroup, stalls: VGroup) -> VGroup:
    """An all-reduce's size and time as the voice weighs them: the count becomes one all-reduce of
    this row's layout, then its latency, as long as its bytes. What stands where the count stood."""
    if ctx.has_mark("small"):  # its size and time, as the voice weighs them
        ctx.until("small")
        if len(count):  # the count becomes one all-reduce of this row's layout: its bytes and time
            each = clamp_x(_each_all_reduce(ctx.theme, numbers).move_to(count, aligned_edge=UP + LEFT))
            # (its lines go before the one comes: "= 1,040 all-reduces" stood half-faded under the next)
            ctx.scene.play(Reshape(count, each, replace=True), run_time=0.7)
            count = each
        ctx.highlight(row.detail if not len(count) else count, across=True)
    if ctx.has_mark("latency"):  # one all-reduce: small, its latency as long as its bytes
        ctx.until("latency")
        ctx.highlight(stalls[0], across=True)
        if len(count):  # as much as its size: the one all-reduce's bytes and time again
            ctx.until_second((ctx.mark_seconds("latency") + ctx.mark_seconds("inside")) / 2 + 0.3)
            ctx.highlight(count, across=True)
    return count


def _keep_inside(ctx: ShotContext, row: _LayerRow, stalls: VGroup) -> None:
    """The inside row lit as the voice keeps the layer inside a node, then its stalls a step in
    its words, then the stalls drawn."""
    ctx.until("inside")
    ctx.highlight(VGroup(row.title, row.blocks), across=True)
    if ctx.has_mark("kept"):  # the inside row's stalls a step, in its words, then the stalls drawn
        # ("the all-reduces take ... a step": their time a step, in the row's words, lit again)
        ctx.relight(row.detail, across=True)
        ctx.until("kept")
        ctx.highlight(row.detail, across=True)
        if ctx.has_mark("across"):
            ctx.until_second(ctx.mark_seconds("kept") + 0.3 * (ctx.mark_seconds("across") - ctx.mark_seconds("kept")))
            ctx.point_at(stalls)
            ctx.highlight(stalls, across=True)
            ctx.relight(row.detail, across=True)  # its stalls a step, while the voice is on them


def _narrate_inside_row(ctx: ShotContext, numbers: Numbers, row: _LayerRow, drawn: VGroup) -> None:
    """The first row as the voice counts its all-reduces, calls them stalls, splits and weighs
    one, and keeps the layer inside a node."""
    stalls = row.stalls
    if not row.built and ctx.has_mark("exchanges"):  # the stalls as the voice says nothing else runs
        ctx.until("exchanges")
        ctx.highlight(row.blocks, across=True)
    count = _count_all_reduces(ctx, numbers) if ctx.has_mark("count") else VGroup()
    if ctx.has_mark("split"):  # the stalls, as the voice says each is split in two of the same bytes
        ctx.until("split")
        ctx.highlight(stalls, across=True)
        ctx.relight(stalls, across=True)
    ctx.until("stall")
    ctx.point_at(stalls)
    ctx.highlight(row.shown, across=ctx.has_mark("count"))
    if row.hidden and ctx.has_mark("small"):
        stalls = _shrink_to_exposed(ctx, row, drawn)
    count = _weigh_one_all_reduce(ctx, numbers, row, count, stalls)
    _keep_inside(ctx, row, stalls)
    if len(count):
        ctx.scene.play(vanish(count), run_time=0.4)


def _narrate_across_row(ctx: ShotContext, row: _LayerRow) -> None:
    """A slower link's row: its wait against its compute, in its words, then the stalls, then
    the compute blocks, as the voice says each."""
    ctx.point_at(row.stalls)
    if ctx.has_mark("count") and ctx.has_mark("why"):  # its wait against its compute, in its words
        begin, end = ctx.mark_seconds("across"), ctx.mark_seconds("why")
        ctx.until_second(begin + 0.3 * (end - begin))
        ctx.highlight(row.detail, across=True)
        ctx.until_second(begin + 0.52 * (end - begin))  # "the step waits all ...": the stalls
        ctx.highlight(row.stalls, across=True)
        ctx.until_second(begin + 0.75 * (end - begin))  # "more than its compute": the compute blocks
        ctx.highlight(VGroup(*[b for b in row.blocks if b.kind == "compute"]), across=True)


def _stall_key(theme: Theme) -> VGroup:
    """The key under the rows: compute, and waiting for an all-reduce."""
    key = VGroup()
    for color, opacity, word in ((theme.compute_ink, 0.75, "compute"), (theme.bad, 0.7, "waiting for an all-reduce")):
        swatch = Rectangle(width=0.3, height=0.22, fill_color=color, fill_opacity=opacity, stroke_width=0)
        key.add(VGroup(swatch, label(theme, word, theme.small_size, theme.muted)).arrange(RIGHT, buff=0.12))
    return key.arrange(RIGHT, buff=0.5).move_to([0, -2.55, 0])


def play_layer_timeline(ctx: ShotContext, shot: Shot) -> None:
    """One layer's compute, stalling for each all-reduce, on each configuration's link."""
    theme = ctx.theme
    ctx.open_shot(shot.caption, clear_stats=True)
    rows = shot.options["rows"]
    scale = _layer_scale(rows)
    drawn = VGroup()
    heading = label(theme, "a layer, forward then backward: compute, and a stall per all-reduce",
                    theme.small_size, theme.muted).move_to([LAYER_X0, 2.3, 0], aligned_edge=LEFT)  # fmt: skip
    clamp_x(heading)
    key = _stall_key(theme)  # from the first row on: the red is the wait (it came in the last 1.5 s)
    ctx.scene.play(appear(heading), appear(key), run_time=0.5)
    for i, (name, numbers) in enumerate(rows):
        if i:  # the slower links from when the voice goes across nodes
            ctx.spread("across", None, i - 1, len(rows))
        row = _layer_row_of(ctx, name, numbers, i, scale)
        _play_layer_row(ctx, row, i)
        drawn.add(row.title, row.shown, row.detail)
        if i == 0:  # the stalls as the voice says nothing else runs, then the link that keeps them short
            _narrate_inside_row(ctx, numbers, row, drawn)
        else:
            _narrate_across_row(ctx, row)
    if ctx.has_mark("why") and drawn:  # why it stays inside a node: the first row again, then its link
        ctx.until("why")
        ctx.highlight(VGroup(drawn[0], drawn[1]), across=True)
        ctx.until_second(ctx.mark_seconds("why") + 0.35 * (ctx.said_seconds() - ctx.mark_seconds("why")))
        ctx.point_at(drawn[0])
        ctx.highlight(drawn[0], across=True)
    ctx.leave(rows=drawn, heading=heading, key=key)


COUNT_RELIGHT_SECONDS = 1.6  # a wait this long before the count's total splits it (a 1.05 s highlight)
ROW_PLAY_SECONDS = 1.6  # the across row's layer played out, block by block, in the time each takes


def _played_out(blocks: VGroup, seconds: float) -> Succession:
    """A layer's blocks grown left to right one after another, each for its share of `seconds` by
    its width (its time): compute short, the stalls long."""
    ordered = sorted(blocks, key=lambda b: b.get_left()[0])
    widths = [max(b.width, 1e-6) for b in ordered]
    return Succession(
        *[
            GrowFromEdge(b, LEFT, run_time=max(0.12, seconds * w / sum(widths)))
            for b, w in zip(ordered, widths, strict=True)
        ]
    )


EACH = (
    "each all-reduce, a layer over {plan.tp:int} cards: {comm.collectives.tp_all_reduce.bytes_each:MB} a card,"
    " {comm.collectives.tp_all_reduce.seconds_each:time} on {comm.link_labels.tp}"
)


def _each_all_reduce(theme: Theme, numbers: Numbers) -> VGroup:
    """One all-reduce of the row's own layout, as the voice calls each small: the bytes a card
    sends and its time (finding 7: the only size shown was the matrices shot's, at a smaller tp)."""
    return VGroup(label(theme, numbers(EACH), theme.small_size, theme.text))


def _count_all_reduces(ctx: ShotContext, numbers: Numbers) -> VGroup:
    """The step's all-reduces counted as the voice counts them, in the room under the first row:
    a layer's times the layers and micro-batches ([layers]), the embedding's and the head's
    added ([count]), and the total."""
    theme = ctx.theme
    per_layer, layers = int(numbers.get("comm.tp_exchanges.total")), int(numbers.get("model.layers"))
    m, count = int(numbers.get("inputs.micro_batches")), int(numbers.get("comm.collectives.tp_all_reduce.count"))
    lines = [
        numbers("{comm.tp_exchanges.total:int} a layer × {model.layers:int} layers")
        + numbers(" × {inputs.micro_batches:int} micro-batches")
    ]
    if count == (per_layer * layers + 2) * m:  # as the narration says: two a micro-batch outside the layers
        lines.append(numbers("+ {~two} a micro-batch outside the layers: the embedding and the output head"))
    lines.append(numbers("= {comm.collectives.tp_all_reduce.count:int} all-reduces a step"))
    drawn = VGroup(*[label(theme, line, theme.small_size, theme.text) for line in lines])
    drawn.arrange(DOWN, aligned_edge=LEFT, buff=0.16).move_to([-2.0, -0.5, 0], aligned_edge=UP + LEFT)
    clamp_x(drawn)
    # Each line brought in and banded across the stage: a line of small text alone barely shows.
    ctx.reveal(drawn[0], at="layers", run_time=0.7)
    ctx.highlight(drawn[0], across=True)
    ctx.until("count")
    if len(drawn) == 3:
        ctx.reveal(drawn[1], run_time=0.7)
        ctx.highlight(drawn[1], across=True)
        total_at = ctx.mark_seconds("count") + 0.6 * (ctx.mark_seconds("stall") - ctx.mark_seconds("count"))
        # the voice still on the embedding and the head: lit again
        ctx.relight(drawn[1], across=True, least=COUNT_RELIGHT_SECONDS, by=total_at)
        ctx.until_second(total_at)
    ctx.reveal(drawn[-1], run_time=0.7)
    ctx.highlight(drawn[-1], across=True)
    return drawn
