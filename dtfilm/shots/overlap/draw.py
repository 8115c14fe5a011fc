"""The overlap timeline: one card's step as a compute lane over a communication lane.

DP (ZeRO 0-2): the last backward pass, with DDP's gradient buckets all-reduced under it and what
does not fit exposed past its end. FSDP (ZeRO-3): one micro-batch's forward and backward, unit by
unit, each unit's gather prefetched under the unit before's compute, the first gather exposed and,
where the traffic outruns the compute, the gaps. Every duration is the estimate's `overlap` data.
"""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, LaggedStart, Line, Rectangle, VGroup

from dtfilm.cost.overlap import fsdp_backward_timeline
from dtfilm.numbers import Numbers
from dtfilm.onscreen.layout import ROW_GAP_HEIGHTS
from dtfilm.phrases import plain
from dtfilm.scene import ShotContext
from dtfilm.shots.common.draw import phase_column
from dtfilm.storyboard import Shot
from dtfilm.visuals.collectives import look
from dtfilm.visuals.fade import appear
from dtfilm.visuals.lanes import Lanes, Span
from dtfilm.visuals.text import ink_on, label, wrapped
from dtfilm.visuals.theme import Theme

LANE_HEIGHT = 0.55
DP_LANE_HEIGHT = 0.8  # dp draws no enlargement under its lanes: they take the room
ZOOM_LANE_HEIGHT = 0.5
ZOOM_UNITS = 3  # the forward's first layers, enlarged: a gather under each layer
LANE_GAP = 0.45
SMALLEST_NAME = 0.85  # a block's name may shrink to this share of the small size, no further
NAME_ROOM = 1.6  # at the lanes' left, for their names
LONG_WAIT_SECONDS = 3.5  # longer than this between the traffic and the next mark, and it is pointed at


def is_fsdp(numbers: Numbers) -> bool:
    """ZeRO-3 shards the weights, so its traffic is gathers and reduce-scatters; else buckets."""
    return int(numbers.get("plan.zero")) >= 3


def under_backward(numbers: Numbers) -> bool:
    """Whether DDP's buckets run beside the backward pass: not under `overlap: none` (nothing
    overlaps) or `dp_overlap: after` (one reduction after the pass), where they follow it."""
    return bool(numbers.get("overlap.dp_buckets.under_backward"))


def dp_spans(numbers: Numbers) -> tuple[list[Span], list[Span]]:
    """The last backward pass and DDP's buckets all-reduced under it (or after it: the
    estimate's timeline says when each runs, under every input). A merged row of buckets is
    drawn as long as its all-reduces take, ending where its last ends: where the buckets wait
    for their gradients (the traffic shorter than the pass) a row's span holds idle time, and
    drawing the span would show the link busy when it is not."""
    backward = float(numbers.get("overlap.backward_seconds"))
    each = float(numbers.get("overlap.dp_buckets.bucket_seconds"))
    rows = numbers.get_list("overlap.dp_buckets.timeline")
    busy = [Span(r["end"] - (r["last"] - r["first"] + 1) * each, r["end"], "bucket") for r in rows]
    return [Span(0.0, backward, "backward")], busy


def fsdp_spans(numbers: Numbers) -> tuple[list[Span], list[Span]]:
    """One micro-batch's forward (the estimate's unit timeline) and its backward (the same
    per-unit figures, in the shape the estimate prices it), one block per unit and transfer."""
    units = int(numbers.get("overlap.fsdp_units.units"))
    forward = numbers.get_list("overlap.fsdp_units.timeline")
    if not forward:  # nothing sharded (a card alone): the compute, with no traffic beside it
        f, b = float(numbers.get("overlap.forward_seconds")), float(numbers.get("overlap.backward_seconds"))
        return [Span(0.0, f, "forward"), Span(f, f + b, "backward")], []
    compute = [Span(r["start"], r["end"], "forward") for r in forward]
    comm = [Span(r["gather_start"], r["gather_end"], "gather") for r in forward]
    rows, last = fsdp_backward_timeline(
        float(numbers.get("overlap.fsdp_units.gather_seconds")),
        float(numbers.get("overlap.fsdp_units.reduce_scatter_seconds")),
        float(numbers.get("overlap.fsdp_units.unit_backward_seconds")),
        units,
        begin=forward[-1]["end"],
        prefetch=bool(numbers.get("overlap.fsdp_units.prefetched")),
    )
    compute += [Span(r["start"], r["end"], "backward") for r in rows]
    comm += [Span(r["gather_start"], r["gather_end"], "gather") for r in rows]
    comm += [Span(r["gather_end"], r["scatter_end"], "scatter") for r in rows]
    comm.append(Span(last["start"], last["end"], "scatter"))
    return compute, comm


# each traffic block's collective (a bucket is all-reduced)
COLLECTIVES = {"gather": "all-gather", "bucket": "all-reduce", "scatter": "reduce-scatter"}


def lane_colours(theme: Theme) -> dict[str, tuple[str, float]]:
    """Compute in the compute ink (the forward faint, the backward solid, as in the pipeline
    timeline); traffic in the traffic ink, each block filled as its collective is drawn
    everywhere (a gather solid, a reduce-scatter hollow, a bucket's all-reduce half filled: no
    memory part's colour, which meant a part of a card's memory); what the step waits for in
    the bad colour."""
    traffic = {kind: (theme.traffic_ink, look(name).fill) for kind, name in COLLECTIVES.items()}
    return {"forward": (theme.compute_ink, 0.35), "backward": (theme.compute_ink, 0.7), **traffic,
            "wait": (theme.bad, 0.8)}  # fmt: skip


def lane_edges() -> dict[str, float]:
    """The traffic blocks edged in their own ink, as their collective is (Lanes' `edges`)."""
    return {kind: look(name).edge for kind, name in COLLECTIVES.items() if look(name).edge}


def lanes_of(theme: Theme, numbers: Numbers, width: float) -> Lanes:
    """The configuration's step as the shot draws it, `width` wide: dp's or fsdp's lanes."""
    fsdp = is_fsdp(numbers)
    compute, comm = fsdp_spans(numbers) if fsdp else dp_spans(numbers)
    height = LANE_HEIGHT if fsdp else DP_LANE_HEIGHT
    return Lanes(theme, compute, comm, lane_colours(theme), ("compute", "traffic"), width, height, LANE_GAP,
                 lane_edges())  # fmt: skip


def zoom_spans(numbers: Numbers, units: int = ZOOM_UNITS) -> tuple[list[Span], list[Span]]:
    """The forward's first `units` layers and the gathers beside them (layer i+1's under layer
    i), drawn again at a scale where each block can carry its name."""
    forward = numbers.get_list("overlap.fsdp_units.timeline")
    shown = forward[:units]
    compute = [Span(r["start"], r["end"], "forward") for r in shown]
    comm = [Span(r["gather_start"], r["gather_end"], "gather") for r in forward[: units + 1]]
    return compute, comm


def _key(theme: Theme, fsdp: bool, width: float) -> VGroup:
    """The lanes' key, each entry wrapped to `width` (shrunk to fit it, dp's longest entry was
    13.4 px at the preview, under the 14 px floor)."""
    colours = lane_colours(theme)
    entries = [("backward", "compute")]
    entries += [("gather", "all-gather of weights"), ("scatter", "reduce-scatter of gradients")] if fsdp else []
    entries += [] if fsdp else [("bucket", "all-reduce of a gradient bucket")]
    entries.append(("wait", "exposed: compute waits"))
    key, edges = VGroup(), lane_edges()
    for kind, word in entries:
        colour, opacity = colours[kind]
        swatch = Rectangle(width=0.3, height=0.22, fill_color=colour, fill_opacity=opacity, stroke_color=colour,
                           stroke_width=edges.get(kind, 0))  # fmt: skip
        room = width - swatch.width - 0.12
        words = wrapped(theme, plain(word), theme.small_size, room, theme.muted, left_aligned=True)
        key.add(VGroup(swatch, words).arrange(RIGHT, buff=0.12, aligned_edge=UP))
    return key.arrange(DOWN, aligned_edge=LEFT, buff=0.12)


def _name_blocks(theme: Theme, numbers: Numbers, lane: VGroup, template: str, first: int) -> VGroup:
    """Each block's name inside it ("layer 2", "gather 3"), where it fits and stands apart from
    the name before it: blocks back to back (fp8's short gathers) would put two names closer than a
    word space, read as one ("gather 1gather 2"), so the second is left out."""
    names = VGroup()
    for i, block in enumerate(lane):
        ink = ink_on(theme, block.get_fill_color(), block.get_fill_opacity())
        name = label(theme, numbers.index(template, first + i, "overlap.fsdp_units.units", one_based=True),
                     theme.small_size, ink)  # fmt: skip
        room = block.width - 0.06
        if name.width * SMALLEST_NAME <= room:  # shrunk a little where it must, never out of legibility
            name.scale(min(1.0, room / name.width)).move_to(block)
            if len(names) and name.get_left()[0] - names[-1].get_right()[0] < ROW_GAP_HEIGHTS * name.height:
                continue
            names.add(name)
    return names


def _zoom(ctx: ShotContext, numbers: Numbers, lanes: Lanes, top: float) -> tuple[Lanes, VGroup, VGroup]:
    """The first layers enlarged under the lanes, joined to where they sit on the step: the
    zoomed lanes, the frame and its joins on the step, and the first gather's bracket (a scale)."""
    theme, area = ctx.theme, ctx.regions.stage_right_of_side
    compute, comm = zoom_spans(numbers)
    zoom = Lanes(theme, compute, comm, lane_colours(theme), ("compute", "traffic"), lanes.tracks.width,
                 ZOOM_LANE_HEIGHT, LANE_GAP, lane_edges())  # fmt: skip
    zoom.shift([lanes.tracks.get_left()[0] - zoom.tracks.get_left()[0], top - zoom.compute.get_top()[1], 0])
    zoom.add(
        _name_blocks(theme, numbers, zoom.compute, "layer {}", 1),
        _name_blocks(theme, numbers, zoom.comm, "gather {}", 1),
    )
    left, right = lanes.x_of(0.0), lanes.x_of(zoom.seconds)
    frame = Rectangle(
        width=max(right - left, 0.04),
        height=lanes.compute.get_top()[1] - lanes.comm.get_bottom()[1] + 0.1,
        stroke_color=theme.accent,
        stroke_width=2,
        fill_opacity=0,
    ).move_to([(left + right) / 2, (lanes.compute.get_top()[1] + lanes.comm.get_bottom()[1]) / 2, 0])
    top_of_zoom = zoom.compute.get_top()[1] + 0.05
    joins = VGroup(
        *[
            Line(corner, [x, top_of_zoom, 0], stroke_color=theme.accent, stroke_width=1, stroke_opacity=0.6)
            for corner, x in (
                (frame.get_corner(DOWN + LEFT), zoom.tracks.get_left()[0]),
                (frame.get_corner(DOWN + RIGHT), zoom.tracks.get_right()[0]),
            )
        ]
    )
    first = float(numbers.get("overlap.fsdp_units.gather_seconds"))
    scale = zoom.bracket(theme, 0.0, first, numbers("first gather, {overlap.fsdp_units.gather_seconds:time}"),
                         True, theme.accent)  # fmt: skip
    area.fit(zoom)
    return zoom, VGroup(frame, joins), scale


def _fsdp_passes(
    ctx: ShotContext, numbers: Numbers, lanes: Lanes
) -> tuple[VGroup, VGroup, Lanes | None, VGroup | None]:
    """FSDP's forward and backward brackets over the lanes and the scale, with the first layers
    enlarged under them where anything is gathered: (passes, scale, zoom, joins)."""
    theme = ctx.theme
    forward_end = max(b.span.end for b in lanes.compute if b.span.kind == "forward")
    passes = VGroup(
        lanes.bracket(theme, 0.0, forward_end, plain("forward"), below=False, colour=theme.muted),
        lanes.bracket(theme, forward_end, lanes.seconds, plain("backward"), below=False, colour=theme.muted),
    )
    if len(lanes.comm):
        zoom, joins, scale = _zoom(ctx, numbers, lanes, top=lanes.tracks.get_bottom()[1] - 0.75)
        return passes, scale, zoom, joins
    return passes, VGroup(), None, None


def _fsdp_column(ctx: ShotContext, numbers: Numbers) -> VGroup:
    """The side column naming FSDP's prefetch (or its absence), and with gradient accumulation
    that the lanes are one micro-batch's while the stats are the step's."""
    many_micro_batches = int(numbers.get("inputs.micro_batches")) > 1
    per_step = [numbers("{~one} micro-batch of {inputs.micro_batches:int} drawn")] if many_micro_batches else []
    prefetched = bool(numbers.get("overlap.fsdp_units.prefetched"))  # not under `overlap: none`
    return phase_column(
        ctx,
        "FSDP's prefetch" if prefetched else "No prefetch",
        numbers("{overlap.fsdp_units.units:int} layers, each gathered under the layer before")
        if prefetched
        else numbers("{overlap.fsdp_units.units:int} layers, each gathered {~once} the layer before is done"),
        *per_step,
        wrap=True,
    )


def _dp_passes(theme: Theme, numbers: Numbers, lanes: Lanes) -> tuple[VGroup, VGroup]:
    """DP's last backward pass bracketed over the lanes and, where buckets run, the exposed
    stretch past its end bracketed under them: (passes, scale)."""
    backward = float(numbers.get("overlap.backward_seconds"))
    passes = lanes.bracket(
        theme,
        0.0,
        backward,
        numbers("the last micro-batch's backward, {overlap.backward_seconds:time}"),
        False,
        theme.muted,
    )
    scale = (
        lanes.bracket(
            theme, backward, lanes.seconds, numbers("exposed, {comm.exposed_seconds_by_group.dp:time}"), True, theme.oom
        )
        if len(lanes.comm)
        else VGroup()
    )
    return passes, scale


def _dp_column(ctx: ShotContext, numbers: Numbers) -> VGroup:
    """The side column naming DDP's buckets: beside the backward pass, after it (under `overlap:
    none` or `dp_overlap: after` they wait for the pass to end), or none for a card alone."""
    beside = under_backward(numbers)
    if not int(numbers.get("overlap.dp_buckets.count")):  # a card alone: no buckets at all
        title, body = "No all-reduce", plain("a card alone has no gradients to average")
    elif beside:
        title, body = (
            "DDP's buckets",
            numbers(
                "{overlap.dp_buckets.count:int} buckets of"
                " {overlap.dp_buckets.bucket_bytes:MB}, all-reduced as the backward pass fills them"
            ),
        )
    else:
        title, body = (
            "The all-reduce",
            numbers(
                "{overlap.dp_buckets.count:int} buckets of"
                " {overlap.dp_buckets.bucket_bytes:MB}, all-reduced {~once} the backward pass is done"
            ),
        )
    return phase_column(ctx, title, body, wrap=True)


def _play_traffic(ctx: ShotContext, lanes: Lanes, zoom: Lanes | None, joins: VGroup | None, fsdp: bool) -> None:
    """The traffic lane drawn beside the compute, lit or pointed at while the voice names it,
    then FSDP's enlarged first layers joined to where they sit on the step."""
    ctx.until("traffic")
    if len(lanes.comm):  # a card alone moves nothing: its traffic lane stays empty
        ctx.scene.play(LaggedStart(*[appear(b, shift=RIGHT * 0.2) for b in lanes.comm], lag_ratio=0.02), run_time=1.6)
    following = "zoom" if zoom is not None and ctx.has_mark("zoom") else "exposed"
    if len(lanes.comm) and fsdp:  # a long sentence about the traffic: lit again while it is said
        ctx.relight(lanes.comm)
    elif len(lanes.comm) and ctx.seconds_until(following) > LONG_WAIT_SECONDS:
        # the buckets, then the backward pass they run beside, as the sentence names each
        ctx.spread("traffic", following, 9, 20)
        ctx.point_at(lanes.comm, scale=1.05)
        ctx.highlight(lanes.comm, across=True)
        ctx.spread("traffic", following, 16, 20)
        ctx.highlight(lanes.compute, across=True)
    if zoom is not None and joins is not None:
        if ctx.has_mark("zoom"):
            ctx.until("zoom")
        ctx.scene.play(appear(joins), run_time=0.5)
        ctx.scene.play(appear(zoom), run_time=1.0)
        ctx.point_at(zoom.comm[1], zoom.compute[0], scale=1.1)


def _play_exposed(ctx: ShotContext, lanes: Lanes, zoom: Lanes | None, scale: VGroup, key: VGroup, fsdp: bool) -> None:
    """What the step waits for, marked in the warning colour with the scale and the key, then
    pointed at and lit as the voice stays on it."""
    ctx.until("exposed")
    ctx.scene.play(appear(lanes.waits), appear(lanes.markers), appear(scale), appear(key), run_time=0.8)
    if zoom is not None:  # whether they hide: each gather against the layer it runs under
        ctx.highlight(zoom)
    if len(lanes.waits):
        if zoom is not None:  # then what stays exposed, as the voice says it
            ctx.spread("exposed", "verdict" if ctx.has_mark("verdict") else None, 1, 2)
        ctx.point_at(lanes.waits, *([zoom.waits] if zoom is not None else []), scale=1.1)
        if fsdp:
            ctx.relight(zoom.waits if zoom is not None else lanes.waits, across=True)  # where the voice stays on them
        elif len(scale):  # what is left exposed, across the stage: the waits are thin
            ctx.highlight(VGroup(lanes.waits, scale), across=True)


def play_overlap_timeline(ctx: ShotContext, shot: Shot) -> None:
    """The step's lanes drawn compute first, then the traffic beside it, then what is exposed;
    for FSDP, its first layers enlarged, each gather under the layer before."""
    theme, numbers = ctx.theme, shot.numbers
    fsdp = is_fsdp(numbers)
    ctx.open_shot(shot.caption)
    ctx.set_stats(
        [
            ("Traffic", numbers("{comm.seconds_by_group.dp:time}"), False),
            ("Exposed", numbers("{comm.exposed_seconds_by_group.dp:time}"), True),
        ]
    )
    area = ctx.regions.stage_right_of_side
    lanes = lanes_of(theme, numbers, area.width - NAME_ROOM)
    lanes.shift([area.right - lanes.tracks.get_right()[0], area.top - 0.75 - lanes.compute.get_top()[1], 0])
    zoom = joins = None
    if fsdp:
        passes, scale, zoom, joins = _fsdp_passes(ctx, numbers, lanes)
        column = _fsdp_column(ctx, numbers)
    else:
        passes, scale = _dp_passes(theme, numbers, lanes)
        column = _dp_column(ctx, numbers)
    arrow = label(theme, "time →", theme.small_size, theme.muted)
    arrow.next_to(passes, UP, buff=0.1).align_to(lanes.tracks, RIGHT)
    if not fsdp:  # nothing is enlarged under dp's lanes: they sit in the stage's middle
        drawn = VGroup(lanes, passes, scale, arrow)
        drawn.shift(UP * ((area.top + area.bottom) / 2 - drawn.get_center()[1]))
    side = ctx.regions.side
    key = side.fit(_key(theme, fsdp, side.width))
    key.next_to(column, DOWN, buff=0.3).align_to(column, LEFT)
    note = None
    if shot.options.get("note") is not None:
        note = wrapped(theme, shot.options["note"], theme.label_size, side.width, left_aligned=True)
        note.next_to(key, DOWN, buff=0.3).align_to(column, LEFT)
    ctx.scene.play(appear(column), appear(lanes.names), appear(lanes.tracks), appear(arrow), run_time=0.6)
    ctx.until("compute")
    ctx.scene.play(
        LaggedStart(*[appear(b, shift=RIGHT * 0.2) for b in lanes.compute], lag_ratio=0.02),
        appear(passes),
        run_time=1.2,
    )
    _play_traffic(ctx, lanes, zoom, joins, fsdp)
    _play_exposed(ctx, lanes, zoom, scale, key, fsdp)
    if note is not None:
        if ctx.has_mark("verdict"):
            ctx.until("verdict")
        ctx.scene.play(appear(note, shift=UP * 0.1), run_time=0.6)
        ctx.highlight(note)
    ctx.leave(
        lanes=lanes,
        passes=passes,
        scale=scale,
        column=column,
        arrow=arrow,
        key=key,
        note=note or VGroup(),
        zoom=zoom or VGroup(),
        joins=joins or VGroup(),
    )
