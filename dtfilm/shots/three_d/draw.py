"""Shot kinds of the 3D chapter: the loaf cut both ways onto a grid of cards, each group's
traffic over its link, and the planner's pick walked down the decision tree."""

# Over 400 lines (issue 61): three kinds on one grid of cards (its cut, its traffic, the planner's walk)
# (a kind splits into a folder of its own when it grows)

from __future__ import annotations

import math
from functools import partial
from itertools import pairwise

from manim import (
    DOWN,
    LEFT,
    PI,
    RIGHT,
    UP,
    Arrow,
    Create,
    CurvedArrow,
    Indicate,
    LaggedStart,
    Line,
    Rectangle,
    ReplacementTransform,
    VGroup,
)

from dtfilm.cost.comm import rank_coordinates
from dtfilm.numbers import Numbers
from dtfilm.phrases import Phrase, plain
from dtfilm.scene import SLIDE_UNITS, Facts, ShotContext
from dtfilm.shots.common.draw import facts_of, named_index, rack_facts
from dtfilm.shots.strategies import DECISION_TREE, GROUP_NAMES, TREE_ENDS, TREE_LAST_QUESTIONS
from dtfilm.storyboard import Shot
from dtfilm.visuals.fade import appear, vanish
from dtfilm.visuals.grid import GROUP_ORDER, GridWords, NodeGap, PlanGrid, SlicedLoaf, grid_key, shown_groups
from dtfilm.visuals.palette import legible
from dtfilm.visuals.regions import regions
from dtfilm.visuals.text import label, left_column, relabel, wrapped
from dtfilm.visuals.theme import DARK, FRAME_WIDTH, Theme

GRID_RIGHT = regions(DARK).stage.right - 0.1  # the themes share their margins
GRID_TOP = 2.45
PANEL_WIDTH = 2.75
GROUPS = ("tp", "cp", "pp", "dp")


def plan_degrees(numbers: Numbers) -> dict[str, int]:
    return {g: int(numbers.get(f"plan.{g}")) for g in ("dp", "tp", "pp", "cp")}


def coordinates_phrase(numbers: Numbers, rank: int) -> Phrase:
    """ "(1, 0, 2)": the card's dp, tp, pp (and cp) ranks, each an index into its degree."""
    degrees = plan_degrees(numbers)
    place = rank_coordinates(rank, degrees["tp"], degrees["cp"], degrees["pp"])
    phrase = Phrase("(")
    for i, group in enumerate(shown_groups(degrees)):
        phrase = phrase + ("" if i == 0 else ", ") + numbers.index("{}", place[group], f"plan.{group}")
    return phrase + ")"


def index_range(numbers: Numbers, one: str, many: str, first: int, last: int, bound: str) -> Phrase:
    """ "replica 3" or "replicas 1 to 6": positions within the count at `bound`."""
    if first == last:
        return numbers.index(one + " {}", first, bound)
    return numbers.index(many + " {}", first, bound) + numbers.index(" to {}", last, bound)


def gap_words(numbers: Numbers, gap: NodeGap) -> Phrase:
    """What a gap of nodes left out holds: "⋯ nodes 1 to 2: stages 1 to 2 ⋯" inside the first
    replica, "⋯ nodes 4 to 30: replicas 1 to 6 ⋯" between the data-parallel group's nodes."""
    words = "⋯ " + index_range(numbers, "node", "nodes", gap.first, gap.last, "cluster.nodes")
    if gap.stages is not None:
        words = words + ": " + index_range(numbers, "stage", "stages", *gap.stages, "plan.pp")
    if gap.replicas is not None:
        words = words + ": " + index_range(numbers, "replica", "replicas", *gap.replicas, "plan.dp")
    return words + " ⋯"


def plan_grid(theme: Theme, numbers: Numbers, **size: float) -> PlanGrid:
    """The plan's cards in their nodes, each named and with its coordinates, from the cost model."""
    words = GridWords(
        card=partial(named_index, numbers, "GPU {}", "cluster.cards"),
        coordinates=partial(coordinates_phrase, numbers),
        node=partial(named_index, numbers, "Node {}", "cluster.nodes"),
        replicas=partial(index_range, numbers, "replica", "replicas", bound="plan.dp"),
        intra_link=numbers("{cluster.intra_node_link_label}"),
        gap=partial(gap_words, numbers),
    )
    cards, per_node = int(numbers.get("cluster.cards")), int(numbers.get("cluster.cards_per_node"))
    return PlanGrid(theme, plan_degrees(numbers), cards, per_node, words, **size)


PLAN_ORDER = ("dp", "tp", "pp", "cp")  # the film's one tuple order, the contract's (coordinates, the tree)


def plan_shape(degrees: dict[str, int]) -> tuple[str, str]:
    """The stat's name and template for a plan's degrees: "dp × tp × pp" and its values (cp
    only where the sequence is split)."""
    groups = [g for g in PLAN_ORDER if g != "cp" or degrees["cp"] > 1]
    return " × ".join(groups), " × ".join(f"{{plan.{g}}}" for g in groups)


def _plan_stats(ctx: ShotContext, numbers: Numbers) -> None:
    shape, values = plan_shape(plan_degrees(numbers))
    ctx.set_stats([(shape, numbers(values), False), ("Per card", numbers("{memory.total:GB}"), True)])


GRID_LEFT, GRID_BOTTOM = -3.75, -2.75  # the room beside the panel at the left


def _place_grid(grid: PlanGrid, top: float = GRID_TOP) -> PlanGrid:
    """Right-aligned under `top`; shrunk (only ever a little: long coordinates, many nodes)
    when it would not fit beside the panel."""
    if grid.width > GRID_RIGHT - GRID_LEFT:
        grid.scale_to_fit_width(GRID_RIGHT - GRID_LEFT)
    if grid.height > top - GRID_BOTTOM:
        grid.scale_to_fit_height(top - GRID_BOTTOM)
    grid.move_to([GRID_RIGHT, top, 0], aligned_edge=RIGHT + UP)
    return grid


def _grid_key(ctx: ShotContext, numbers: Numbers, grid: PlanGrid) -> VGroup:
    key = grid_key(ctx.theme, plan_degrees(numbers), grid.named)
    key.move_to([ctx.regions.side.left, GRID_BOTTOM + 0.2, 0], aligned_edge=LEFT)
    return key


def play_loaf_to_grid(ctx: ShotContext, shot: Shot) -> None:
    """The loaf cut into pipeline stages (across) and tensor slices (down); every card gets a
    map of the loaf with its own piece, and its coordinates."""
    theme, numbers = ctx.theme, shot.numbers
    ctx.open_shot(shot.caption)
    _plan_stats(ctx, numbers)
    degrees = plan_degrees(numbers)
    loaf, stage_names = sliced_loaf(theme, numbers, ctx.regions.side.left + 0.8)
    layers = left_column(
        label(theme, numbers("{model.label}"), theme.small_size, theme.text),
        label(theme, numbers("{model.layers} layers"), theme.small_size, theme.muted),
    )
    layers.next_to(loaf, UP, buff=0.2).align_to(loaf, LEFT)
    ctx.scene.play(appear(layers), LaggedStart(*[appear(b) for b in loaf.bands], lag_ratio=0.25), run_time=1.2)
    # the cluster, as the voice names its nodes and cards: the pieces travel onto it at [pieces]
    grid = _place_grid(plan_grid(theme, numbers))
    owns = {rank: piece_map.own for rank, piece_map in grid.maps.items()}
    for rank, piece_map in grid.maps.items():
        piece_map.remove(owns[rank])
    key = _grid_key(ctx, numbers, grid)
    ctx.scene.play(appear(grid), appear(key), run_time=1.0)
    # [across]: the knife between the stages, lines across the loaf, and each stage named;
    # [down]: the knife between the tensor slices, lines down through every stage. (Both were
    # shown as the whole loaf swelling at once, which read the same, rows, at either mark.)
    across, down = loaf.cuts("across", theme.accent), loaf.cuts("down", theme.accent)
    ctx.until("across")
    ctx.scene.play(appear(stage_names), *[Create(c) for c in across], run_time=0.8)
    if len(across):  # the stages cut, lit with their names; then each stage in turn, unswollen
        ctx.highlight(VGroup(loaf, stage_names))
        ctx.scene.play(
            LaggedStart(*[Indicate(b, color=theme.accent, scale_factor=1.0) for b in loaf.bands], lag_ratio=0.3),
            run_time=1.2,
        )
    ctx.until("down")
    if len(down):
        ctx.scene.play(across.animate.set_stroke(theme.muted), *[Create(c) for c in down], run_time=0.8)
        ctx.highlight(VGroup(loaf, stage_names))  # the slices cut down it, lit; then each slice in turn
        columns = [VGroup(*[p for (_, piece), p in loaf.pieces.items() if piece == i]) for i in range(degrees["tp"])]
        lit = [Indicate(c, color=theme.accent, scale_factor=1.0) for c in columns]  # no swell: columns stay apart
        ctx.scene.play(LaggedStart(*lit, lag_ratio=0.3), run_time=1.2)

    ctx.until("pieces")
    moves = []
    for rank, own in owns.items():
        stage, piece = _stage_piece(grid, rank)
        moves.append(ReplacementTransform(loaf.pieces[(stage, piece)].copy(), own))
    ctx.scene.play(LaggedStart(*moves, lag_ratio=0.08), run_time=min(8.0, max(3.0, ctx.seconds_until("replica"))))
    for rank, own in owns.items():
        ctx.scene.remove(own)
        grid.maps[rank].add(own)
    if ctx.has_mark("replica") and len(grid.node_rows) > 1:  # the nodes after the first, as the voice
        ctx.until("replica")  # says they hold the same pieces again (or which pieces they hold)
        ctx.highlight(*grid.node_rows[1:])
    ctx.leave(loaf=VGroup(loaf, stage_names, layers, across, down), key=key)
    ctx.hand_on("grid", grid, grid_facts(numbers))


LOAF_HEIGHT = 3.2  # the sliced loaf's bands and gaps, whatever the stages
STAGE_NAME_GAP = 0.06  # between two stage names, one over the other


def _named_stages(pp: int, pitch: float, name_height: float) -> list[int]:
    """The stages named beside the loaf: every one where the names fit one per band, else every
    k-th (and the last), k the fewest bands a name and its gap need; a name that would come too
    close above the last one is left out."""
    every = max(1, math.ceil((name_height + STAGE_NAME_GAP) / pitch - 1e-9))
    named = list(range(0, pp, every))
    if named[-1] != pp - 1:
        if (pp - 1 - named[-1]) < every:
            named.pop()
        named.append(pp - 1)
    return named


def sliced_loaf(theme: Theme, numbers: Numbers, x: float) -> tuple[SlicedLoaf, VGroup]:
    """The loaf cut into the plan's stages and slices, centred at `x`, and its stages' names
    beside it (as many as stand apart)."""
    degrees = plan_degrees(numbers)
    pitch = LOAF_HEIGHT / degrees["pp"]  # a band and the gap under it; up to a stage a layer
    gap = min(0.1, pitch * 0.25)
    loaf = SlicedLoaf(theme, degrees["pp"], degrees["tp"], width=1.6, band_height=min(0.4, pitch - gap), gap=gap)
    loaf.move_to([x, 0.1, 0])
    stage_names = VGroup()
    for stage in _named_stages(degrees["pp"], pitch, label(theme, "stage 0", theme.small_size).height):
        colour = legible(theme.card_color(stage), theme.background)  # (the light theme's lime: 3:1 on white)
        name = label(theme, numbers.index("stage {}", stage, "plan.pp"), theme.small_size, colour)
        name.next_to(loaf.bands[stage], RIGHT, buff=0.12)
        stage_names.add(name)
    return loaf, stage_names


def _stage_piece(grid: PlanGrid, rank: int) -> tuple[int, int]:
    own = grid.maps[rank].own
    assert own is not None
    return own.stage_piece


def _connections(grid: PlanGrid, numbers: Numbers, group: str) -> list[tuple[int, int]]:
    """Pairs of drawn cards in one `group` that are next to each other among its drawn members
    (rank, a later rank in the group): neighbours, or the two around nodes left out."""
    degrees = plan_degrees(numbers)
    stride = {"tp": 1, "cp": degrees["tp"], "pp": degrees["tp"] * degrees["cp"]}.get(
        group, degrees["tp"] * degrees["cp"] * degrees["pp"]
    )
    members: dict[tuple[int, int], list[int]] = {}
    for rank in sorted(grid.cards):  # a group: the same rank below its stride, the same block above
        members.setdefault((rank % stride, rank // (stride * degrees[group])), []).append(rank)
    return [(a, b) for drawn in members.values() for a, b in pairwise(drawn)]


def _connector(ctx: ShotContext, grid: PlanGrid, a: int, b: int, width: float) -> VGroup:
    theme = ctx.theme
    card_a, card_b = grid.cards[a].body, grid.cards[b].body
    same_node = grid.node_of[a] == grid.node_of[b]
    if same_node and abs(grid.slot_of[a] - grid.slot_of[b]) == 1:  # side by side, or "⋯" between
        bar = Line(card_a.get_bottom() + DOWN * 0.09, card_b.get_bottom() + DOWN * 0.09, color=theme.traffic_ink)
        return VGroup(bar.set_stroke(width=width))
    if same_node:
        arc = CurvedArrow(
            card_a.get_top() + UP * 0.05,
            card_b.get_top() + UP * 0.05,
            angle=-PI / 3,
            color=theme.traffic_ink,
            tip_length=0.14,
        )
        return VGroup(arc.set_stroke(width=width))
    start, end = card_a.get_bottom(), card_b.get_top()
    gap = grid.gap_after.get(grid.node_of[a])
    if gap is not None:  # the line from card to card, stopped short of the words for the nodes between
        middle = gap.get_center()[1]

        def at(y: float) -> list[float]:  # the point of the straight line at height y: a slant stays a slant
            share = (start[1] - y) / (start[1] - end[1])
            return [start[0] + share * (end[0] - start[0]), y, 0]

        return VGroup(
            Line(start, at(middle + 0.22), color=theme.traffic_ink).set_stroke(width=width),
            Line(at(middle - 0.22), end, color=theme.traffic_ink).set_stroke(width=width),
        )
    return VGroup(Line(start, end, color=theme.traffic_ink).set_stroke(width=width))


PIPE_LENGTH = PANEL_WIDTH * 0.8  # the most bytes any group sends a step; the rest to the same scale
SCALE_NOTE = "length: bytes a step · thickness: bandwidth"


def _group_entry(theme: Theme, numbers: Numbers, group: str, widest: float, most_bytes: float) -> VGroup:
    """A group's title, its link, and its traffic as a pipe: as long as the bytes its card sends
    a step (the group that sends most fills the panel's width, a faint track shows that scale)
    and as thick as its link's bandwidth (the widest link used is the thickest)."""
    link = str(numbers.get(f"comm.links.{group}"))
    bandwidth = float(numbers.get(f"links.{link}.per_card_bandwidth"))
    sent = float(numbers.get(f"comm.{group}"))
    title = label(theme, GROUP_NAMES[group], theme.label_size, theme.text, weight="BOLD")
    thickness = max(0.5 * bandwidth / widest, 0.025)
    length = PIPE_LENGTH * sent / most_bytes if most_bytes > 0 else 0.0
    track = Rectangle(width=PIPE_LENGTH, height=thickness, stroke_color=theme.faint, stroke_width=1, fill_opacity=0)
    pipe = Rectangle(
        width=max(length, 1e-3),  # a group that sends nothing draws no pipe (nothing to see)
        height=thickness,
        fill_color=theme.traffic_ink,
        fill_opacity=0.85,
        stroke_width=0,
    )
    pipe.move_to(track, aligned_edge=LEFT)
    pipe.bytes_drawn = sent
    over = label(theme, numbers(f"over {{comm.link_labels.{group}}}"), theme.small_size, theme.muted)
    traffic = label(
        theme,
        numbers(f"{{comm.{group}:GB}} · {{comm.seconds_by_group.{group}:time}} a step"),
        theme.small_size,
        theme.text,
    )
    entry = left_column(title, over, VGroup(track, pipe), traffic, buff=0.1)
    entry.title, entry.pipe, entry.track, entry.traffic = title, pipe, track, traffic
    return entry


def group_entries(theme: Theme, numbers: Numbers, groups: list[str]) -> VGroup:
    """Every shown group's entry, on one scale of bytes and one of bandwidth."""
    links = {str(numbers.get(f"comm.links.{g}")) for g in groups}
    widest = max(float(numbers.get(f"links.{link}.per_card_bandwidth")) for link in links)
    most_bytes = max(float(numbers.get(f"comm.{g}")) for g in groups)
    return VGroup(*[_group_entry(theme, numbers, g, widest, most_bytes) for g in groups]).arrange(
        DOWN, aligned_edge=LEFT, buff=0.35
    )


def grid_facts(numbers: Numbers) -> Facts:
    """What a plan grid shows: the degrees, the cards in their nodes and the node's link."""
    degrees = [f"plan.{g}" for g in GROUP_ORDER]
    return rack_facts(numbers) + facts_of(numbers, *degrees)


def _said_figures(ctx: ShotContext, group: str, entry: VGroup, wires: VGroup, first: VGroup) -> None:
    """A group's figures as the voice says them, each at its mark where the narration has it:
    its wires again as it says how often they talk, its bytes and seconds, and both measured
    against the first group's (the pipes' lengths for bytes, the written seconds for time)."""
    if ctx.has_mark(f"{group}_often"):
        ctx.until(f"{group}_often")
        ctx.point_at(wires, scale=1.1)
    if ctx.has_mark(f"{group}_bytes"):
        ctx.until(f"{group}_bytes")
        ctx.highlight(entry.traffic)
    if entry is first:
        return
    if ctx.has_mark(f"{group}_vs_bytes"):
        ctx.until(f"{group}_vs_bytes")
        ctx.point_at(first.pipe, entry.pipe, scale=1.1)
        ctx.highlight(first.track, entry.track)  # a thin pipe's swell barely shows: the two lit side by side
    if ctx.has_mark(f"{group}_seconds"):
        ctx.until(f"{group}_seconds")
        ctx.highlight(entry.traffic)
    if ctx.has_mark(f"{group}_vs_seconds"):
        ctx.until(f"{group}_vs_seconds")
        ctx.highlight(first.traffic, entry.traffic)
        ctx.relight(first.traffic)  # the first group's seconds, as the sentence ends on them


HIDDEN_STILL_SECONDS = 3.0  # a sentence this long after [hidden] lights the figures again halfway


def play_group_links(ctx: ShotContext, shot: Shot) -> None:
    """One group at a time: its cards joined over its link, and at the left its link as a
    pipe as long as the bytes each card sends a step and as thick as its bandwidth (both to a
    scale shared by the groups, said above them), with the bytes and seconds written out."""
    theme, numbers = ctx.theme, shot.numbers
    ctx.open_shot(shot.caption, keep=("grid",))
    grid = ctx.take("grid", grid_facts(numbers))
    if grid is None:
        _plan_stats(ctx, numbers)
        grid = _place_grid(plan_grid(theme, numbers))
        ctx.scene.play(appear(grid), run_time=1.0)
        ctx.hand_on("grid", grid, grid_facts(numbers))
    degrees = plan_degrees(numbers)
    groups = [g for g in GROUPS if degrees[g] > 1]
    entries = group_entries(theme, numbers, groups)
    entries.move_to([ctx.regions.side.left, GRID_TOP - 0.1, 0], aligned_edge=LEFT + UP)
    scale_note = label(theme, SCALE_NOTE, theme.least_size, theme.muted)
    scale_note.move_to([ctx.regions.side.left, GRID_TOP + 0.22, 0], aligned_edge=LEFT)
    ctx.scene.play(appear(scale_note), run_time=0.4)
    shown = None
    for i, (group, entry) in enumerate(zip(groups, entries, strict=True)):
        ctx.until(group, share=i / len(groups))
        link = str(numbers.get(f"comm.links.{group}"))
        width = 7.0 if link.startswith("nvlink") else 2.5
        wires = VGroup(*[_connector(ctx, grid, a, b, width) for a, b in _connections(grid, numbers, group)])
        accent = label(theme, GROUP_NAMES[group], theme.label_size, theme.accent, weight="BOLD").move_to(entry.title)
        leaving = [vanish(shown)] if shown is not None else []
        ctx.scene.play(*leaving, appear(entry), appear(wires), run_time=0.9)
        relabel(entry.title, accent)
        ctx.point_at(entry.pipe, wires, run_time=1.0)
        ctx.scene.wait(0.6)
        _said_figures(ctx, group, entry, wires, entries[0])
        if group == groups[-1] and ctx.has_mark("outermost"):  # why it is the outermost group
            ctx.until("outermost")
            ctx.point_at(entry, wires, scale=1.1)
            ctx.relight(wires)  # its links, as it says how seldom they talk
            if ctx.has_mark("hidden"):  # its seconds, as the voice says they hide under the backward
                ctx.until("hidden")
                ctx.highlight(entry.traffic)
                ctx.relight(entry)  # what stays exposed of them, said last
                following = ctx.next_mark("hidden")
                end = ctx.mark_seconds(following) if following else ctx.said_seconds()
                if end - ctx.mark_seconds("hidden") > HIDDEN_STILL_SECONDS:  # the figures again as the sentence ends
                    ctx.until_second((ctx.mark_seconds("hidden") + end) / 2)
                    ctx.highlight(entry.traffic, across=True)
            if ctx.has_mark("alternative") and "pp" in groups:  # the other common layout: pipeline outermost
                ctx.until("alternative")
                ctx.point_at(entries[groups.index("pp")], scale=1.1)  # its sends would cross the nodes
                ctx.spread("alternative", None, 1, 2)
                ctx.highlight(entry, across=True)  # and this all-reduce would stay inside a node
        plain_title = label(theme, GROUP_NAMES[group], theme.label_size, theme.text, weight="BOLD").move_to(entry.title)
        relabel(entry.title, plain_title)
        shown = wires
    ctx.leave(entries=VGroup(scale_note, entries), wires=shown or VGroup())


def _tree(ctx: ShotContext, taken: str) -> VGroup:
    """Seed 001's decision tree as a column of questions; the answers on the path are lit."""
    theme = ctx.theme
    rows = VGroup()
    reached = True
    for question, yes_branch, yes_answer in DECISION_TREE:
        if yes_branch is None:
            question = TREE_LAST_QUESTIONS.get(taken, question)
        lit = reached
        answer_yes = taken == yes_branch
        q = wrapped(
            theme, plain(question), theme.small_size, 4.6, theme.text if lit else theme.faint, left_aligned=True
        )
        if yes_branch is None:
            end = TREE_ENDS.get(taken, yes_answer)
            chip = label(theme, end, theme.small_size, theme.accent if lit else theme.faint, weight="BOLD")
        elif answer_yes and lit:
            chip = label(theme, "Yes: " + yes_answer, theme.small_size, theme.accent, weight="BOLD")
        else:
            chip = label(theme, "No", theme.small_size, theme.text if lit else theme.faint, weight="BOLD")  # not "bad"
        rows.add(left_column(q, chip, buff=0.1))
        reached = reached and not answer_yes
    rows.arrange(DOWN, aligned_edge=LEFT, buff=0.32)
    return rows


def _reasons(numbers: Numbers, alone: Numbers | None, branch: str = "3d") -> list[Phrase]:
    """The pick in the decision tree's words; every figure from the pick's own estimate (or,
    for the comparison, from the fastest plan that splits only the batch). Where the tree stops
    at DDP or FSDP and the pick splits the layers, the first line says why it departs."""
    degrees = plan_degrees(numbers)
    lines = []
    if alone is not None:
        head = "The tree's answer, data parallel" if branch in ("ddp", "fsdp") else "Data parallel alone"
        lines.append(
            alone(head + " (ZeRO stage {plan.zero}), {?bytes: memory.total <= memory.capacity => fits},")
            + alone(" but a step takes {compute.step_seconds:time}, {comm.seconds:time} of it traffic")
            + numbers(": the pick is faster")
        )
    if degrees["tp"] > 1:
        lines.append(numbers("Tensor parallel {plan.tp} on {comm.link_labels.tp}: each card holds part of every layer"))
    if degrees["pp"] > 1:
        stages = numbers("{plan.pp} pipeline stages")
        if numbers.get("plan.virtual_stages") > 1:
            stages = stages + numbers(", interleaved {plan.virtual_stages:int} ways")
        lines.append(
            stages
            + numbers("; {inputs.micro_batches} micro-batches keep the bubble at")
            + numbers(" {pipeline.bubble_fraction:%}")
        )
    if degrees["cp"] > 1:
        lines.append(numbers("Context parallel {plan.cp} splits each sequence of {inputs.seq_len:int} tokens"))
    if numbers.get("plan.zero"):
        if degrees["cp"] > 1:
            lines.append(
                numbers("ZeRO stage {plan.zero} shards the state over {plan.shard_group:int} cards:")
                + numbers(" {plan.dp} replicas of {plan.cp}")
            )
        else:
            lines.append(numbers("ZeRO stage {plan.zero} shards the state over the {plan.dp} replicas"))
    if numbers.get("inputs.checkpointing"):
        lines.append(
            numbers("Gradient checkpointing: {compute.recompute_overhead:part} more compute for far less memory")
        )
    lines.append(
        numbers(
            "{memory.total:GB} on the busiest card{?bytes: memory.headroom < memory.fit_margin =>"
            " , only {memory.headroom:bytes} to spare |}; a step takes {compute.step_seconds:time},"
        )
        + numbers(" {comm.seconds:time} of it traffic")
    )
    return lines


MIN_REASON_SCALE = 0.8  # below this the small text stops being legible at preview quality


def _fitted_reasons(theme: Theme, lines: list[Phrase], width: float, top: float, bottom: float) -> VGroup:
    """The reasons as a column between `top` and `bottom`: spaced less, then a little smaller,
    and only then without the comparison with data parallelism alone (the first line), so that
    a plan with every kind of parallelism still leaves the caption clear."""
    while True:
        column = VGroup(*[wrapped(theme, r, theme.small_size, width, theme.text, left_aligned=True) for r in lines])
        column.arrange(DOWN, aligned_edge=LEFT, buff=0.2)
        room = top - bottom
        if column.height > room and column.height * MIN_REASON_SCALE <= room:
            column.scale(room / column.height, about_edge=UP + LEFT)
        if column.height <= room or len(lines) == 1:
            return column.move_to([0, top, 0], aligned_edge=UP + LEFT)
        lines = lines[1:]


def play_planner_pick(ctx: ShotContext, shot: Shot) -> None:
    """The decision tree walked for a bigger model, the plan the planner picks and why, then
    that plan drawn on its cluster (a few nodes and a count)."""
    theme = ctx.theme
    pick: Numbers = shot.options["pick"]
    ctx.open_shot(shot.caption)
    ctx.set_stats(
        [
            ("Cards", pick("{cluster.cards:int}"), False),
            ("Per card", pick("{memory.total:GB}"), True),
            ("Step", pick("{compute.step_seconds:time}"), False),
        ]
    )
    model = label(theme, pick("{model.label} on {cluster.cards:int} cards"), theme.caption_size, weight="BOLD")
    model.move_to([ctx.regions.side.left, GRID_TOP, 0], aligned_edge=LEFT)
    tree = _tree(ctx, shot.options["branch"]).move_to(
        [ctx.regions.side.left, GRID_TOP - 0.45, 0], aligned_edge=LEFT + UP
    )
    ctx.scene.play(appear(model, shift=RIGHT * SLIDE_UNITS), run_time=0.8)
    if ctx.has_mark("tries"):  # every way to cut the cards: the model and its card count, pointed at
        ctx.until("tries")
        ctx.point_at(model, scale=1.1)
    for i, row in enumerate(tree):  # down the tree while the voice walks it
        ctx.spread("tree", "pick", i, len(tree))
        ctx.scene.play(appear(row, shift=RIGHT * 0.6), run_time=0.8)
    degrees = plan_degrees(pick)
    shape = " × ".join(f"{g} {{plan.{g}}}" for g in PLAN_ORDER if g != "cp" or degrees["cp"] > 1)
    picked = left_column(
        label(theme, "the planner's pick", theme.small_size, theme.muted),
        label(theme, pick(shape), theme.caption_size, theme.accent, weight="BOLD"),
    )
    picked.move_to([0.2, GRID_TOP - 0.45, 0], aligned_edge=LEFT + UP)
    width = FRAME_WIDTH / 2 - 0.6
    lines = _reasons(pick, shot.options.get("data_parallel_only"), shot.options["branch"])
    reasons = _fitted_reasons(theme, lines, width, top=picked.get_bottom()[1] - 0.3, bottom=theme.stage_bottom)
    reasons.align_to(picked, LEFT)
    arrow = Arrow(tree.get_right() + RIGHT * 0.05, picked.get_left() + LEFT * 0.05, buff=0.05, color=theme.muted)
    ctx.until("pick")
    ctx.scene.play(appear(picked), appear(arrow), run_time=0.8)
    ctx.point_at(picked[1])
    ctx.scene.play(LaggedStart(*[appear(r, shift=RIGHT * 0.6) for r in reasons], lag_ratio=0.4), run_time=2.0)
    ctx.until("grid")

    top = model.get_bottom()[1] - 0.25
    grid = plan_grid(theme, pick, card_width=1.2 if degrees["cp"] > 1 else 0.98, arc_room=0.0, height=top - GRID_BOTTOM)
    _place_grid(grid, top=top)
    key = _grid_key(ctx, pick, grid)
    ctx.scene.play(
        vanish(VGroup(tree, arrow, reasons)),
        picked.animate.next_to(model, RIGHT, buff=0.6).align_to(model, DOWN),
        run_time=0.8,
    )
    ctx.scene.play(appear(grid), appear(key), run_time=1.2)
    ctx.leave(model=model, picked=picked, grid=grid, key=key)
