"""Overlap on screen (issue 46, item 5): the overlap timeline's lanes are the estimate's durations,
its exposed part is the estimate's exposed seconds, and the chapters' claims about it hold."""

from __future__ import annotations

import itertools

import pytest

from dtfilm.numbers import Numbers
from dtfilm.visuals.lanes import PIXEL_WIDTH
from dtfilm.visuals.theme import DARK
from tests.test_claims import claims_of
from tests.test_cost_reference import run

WIDTH = 8.0


def _seconds(lane) -> float:
    """What a lane's blocks say, in seconds, read from their drawn widths."""
    return sum(b.width for b in lane)


def _lanes(**flags):
    from dtfilm.shots.overlap.draw import lanes_of

    flags = flags if "model" in flags else {"params": "7e9", **flags}
    # the hand-worked figures below are the seeds' single link's (issue 46); the drawing follows
    # the estimate's durations whatever the network
    flags = {"network": "single-link", **flags}
    numbers = Numbers(run(overlap="framework", **flags))
    return numbers, lanes_of(DARK, numbers, WIDTH)


def test_dp_draws_the_backward_pass_its_buckets_and_the_exposed_tail_to_scale():
    # 7B on 2 nodes (16 cards): the last backward pass takes 242 ms, the 535 buckets' all-reduces
    # 525 ms back to back, so 284 ms of them run past its end, exposed (framework's shares, fitted on the fit set).
    numbers, lanes = _lanes(cards=16)
    per_second = lanes.units_per_second
    (backward,) = lanes.compute
    assert backward.width / per_second == pytest.approx(float(numbers.get("overlap.backward_seconds")), rel=1e-6)
    rows = numbers.get_list("overlap.dp_buckets.timeline")
    assert len(lanes.comm) == len(rows) <= 32
    left = lanes.tracks.get_left()[0]
    each = float(numbers.get("overlap.dp_buckets.bucket_seconds"))
    for block, row in zip(lanes.comm, rows, strict=True):  # back to back: each row from its start to its end
        assert block.get_left()[0] - left == pytest.approx(row["start"] * per_second, abs=1e-6)
        assert block.get_right()[0] - left == pytest.approx(row["end"] * per_second, abs=1e-6)
        assert block.width == pytest.approx((row["last"] - row["first"] + 1) * each * per_second, rel=1e-6)
    assert _seconds(lanes.comm) / per_second == pytest.approx(float(numbers.get("comm.seconds_by_group.dp")), rel=1e-6)
    exposed = float(numbers.get("comm.exposed_seconds_by_group.dp"))
    assert exposed == pytest.approx(0.284, abs=0.001)  # 288 ms before attention took its measured share (issue 57)
    (wait,) = lanes.waits  # one stretch: from the pass's end to the last bucket's
    assert wait.width / per_second == pytest.approx(exposed, rel=1e-6)
    assert wait.get_left()[0] == pytest.approx(backward.get_right()[0], abs=1e-6)


@pytest.mark.parametrize(
    ("cards", "micro_batches", "exposed_s"),
    [(16, 1, 0.436), (8, 1, 0.00255), (16, 2, None)],  # 0.442 before issue 57's attention shares
)
def test_fsdp_draws_each_layer_and_its_gathers_and_the_gaps_are_the_exposed_seconds(cards, micro_batches, exposed_s):
    # ZeRO-3: a micro-batch's forward and backward, a block per layer and per transfer. On 2 nodes the
    # gathers (8.2 ms a layer) outrun the layers (3.5 ms forward, 6.9 ms backward): 466 ms of 788 ms
    # exposed; inside a node only the first gather of each pass and the last reduce-scatter are.
    numbers, lanes = _lanes(cards=cards, zero=3, micro_batches=micro_batches)
    per_second, m = lanes.units_per_second, micro_batches
    units = int(numbers.get("overlap.fsdp_units.units"))
    kinds = [b.span.kind for b in lanes.compute]
    assert kinds.count("forward") == kinds.count("backward") == units
    for block in lanes.compute:
        name = "unit_forward_seconds" if block.span.kind == "forward" else "unit_backward_seconds"
        assert block.width / per_second == pytest.approx(float(numbers.get(f"overlap.fsdp_units.{name}")), rel=1e-6)
    compute = float(numbers.get("compute.compute_seconds"))
    assert m * _seconds(lanes.compute) / per_second == pytest.approx(compute, rel=1e-6)
    traffic = float(numbers.get("comm.seconds_by_group.dp"))
    assert m * _seconds(lanes.comm) / per_second == pytest.approx(traffic, rel=1e-6)
    exposed = float(numbers.get("comm.exposed_seconds_by_group.dp"))
    if exposed_s is not None:
        assert exposed == pytest.approx(exposed_s, rel=0.01)
    assert m * _seconds(lanes.waits) / per_second == pytest.approx(exposed, rel=1e-6)
    assert lanes.seconds == pytest.approx((compute + exposed) / m, rel=1e-6)
    # the forward's blocks are the estimate's unit timeline: layer i+1's gather beside layer i
    forward = numbers.get_list("overlap.fsdp_units.timeline")
    left = lanes.tracks.get_left()[0]
    starts = [b.get_left()[0] - left for b in lanes.compute if b.span.kind == "forward"]
    assert starts == pytest.approx([r["start"] * per_second for r in forward], abs=1e-6)
    from dtfilm.shots.overlap.draw import zoom_spans

    layers, gathers = zoom_spans(numbers)  # the enlargement: layer i+1's gather runs beside layer i
    assert len(gathers) == len(layers) + 1
    for layer, gather in zip(layers, gathers[1:], strict=True):
        assert layer.start - 1e-12 <= gather.start < layer.end
    if exposed_s and exposed_s < 0.01:  # hidden: three thin waits, each marked so the eye finds it
        assert len(lanes.waits) == 3 and len(lanes.markers) == 3


def test_the_lanes_stay_legible_at_405b_on_16384_cards():
    # 126 layers and tens of thousands of buckets: dp's merge into at most 32 rows; fsdp draws
    # 252 compute blocks, those narrower than a pixel at 480p drawn as hairlines, and no band of markers.
    numbers, lanes = _lanes(model="llama3.1-405b", cards=16384)
    assert int(numbers.get("overlap.dp_buckets.count")) > 10_000 and len(lanes.comm) <= 32
    numbers, lanes = _lanes(model="llama3.1-405b", cards=16384, zero=3, micro_batches=1)
    assert len(lanes.compute) == 2 * int(numbers.get("overlap.fsdp_units.units")) == 252
    thin = [b for b in lanes.compute if b.width < PIXEL_WIDTH]  # 3.5 ms layers beside 260 ms gathers
    assert thin, "the case this test is for"
    for block in thin:  # drawn as a hairline of its own colour: seen, and still its time wide
        assert block.get_stroke_width() >= 2 and block.get_stroke_color() == block.get_fill_color()
    assert len(lanes.markers) == 0


def test_the_chapters_say_whether_overlap_hides_the_traffic():
    # Issue 57: on NCCL's network two nodes' all-reduce leaves each node over its 8 NICs (65.7 ms)
    # and hides under the backward pass; FSDP's gathers hide under each layer
    dp = " ".join(claims_of("dp")["overlap"])
    assert "The traffic hides under the backward pass: only the last bucket waits" in dp
    fsdp = " ".join(claims_of("fsdp")["overlap"])
    assert "Across two nodes the gathers hide under compute" in fsdp
    # on the seeds' single link the traffic outlasted the pass, and the gathers did not hide
    dp = " ".join(claims_of("dp", {"network": "single-link"})["overlap"])
    assert "The traffic outlasts the backward pass: 284 ms of its 525 ms waits past the end" in dp
    fsdp = " ".join(claims_of("fsdp", {"network": "single-link"})["overlap"])
    assert "the gathers do not hide" in fsdp
    assert "they would with 3 sequences a micro-batch" in fsdp and "sequences of 7,723 tokens" in fsdp
    inside = " ".join(claims_of("fsdp", {"nodes": 1})["overlap"])
    assert "Inside a node" in inside and "the gathers hide under compute" in inside
    assert "they would with" not in inside


def test_dp_buckets_that_wait_for_their_gradients_leave_the_link_idle():
    # Inside a node the all-reduces (54.5 ms) are shorter than the backward pass (242 ms): the
    # buckets run as their gradients fall due, so a merged row's span holds idle time. Each row
    # is drawn as long as its all-reduces take, ending where its last one does; only the last
    # bucket is exposed.
    numbers, lanes = _lanes(cards=8)
    per_second, left = lanes.units_per_second, lanes.tracks.get_left()[0]
    traffic, backward = float(numbers.get("comm.seconds_by_group.dp")), float(numbers.get("overlap.backward_seconds"))
    assert traffic < backward / 2
    assert _seconds(lanes.comm) / per_second == pytest.approx(traffic, rel=1e-6)
    for block, row in zip(lanes.comm, numbers.get_list("overlap.dp_buckets.timeline"), strict=True):
        assert block.get_right()[0] - left == pytest.approx(row["end"] * per_second, abs=1e-6)
    (wait,) = lanes.waits
    exposed = float(numbers.get("comm.exposed_seconds_by_group.dp"))
    assert exposed == pytest.approx(float(numbers.get("overlap.dp_buckets.bucket_seconds")), rel=1e-6)
    assert wait.width / per_second == pytest.approx(exposed, rel=1e-6) and len(lanes.markers) == 1


@pytest.mark.parametrize(
    ("gather", "scatter", "backward", "units"),
    [(8.2e-3, 8.2e-3, 6.9e-3, 32), (0.85e-3, 0.85e-3, 6.9e-3, 32), (3e-3, 1e-3, 4.5e-3, 126), (2e-3, 2e-3, 2e-3, 1)],
)
def test_the_backward_timeline_exposes_what_the_estimate_charges(gather, scatter, backward, units):
    # The drawn backward (dtfilm/cost/overlap.py) waits g + r + (L-1) max(0, g + r - b), the
    # backward half of fsdp_exposed, whether the traffic outruns the layers or hides under them.
    from dtfilm.cost.overlap import fsdp_backward_timeline, fsdp_exposed
    from dtfilm.visuals.lanes import Span, gaps

    begin = 0.25
    rows, last = fsdp_backward_timeline(gather, scatter, backward, units, begin)
    busy = [Span(r["start"] - begin, r["end"] - begin, "backward") for r in rows]
    waited = sum(g.seconds for g in gaps(busy, last["end"] - begin))
    # the estimate's charge with a forward long enough to hide all but its first gather (g)
    charged = fsdp_exposed(2 * units * gather, units * scatter, units, 1, 1e9, units * backward) - gather
    assert waited == pytest.approx(charged, rel=1e-9)
    assert waited == pytest.approx(gather + scatter + (units - 1) * max(0.0, gather + scatter - backward), rel=1e-9)
    assert all(r["gather_start"] >= begin and r["start"] >= r["scatter_end"] for r in rows)


def _said(chapter: str, beat: str, flags: dict) -> str:
    """Everything the shot says and shows in words: its caption, narration and note."""
    from dtfilm.storyboard import load_chapter
    from tests.conftest import ROOT

    (shot,) = [s for s in load_chapter(chapter, flags, root=ROOT).shots if s.beat == beat]
    note = shot.options.get("note")
    texts = [shot.caption.text, shot.narration.text, note.text if note is not None else ""]
    return " ".join(texts).replace("\xa0", " ")


@pytest.mark.parametrize(
    "flags",
    [
        {"overlap": "framework", "dp_overlap": "after", "network": "single-link"},
        {"overlap": "none", "network": "single-link"},
    ],
)
def test_dp_buckets_that_wait_for_the_backward_are_drawn_and_said_after_it(flags):
    # `dp_overlap: after` (Megatron-LM's local DDP) and `overlap: none` charge the whole all-reduce
    # (525 ms on 2 nodes on the seeds' single link) as exposed: the timeline runs every bucket after
    # the 238 ms backward pass, back to back, and nothing on screen says they hide under it.
    from dtfilm.shots.overlap.draw import lanes_of

    numbers = Numbers(run(params="7e9", cards=16, **flags))
    lanes = lanes_of(DARK, numbers, WIDTH)
    backward = float(numbers.get("overlap.backward_seconds"))
    rows = numbers.get_list("overlap.dp_buckets.timeline")
    assert rows and all(r["start"] >= backward - 1e-12 for r in rows)
    traffic, exposed = (
        float(numbers.get("comm.seconds_by_group.dp")),
        float(numbers.get("comm.exposed_seconds_by_group.dp")),
    )
    assert exposed == pytest.approx(traffic, rel=1e-12) and exposed == pytest.approx(0.525, abs=0.001)
    assert rows[-1]["end"] - backward == pytest.approx(exposed, rel=1e-9)
    (compute,) = lanes.compute
    assert min(b.get_left()[0] for b in lanes.comm) >= compute.get_right()[0] - 1e-6
    (wait,) = lanes.waits  # the compute lane waits for all of it
    assert wait.width / lanes.units_per_second == pytest.approx(exposed, rel=1e-6)
    said = _said("dp", "overlap", flags)
    assert "after the backward pass" in said and "all 525 ms of it is exposed" in said
    for words in ("hides under the backward", "while the backward pass runs", "under the backward pass", "last bucket"):
        assert words not in said
    assert "Megatron-LM's local DDP" in said if flags["overlap"] == "framework" else "whiteboard" in said


def test_fsdp_without_overlap_gathers_each_layer_after_the_one_before():
    # `overlap: none` charges every gather and reduce-scatter (788 ms on 2 nodes on the seeds' single
    # link): the timeline gathers
    # layer i+1 only once layer i is done, the compute lane waits for all of it, and no prefetch is said.
    from dtfilm.shots.overlap.draw import lanes_of

    numbers = Numbers(run(params="7e9", cards=16, zero=3, micro_batches=1, overlap="none", network="single-link"))
    lanes = lanes_of(DARK, numbers, WIDTH)
    forward = numbers.get_list("overlap.fsdp_units.timeline")
    for before, row in itertools.pairwise(forward):
        assert row["gather_start"] >= before["end"] - 1e-12
    exposed = float(numbers.get("comm.exposed_seconds_by_group.dp"))
    assert exposed == pytest.approx(float(numbers.get("comm.seconds_by_group.dp")), rel=1e-12)
    assert exposed == pytest.approx(0.788, abs=0.001)
    assert _seconds(lanes.waits) / lanes.units_per_second == pytest.approx(exposed, rel=1e-6)
    said = _said("fsdp", "overlap", {"overlap": "none", "network": "single-link"})
    assert "waits for the layer before" in said and "788 ms exposed" in said
    assert "prefetched under" not in said and "they would with" not in said and "the gathers hide" not in said


def test_a_card_alone_is_not_said_to_all_reduce_under_the_backward():
    # --cards 1: no traffic lane, and no caption or narration of buckets all-reduced beside the pass.
    said = _said("dp", "overlap", {"cards": 1})
    assert "no gradients to all-reduce" in said and "there is no traffic to hide" in said
    assert "all-reduced under the backward pass" not in said and "while the backward pass runs" not in said
