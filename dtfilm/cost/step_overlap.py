"""What a timeline of one card's step draws: DDP's buckets under the last backward pass, FSDP's
units gathered one ahead, and the micro-batch size and sequence length at which those gathers hide."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from dtfilm.cost import (
    comm,
    efficiency,
    model,
    overlap,
    results,
)
from dtfilm.cost.layouts import Layouts
from dtfilm.cost.planner import MAX_MICRO_BATCH_SIZE
from dtfilm.cost.setup import Setup

MAX_SEQ_LEN = 2_097_152  # the envelope's longest sequence (dtfilm.cost.inputs)


def _smallest(low: int, high: int, ok: Callable[[list[int]], list[bool]], levels: int = 6) -> int:
    """The smallest n in [low, high] with ok(n), for ok false then true as n grows; 0 if none.
    A binary search that asks `ok` about the midpoints of its next `levels` steps at once (one call
    of the model for up to 63 candidates) and walks them as it would have, one at a time."""
    if not ok([high])[0]:
        return 0
    while low < high:
        asked = _midpoints(low, high, levels)
        answers = dict(zip(asked, ok(asked), strict=True))
        for _ in range(levels):
            if low >= high:
                break
            middle = (low + high) // 2
            low, high = (low, middle) if answers[middle] else (middle + 1, high)
    return low


def _midpoints(low: int, high: int, levels: int) -> list[int]:
    """Every midpoint a binary search over [low, high] may ask about in its next `levels` steps."""
    intervals, asked = [(low, high)], []
    for _ in range(levels):
        following = []
        for first, last in intervals:
            if first < last:
                middle = (first + last) // 2
                asked.append(middle)
                following += [(first, middle), (middle + 1, last)]
        intervals = following
    return asked


def _busiest_seconds(
    setup: Setup, micro_batch_sizes: list[int] | None = None, seq_lens: list[int] | None = None
) -> Any:
    """The busiest stage's one micro-batch at each micro-batch size (or sequence length) given, the
    setup otherwise as it is: one call of the model on a row each."""
    count = len(micro_batch_sizes or seq_lens or [])
    rows = Layouts.of(setup).take(np.zeros(count, dtype=np.int64))
    if micro_batch_sizes is not None:
        rows = replace(rows, micro_batch_size=np.array(micro_batch_sizes, dtype=np.int64))
    lengths = None if seq_lens is None else np.array(seq_lens, dtype=np.int64)
    return model.stage_times(setup, rows, setup.pp, seq_len=lengths).seconds.max(axis=1)


def overlap_result(
    setup: Setup, collectives: list[comm.Collective], gradient_bytes: float, layers: int, busy: efficiency.StageTime
) -> results.Overlap:
    """What a timeline of one card's step draws, as plain data (whatever `inputs.overlap` is):
    DDP's buckets under the last backward pass and FSDP's units (`fsdp_units_result`)."""
    forward, backward = overlap.phase_shares(setup.checkpointing)
    reduce = [c for c in collectives if c.name == "dp_all_reduce"]
    total = sum(c.seconds for c in reduce)
    buckets = int(overlap.dp_buckets(gradient_bytes)) if reduce else 0
    # whether the traffic runs beside the compute at all: `none` hides nothing, and `dp_overlap:
    # after` reduces ZeRO 0-2's gradients once the backward is done (ZeRO-3's prefetch stays)
    under_backward = setup.overlap == "framework" and setup.dp_overlap == "buckets"
    return results.Overlap(
        mode=setup.overlap,
        slowdown_share=overlap.OVERLAP_COMPUTE_SLOWDOWN,
        forward_seconds=busy.seconds * forward,  # one micro-batch on the busiest stage's card
        backward_seconds=busy.seconds * backward,
        dp_buckets=results.DpBuckets(
            count=buckets,
            under_backward=under_backward,
            bucket_bytes=overlap.DDP_BUCKET_BYTES,
            bucket_seconds=total / buckets if buckets else 0.0,
            timeline=overlap.dp_bucket_timeline(total, gradient_bytes, busy.seconds * backward, under_backward)
            if buckets
            else [],
        ),
        fsdp_units=fsdp_units_result(setup, collectives, layers, busy),
    )


def fsdp_units_result(
    setup: Setup, collectives: list[comm.Collective], layers: int, busy: efficiency.StageTime
) -> results.FsdpUnits:
    """FSDP's gather of unit i+1 under unit i, and the micro-batch size and sequence length at
    which its gathers hide under the compute (0 where none in the envelope does)."""
    forward, backward = overlap.phase_shares(setup.checkpointing)
    gather = sum(c.seconds for c in collectives if c.name == "dp_all_gather")
    scatter = sum(c.seconds for c in collectives if c.name == "dp_reduce_scatter")
    units = max(layers, 1) if gather else 0
    m = setup.micro_batches
    g = gather / (2 * m * units) if units else 0.0
    r = scatter / (m * units) if units else 0.0

    def hides(busiest_seconds: float) -> bool:
        # under the busiest stage's compute per unit, forward (g) and backward (g + r)
        seconds = busiest_seconds / units
        return seconds * forward >= g and seconds * backward >= g + r

    def hides_at_micro_batch_sizes(sizes: list[int]) -> list[bool]:
        return [hides(float(seconds)) for seconds in _busiest_seconds(setup, micro_batch_sizes=sizes)]

    def hides_at_seq_lens(chunks: list[int]) -> list[bool]:
        lengths = [n * setup.cp for n in chunks]
        return [hides(float(seconds)) for seconds in _busiest_seconds(setup, seq_lens=lengths)]

    prefetched = setup.overlap == "framework"
    return results.FsdpUnits(
        units=units,
        prefetched=prefetched,
        gather_seconds=g,  # one unit's all-gather
        reduce_scatter_seconds=r,
        unit_forward_seconds=busy.seconds * forward / units if units else 0.0,
        unit_backward_seconds=busy.seconds * backward / units if units else 0.0,
        hidden=bool(units) and prefetched and hides(busy.seconds),
        hides_at_micro_batch_size=_smallest(1, MAX_MICRO_BATCH_SIZE, hides_at_micro_batch_sizes) if units else 0,
        hides_at_seq_len=setup.cp * _smallest(-(-16 // setup.cp), MAX_SEQ_LEN // setup.cp, hides_at_seq_lens)
        if units
        else 0,
        timeline=overlap.fsdp_unit_timeline(gather, units, m, busy.seconds * forward, prefetched) if units else [],
    )
