"""Pieces several shot kinds share: the title card, the rack with gauges, the legend."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from manim import DOWN, LEFT, RIGHT, UP, Animation, Mobject, Square, VGroup

from dtfilm.cost.comm import rank_coordinates
from dtfilm.cost.estimate import MEMORY_PARTS
from dtfilm.numbers import Numbers
from dtfilm.phrases import Phrase, plain
from dtfilm.scene import SLIDE_UNITS, Facts, ShotContext
from dtfilm.storyboard import Shot
from dtfilm.visuals.card import SPILL_CAP
from dtfilm.visuals.fade import appear
from dtfilm.visuals.loaf import Loaf
from dtfilm.visuals.rack import Rack, RackWords
from dtfilm.visuals.regions import regions
from dtfilm.visuals.text import label, left_column, wrapped
from dtfilm.visuals.theme import MEMORY_LABELS, Theme

CARD_HEIGHT = 1.7
CARD_TOP_Y = 0.45  # the capacity line; above it the spill, the verdict, the traffic bar


# A title card's picture (`picture:`, specs.TITLE_PICTURES), drawn by the
# chapter's module: given the card's title and subtitle (laid out, not yet shown), it plays the
# whole card, the subtitle's clauses by reveal_subtitle, and its picture.
TitlePicture = Callable[[ShotContext, Shot, Mobject, Mobject], None]
TITLE_PICTURES: dict[str, TitlePicture] = {}


def title_picture(name: str) -> Callable[[TitlePicture], TitlePicture]:
    """Register the drawing of the title picture `name` (one of specs.TITLE_PICTURES)."""

    def register(draw: TitlePicture) -> TitlePicture:
        TITLE_PICTURES[name] = draw
        return draw

    return register


def play_title(ctx: ShotContext, shot: Shot) -> None:
    """The chapter's title card, centred; the next shot clears it (a title card after another
    shot clears that shot's pieces first, as every other kind does). With `picture`, the
    chapter's module draws the card and its picture (TITLE_PICTURES)."""
    ctx.clear_stage()
    theme = ctx.theme
    title = label(theme, ctx.chapter.title, 56, weight="BOLD")
    subtitle_phrase = (
        shot.options.get("subtitle") or ctx.chapter.subtitle or ctx.chapter.film_title or plain(ctx.chapter.film.title)
    )
    parts = _subtitle_parts(subtitle_phrase) if ctx.has_mark("subtitle2") else [subtitle_phrase]
    # two clauses stand on two lines: on one row, two labels a word space apart read as one
    # label to the layout check, and the eye takes each clause as it comes
    subtitle = VGroup(*[label(theme, part, 28, theme.muted) for part in parts]).arrange(DOWN, buff=0.12)
    group = VGroup(title, subtitle).arrange(DOWN, buff=0.35).move_to(UP * 0.3)
    picture = shot.options.get("picture")
    if picture is not None:  # the title card with what the chapter is about
        TITLE_PICTURES[picture.text](ctx, shot, title, subtitle)
        ctx.set_caption(shot.caption)
        return
    ctx.scene.play(appear(title, shift=UP * SLIDE_UNITS), run_time=1.2)
    reveal_subtitle(ctx, subtitle)
    if ctx.has_mark("again"):  # the voice comes back to what the subtitle says
        ctx.until("again")
        ctx.point_at(subtitle)
        ctx.highlight(subtitle, across=True)
    ctx.leave(title=group)
    ctx.set_caption(shot.caption)


def reveal_subtitle(ctx: ShotContext, subtitle: VGroup, also: dict[str, Sequence[Animation]] | None = None) -> None:
    """The subtitle's clauses, each as the voice says it (mark `subtitle2`: its second clause),
    so the card moves with the voice rather than standing still under it (issue 58); `also`,
    by mark, plays with that clause (a picture's part)."""
    for part, mark in zip(subtitle, ("subtitle", "subtitle2"), strict=False):
        ctx.until(mark)
        ctx.scene.play(appear(part, shift=RIGHT * SLIDE_UNITS), *(also or {}).get(mark, ()), run_time=0.8)
        if len(subtitle) > 1:  # each clause lit as it lands (a pointer's swell barely moves the frame)
            ctx.highlight(part, across=True, hold=0.2)
        else:
            ctx.point_at(part)


def _subtitle_parts(phrase: Phrase) -> list[Phrase]:
    """A subtitle cut after its first comma ("Won't fit," / "and won't finish"), each part with
    the facts it shows; a subtitle with no comma stays whole."""
    head, comma, rest = phrase.text.partition(", ")
    if not comma:
        return [phrase]
    first = Phrase(head + ",", tuple(f for f in phrase.facts if f.shown in head), phrase.over)
    return [first, Phrase(rest, tuple(f for f in phrase.facts if f.shown in rest), phrase.over)]


def named_index(numbers: Numbers, template: str, bound: str, index: int) -> Phrase:
    """`numbers.index(template, index, bound)`: with functools.partial, a name for any card or
    node that pickles, as a scene's state kept at a shot's start must (dtfilm.onscreen.scene_state)."""
    return numbers.index(template, index, bound)


def rack_words(numbers: Numbers) -> RackWords:
    """A rack's words from the cost model: card and node names checked against their counts."""
    return RackWords(
        card=partial(named_index, numbers, "GPU {}", "cluster.cards"),
        node=partial(named_index, numbers, "Node {}", "cluster.nodes"),
        intra_link=numbers("{cluster.intra_node_link_label}"),
        cards_per_node=numbers("{cluster.cards_per_node:int} cards"),
        inter_link=numbers("{cluster.inter_node_link_label}"),
        nodes=numbers("{cluster.nodes:int} nodes"),
    )


def rack_of(theme: Theme, numbers: Numbers, card_height: float = 2.0, max_width: float = 12.6) -> Rack:
    """The cluster's rack as the cost model has it (cards, nodes, links)."""
    cards, per_node = int(numbers.get("cluster.cards")), int(numbers.get("cluster.cards_per_node"))
    return Rack(theme, cards, per_node, rack_words(numbers), card_height=card_height, max_width=max_width)


def build_rack(theme: Theme, numbers: Numbers) -> Rack:
    rack = rack_of(theme, numbers, card_height=CARD_HEIGHT)
    top = max(card.body.get_top()[1] for card in rack.cards.values())
    rack.move_to([0, rack.get_center()[1] + CARD_TOP_Y - top, 0])
    return rack


def facts_of(numbers: Numbers, *paths: str) -> Facts:
    """The values at `paths`: what a handed-on piece was drawn for (see ShotContext.take)."""
    return tuple((path, numbers.get(path)) for path in paths)


def rack_facts(numbers: Numbers) -> Facts:
    return facts_of(
        numbers,
        "cluster.cards",
        "cluster.cards_per_node",
        "cluster.intra_node_link_label",
        "cluster.inter_node_link_label",
    )


def gauge_facts(numbers: Numbers) -> Facts:
    """A rack's gauges and verdict: the rack, each card's ledger, the card and how the state is sharded."""
    paths = [f"memory.{part}" for part in MEMORY_PARTS]
    stages = tuple(tuple(sorted(stage.items())) for stage in stage_ledgers(numbers))
    layout = facts_of(numbers, "plan.tp", "plan.cp", "plan.pp")
    return (
        rack_facts(numbers)
        + facts_of(numbers, *paths, "memory.capacity", "inputs.zero", "plan.shard_group")
        + layout
        + (("memory.stages", stages),)
    )


def ledger(numbers: Numbers) -> dict[str, float]:
    """The busiest card's ledger (the one the verdict and the stats speak of)."""
    return {part: float(numbers.get(f"memory.{part}")) for part in MEMORY_PARTS}


def stage_ledgers(numbers: Numbers) -> list[dict[str, float]]:
    """One ledger per pipeline stage (`memory.stages`); the busiest card's alone where the
    estimate has no breakdown."""
    if not numbers.has("memory.stages"):
        return [ledger(numbers)]
    return [{part: float(stage[part]) for part in MEMORY_PARTS} for stage in numbers.get_list("memory.stages")]


def card_stage(numbers: Numbers, rank: int) -> int:
    """The pipeline stage of the card `rank`, in the layout's rank order (tp fastest, then cp,
    then pp, then dp: dtfilm.cost.comm.rank_coordinates, as the 3D chapter's grid draws it)."""
    degrees = {g: int(numbers.get(f"plan.{g}")) for g in ("tp", "cp", "pp")}
    return rank_coordinates(rank, degrees["tp"], degrees["cp"], degrees["pp"])["pp"]


def group_card(numbers: Numbers, group: str, index: int) -> int:
    """The card the layout gives place `index` of `group` with every other coordinate 0 (the
    inverse of rank_coordinates: stage 1 under tp 8 is GPU 8, cp rank 2 under tp 2 is GPU 4)."""
    degrees = {g: int(numbers.get(f"plan.{g}")) for g in ("tp", "cp", "pp")}
    stride = {"tp": 1, "cp": degrees["tp"], "pp": degrees["tp"] * degrees["cp"]}.get(
        group, degrees["tp"] * degrees["cp"] * degrees["pp"]
    )
    return index * stride


def stage_card(numbers: Numbers, stage: int) -> int:
    """The card of a pipeline stage's first replica and slice."""
    return group_card(numbers, "pp", stage)


def group_gpu(numbers: Numbers, group: str, index: int, template: str = "GPU {}") -> Phrase:
    """A group member's card by the name the layout gives it ("GPU 8"), checked against the card count."""
    return numbers.index(template, group_card(numbers, group, index), "cluster.cards")


def stage_gpu(numbers: Numbers, stage: int, template: str = "GPU {}") -> Phrase:
    return group_gpu(numbers, "pp", stage, template)


def card_ledger(numbers: Numbers, rank: int) -> dict[str, float]:
    """The ledger of the card `rank`: its own pipeline stage's (a last stage holds fewer
    micro-batches of activations than the first)."""
    stages = stage_ledgers(numbers)
    return stages[card_stage(numbers, rank) % len(stages)]


SHARDED_BY_STAGE = {
    0: (),
    1: ("master_weights", "adam_m", "adam_v"),
    2: ("gradients", "master_weights", "adam_m", "adam_v"),
    3: ("weights", "gradients", "master_weights", "adam_m", "adam_v"),
}


def rack_gauges(rack: Rack, numbers: Numbers, theme: Theme | None = None) -> VGroup:
    """One gauge per drawn card, each with its own stage's ledger (the data-parallel and tensor
    ranks of a stage hold the same; the pipeline's stages do not). Under ZeRO the sharded parts
    are edged in each card's own colour (its shard)."""
    capacity = float(numbers.get("memory.capacity"))
    sharded = SHARDED_BY_STAGE[int(numbers.get("inputs.zero"))] if numbers.get("plan.shard_group") > 1 else ()
    gauges = VGroup()
    for rank, card in rack.cards.items():
        outline = {part: theme.card_color(rank) for part in sharded} if theme else None
        gauges.add(card.gauge(card_ledger(numbers, rank), capacity, outline))
    return gauges


def verdict_label(theme: Theme, rack: Rack, numbers: Numbers, align_right: bool = False) -> VGroup:
    """Above the cards: how far over the card the ledger is, or how much is spare."""
    if numbers.get("memory.fits"):
        phrase = numbers("Fits, with {memory.headroom:bytes} to spare")
        color = theme.text
    else:
        phrase = numbers("{memory.total:GB} per card: {memory.over_capacity:x} the card")
        color = theme.oom
    text = label(theme, phrase, theme.label_size, color, weight="BOLD")
    y = CARD_TOP_Y + SPILL_CAP * CARD_HEIGHT + 0.38
    if align_right:
        # At the right margin, clear of the phase column at the left whatever the rack's width.
        right = max(rack.get_right()[0], regions(theme).stage.right - 0.1)
        text.move_to([right, y, 0], aligned_edge=RIGHT)
    else:
        text.move_to([rack.get_center()[0], y, 0])
    return text


def phase_column(
    ctx: ShotContext, title: Phrase | str, *lines: Phrase | str, top: float | None = None, wrap: bool = False
) -> VGroup:
    """What is happening now, at the left margin: a bold title over muted lines (a last line
    after the first is the counter, in the accent colour). `wrap` keeps every line inside the
    side region, each wrapped onto as many lines as it needs (the chapters before the region
    existed lay their stage out around unwrapped lines)."""
    theme = ctx.theme
    colours = [theme.muted, *[theme.accent] * (len(lines) - 1)]
    width = ctx.regions.side.width

    def line_of(text: Phrase | str, size: float, colour: str, weight: str = "NORMAL") -> VGroup:
        shown = label(theme, text, size, colour, weight=weight)
        if not wrap or shown.width <= width:
            return shown
        phrase = plain(text) if isinstance(text, str) else text
        return wrapped(theme, phrase, size, width, colour, left_aligned=True)

    column = left_column(
        line_of(title, theme.caption_size, theme.text, "BOLD"),
        *[line_of(line, theme.small_size, colour) for line, colour in zip(lines, colours, strict=True)],
        buff=0.1,
    )
    return ctx.regions.side.part(top=top).place(column, UP + LEFT)


def legend(theme: Theme, parts: tuple[str, ...] = MEMORY_PARTS) -> VGroup:
    """The memory colours, once per chapter."""
    items = VGroup()
    for part in parts:
        swatch = Square(0.22, fill_color=theme.memory[part], fill_opacity=1, stroke_width=0)
        name = label(theme, MEMORY_LABELS[part], theme.small_size, theme.muted)
        items.add(VGroup(swatch, name).arrange(RIGHT, buff=0.12))
    items.arrange(RIGHT, buff=0.45)
    items.text_layer = "legend"  # (the design check's layers: dtfilm.onscreen.design)
    return regions(theme).stage.place(items, DOWN)


def loaf_ends(theme: Theme, numbers: Numbers, loaf: Loaf) -> VGroup:
    """Left of the loaf, what its first and last slices stand for ("layers 1–4", "layers 29–32"),
    so that a slice is read as the run of layers it is, whatever the grouping."""
    ends = VGroup()
    for index in sorted({0, len(loaf.slices) - 1}):
        first, last = loaf.layer_span(index)
        text = numbers.index("layer {}" if first == last else "layers {}", first, "model.layers", one_based=True)
        if first != last:
            text = text + "–" + numbers.index("{}", last, "model.layers", one_based=True)
        ends.add(label(theme, text, theme.small_size, theme.muted).next_to(loaf.slices[index], LEFT, buff=0.35))
    return ends
