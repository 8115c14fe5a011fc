"""The data-parallel strategies' rows: DDP, ZeRO-1 and FSDP, measured against the cost model."""

from __future__ import annotations

from typing import Any

from dtfilm.cost.models import ModelShape, input_embedding_params, layer_params, output_head_params
from dtfilm.validate.model import Shape
from dtfilm.validate.rows import (
    STEP_NOTE,
    TRAFFIC_TOLERANCE,
    Row,
    collective_totals,
    same_size,
    state_rows,
    step_counter_row,
)

FSDP_UNITS_EXTRA = 2  # the embedding and the output are FSDP units of their own, besides the blocks


def ddp_rows(cost: dict[str, Any], ranks: list[dict[str, Any]], n: int) -> list[Row]:
    issued = ranks[0]["collectives"]
    count, payload = collective_totals(issued, "all_reduce")
    buckets = ranks[0]["ddp_buckets"]
    buckets_note = (
        f"DDP packs the gradients into {len(buckets)} buckets ({', '.join(f'{b:,}' for b in buckets)} bytes,"
        " as DDP logs them): one all-reduce each, adding up to the one buffer"
    )
    return [
        *state_rows("ddp", cost, ranks),
        step_counter_row("ddp", ranks),
        Row("ddp", "all-reduce payload", cost["comm"]["gradient_buffer"], payload, "B", TRAFFIC_TOLERANCE),
        Row("ddp", "all-reduce count", 1, count, "count", accounted=len(buckets) - 1, note=buckets_note),
        Row("ddp", "bytes on the wire (ring)", cost["comm"]["dp"], 2 * (n - 1) / n * payload, "B", TRAFFIC_TOLERANCE),
        Row("ddp", "other collectives", 0, len(issued) - count, "count"),
    ]


def zero1_rows(cost: dict[str, Any], ranks: list[dict[str, Any]], n: int) -> list[Row]:
    issued = ranks[0]["collectives"]
    _, payload = collective_totals(issued, "all_reduce")
    casts, cast_bytes = collective_totals(issued, "broadcast")
    optimizer = [r["state"]["adam_m"] + r["state"]["adam_v"] for r in ranks]
    even = cost["memory"]["adam_m"] + cost["memory"]["adam_v"]
    return [
        *state_rows("zero1", cost, ranks, skip=("adam_m", "adam_v")),
        Row("zero1", "Adam m + v, all ranks together", even * n, sum(optimizer), "B"),
        Row(
            "zero1",
            "Adam m + v, largest rank",
            even,
            max(optimizer),
            "B",
            accounted=8 * ranks[0]["largest_tensor_elements"],
            at_most=True,
            note="ZeroRedundancyOptimizer gives whole tensors to ranks: the largest share exceeds an even one"
            " by at most the largest tensor's m and v",
        ),
        Row(
            "zero1",
            "Adam step counters, all ranks together",
            0,
            sum(r["state"]["steps"] for r in ranks),
            "B",
            accounted=4 * ranks[0]["parameter_tensors"],
            note=STEP_NOTE,
        ),
        Row("zero1", "all-reduce payload", cost["comm"]["gradient_buffer"], payload, "B", TRAFFIC_TOLERANCE),
        Row(
            "zero1",
            "broadcast payload (updated weights)",
            0,
            cast_bytes,
            "B",
            TRAFFIC_TOLERANCE,
            accounted=cost["memory"]["weights"],
            note=f"ZeroRedundancyOptimizer keeps DDP's all-reduce and then broadcasts each rank's updated"
            f" weights ({casts} broadcasts); ZeRO's paper reduce-scatters and all-gathers instead",
        ),
    ]


def _fsdp_units(shape: Shape) -> tuple[float, float]:
    """(bytes of one block, bytes of the embedding and the output together) in fp32, by the cost
    model's own parameter formulas for the run's shape."""
    model = ModelShape("validate", shape.layers, shape.hidden, shape.heads, shape.heads, shape.ffn, shape.vocab)
    return 4.0 * layer_params(model), 4.0 * (input_embedding_params(model) + output_head_params(model))


def _layer_order(sequence: list[str], layers: int) -> tuple[int, int]:
    """On one micro-batch's layer collectives in issue order ("G" gather, "R" reduce-scatter):
    (gathers among the first L, the forward's), and (backward reduce-scatters each issued after at
    least as many backward gathers, a layer's gradients reduced only once it was gathered again)."""
    forward, backward = sequence[:layers], sequence[layers:]
    gathered = reduced = in_order = 0
    for kind in backward:
        if kind == "G":
            gathered += 1
        else:
            reduced += 1
            in_order += gathered >= reduced
    return forward.count("G"), in_order


def fsdp_rows(cost: dict[str, Any], ranks: list[dict[str, Any]], n: int, shape: Shape) -> list[Row]:
    """FSDP as the cost model issues it: one all-gather of a unit in the forward and another in
    the backward, one reduce-scatter of its gradients, per unit per micro-batch, over L + 2 units
    (the L blocks, the embedding and the output, as torch's fully_shard wraps them here), each
    message an even 1/(L + 2) of the weights. The blocks' calls are told from the ends' by their
    size; the model's even share is named against the block's own size."""
    issued = ranks[0]["collectives"]
    breakdown = {row["collective"]: row for row in cost["comm"]["breakdown"]}
    gather, scatter = breakdown["all-gather"], breakdown["reduce-scatter"]
    block_bytes, _ = _fsdp_units(shape)
    block = int(block_bytes // 4)
    layer_gathers, _ = collective_totals(issued, "all_gather", block // n)  # gloo's all-gather input: the rank's shard
    layer_scatters, _ = collective_totals(issued, "all_reduce", block)  # gloo has no reduce-scatter: the whole unit
    micro_batches = gather["calls"] // (2 * (shape.layers + FSDP_UNITS_EXTRA))
    layers = micro_batches * shape.layers  # the model's calls that are the blocks'
    return [
        *state_rows("fsdp", cost, ranks),
        step_counter_row("fsdp", ranks),
        Row("fsdp", "all-gathers of a layer (forward and backward)", 2 * layers, layer_gathers, "count"),
        Row("fsdp", "reduce-scatters of a layer", layers, layer_scatters, "count"),
        *_fsdp_block_rows(issued, gather, scatter, n, shape, block_bytes),
        *_fsdp_total_rows(cost, issued, (layer_gathers, layer_scatters), micro_batches, n),
    ]


def _fsdp_block_rows(
    issued: list[dict[str, Any]],
    gather: dict[str, Any],
    scatter: dict[str, Any],
    n: int,
    shape: Shape,
    block_bytes: float,
) -> list[Row]:
    """A block's collectives: the forward's gathers first, each backward reduce-scatter after
    its gather, and one message size each (the model's even share against the block's own)."""
    block = int(block_bytes // 4)
    sizes_gathered = {c["bytes"] * n for c in issued if c["kind"] == "all_gather" and c["elements"] == block // n}
    sizes_scattered = {c["bytes"] for c in issued if c["kind"] == "all_reduce" and c["elements"] == block}
    sequence = [
        "G" if c["kind"] == "all_gather" else "R"
        for c in issued
        if (c["kind"], c["elements"]) in (("all_gather", block // n), ("all_reduce", block))
    ]
    forward_gathers, reduced_in_order = _layer_order(sequence, shape.layers)
    layers = gather["calls"] // (2 * (shape.layers + FSDP_UNITS_EXTRA)) * shape.layers
    uneven = block_bytes - gather["buffer_bytes"]
    uneven_note = (
        f"the cost model gives each of the {shape.layers + FSDP_UNITS_EXTRA} units an even share of the"
        f" weights; a block holds {uneven:,.0f} B more, the embedding and the output less"
    )
    return [
        Row("fsdp", "layer all-gathers first, the forward's (L)", shape.layers, forward_gathers,
            "count"),
        Row("fsdp", "backward: each layer's reduce-scatter after its gather", layers, reduced_in_order,
            "count"),
        Row("fsdp", "all-gather message, one layer (gathered bytes)", gather["buffer_bytes"],
            same_size(sizes_gathered), "B", accounted=uneven, note=uneven_note),
        Row("fsdp", "reduce-scatter message, one layer", scatter["buffer_bytes"], same_size(sizes_scattered), "B",
            accounted=uneven, note=uneven_note),
    ]  # fmt: skip


def _fsdp_total_rows(
    cost: dict[str, Any], issued: list[dict[str, Any]], of_layers: tuple[int, int], micro_batches: int, n: int
) -> list[Row]:
    """The ends' calls (all calls less the blocks' `of_layers`), and the payloads and wire bytes of all."""
    breakdown = {row["collective"]: row for row in cost["comm"]["breakdown"]}
    gather, scatter = breakdown["all-gather"], breakdown["reduce-scatter"]
    gathers, gathered = collective_totals(issued, "all_gather")
    scatters, scattered = collective_totals(issued, "all_reduce")
    ends = micro_batches * FSDP_UNITS_EXTRA
    layer_gathers, layer_scatters = of_layers
    return [
        Row("fsdp", "all-gathers of the embedding and the output", 2 * ends, gathers - layer_gathers, "count"),
        Row("fsdp", "reduce-scatters of the embedding and the output", ends, scatters - layer_scatters, "count"),
        Row(
            "fsdp",
            "all-gather payload (gathered weights)",
            gather["count"] * gather["buffer_bytes"],
            gathered * n,
            "B",
            TRAFFIC_TOLERANCE,
        ),
        Row(
            "fsdp",
            "reduce-scatter payload (gradients)",
            scatter["count"] * scatter["buffer_bytes"],
            scattered,
            "B",
            TRAFFIC_TOLERANCE,
        ),
        Row(
            "fsdp",
            "bytes on the wire",
            cost["comm"]["dp"],
            (n - 1) / n * (gathered * n) + 2 * (n - 1) / n * scattered,
            "B",
            TRAFFIC_TOLERANCE,
            accounted=(n - 1) / n * scattered,
            note="gloo has no reduce-scatter: FSDP all-reduces each unit's gradients and keeps its shard,"
            " twice the wire bytes of a reduce-scatter",
        ),
    ]
