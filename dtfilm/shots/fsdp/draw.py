"""Shot kinds of the FSDP chapter: ZeRO stages one by one, and a layer gathering from shards."""

from __future__ import annotations

import itertools

from manim import (
    DOWN,
    RIGHT,
    UP,
    Rectangle,
    Square,
    Transform,
    VGroup,
)

from dtfilm.numbers import Numbers
from dtfilm.phrases import Phrase
from dtfilm.scene import ShotContext
from dtfilm.shots.common.draw import (
    CARD_TOP_Y,
    SHARDED_BY_STAGE,
    build_rack,
    gauge_facts,
    phase_column,
    rack_facts,
    rack_gauges,
    rack_of,
    verdict_label,
)
from dtfilm.storyboard import Shot
from dtfilm.visuals.card import CardBox
from dtfilm.visuals.fade import appear, swap, vanish
from dtfilm.visuals.loaf import Loaf
from dtfilm.visuals.rack import Rack
from dtfilm.visuals.slicing import cut_slivers, play_cut
from dtfilm.visuals.text import clamp_x, label, left_column
from dtfilm.visuals.theme import Theme

FORWARD_LAYERS_SHOWN = 3  # layers the forward pass is shown for, one by one; then "and so on"
STAGE_WORDS = {
    1: ": shard the optimizer state",
    2: ": shard the gradients too",
    3: ": shard the weights too (FSDP)",
}


def play_shard_steps(ctx: ShotContext, shot: Shot) -> None:
    """From data parallel's gauges, shard the state stage by stage: each newly sharded part
    leaves every card but for the card's own shard (edged in its colour, which the owner key
    says: a colour means one thing, and the memory legend's are the parts'); gauges fall."""
    theme, steps = ctx.theme, shot.steps
    ctx.show_header()
    first = steps[0]
    ctx.clear_stage(keep=("rack", "gauges", "verdict"))
    rack = ctx.take("rack", rack_facts(first))
    gauges = ctx.take("gauges", gauge_facts(first)) if rack is not None else None
    taken_verdict = ctx.take("verdict", gauge_facts(first)) if gauges is not None else None
    if rack is None or gauges is None or taken_verdict is None:
        ctx.clear_stage()
        rack = build_rack(theme, first)
        gauges = rack_gauges(rack, first, theme)
        taken_verdict = verdict_label(theme, rack, first)
        ctx.scene.play(appear(rack), appear(gauges), appear(taken_verdict), run_time=1.0)
    # no memory legend: the copies shot before named the parts, and beside the caption, the
    # counters and the labels it was a fourth layer of text (issue 58: at most three)
    ctx.set_caption(shot.caption)

    def values(n: Numbers) -> list[Phrase]:
        return [n("ZeRO-{inputs.zero:int}"), n("{memory.static:GB}"), n("{memory.total:GB}")]

    ctx.set_sweep_stats([("Stage", False), ("State per card", False), ("Per card", True)], values, steps)
    column: VGroup | None = None
    verdict = verdict_label(theme, rack, steps[0], align_right=True)
    owners: VGroup | None = None
    if edged_by_owner(gauges):  # the sweep starts sharded: its edges are on screen already
        owners = placed_owner_key(ctx, len(rack.cards), edged=True)
    keyed = [appear(owners)] if owners is not None else []
    ctx.scene.play(vanish(taken_verdict), appear(verdict), *keyed, run_time=0.5)
    if ctx.has_mark("share"):  # the copies every card holds alike, as the voice says each can keep a share
        ctx.until("share")
        ctx.point_at(gauges, scale=1.05)
        ctx.spread("share", "value2", 1, 2)  # its own slice: every card's, lit together
        ctx.highlight(gauges)
    for step, (before, numbers) in enumerate(itertools.pairwise(steps), start=1):
        ctx.until(f"value{step + 1}", share=step / len(steps))
        zero = int(numbers.get("inputs.zero"))
        leaving = set(SHARDED_BY_STAGE[zero]) - set(SHARDED_BY_STAGE[int(before.get("inputs.zero"))])
        words = STAGE_WORDS.get(zero, "")
        fresh = phase_column(
            ctx, numbers("ZeRO-{inputs.zero:int}") + words, numbers("each card keeps a shard in {plan.shard_group:int}")
        )
        # (swapped: at 33.9 s "ZeRO-3: shard the weights too" crossed "ZeRO-2" as both faded)
        ctx.scene.play(swap(column, fresh), run_time=0.6)
        column = fresh
        ghosts = VGroup(*[seg.copy() for g in gauges for seg in g.segments if seg.part in leaving])
        new_gauges = rack_gauges(rack, numbers, theme)
        new_verdict = verdict_label(theme, rack, numbers, align_right=True)
        # the owner key comes with the first edges in owners' colours, and goes if they do
        keyed = []
        if edged_by_owner(new_gauges) and owners is None:
            owners = placed_owner_key(ctx, len(rack.cards), edged=True)
            keyed = [appear(owners)]
        elif not edged_by_owner(new_gauges) and owners is not None:
            keyed, owners = [vanish(owners)], None
        ctx.scene.add(ghosts)
        ctx.scene.play(
            vanish(ghosts, shift=UP * 0.8, scale=0.6),
            Transform(gauges, new_gauges),
            swap(verdict, new_verdict),
            *keyed,
            *ctx.count_stats(values(numbers)),
            run_time=1.6,
        )
        verdict = new_verdict
        # what this stage took off every card, pointed at while the voice still says it
        following = f"value{step + 2}" if step + 1 < len(steps) else "fsdp"
        if ctx.has_mark(following):
            ctx.spread(f"value{step + 1}", following, 1, 2)
        ctx.point_at(gauges, scale=1.05)
    ctx.until("fsdp")
    ctx.point_at(gauges, scale=1.05)
    if ctx.stats is not None:  # the state a card keeps now, as the voice says it
        ctx.until("per_card")
        ctx.point_at(ctx.stats.stats[1])
    ctx.leave(rack=rack, gauges=gauges, verdict=verdict)
    if column is not None:
        ctx.leave(column=column)
    if owners is not None:
        ctx.leave(owners=owners)


SLOT_BUFF = 0.22  # above a card's body: clear of its node box's top edge (0.175 above the body)


class _Slot(VGroup):
    """The place above a card where a layer assembles: a block of strips, one per card's
    shard, as wide as the card (a slice of the loaf cut into as many shards as cards)."""

    HEIGHT = 0.78

    def __init__(self, ctx: ShotContext, card: CardBox, count: int, own: int) -> None:
        super().__init__()
        theme = ctx.theme
        self.frame = Rectangle(width=card.body.width, height=self.HEIGHT, stroke_color=theme.faint, stroke_width=1.5)
        self.frame.next_to(card.body, UP, buff=SLOT_BUFF)
        strip = (self.HEIGHT - 0.06) / count
        self.positions = [self.frame.get_bottom() + UP * (0.03 + strip * (i + 0.5)) for i in range(count)]
        self.strip_height = strip
        self.own = own
        self.add(self.frame)

    def chip(self, ctx: ShotContext, owner: int, color: str | None = None) -> Rectangle:
        chip = Rectangle(
            width=self.frame.width - 0.08,
            height=self.strip_height * 0.82,
            fill_color=color or ctx.theme.card_color(owner),
            fill_opacity=1,
            stroke_width=0,
        )
        return chip.move_to(self.positions[owner])


OWNER_SWATCH = 0.16
OWNER_KEY_TOP = 2.75  # under the stats (their bottom is at 2.98), over a verdict (its top at 2.09)


def owner_key(theme: Theme, colours: list[str], edged: bool = False) -> VGroup:
    """The second meaning of colour in a shot, said where it is used: a shard (`edged`: a
    sharded part's edge in a gauge, its fill staying the part's) is coloured by the card that
    owns it, not by the part it is; the memory legend's colours stay the parts'."""
    swatches = VGroup(
        *[
            Square(
                OWNER_SWATCH - (0.03 if edged else 0),
                fill_color=c,
                fill_opacity=0 if edged else 1,
                stroke_color=c,
                stroke_width=2.5 if edged else 0,
            )
            for c in colours[:8]
        ]
    ).arrange(RIGHT, buff=0.05 + (0.03 if edged else 0))
    words = "a shard's edge: the card that owns it" if edged else "a shard's colour: the card that owns it"
    key = left_column(swatches, VGroup(label(theme, words, theme.small_size, theme.muted)), buff=0.08)
    key.swatches = swatches
    return key


def edged_by_owner(gauges: VGroup) -> bool:
    """Whether gauges (`rack_gauges`) draw some part edged in its owner's colour: a part is
    sharded over more than one card, and its shard is large enough to be drawn."""
    return any(seg.get_stroke_width() > 0 for gauge in gauges for seg in gauge.segments)


def placed_owner_key(ctx: ShotContext, count: int, edged: bool = False) -> VGroup:
    """The owner key for `count` drawn cards, at the top right under the stats: clear of the
    phase column, the verdict and a wide rack."""
    owners = owner_key(ctx.theme, [ctx.theme.card_color(i) for i in range(count)], edged)
    owners.move_to([ctx.regions.stage.right, OWNER_KEY_TOP, 0], aligned_edge=UP + RIGHT)
    return owners


RACK_MAX_WIDTH = 10.2
LOAF_GAP = 0.3  # between the loaf (and its label) and the rack's first node box
# The loaf of the gather shot: few slices, tall enough that a sliver per card shows in each.
LOAF_WIDTH, LOAF_SLICE_HEIGHT, LOAF_SLICES = 1.3, 0.42, 6


def _layer_rack(ctx: ShotContext, numbers: Numbers, left: float) -> Rack:
    """The rack at the stage's right, starting right of `left` (the loaf's edge). Five- and
    six-digit GPU names make a rack wider than it was asked to be (16,384 cards: 12.5 wide, and
    its first node box ran under the loaf), so a rack still too wide is drawn smaller."""
    room = ctx.regions.stage.right - left
    rack = rack_of(ctx.theme, numbers, card_height=1.1, max_width=min(RACK_MAX_WIDTH, room))
    if rack.width > room:
        rack.scale(room / rack.width)
    top = max(card.body.get_top()[1] for card in rack.cards.values())
    rack.shift([ctx.regions.stage.right - rack.get_right()[0], CARD_TOP_Y - 0.55 - top, 0])
    return rack


def _bump(ctx: ShotContext, gauges: VGroup, rack: Rack, numbers: Numbers) -> VGroup:
    """The gathered layer on top of each gauge: to scale, but never thinner than a line."""
    scale = next(iter(rack.cards.values())).body.height / float(numbers.get("memory.capacity"))
    height = max(float(numbers.get("memory.gathered_layer")) * scale, 0.05)
    bumps = VGroup()
    for gauge in gauges:
        top = gauge.segments[-1]
        bump = Rectangle(width=top.width, height=height, fill_color=ctx.theme.accent, fill_opacity=1, stroke_width=0)
        bump.next_to(top, UP, buff=0)
        bumps.add(bump)
    return bumps


def _gather(ctx: ShotContext, slots: list[_Slot], color: str | None = None) -> tuple[list, VGroup]:
    """Every card's shard flies to every other card (all-gather)."""
    moves, arrived = [], VGroup()
    for owner, source in enumerate(slots):
        for target in slots:
            if target is source:
                continue
            chip = source.chip(ctx, owner, color)
            arrived.add(chip)
            moves.append(chip.animate.move_to(target.positions[owner]))
    ctx.scene.add(arrived)
    return moves, arrived


def play_gather_layer(ctx: ShotContext, shot: Shot) -> None:
    """FSDP's pass: each layer assembles on every card from its shards, is used and freed;
    backward gathers again and reduce-scatters the gradients back to their owners."""
    theme, numbers = ctx.theme, shot.numbers
    ctx.open_shot(shot.caption)
    ctx.set_stats(
        [
            ("State per card", numbers("{memory.static:GB}"), False),
            ("Gathered layer", numbers("{memory.gathered_layer:GB}"), True),
        ]
    )
    layers = int(numbers.get("model.layers"))
    loaf = Loaf(theme, layers, width=LOAF_WIDTH, slice_height=LOAF_SLICE_HEIGHT, gap=0.06, max_slices=LOAF_SLICES)
    loaf.move_to([ctx.regions.stage.left + 0.75, 0.05, 0])
    loaf_label = label(theme, numbers("{model.layers} layers"), theme.small_size, theme.muted)
    loaf_label.next_to(loaf, DOWN, buff=0.15)
    rack = _layer_rack(ctx, numbers, max(loaf.get_right()[0], loaf_label.get_right()[0]) + LOAF_GAP)
    gauges = rack_gauges(rack, numbers, theme)
    cards = list(rack.cards.values())
    slots = [_Slot(ctx, card, len(cards), i) for i, card in enumerate(cards)]
    own = VGroup(*[slot.chip(ctx, i) for i, slot in enumerate(slots)])
    # the owner key is this shot's colour key (a shard's colour: its card); the memory legend
    # beside it, the caption, the counters and the labels were four layers of text (issue 58: 3)
    owners = placed_owner_key(ctx, len(cards))
    ctx.scene.play(appear(loaf), appear(loaf_label), appear(rack), appear(gauges), appear(owners), run_time=1.0)
    ctx.scene.play(*[appear(s) for s in slots], run_time=0.6)
    # the loaf cut into a sliver per card in every layer; each card's slivers fly to its slot
    cut = cut_slivers(theme, loaf, len(cards))
    play_cut(ctx.scene, loaf, cut, [theme.card_color(i) for i in range(len(cards))], run_time=1.1)
    flights = [
        Transform(sliver.copy(), chip.copy(), remover=True)
        for slivers, chip in zip(cut.pieces, own, strict=True)
        for sliver in slivers
    ]
    ctx.scene.play(*flights, run_time=0.9)
    ctx.scene.add(own)
    marker = Rectangle(
        stroke_color=theme.accent,
        stroke_width=3,
        width=loaf.slices[0].width + 0.12,
        height=max(s.height for s in loaf.slices) + 0.08,
    )
    bump_note = label(
        theme,
        numbers("+{memory.gathered_layer:GB} on every card while the layer is gathered"),
        theme.small_size,
        theme.accent,
    )
    bump_note.next_to(VGroup(*slots), UP, buff=0.22)
    clamp_x(bump_note)
    column: VGroup | None = None

    def at_layer(index: int) -> list:
        slice_index = min(len(loaf.slices) - 1, (index - 1) * len(loaf.slices) // layers)
        return [marker.animate.move_to(loaf.slices[slice_index])] if marker in ctx.scene.mobjects else []

    def phase(title: Phrase, line: str) -> None:
        nonlocal column
        fresh = phase_column(ctx, title, line)
        ctx.scene.play(swap(column, fresh), run_time=0.4)
        column = fresh

    def pass_layer(index: int, forward: bool) -> None:
        direction = "Forward" if forward else "Backward"
        title = numbers.index(direction + " · layer {}", index, "model.layers", one_based=True)
        title = title + numbers(" of {model.layers}")
        if marker not in ctx.scene.mobjects:
            marker.move_to(loaf.slices[0 if forward else -1])
            ctx.scene.play(appear(marker), run_time=0.3)
        phase(title, "all-gather: every card sends its shard to every other card")
        moves, arrived = _gather(ctx, slots)
        bumps = _bump(ctx, gauges, rack, numbers)
        ctx.scene.play(*moves, *at_layer(index), appear(bumps), appear(bump_note), run_time=1.3)
        if forward:
            phase(title, "compute with the whole layer, then free it: keep only your own shard")
            ctx.scene.play(arrived.animate.set_opacity(0.55), run_time=0.5)
            ctx.scene.play(vanish(arrived), vanish(bumps), vanish(bump_note), run_time=0.7)
            return
        phase(title, "compute the gradients of the whole layer, on every card")
        grad = theme.memory["gradients"]
        # (card, shard) -> chip: every card now holds gradients for every shard of the layer
        grads = {(card, shard): slot.chip(ctx, shard, grad) for card, slot in enumerate(slots)
                 for shard in range(len(slots))}  # fmt: skip
        for (card, shard), chip in grads.items():
            chip.move_to(slots[card].positions[shard])
        ctx.scene.play(vanish(arrived), appear(VGroup(*grads.values())), run_time=0.7)
        phase(title, "reduce-scatter: each shard's gradients are summed on the card that owns it")
        flights = [
            chip.animate.move_to(slots[shard].positions[shard]).set_opacity(0)
            for (card, shard), chip in grads.items()
            if card != shard
        ]
        ctx.until("scatter")
        ctx.scene.play(*flights, vanish(bumps), vanish(bump_note), run_time=1.4)
        kept = VGroup(*[chip for (card, shard), chip in grads.items() if card == shard])
        ctx.scene.remove(*[chip for (card, shard), chip in grads.items() if card != shard])
        phase(title, "each card updates only its own shard of the layer")
        ctx.scene.play(vanish(kept), run_time=0.4)

    shown = min(FORWARD_LAYERS_SHOWN, layers)
    for index in range(1, shown + 1):  # the forward layers while the voice tells of them
        ctx.spread("gather", "backward", index - 1, shown + 1)
        pass_layer(index, forward=True)
    if layers > shown:
        phase(
            numbers("… and so on through all {model.layers} layers"), "a single layer whole at a time, never the model"
        )
        ctx.scene.play(marker.animate.move_to(loaf.slices[-1]), run_time=1.2)
    # Backward runs from the last layer to the first.
    ctx.until("backward")
    pass_layer(layers, forward=False)
    if layers > 1:
        back = numbers.index("… and back to layer {}", 1, "model.layers", one_based=True) + numbers(
            " of {model.layers}"
        )
        phase(back, "each layer gathered again, its gradients scattered")
        ctx.scene.play(marker.animate.move_to(loaf.slices[0]), run_time=0.8)
    ctx.leave(
        loaf=VGroup(loaf, *cut.pieces),  # the loaf leaves with its slivers
        loaf_label=loaf_label,
        rack=rack,
        gauges=gauges,
        slots=VGroup(*slots),
        own=own,
        owners=owners,
        marker=marker,
        column=column if column is not None else VGroup(),
    )
