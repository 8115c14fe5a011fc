"""The FSDP chapter's gather_layer kind: each layer assembled on every card from its shards, used
and freed; backward gathers it again and reduce-scatters the gradients to their owners."""

from __future__ import annotations

from manim import DOWN, UP, Rectangle, Transform, VGroup

from dtfilm.numbers import Numbers
from dtfilm.phrases import Phrase
from dtfilm.scene import ShotContext
from dtfilm.shots.common.draw import CARD_TOP_Y, phase_column, rack_gauges, rack_of
from dtfilm.shots.fsdp.draw import placed_owner_key
from dtfilm.storyboard import Shot
from dtfilm.visuals.card import CardBox
from dtfilm.visuals.fade import appear, swap, vanish
from dtfilm.visuals.loaf import Loaf
from dtfilm.visuals.rack import Rack
from dtfilm.visuals.slicing import Cut, cut_slivers, play_cut
from dtfilm.visuals.text import clamp_x, label

FORWARD_LAYERS_SHOWN = 3  # layers the forward pass is shown for, one by one; then "and so on"


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


def _shards_to_slots(ctx: ShotContext, loaf: Loaf, own: VGroup) -> Cut:
    """The loaf cut into a sliver per card in every layer; each card's slivers fly to its slot and
    become its own shard there. The cut (its slivers stay on the loaf)."""
    theme, count = ctx.theme, len(own)
    cut = cut_slivers(theme, loaf, count)
    play_cut(ctx.scene, loaf, cut, [theme.card_color(i) for i in range(count)], run_time=1.1)
    flights = [
        Transform(sliver.copy(), chip.copy(), remover=True)
        for slivers, chip in zip(cut.pieces, own, strict=True)
        for sliver in slivers
    ]
    ctx.scene.play(*flights, run_time=0.9)
    ctx.scene.add(own)
    return cut


class _LayerPasses:
    """The layers passing on screen: the marker on the loaf at the layer playing, the phase column
    saying what each step does, and the shards gathered, used, freed or scattered over the slots."""

    def __init__(
        self, ctx: ShotContext, numbers: Numbers, loaf: Loaf, rack: Rack, gauges: VGroup, slots: list[_Slot]
    ) -> None:
        theme = ctx.theme
        self.ctx, self.numbers, self.loaf, self.rack, self.gauges, self.slots = ctx, numbers, loaf, rack, gauges, slots
        self.layers = int(numbers.get("model.layers"))
        self.marker = Rectangle(
            stroke_color=theme.accent,
            stroke_width=3,
            width=loaf.slices[0].width + 0.12,
            height=max(s.height for s in loaf.slices) + 0.08,
        )
        self.bump_note = label(
            theme,
            numbers("+{memory.gathered_layer:GB} on every card while the layer is gathered"),
            theme.small_size,
            theme.accent,
        )
        self.bump_note.next_to(VGroup(*slots), UP, buff=0.22)
        clamp_x(self.bump_note)
        self.column: VGroup | None = None

    def at_layer(self, index: int) -> list:
        """The marker's move to layer `index`'s slice of the loaf, once it is drawn."""
        loaf = self.loaf
        slice_index = min(len(loaf.slices) - 1, (index - 1) * len(loaf.slices) // self.layers)
        return [self.marker.animate.move_to(loaf.slices[slice_index])] if self.marker in self.ctx.scene.mobjects else []

    def phase(self, title: Phrase, line: str) -> None:
        """The phase column swapped for one saying `title` and `line`."""
        fresh = phase_column(self.ctx, title, line)
        self.ctx.scene.play(swap(self.column, fresh), run_time=0.4)
        self.column = fresh

    def _gathered(self, index: int, forward: bool) -> tuple[Phrase, VGroup, VGroup]:
        """Layer `index` all-gathered on every card, the gathered layer on top of each gauge: the
        phase's title, the shards arrived and the bumps."""
        ctx, numbers = self.ctx, self.numbers
        direction = "Forward" if forward else "Backward"
        title = numbers.index(direction + " · layer {}", index, "model.layers", one_based=True)
        title = title + numbers(" of {model.layers}")
        if self.marker not in ctx.scene.mobjects:
            self.marker.move_to(self.loaf.slices[0 if forward else -1])
            ctx.scene.play(appear(self.marker), run_time=0.3)
        self.phase(title, "all-gather: every card sends its shard to every other card")
        moves, arrived = _gather(ctx, self.slots)
        bumps = _bump(ctx, self.gauges, self.rack, numbers)
        ctx.scene.play(*moves, *self.at_layer(index), appear(bumps), appear(self.bump_note), run_time=1.3)
        return title, arrived, bumps

    def forward(self, index: int) -> None:
        """Layer `index` gathered, computed with whole, then freed: each card keeps its own shard."""
        title, arrived, bumps = self._gathered(index, forward=True)
        self.phase(title, "compute with the whole layer, then free it: keep only your own shard")
        self.ctx.scene.play(arrived.animate.set_opacity(0.55), run_time=0.5)
        self.ctx.scene.play(vanish(arrived), vanish(bumps), vanish(self.bump_note), run_time=0.7)

    def backward(self, index: int) -> None:
        """Layer `index` gathered again, its gradients computed on every card for every shard, then
        reduce-scattered each to the card that owns it, which updates its shard alone."""
        ctx, slots = self.ctx, self.slots
        title, arrived, bumps = self._gathered(index, forward=False)
        self.phase(title, "compute the gradients of the whole layer, on every card")
        grad = ctx.theme.memory["gradients"]
        # (card, shard) -> chip: every card now holds gradients for every shard of the layer
        grads = {(card, shard): slot.chip(ctx, shard, grad) for card, slot in enumerate(slots)
                 for shard in range(len(slots))}  # fmt: skip
        for (card, shard), chip in grads.items():
            chip.move_to(slots[card].positions[shard])
        ctx.scene.play(vanish(arrived), appear(VGroup(*grads.values())), run_time=0.7)
        self.phase(title, "reduce-scatter: each shard's gradients are summed on the card that owns it")
        flights = [
            chip.animate.move_to(slots[shard].positions[shard]).set_opacity(0)
            for (card, shard), chip in grads.items()
            if card != shard
        ]
        ctx.until("scatter")
        ctx.scene.play(*flights, vanish(bumps), vanish(self.bump_note), run_time=1.4)
        kept = VGroup(*[chip for (card, shard), chip in grads.items() if card == shard])
        ctx.scene.remove(*[chip for (card, shard), chip in grads.items() if card != shard])
        self.phase(title, "each card updates only its own shard of the layer")
        ctx.scene.play(vanish(kept), run_time=0.4)


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
    cut = _shards_to_slots(ctx, loaf, own)
    passes = _LayerPasses(ctx, numbers, loaf, rack, gauges, slots)
    shown = min(FORWARD_LAYERS_SHOWN, layers)
    for index in range(1, shown + 1):  # the forward layers while the voice tells of them
        ctx.spread("gather", "backward", index - 1, shown + 1)
        passes.forward(index)
    if layers > shown:
        passes.phase(
            numbers("… and so on through all {model.layers} layers"), "a single layer whole at a time, never the model"
        )
        ctx.scene.play(passes.marker.animate.move_to(loaf.slices[-1]), run_time=1.2)
    # Backward runs from the last layer to the first.
    ctx.until("backward")
    passes.backward(layers)
    if layers > 1:
        back = numbers.index("… and back to layer {}", 1, "model.layers", one_based=True) + numbers(
            " of {model.layers}"
        )
        passes.phase(back, "each layer gathered again, its gradients scattered")
        ctx.scene.play(passes.marker.animate.move_to(loaf.slices[0]), run_time=0.8)
    ctx.leave(
        loaf=VGroup(loaf, *cut.pieces),  # the loaf leaves with its slivers
        loaf_label=loaf_label,
        rack=rack,
        gauges=gauges,
        slots=VGroup(*slots),
        own=own,
        owners=owners,
        marker=passes.marker,
        column=passes.column if passes.column is not None else VGroup(),
    )
