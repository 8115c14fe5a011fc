"""Shot kinds of the FSDP chapter: ZeRO stages one by one (a layer gathering from shards is
gather.py's), and the owner key both draw."""

from __future__ import annotations

import itertools

from manim import (
    RIGHT,
    UP,
    Square,
    Transform,
    VGroup,
)

from dtfilm.numbers import Numbers
from dtfilm.phrases import Phrase
from dtfilm.scene import ShotContext
from dtfilm.shots.common.draw import (
    SHARDED_BY_STAGE,
    build_rack,
    gauge_facts,
    phase_column,
    rack_facts,
    rack_gauges,
    verdict_label,
)
from dtfilm.storyboard import Shot
from dtfilm.visuals.fade import appear, swap, vanish
from dtfilm.visuals.rack import Rack
from dtfilm.visuals.text import label, left_column
from dtfilm.visuals.theme import Theme

STAGE_WORDS = {
    1: ": shard the optimizer state",
    2: ": shard the gradients too",
    3: ": shard the weights too (FSDP)",
}


def _stage_stats(n: Numbers) -> list[Phrase]:
    """shard_steps' stats at one stage: the stage, the state a card keeps, and all a card holds."""
    return [n("ZeRO-{inputs.zero:int}"), n("{memory.static:GB}"), n("{memory.total:GB}")]


def _taken_rack(ctx: ShotContext, first: Numbers) -> tuple[Rack, VGroup, VGroup]:
    """Data parallel's rack, gauges and verdict as the shot before left them, or drawn afresh
    where it left none (or others)."""
    ctx.clear_stage(keep=("rack", "gauges", "verdict"))
    rack = ctx.take("rack", rack_facts(first))
    gauges = ctx.take("gauges", gauge_facts(first)) if rack is not None else None
    taken_verdict = ctx.take("verdict", gauge_facts(first)) if gauges is not None else None
    if rack is None or gauges is None or taken_verdict is None:
        ctx.clear_stage()
        rack = build_rack(ctx.theme, first)
        gauges = rack_gauges(rack, first, ctx.theme)
        taken_verdict = verdict_label(ctx.theme, rack, first)
        ctx.scene.play(appear(rack), appear(gauges), appear(taken_verdict), run_time=1.0)
    return rack, gauges, taken_verdict


def _owner_key_change(
    ctx: ShotContext, gauges: VGroup, owners: VGroup | None, count: int
) -> tuple[list, VGroup | None]:
    """The owner key comes with the first edges in owners' colours, and goes if they do: its
    animations, and the key now shown."""
    if edged_by_owner(gauges) and owners is None:
        owners = placed_owner_key(ctx, count, edged=True)
        return [appear(owners)], owners
    if not edged_by_owner(gauges) and owners is not None:
        return [vanish(owners)], None
    return [], owners


def _stage_column(ctx: ShotContext, numbers: Numbers, column: VGroup | None) -> VGroup:
    """The phase column naming the stage and what it shards, swapped for the last (swapped: at
    33.9 s "ZeRO-3: shard the weights too" crossed "ZeRO-2" as both faded)."""
    words = STAGE_WORDS.get(int(numbers.get("inputs.zero")), "")
    fresh = phase_column(
        ctx, numbers("ZeRO-{inputs.zero:int}") + words, numbers("each card keeps a shard in {plan.shard_group:int}")
    )
    ctx.scene.play(swap(column, fresh), run_time=0.6)
    return fresh


def play_shard_steps(ctx: ShotContext, shot: Shot) -> None:
    """From data parallel's gauges, shard the state stage by stage: each newly sharded part
    leaves every card but for the card's own shard (edged in its colour, which the owner key
    says: a colour means one thing, and the memory legend's are the parts'); gauges fall."""
    theme, steps = ctx.theme, shot.steps
    ctx.show_header()
    first = steps[0]
    rack, gauges, taken_verdict = _taken_rack(ctx, first)
    # no memory legend: the copies shot before named the parts, and beside the caption, the
    # counters and the labels it was a fourth layer of text (issue 58: at most three)
    ctx.set_caption(shot.caption)
    ctx.set_sweep_stats([("Stage", False), ("State per card", False), ("Per card", True)], _stage_stats, steps)
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
        column = _stage_column(ctx, numbers, column)
        ghosts = VGroup(*[seg.copy() for g in gauges for seg in g.segments if seg.part in leaving])
        new_gauges = rack_gauges(rack, numbers, theme)
        new_verdict = verdict_label(theme, rack, numbers, align_right=True)
        keyed, owners = _owner_key_change(ctx, new_gauges, owners, len(rack.cards))
        ctx.scene.add(ghosts)
        ctx.scene.play(
            vanish(ghosts, shift=UP * 0.8, scale=0.6),
            Transform(gauges, new_gauges),
            swap(verdict, new_verdict),
            *keyed,
            *ctx.count_stats(_stage_stats(numbers)),
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
