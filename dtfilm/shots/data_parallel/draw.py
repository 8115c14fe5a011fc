"""Shot kinds of the data-parallel chapter: copies of the loaf, gauges, the ring, the sweep."""

# Over 400 lines (issue 61): four kinds on one rack of replicas and its gauges, handed shot to shot
# (a kind splits into a folder of its own when it grows)

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    DashedLine,
    GrowFromEdge,
    Indicate,
    LaggedStart,
    Mobject,
    MoveToTarget,
    Rectangle,
    ReplacementTransform,
    Transform,
    VGroup,
)

from dtfilm.cost.estimate import MEMORY_PARTS
from dtfilm.cost.inputs import SPECS
from dtfilm.numbers import Numbers
from dtfilm.phrases import Phrase, plain
from dtfilm.scene import ShotContext
from dtfilm.shots.common.draw import (
    build_rack,
    gauge_facts,
    legend,
    loaf_ends,
    phase_column,
    rack_facts,
    rack_gauges,
    rack_words,
    verdict_label,
)
from dtfilm.storyboard import Shot
from dtfilm.visuals.card import CardBox
from dtfilm.visuals.fade import Reshape, appear, swap, vanish
from dtfilm.visuals.loaf import Loaf
from dtfilm.visuals.rack import Rack
from dtfilm.visuals.ring import Ring, RingStep, simulate_ring
from dtfilm.visuals.text import label, relabel

RING_STEP_SECONDS = 0.8  # at the least
MEMORY_BAR_MARKS = ("weights", "gradients", "master_weights", "adam_m", "activations")
RING_PHASE_TOP = 1.3  # beside the ring, level with its upper cards
TRAFFIC_Y = 2.2


def play_loaf_to_rack(ctx: ShotContext, shot: Shot) -> None:
    """The loaf appears, the rack appears, and a whole copy of the loaf lands on every card."""
    ctx.open_shot(shot.caption)
    numbers, theme = shot.numbers, ctx.theme
    loaf = Loaf(theme, numbers.get("model.layers"), numbers("{model.label} · {model.layers} layers"), slice_height=0.15)
    loaf.move_to([0, 1.75, 0])
    ends = loaf_ends(theme, numbers, loaf)
    loaf.add(ends)
    rack = build_rack(theme, numbers)
    ctx.scene.play(appear(loaf, shift=DOWN * 0.2), run_time=1.0)
    ctx.until("loaf")
    ctx.point_at(loaf)
    ctx.until("rack")
    ctx.scene.play(appear(rack), run_time=1.0)
    copies = VGroup()
    for card in rack.cards.values():
        mini = loaf.bare_copy()
        mini.scale_to_fit_width(card.inner_width).move_to(card.body)
        copies.add(mini)
    ctx.until("copies")
    ctx.scene.play(
        LaggedStart(*[ReplacementTransform(loaf.bare_copy(), mini) for mini in copies], lag_ratio=0.12),
        run_time=2.0,
    )
    ctx.scene.add(copies)
    ctx.set_stats(
        [
            ("Cards", numbers("{cluster.cards:int}"), False),
            ("Layers per card", numbers("{memory.layers:int}"), True),
        ]
    )
    shares = _batch_shares(ctx, shot, rack, copies) if ctx.has_mark("batch") else VGroup()
    ctx.leave(loaf=loaf, copies=copies, shares=shares)
    ctx.hand_on("rack", rack, rack_facts(numbers))


BATCH_SHARE_HEIGHT = 0.14  # each card's share of the batch, a strip under its copy


def _batch_shares(ctx: ShotContext, shot: Shot, rack: Rack, copies: VGroup) -> VGroup:
    """As the voice tells it: the batch beside the loaf, a share of it landing on every card
    ([batch]); each share cut into its micro-batches, run one after another ([micro]); and
    their gradients added up into the one update ([accumulate])."""
    theme, numbers = ctx.theme, shot.numbers
    cards = list(rack.cards.values())
    m = max(int(numbers.get("inputs.micro_batches")), 1)
    width = 3.2
    share = width / len(cards) - 0.04
    shares = [Rectangle(width=share, height=0.3, stroke_width=0) for _ in cards]
    batch = VGroup(*[s.set_fill(theme.card_color(i), 0.85) for i, s in enumerate(shares)]).arrange(RIGHT, buff=0.04)
    batch.move_to([ctx.regions.stage.right - width / 2 - 0.3, 1.75, 0])
    name = label(theme, "the batch", theme.small_size, theme.muted).next_to(batch, UP, buff=0.12)
    ctx.until("batch")
    ctx.reveal(batch, name, run_time=0.7)
    targets = _share_strips(cards)
    for share, strip in zip(batch, targets, strict=True):
        strip.set_fill(share.get_fill_color(), opacity=0.85)
    ctx.scene.play(
        LaggedStart(*[ReplacementTransform(s, t) for s, t in zip(batch, targets, strict=True)], lag_ratio=0.1),
        vanish(name),
        run_time=1.3,
    )
    ctx.until("micro")
    slices = VGroup(*[_micro_batches(strip, m) for strip in targets])
    # (a single micro-batch runs after nothing, and adds up with nothing: said so at one)
    note = label(theme, numbers("{inputs.micro_batches:int} micro-batches a card"
                                "{?count: inputs.micro_batches > 1 => , {~one} after another | }"),
                 theme.small_size, theme.muted).next_to(rack, DOWN, buff=0.35)  # fmt: skip
    ctx.scene.play(ReplacementTransform(targets, slices), appear(note), run_time=0.6)
    # One micro-batch after another on every card at once: each slice lit in turn.
    ctx.scene.play(
        LaggedStart(
            *[Indicate(VGroup(*[s[j] for s in slices]), color=theme.accent, scale_factor=1.6) for j in range(m)],
            lag_ratio=0.5,
        ),
        run_time=min(3.0, 0.4 * m + 0.6),
    )
    ctx.until("accumulate")
    sums = VGroup()
    for row in slices:
        total = Rectangle(width=row.width, height=BATCH_SHARE_HEIGHT, stroke_width=0)
        sums.add(total.set_fill(theme.accent, opacity=0.9).move_to(row))
    summed = label(theme, numbers("{?count: inputs.micro_batches > 1 => gradients of {inputs.micro_batches:int}"
                                  " micro-batches added up, then {~one} update | gradients of"
                                  " {inputs.micro_batches:int} micro-batches, then {~one} update}"),
                   theme.small_size, theme.muted).move_to(note)  # fmt: skip
    ctx.scene.play(ReplacementTransform(slices, sums), swap(note, summed), run_time=0.9)
    # The one update, to every card's copy, as the voice names it.
    ctx.until_second((ctx.mark_seconds("accumulate") + ctx.said_seconds()) / 2)
    ctx.point_at(copies, sums)
    return VGroup(sums, summed)


def _share_strips(cards: list[CardBox]) -> VGroup:
    """Where each card's share of the batch lands: a strip at the bottom of its body."""
    targets = VGroup()
    for card in cards:
        strip = Rectangle(width=card.inner_width, height=BATCH_SHARE_HEIGHT, stroke_width=0)
        strip.move_to([card.body.get_center()[0], card.body.get_bottom()[1] + 0.22, 0])
        targets.add(strip)
    return targets


def _micro_batches(strip: Rectangle, m: int) -> VGroup:
    """A card's share of the batch cut into its `m` micro-batches, in the share's colour."""
    piece = strip.width / m
    return VGroup(
        *[
            Rectangle(width=piece - 0.02, height=BATCH_SHARE_HEIGHT, stroke_width=0)
            .set_fill(strip.get_fill_color(), opacity=0.85)
            .move_to([strip.get_left()[0] + (j + 0.5) * piece, strip.get_center()[1], 0])
            for j in range(m)
        ]
    )


def play_memory_bars(ctx: ShotContext, shot: Shot) -> None:
    """Each card's gauge fills part by part (weights, gradients, master, m, v, activations)."""
    numbers, theme = shot.numbers, ctx.theme
    ctx.clear_stage(keep=("rack",))
    ctx.show_header()
    rack = ctx.take("rack", rack_facts(numbers))
    if rack is None:
        rack = build_rack(theme, numbers)
        ctx.scene.play(appear(rack), run_time=0.8)
        ctx.hand_on("rack", rack, rack_facts(numbers))
    # the legend names the parts as they grow; the caption, the verdict, takes its place at the
    # verdict (caption, counters, labels and legend at once were four layers of text; issue 58: 3)
    ctx.set_caption(None)
    # The state and the total with activations, each named: the voice says both, and a header
    # of the total alone read as a contradiction of the caption's state.
    ctx.set_stats(
        [
            ("State", numbers("{memory.static:GB}"), False),
            ("With activations", numbers("{memory.total:GB}"), True),
            ("Card holds", numbers("{memory.capacity:GB}"), False),
        ]
    )
    key = legend(theme)
    ctx.scene.play(appear(key), run_time=0.6)
    if ctx.has_mark("weights"):  # the ledger's parts, named in the legend, as the voice counts its bytes
        ctx.until_second(ctx.mark_seconds("weights") / 2)
        ctx.highlight(key, across=True)
    gauges = rack_gauges(rack, numbers)
    # Each part as the voice names it, the activations last; by part, since each card has its
    # own ledger and a part too small to draw on one card may show on another.
    for part in [p for p in MEMORY_PARTS if any(s.part == p for g in gauges for s in g.segments)]:
        if part in MEMORY_BAR_MARKS:
            ctx.until(part)
        if part == "activations" and ctx.has_mark("static"):  # the state alone, as the voice sums it
            ctx.until("static")
            ctx.highlight(gauges, across=True)
            ctx.until(part)
        segments = VGroup(*[s for g in gauges for s in g.segments if s.part == part])
        ctx.scene.play(*[GrowFromEdge(s, DOWN) for s in segments], run_time=0.7)
        if part in MEMORY_BAR_MARKS and ctx.has_mark(part):  # the part the voice names, across the rack
            ctx.highlight(segments, across=True)
    spills = [g.submobjects[1:] for g in gauges if len(g.submobjects) > 1]
    verdict = verdict_label(theme, rack, numbers)
    ctx.until("verdict")
    ctx.caption_after_legend(shot.caption, key, *[appear(VGroup(*s)) for s in spills], appear(verdict), run_time=0.8)
    ctx.point_at(verdict)
    ctx.hand_on("gauges", gauges, gauge_facts(numbers))
    ctx.hand_on("verdict", verdict, gauge_facts(numbers))


def play_ring_allreduce(ctx: ShotContext, shot: Shot) -> None:
    """Chunks travel the ring: reduce-scatter, then all-gather, n-1 steps each."""
    numbers, theme = shot.numbers, ctx.theme
    ctx.open_shot(shot.caption)
    ctx.set_stats(
        [
            ("Gradients", numbers("{comm.gradient_buffer:GB}"), False),
            ("Comm / step", numbers("{comm.total:bytes}"), True),
        ]
    )
    if not numbers.has("comm.collectives.dp_all_reduce"):
        _no_ring(ctx, numbers)
        return
    cards = int(numbers.get("cluster.cards"))
    ring = Ring(theme, cards, rack_words(numbers).card)
    ring.move_to([2.0, -0.1, 0])
    ctx.scene.play(appear(ring), run_time=1.0)
    if ctx.has_mark("ring"):  # each card's own gradients, which must agree, as the voice says so
        ctx.until_second(ctx.mark_seconds("ring") / 2)
        ctx.highlight(ring.nodes)
    ctx.until("ring")
    drawn_note = (
        numbers("{cluster.cards:int} cards: {comm.collectives.dp_all_reduce.ring_steps_per_phase:int} steps each way")
        if cards > ring.k
        else numbers("{comm.collectives.dp_all_reduce.ring_steps_per_phase:int} steps each way")
    )
    explain = {
        "reduce-scatter": ("Reduce-scatter", "each card adds a chunk into its neighbour's"),
        "all-gather": ("All-gather", "the finished sums go round again"),
    }
    column = None

    def caption_step(s: int, step: RingStep) -> None:
        nonlocal column
        title, line = explain[step.phase]
        shown = s % (ring.k - 1) + 1
        counter = numbers.index("step {}", shown, "comm.collectives.dp_all_reduce.ring_steps_per_phase", one_based=True)
        fresh = phase_column(ctx, title, line, counter + " · " + drawn_note, top=RING_PHASE_TOP)
        if column is None:
            column = fresh
            ctx.scene.play(appear(column), run_time=0.5)
        else:
            for line_mob, new in zip(column, fresh, strict=True):
                relabel(line_mob, new)

    _play_ring_steps(ctx, ring, caption_step)
    assert column is not None
    done = phase_column(ctx, "Averaged", "every card holds the same sum", drawn_note, top=RING_PHASE_TOP)
    ctx.until("averaged")
    ctx.scene.play(swap(column, done), run_time=0.6)
    ctx.point_at(ring)
    column = done
    ctx.leave(ring=ring, column=column)


def _play_ring_steps(ctx: ShotContext, ring: Ring, before_step: Callable[[int, RingStep], None] | None = None) -> None:
    """The ring's reduce-scatter and all-gather, paced from now until the voice has said the sums
    are averaged, the all-gather at [gather]; `before_step` says what each step is first."""
    _, steps = simulate_ring(np.ones((ring.k, ring.k)))
    half = len(steps) // 2

    def paced(until: str, count: int) -> float:  # each phase's steps spread until the voice moves on
        return max(RING_STEP_SECONDS, min(2.5 * RING_STEP_SECONDS, ctx.seconds_until(until) / max(count, 1) - 0.1))

    # the reduce-scatter runs until the voice turns to the all-gather, which runs until the sums
    # are averaged: the chunks move while each phase is told, not waiting between them
    step_seconds = paced("gather", half) if ctx.has_mark("gather") else paced("averaged", len(steps))
    for s, step in enumerate(steps):
        if before_step is not None:
            before_step(s, step)
        if s == half:
            ctx.until("gather")
            step_seconds = paced("averaged", len(steps) - half)
        for animation in ring.step_animation(step, step_seconds):
            ctx.scene.play(animation)


GHOST_RING_CARDS = 4  # the ring a lone copy would join, drawn small beside it (no number shown)


def _copy_name(_rank: int) -> Phrase:
    return plain("a copy")


def _no_ring(ctx: ShotContext, numbers: Numbers) -> None:
    """A single replica has no one to average with: its card, that said in words, and while the
    voice tells how a ring averages, that ring drawn small and faint beside it, as copies would
    run it, then gone: this run has none."""
    rack = build_rack(ctx.theme, numbers)
    column = phase_column(
        ctx,
        numbers("{plan.dp:int} copy of the model: no ring"),
        "its gradients are already the average",
        numbers("data-parallel traffic: {comm.dp:GB} a step"),
        top=RING_PHASE_TOP + 1.0,
    )
    ctx.scene.play(appear(rack), run_time=1.0)
    ctx.scene.play(appear(column), run_time=0.8)
    ctx.until("ring")
    ghost = Ring(ctx.theme, GHOST_RING_CARDS, _copy_name, radius=1.35, box_width=1.2, stretch=1.0, box_height=0.74)
    heading = label(ctx.theme, "with more copies, a ring", ctx.theme.small_size, ctx.theme.muted)
    stage = ctx.regions.stage
    ghost.move_to([stage.right - ghost.width / 2 - 0.2, -0.3, 0])
    heading.next_to(ghost, UP, buff=0.3)
    rack.generate_target()
    rack.target.shift(LEFT * max(0.0, rack.get_right()[0] - (ghost.get_left()[0] - 0.4)))
    ctx.scene.play(MoveToTarget(rack), run_time=0.6)
    ctx.scene.play(appear(VGroup(ghost, heading)), run_time=0.8)
    _play_ring_steps(ctx, ghost)
    ctx.until("averaged")
    ctx.scene.play(vanish(VGroup(ghost, heading)), run_time=0.6)
    ctx.point_at(column[1])
    ctx.leave(rack=rack, column=column)


def _traffic_bar(ctx: ShotContext, steps: tuple[Numbers, ...]) -> tuple[VGroup, float, float]:
    """A track for the per-card traffic, with the limit (twice the buffer) dashed."""
    theme = ctx.theme
    limit = max(float(n.get("comm.dp_allreduce_limit")) for n in steps)
    top = max(limit, *(float(n.get("comm.total")) for n in steps)) * 1.08
    width, left_x, y = 7.0, -3.0, TRAFFIC_Y
    track = Rectangle(width=width, height=0.26, stroke_color=theme.faint, stroke_width=2, fill_opacity=0)
    track.move_to([left_x + width / 2, y, 0])
    name = label(theme, "Traffic per card", theme.small_size, theme.muted)
    name.next_to(track, LEFT, buff=0.3)  # clear of the bar as it swells (SWELL_UNITS)
    x_limit = left_x + width * limit / top
    line = DashedLine([x_limit, y - 0.25, 0], [x_limit, y + 0.25, 0], color=theme.accent, stroke_width=3)
    limit_text = steps[0]("{comm.dp_allreduce_limit_factor:times} the buffer: {comm.dp_allreduce_limit:GB}")
    note = label(theme, limit_text, theme.small_size, theme.accent)
    note.next_to(line, UP, buff=0.06)
    return VGroup(track, name, line, note), left_x, width / top


def _bar(ctx: ShotContext, numbers: Numbers, left_x: float, scale: float) -> Rectangle:
    width = max(float(numbers.get("comm.total")) * scale, 0.02)
    bar = Rectangle(width=width, height=0.2, fill_color=ctx.theme.traffic_ink, fill_opacity=0.85, stroke_width=0)
    bar.move_to([left_x + width / 2, TRAFFIC_Y, 0])
    return bar


def play_sweep(ctx: ShotContext, shot: Shot) -> None:
    """One input moves through its values (the slider); the rack, gauges and stats follow. The
    legend names the parts while the bars are first read; the caption, the shot's conclusion,
    takes its place as the voice reaches the traffic's limit (the two at once, beside the counters
    and labels, were four layers of text; issue 58 allows three)."""
    theme = ctx.theme
    ctx.open_shot(None, clear=False)  # the last shot's pieces go as the rack arrives, below
    name = shot.options["set"]
    steps = shot.steps
    stat_name = SPECS[name].help[:1].upper() + SPECS[name].help[1:]

    def stat_values(n: Numbers) -> list[Phrase]:
        # The traffic's time beside its bytes: the bar draws bytes, which barely move as the
        # ring leaves the node, while the time they take grows tenfold.
        return [n(f"{{inputs.{name}}}"), n("{memory.total:GB}"), n("{comm.total:bytes} · {comm.seconds:time}")]

    first = steps[0]
    track, left_x, scale = _traffic_bar(ctx, steps)
    rack = build_rack(theme, first)
    gauges = rack_gauges(rack, first)
    key = legend(theme)
    bar = _bar(ctx, first, left_x, scale)
    picture = VGroup(rack, gauges)
    # the picture first, then its counters, arriving as the last shot's pieces go: the frame
    # is never left empty between the shots
    ctx.clear_stage((), appear(picture), appear(key), appear(track), appear(bar), run_time=1.0)
    ctx.set_sweep_stats([(stat_name, False), ("Per card", False), ("Comm / step", True)], stat_values, steps)
    for i, numbers in enumerate(steps[1:], start=1):
        ctx.until(f"value{i + 1}", share=i / len(steps))
        new_rack = build_rack(theme, numbers)
        new_picture = VGroup(new_rack, rack_gauges(new_rack, numbers))
        new_bar = _bar(ctx, numbers, left_x, scale)
        # The rack and its gauges become the next ones (a card splits into the cards that take
        # its place): the gauges stay where they were, which is the point of the shot. Its names
        # that change ("GPU 3" where "GPU 0" will stand, a node's name) go before the next come.
        ctx.scene.play(
            Reshape(picture, new_picture, replace=True),
            Transform(bar, new_bar),
            *ctx.count_stats(stat_values(numbers)),
            run_time=1.4,
        )
        picture = new_picture
        if i == 1:
            _after_first_step(ctx, shot, picture, track, bar, key)
    if not ctx.has_mark("limit"):
        ctx.caption_after_legend(shot.caption, key)
        ctx.until("traffic")
        ctx.point_at(bar, track[2])
    shares = VGroup()
    if ctx.has_mark("time"):
        shares = _sweep_time(ctx, picture, bar, steps[-1])
    ctx.leave(picture=picture, track=track, bar=bar, shares=shares)


def _after_first_step(
    ctx: ShotContext, shot: Shot, picture: VGroup, track: VGroup, bar: Rectangle, key: VGroup
) -> None:
    """After the rack's first new size: the gauges that did not move, whether the model fits
    ([fits]), and the traffic nearing its limit ([limit]), with the caption, the conclusion."""
    ctx.point_at(picture[1])
    if ctx.has_mark("fits"):
        _sweep_fits(ctx, picture)
    if ctx.has_mark("limit"):
        # Bands across the stage: the bar and the limit are too thin for a swell to show.
        ctx.until("traffic")
        ctx.highlight(VGroup(track[0], bar), across=True)
        ctx.until("limit")
        ctx.caption_after_legend(shot.caption, key)
        ctx.highlight(VGroup(track[2], track[3]), across=True)


def _sweep_fits(ctx: ShotContext, picture: VGroup) -> None:
    """What more cards buy, and for what ([fits]): the gauges, then what spills past the card."""
    gauges = picture[1]
    ctx.until("fits")
    ctx.highlight(gauges, across=True)
    begin, end = ctx.mark_seconds("fits"), ctx.mark_seconds("traffic")
    ctx.until_second(begin + 0.45 * (end - begin))
    spills = VGroup(*[VGroup(*g.submobjects[1:]) for g in gauges if len(g.submobjects) > 1])
    ctx.point_at(spills if len(spills) else gauges)
    if ctx.stats is not None:  # the total per card the voice weighs against the card
        ctx.until_second(begin + 0.8 * (end - begin))
        ctx.highlight(ctx.stats.stats[1], across=True)


# the step from a card's bytes a step to their time between nodes: the bytes each card puts on
# the network link (its own, or its share of the node's) at that link's bandwidth a card
NIC_SHARE = (
    "the crossing shared by a node's {cluster.cards_per_node:int} cards:"
    " {comm.nic_bytes:bytes} each, at {cluster.inter_node_bandwidth:GB/s}"
)


def _nic_share(ctx: ShotContext, rack: Mobject, last: Numbers) -> Mobject:
    """Under the link between nodes, what each of a node's network cards sends of a card's
    traffic: the step from the bytes a step to the time on the link (issue 58: "26.2 GB ·
    65.7 ms" over a 50 GB/s link, 524 ms to a student dividing, the 3.28 GB only spoken)."""
    share = label(ctx.theme, last(NIC_SHARE), ctx.theme.small_size, ctx.theme.muted)
    inter = getattr(rack, "inter_label", None)
    above = inter if inter is not None else rack
    return share.next_to(above, DOWN, buff=0.08)


def _sweep_time(ctx: ShotContext, picture: VGroup, bar: Rectangle, last: Numbers) -> VGroup:
    """While the voice gives the traffic's time at the first and last values ([time]): the
    traffic's time, the link between nodes the ring leaves for, the bar whose bytes barely moved;
    at [nic], the bytes each network card sends under that link (returned, to be cleared)."""
    assert ctx.stats is not None
    rack = picture[0]
    beats = [lambda: ctx.highlight(ctx.stats.stats[-1])]
    if getattr(rack, "inter_label", None) is not None:
        beats.append(lambda: ctx.highlight(rack.inter_label, across=True))
    beats.append(lambda: ctx.highlight(bar, across=True))
    nic = "nic" if ctx.has_mark("nic") else None
    for n, beat in enumerate(beats):
        ctx.spread("time", nic, n + 1, len(beats) + 1)
        beat()
    if nic is None:
        return VGroup()
    # what each card's own network link carries: the link and the bytes a network card sends,
    # then the traffic's time they take
    share = _nic_share(ctx, rack, last)
    ctx.reveal(share, at=nic, run_time=0.6)
    ctx.highlight(VGroup(*[p for p in (getattr(rack, "inter_label", None), share) if p is not None]), across=True)
    ctx.spread(nic, None, 1, 2)
    ctx.highlight(ctx.stats.stats[-1])
    return VGroup(share)
