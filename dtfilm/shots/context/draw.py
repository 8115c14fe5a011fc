"""Shot kinds of the sequence chapter: ring attention and zig-zag (its memory columns: columns.py).

Written on the shot API (docs/adding-a-chapter.md): things are placed in the theme's regions,
the visuals take plain values and Phrases, and every figure comes from the shot's numbers.
"""

from __future__ import annotations

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Create,
    FadeIn,
    FadeOut,
    GrowFromEdge,
    Indicate,
    LaggedStart,
    Mobject,
    Rectangle,
    Square,
    Transform,
    VGroup,
)

from dtfilm.cost import context
from dtfilm.numbers import Numbers
from dtfilm.phrases import Phrase
from dtfilm.scene import SLIDE_UNITS, ShotContext
from dtfilm.shots.common.draw import group_gpu, phase_column, title_picture
from dtfilm.shots.context.bars import band, owner_colours, time_bars, work_bars
from dtfilm.storyboard import Shot
from dtfilm.storyboard.timing import beat_seconds
from dtfilm.visuals.attention import BlockGrid, RingRow
from dtfilm.visuals.fade import appear, swap, vanish
from dtfilm.visuals.loaf import Loaf
from dtfilm.visuals.slicing import KNIFE_OVERHANG, cut_across, cut_lengthwise, knife_line
from dtfilm.visuals.text import label, relabel
from dtfilm.visuals.theme import Theme

OPENING_Y = -1.0  # the title's picture: the cut loaf at the left, the sequence at the right
OPENING_LOAF_X, OPENING_TOKENS_X = -3.2, 2.4
TOKEN_SIDE, TOKEN_GAP, TOKENS_PER_CARD = 0.34, 0.05, 3
DIMMED_OPACITY = 0.3  # the loaf once the voice turns to the sequence


@title_picture("sequence")
def title_sequence(ctx: ShotContext, shot: Shot, title: Mobject, subtitle: Mobject) -> None:
    """cp's title over what the cuts so far sliced and what this one slices: the model's loaf
    comes in with the title, cut down the middle and across ("every cut so far sliced the
    model"); as the voice says "this one slices the sequence", the loaf is set back, a row of
    tokens comes in beside it, and a knife cuts it into plan.cp pieces, each in its card's colour."""
    theme, numbers = ctx.theme, shot.numbers
    words = VGroup(title, subtitle)
    words.shift(UP * (ctx.regions.stage.top - 0.1 - words.get_top()[1]))
    loaf = Loaf(theme, int(numbers.get("model.layers")), width=2.6, slice_height=0.14, max_slices=8)
    loaf.move_to([OPENING_LOAF_X, OPENING_Y, 0])
    half = len(loaf.slices) // 2
    across = cut_across(theme, loaf, [range(half), range(half, len(loaf.slices))])
    cuts = VGroup(*cut_lengthwise(theme, loaf, 2).knives, *across.knives)
    parts = int(numbers.get("plan.cp"))
    tokens = _token_row(theme, parts).move_to([OPENING_TOKENS_X, OPENING_Y, 0])
    ctx.scene.play(appear(title, shift=UP * SLIDE_UNITS), appear(loaf, shift=UP * SLIDE_UNITS), run_time=1.2)
    ctx.scene.play(Create(cuts, lag_ratio=0.5), run_time=0.8)  # the cuts so far, each through the model
    ctx.until("subtitle")
    set_back = VGroup(loaf, cuts).animate.set_opacity(DIMMED_OPACITY)
    ctx.scene.play(appear(subtitle, shift=RIGHT * SLIDE_UNITS), appear(tokens, shift=RIGHT * SLIDE_UNITS), set_back,
                   run_time=0.8)  # fmt: skip
    knives = _token_knives(theme, tokens, parts)
    if len(knives):
        ctx.scene.play(Create(knives, lag_ratio=0.3), run_time=0.5)
    shares = [VGroup(*tokens[i * TOKENS_PER_CARD : (i + 1) * TOKENS_PER_CARD]) for i in range(parts)]
    ctx.scene.play(
        vanish(knives),
        *[
            share.animate.shift(RIGHT * TOKEN_SIDE * 0.5 * (i - (parts - 1) / 2)).set_fill(theme.card_color(i))
            for i, share in enumerate(shares)
        ],
        run_time=0.6,
    )
    ctx.leave(title=words, picture=VGroup(loaf, cuts, tokens))


def _token_row(theme: Theme, parts: int) -> VGroup:
    """A sequence's tokens, TOKENS_PER_CARD for each of `parts` cards (an illustration: no count is read off it)."""
    cells = [
        Square(TOKEN_SIDE, fill_color=theme.memory["activations"], fill_opacity=1, stroke_width=0)
        for _ in range(parts * TOKENS_PER_CARD)
    ]
    return VGroup(*cells).arrange(RIGHT, buff=TOKEN_GAP)


def _token_knives(theme: Theme, tokens: VGroup, parts: int) -> VGroup:
    """The knife's lines between one card's tokens and the next's."""
    top, bottom = tokens.get_top()[1] + KNIFE_OVERHANG, tokens.get_bottom()[1] - KNIFE_OVERHANG
    xs = [(tokens[i * TOKENS_PER_CARD - 1].get_right()[0] + tokens[i * TOKENS_PER_CARD].get_left()[0]) / 2
          for i in range(1, parts)]  # fmt: skip
    return VGroup(*[knife_line(theme, np.array([x, top, 0.0]), np.array([x, bottom, 0.0])) for x in xs])


# a ring step's share of its time: scoring the blocks, passing K/V on, then a moment to look
FILL_SHARE, PASS_SHARE = 0.45, 0.45


# -- memory_columns --------------------------------------------------------------------------
def _cp_names(numbers: Numbers, template: str = "GPU {}") -> list[Phrase]:
    """Each context-parallel rank's card, named as the layout numbers it."""
    return [group_gpu(numbers, "cp", rank, template) for rank in range(int(numbers.get("plan.cp")))]


def play_ring_attention(ctx: ShotContext, shot: Shot) -> None:
    """Each card keeps its queries; the key/value blocks travel the ring, one card a step. As
    each card scores its queries against the block it holds, the attention matrix fills in; under
    the causal mask the later cards have more to do (the sequence dealt in contiguous pieces)."""
    theme, numbers = ctx.theme, shot.numbers
    cp = int(numbers.get("plan.cp"))
    ctx.open_shot(shot.caption)
    ctx.set_stats(
        [
            ("K/V per hop", numbers("{comm.collectives.cp_ring_send_recv.buffer_bytes:bytes}"), False),
            ("Ring / step", numbers("{comm.seconds_by_group.cp:time}"), True),
        ]
    )
    colours = [theme.card_color(rank) for rank in range(cp)]
    ring, grid, heading = _ring_over_grid(ctx, numbers, colours)
    ctx.scene.play(appear(ring), run_time=1.0)
    ctx.scene.play(appear(grid), appear(heading), run_time=0.8)

    def step_column(step: int) -> VGroup:
        counter = numbers.index("step {}", step + 1, "plan.cp", one_based=True) + numbers(" of {plan.cp:int}")
        return phase_column(
            ctx, "Queries stay", "keys and values travel; each card scores the block it holds", counter, wrap=True
        )

    column = step_column(0)
    ctx.scene.play(appear(column), run_time=0.5)
    beat = ctx.beat_seconds(shot, cp, fixed_seconds=7.5, least=2.2, most=4.5)
    for step in range(cp):
        if step:
            relabel(column[-1], step_column(step)[-1])
        computed, idle = [], []
        for card in range(cp):
            key = (card - step) % cp  # the chunk whose keys and values this card holds now
            if key <= card:
                computed.append(grid.fill(card, key, colours[card]))
            else:
                idle.append(Indicate(ring.cards[card], color=theme.faint, scale_factor=1.0))
        ctx.scene.play(*computed, *idle, run_time=FILL_SHARE * beat)
        if step < cp - 1:
            ctx.scene.play(*ring.pass_on(PASS_SHARE * beat))
        ctx.scene.wait((1 - FILL_SHARE - PASS_SHARE) * beat)
    ctx.leave(ring=ring, grid=VGroup(grid, heading), column=_unbalanced_then_overlap(ctx, numbers, grid, column))


def _ring_over_grid(ctx: ShotContext, numbers: Numbers, colours: list[str]) -> tuple[RingRow, BlockGrid, Mobject]:
    """The ring's cards across the top of the stage right of the side column, and under them the
    attention matrix (queries in rows, keys and values in columns) with its heading."""
    theme, cp = ctx.theme, len(colours)
    area = ctx.regions.stage_right_of_side
    ring = RingRow(theme, _cp_names(numbers), colours, width=min(area.width, 1.9 * cp))
    area.part(top=area.top - 0.35).place(ring, UP)
    grid_area = area.part(top=ring.get_bottom()[1] - 0.75)
    grid = BlockGrid(theme, cp, size=min(grid_area.height - 0.2, 3.0), row_names=_cp_names(numbers))
    grid_area.place(grid, UP)
    keys = grid.column_keys(colours)
    heading = label(theme, "queries (rows) against keys and values (columns)", theme.small_size, theme.muted)
    heading.next_to(keys, UP, buff=0.1)
    grid.add(keys)
    return ring, grid, heading


def _unbalanced_then_overlap(ctx: ShotContext, numbers: Numbers, grid: BlockGrid, column: Mobject) -> VGroup:
    """After the ring's steps: the last card, which works longest under the causal mask, pointed
    at; then the ring's time against the attention it could hide behind. The column it leaves."""
    unbalanced = phase_column(
        ctx,
        "Unbalanced",
        "under the causal mask later tokens see more keys: the last card works longest",
        numbers("the slowest card: {compute.cp_contiguous_imbalance:x} the average"),
        wrap=True,
    )
    ctx.scene.play(swap(column, unbalanced), run_time=0.6)
    ctx.scene.play(Indicate(grid.row_names[-1], color=ctx.theme.accent), run_time=0.8)
    overlap = phase_column(
        ctx,
        "Overlap",
        "real kernels send the next block while scoring this block: sending and scoring overlap",
        wrap=True,
    )
    bars = time_bars(ctx, numbers).next_to(overlap, DOWN, buff=0.3, aligned_edge=LEFT)
    ctx.scene.play(swap(unbalanced, overlap), run_time=0.6)
    ctx.scene.play(*[GrowFromEdge(bar, LEFT) for _, bar, _ in bars], *[appear(VGroup(n, v)) for n, _, v in bars])
    return VGroup(overlap, bars)


# -- zigzag_balance --------------------------------------------------------------------------
def play_zigzag_balance(ctx: ShotContext, shot: Shot) -> None:
    """The sequence cut into 2c chunks. Dealt in order, the cards holding the end of the sequence
    score far more blocks than those holding its start; dealt zig-zag (card i takes chunk i and
    chunk 2c-1-i) every card scores the same. The caption, which names the zig-zag deal, comes
    with it: over the in-order picture it read as that picture's (issue 58)."""
    theme, numbers = ctx.theme, shot.numbers
    cp = int(numbers.get("plan.cp"))
    chunks = 2 * cp
    colours = [theme.card_color(card) for card in range(cp)]
    ctx.open_shot(None)  # the caption, on the zig-zag deal, comes with it (at "dealt")
    values = [
        numbers("{compute.attention_seconds_per_step_contiguous:time}"),
        numbers("{compute.attention_seconds_per_step:time}"),
    ]
    ctx.set_stats([("Slowest card's attention", values[0], True)], reserve=[tuple(values)])
    area = ctx.regions.stage_right_of_side
    strip = _sequence_strip(theme, owner_colours(colours, cp, "contiguous"))
    strip_name = label(theme, "the sequence, cut in chunks, start to end", theme.small_size, theme.muted)
    top = VGroup(strip_name, strip).arrange(DOWN, buff=0.1)
    grid = BlockGrid(theme, chunks, size=min(area.height - top.height - 0.6, 3.8))
    bars = work_bars(ctx, numbers, cp, "contiguous")
    bars_title = label(theme, "attention work per card", theme.small_size, theme.muted)
    side = VGroup(bars_title, bars).arrange(DOWN, aligned_edge=LEFT, buff=0.2)
    top.next_to(grid, UP, buff=0.3)
    side.next_to(grid, RIGHT, buff=0.8)
    area.place(VGroup(top, grid, side))
    contiguous = phase_column(ctx, "In order", "each card takes neighbouring chunks", wrap=True)
    ctx.scene.play(appear(top), appear(grid), appear(contiguous), run_time=0.8)
    owners = context.chunk_owners(cp, "contiguous")
    fills = [grid.fill(q, k, colours[owners[q]]) for (q, k) in grid.fills]
    ctx.scene.play(LaggedStart(*fills, lag_ratio=0.02), run_time=1.6)
    ctx.scene.play(appear(bars_title), *[GrowFromEdge(b[1], LEFT) for b in bars], *[appear(b[0]) for b in bars])
    ctx.until("dealt")
    zigzag = phase_column(
        ctx, "Zig-zag", "card i takes chunk i and its mirror from the end", "every card scores the same", wrap=True
    )
    zig_owners = context.chunk_owners(cp, "zigzag")
    recolour = [block.animate.set_fill(colours[owner]) for block, owner in zip(strip, zig_owners, strict=True)]
    rows = [a for q in range(chunks) for a in grid.recolour_row(q, colours[zig_owners[q]])]
    balanced = work_bars(ctx, numbers, cp, "zigzag").move_to(bars, aligned_edge=LEFT + UP)
    ctx.set_caption(shot.caption, swap(contiguous, zigzag), *recolour, *rows, run_time=1.4)
    _each_cards_mirror(ctx, strip, grid, zig_owners, cp)
    # every card the same share: the bars even out, then the slowest card's time falls
    ctx.until("same")
    ctx.scene.play(*[Transform(old[1], new[1]) for old, new in zip(bars, balanced, strict=True)], run_time=1.2)
    ctx.highlight(side)  # the work per card, now even
    ctx.until("falls")
    ctx.scene.play(*ctx.count_stats([values[1]], 1.2), run_time=1.2)
    ctx.point_at(ctx.stats.stats[0])
    ctx.leave(top=top, grid=grid, side=side, column=zigzag)


def _sequence_strip(theme: Theme, colours: list[str]) -> VGroup:
    """The sequence's chunks in a row, start to end, each in its card's colour."""
    return VGroup(
        *[
            Rectangle(width=0.5, height=0.34, fill_color=c, fill_opacity=0.9).set_stroke(theme.background, 2)
            for c in colours
        ]
    ).arrange(RIGHT, buff=0.04)


def _each_cards_mirror(ctx: ShotContext, strip: VGroup, grid: BlockGrid, owners: list[int], cp: int) -> None:
    """Each card in turn, from `mirror` until `same`: its chunk from the start and its mirror from
    the end, and a highlighter's band on each of its two rows of blocks, a short one and a long
    one (the same blocks in all)."""
    theme = ctx.theme
    ctx.until("mirror")
    per_card = beat_seconds(ctx.seconds_until("same"), cp, 0.0, least=0.8, most=2.0)
    for card in range(cp):
        mine = [strip[chunk] for chunk, owner in enumerate(owners) if owner == card]
        its_rows = [VGroup(*[s for (q, _), s in grid.fills.items() if q == chunk]) for chunk in range(2 * cp)
                    if owners[chunk] == card]  # fmt: skip
        bands = [band(theme, row) for row in its_rows]
        ctx.scene.play(
            *[Indicate(block, color=theme.accent, scale_factor=1.3) for block in mine],
            *[FadeIn(b) for b in bands],
            run_time=0.6 * per_card,
        )
        ctx.scene.play(*[FadeOut(b) for b in bands], run_time=0.4 * per_card)
