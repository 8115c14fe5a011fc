"""The cost model asked the same questions as the measurement, row by row.

Each row is one quantity of one strategy: the cost model's value, PyTorch's measured value, and
their verdict. "agrees": equal (state and counts exactly, traffic within 1%). "explained": the
difference is a known, named behaviour of PyTorch whose size is computed, not tolerated (a DDP
bucket, Adam's step counters, gloo's missing reduce-scatter ...); measured must equal the cost
model plus that amount exactly. Anything else "DIFFERS".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from dtfilm.cost import builtin_layer, estimate, overlap, parse_value, resolve
from dtfilm.cost.estimate import card_ledgers
from dtfilm.cost.models import ModelShape, input_embedding_params, layer_params, output_head_params
from dtfilm.cost.setup_checks import build_setup
from dtfilm.errors import Where
from dtfilm.validate.model import Shape

EXPERTS, TOP_K = 8, 2  # dtfilm.validate.experts' (kept here: this module imports no torch)

TRAFFIC_TOLERANCE = 0.01
STATE_PARTS = ("weights", "gradients", "adam_m", "adam_v")
PARALLEL_LOSS_EXCHANGES = 3  # loss_parallel's cross-entropy: max, sum of exponentials, target logit
FSDP_UNITS_EXTRA = 2  # the embedding and the output are FSDP units of their own, besides the blocks


@dataclass
class Row:
    strategy: str
    quantity: str
    model: float
    measured: float
    unit: str  # "B", "count" or "value"
    tolerance: float = 0.0
    accounted: float = 0.0  # the named difference, when there is one
    note: str = ""
    at_most: bool = False  # `accounted` is a bound on the difference, not its exact size

    @property
    def verdict(self) -> str:
        if _close(self.measured, self.model, self.tolerance):
            return "agrees"
        if self.note and self.at_most and 0 <= self.measured - self.model <= self.accounted:
            return "explained"
        if self.note and not self.at_most and _close(self.measured, self.model + self.accounted, self.tolerance):
            return "explained"
        return "DIFFERS"

    @property
    def ratio(self) -> float:
        return self.measured / self.model if self.model else (1.0 if self.measured == 0 else float("inf"))

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "verdict": self.verdict, "ratio": self.ratio}


def _close(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance * max(abs(a), abs(b))


def cost_inputs(strategy: str, ranks: int, shape: Shape, pp_micro_batches: int) -> dict[str, Any]:
    """The cost model's inputs for the run: same shape, fp32, Adam, one node of `ranks` cards."""
    plan = {
        "ddp": {"zero": 0},
        "zero1": {"zero": 1},
        "fsdp": {"zero": 3},
        "tp": {"tp": ranks},
        "pp": {"pp": ranks, "schedule": "gpipe"},
        "cp": {"cp": ranks},
        "ep": {"ep": ranks, "experts": EXPERTS, "top_k": TOP_K, "expert_ffn": shape.ffn},
        "overlap": {"zero": 0, "overlap": "framework"},
    }[strategy]
    micro_batches = pp_micro_batches if strategy == "pp" else 1
    return {
        **shape.cost_inputs(),
        "precision": "fp32",
        "cards": ranks,
        "cards_per_node": ranks,
        "micro_batches": micro_batches,
        **plan,
    }


def ask_cost_model(inputs: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, float]]]:
    layer = {k: parse_value(k, v, "flag", Where(flag=f"--{k}")) for k, v in inputs.items()}
    values = resolve([builtin_layer(), layer])
    setup, _ = build_setup(values)
    return estimate(values), card_ledgers(setup)


def _sum(collectives: list[dict[str, Any]], kind: str, elements: int | None = None) -> tuple[int, int]:
    """(count, bytes of their first inputs) of one kind of collective, optionally of one size."""
    chosen = [c for c in collectives if c["kind"] == kind and (elements is None or c["elements"] == elements)]
    return len(chosen), sum(c["bytes"] for c in chosen)


def _state_rows(
    strategy: str, cost: dict[str, Any], ranks: list[dict[str, Any]], skip: tuple[str, ...] = ()
) -> list[Row]:
    """Every rank holds the same state: the cost model's card, part by part (rank 0 shown;
    a rank that holds other bytes makes the row differ)."""
    rows = []
    for part in STATE_PARTS:
        if part in skip:
            continue
        values = {r["state"][part] for r in ranks}
        measured = ranks[0]["state"][part] if len(values) == 1 else float("nan")
        rows.append(Row(strategy, f"{part} per rank", cost["memory"][part], measured, "B"))
    return rows


STEP_NOTE = "torch's Adam keeps a 4-byte step tensor per parameter tensor it updates (not per parameter)"


def _step_counter_row(strategy: str, ranks: list[dict[str, Any]]) -> Row:
    """Adam's step counters: one 4-byte tensor for each parameter tensor the rank holds."""
    largest = max(ranks, key=lambda r: r["state"]["steps"])
    return Row(
        strategy,
        "Adam step counters (largest rank)",
        0,
        largest["state"]["steps"],
        "B",
        accounted=4 * largest["parameter_tensors"],
        note=STEP_NOTE,
    )


def ddp_rows(cost: dict[str, Any], ranks: list[dict[str, Any]], n: int) -> list[Row]:
    issued = ranks[0]["collectives"]
    count, payload = _sum(issued, "all_reduce")
    buckets = ranks[0]["ddp_buckets"]
    buckets_note = (
        f"DDP packs the gradients into {len(buckets)} buckets ({', '.join(f'{b:,}' for b in buckets)} bytes,"
        " as DDP logs them): one all-reduce each, adding up to the one buffer"
    )
    return [
        *_state_rows("ddp", cost, ranks),
        _step_counter_row("ddp", ranks),
        Row("ddp", "all-reduce payload", cost["comm"]["gradient_buffer"], payload, "B", TRAFFIC_TOLERANCE),
        Row("ddp", "all-reduce count", 1, count, "count", accounted=len(buckets) - 1, note=buckets_note),
        Row("ddp", "bytes on the wire (ring)", cost["comm"]["dp"], 2 * (n - 1) / n * payload, "B", TRAFFIC_TOLERANCE),
        Row("ddp", "other collectives", 0, len(issued) - count, "count"),
    ]


def zero1_rows(cost: dict[str, Any], ranks: list[dict[str, Any]], n: int) -> list[Row]:
    issued = ranks[0]["collectives"]
    _, payload = _sum(issued, "all_reduce")
    casts, cast_bytes = _sum(issued, "broadcast")
    optimizer = [r["state"]["adam_m"] + r["state"]["adam_v"] for r in ranks]
    even = cost["memory"]["adam_m"] + cost["memory"]["adam_v"]
    return [
        *_state_rows("zero1", cost, ranks, skip=("adam_m", "adam_v")),
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
    gathers, gathered = _sum(issued, "all_gather")
    scatters, scattered = _sum(issued, "all_reduce")
    block_bytes, _ = _fsdp_units(shape)
    block = int(block_bytes // 4)
    layer_gathers, _ = _sum(issued, "all_gather", block // n)  # gloo's all-gather input: the rank's shard
    layer_scatters, _ = _sum(issued, "all_reduce", block)  # gloo has no reduce-scatter: the whole unit
    sizes_gathered = {c["bytes"] * n for c in issued if c["kind"] == "all_gather" and c["elements"] == block // n}
    sizes_scattered = {c["bytes"] for c in issued if c["kind"] == "all_reduce" and c["elements"] == block}
    sequence = [
        "G" if c["kind"] == "all_gather" else "R"
        for c in issued
        if (c["kind"], c["elements"]) in (("all_gather", block // n), ("all_reduce", block))
    ]
    forward_gathers, reduced_in_order = _layer_order(sequence, shape.layers)
    units = shape.layers + FSDP_UNITS_EXTRA
    micro_batches = gather["calls"] // (2 * units)
    layers = micro_batches * shape.layers  # the model's calls that are the blocks'
    ends = micro_batches * FSDP_UNITS_EXTRA
    uneven = block_bytes - gather["buffer_bytes"]
    uneven_note = (
        f"the cost model gives each of the {units} units an even share of the weights; a block holds"
        f" {uneven:,.0f} B more, the embedding and the output less"
    )
    return [
        *_state_rows("fsdp", cost, ranks),
        _step_counter_row("fsdp", ranks),
        Row("fsdp", "all-gathers of a layer (forward and backward)", 2 * layers, layer_gathers, "count"),
        Row("fsdp", "reduce-scatters of a layer", layers, layer_scatters, "count"),
        Row("fsdp", "layer all-gathers first, the forward's (L)", shape.layers, forward_gathers,
            "count"),
        Row("fsdp", "backward: each layer's reduce-scatter after its gather", layers, reduced_in_order,
            "count"),
        Row("fsdp", "all-gather message, one layer (gathered bytes)", gather["buffer_bytes"],
            _same_size(sizes_gathered), "B", accounted=uneven, note=uneven_note),
        Row("fsdp", "reduce-scatter message, one layer", scatter["buffer_bytes"], _same_size(sizes_scattered), "B",
            accounted=uneven, note=uneven_note),
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
    ]  # fmt: skip


def _same_size(sizes: set[float]) -> float:
    """The one size every such message had; NaN (the row differs) where none or several."""
    return next(iter(sizes)) if len(sizes) == 1 else float("nan")


def tp_rows(cost: dict[str, Any], ranks: list[dict[str, Any]], n: int, shape: Shape) -> list[Row]:
    issued = ranks[0]["collectives"]
    exchange = cost["comm"]["breakdown"][0]
    elements = int(exchange["buffer_bytes"] // 4)
    count, payload = _sum(issued, "all_reduce", elements)
    tokens = shape.micro_batch_size * shape.seq_len
    loss_count, loss_bytes = _sum(issued, "all_reduce", tokens)
    unexpected = len(issued) - count - loss_count
    gradient_extra = 4 * shape.vocab * shape.hidden * (1 - 1 / n)
    return [
        *_state_rows("tp", cost, ranks, skip=("gradients",)),
        Row(
            "tp",
            "gradients per rank",
            cost["memory"]["gradients"],
            ranks[0]["state"]["gradients"],
            "B",
            accounted=gradient_extra,
            note="PyTorch's row-parallel embedding returns its gradient whole on every rank (Megatron's stays split)",
        ),
        _step_counter_row("tp", ranks),
        Row("tp", "all-reduces of b·s·h (4 a layer, + embedding, + head)", exchange["count"], count, "count"),
        Row("tp", "all-reduce payload", exchange["count"] * exchange["buffer_bytes"], payload, "B", TRAFFIC_TOLERANCE),
        Row(
            "tp",
            f"all-reduces of b·s = {tokens} floats",
            0,
            loss_count,
            "count",
            accounted=PARALLEL_LOSS_EXCHANGES,
            note=f"the parallel cross-entropy over the split vocabulary all-reduces the logits' maximum, the sum of"
            f" exponentials and the target logit, b·s floats each ({loss_bytes} bytes); the cost model leaves them out",
        ),
        Row("tp", "other collectives", 0, unexpected, "count"),
    ]


def pp_rows(cost: dict[str, Any], ledgers: list[dict[str, float]], ranks: list[dict[str, Any]], n: int) -> list[Row]:
    rows = []
    for rank in ranks:
        stage = rank["rank"]
        params = ledgers[stage]["params_on_card"]
        rows.append(Row("pp", f"weights, stage {stage}", 4 * params, rank["state"]["weights"], "B"))
        rows.append(
            Row("pp", f"Adam m + v, stage {stage}", 8 * params, rank["state"]["adam_m"] + rank["state"]["adam_v"], "B")
        )
    sends = [_sum(r["collectives"], "send") for r in ranks]
    middle = cost["comm"]["breakdown"][0]
    rows += [
        _step_counter_row("pp", ranks),
        Row("pp", "sends, all stages (boundaries × 2m)", (n - 1) * middle["count"], sum(c for c, _ in sends), "count"),
        Row(
            "pp",
            "bytes sent, all stages",
            (n - 1) * cost["comm"]["pp"],
            sum(b for _, b in sends),
            "B",
            TRAFFIC_TOLERANCE,
        ),
    ]
    return rows


ONE_CARD_TOLERANCE = 1e-4  # fp32 sums taken in another order


def cp_rows(cost: dict[str, Any], ranks: list[dict[str, Any]], n: int) -> list[Row]:
    """Context parallelism by ring attention (dtfilm.validate.ring): the ring's sends against
    the cost model's two cp rows, the gradients' all-reduce over the cards that share weights,
    and the result against one card."""
    issued = ranks[0]["collectives"]
    blocks, grads = cost["comm"]["collectives"]["cp_ring_send_recv"], cost["comm"]["collectives"]["cp_gradient_ring"]
    hops = blocks["count"] * blocks["steps_each"] + grads["count"] * grads["steps_each"]
    sends, sent = _sum(issued, "send")
    reduce = cost["comm"]["collectives"]["dp_all_reduce"]
    reduces, reduced = _sum(issued, "all_reduce")
    loss = sum(r["checks"]["loss"] for r in ranks)
    gap = max(r["checks"]["gradient_gap"] for r in ranks)
    return [
        *_state_rows("cp", cost, ranks),
        _step_counter_row("cp", ranks),
        Row("cp", "ring sends: K/V c-1 hops forward and backward, gradients c", hops, sends, "count"),
        Row("cp", "ring bytes sent", blocks["bytes"] + grads["bytes"], sent, "B", TRAFFIC_TOLERANCE),
        Row("cp", "gradient all-reduces over the dp x cp cards", reduce["count"], reduces, "count"),
        Row("cp", "gradient all-reduce payload", reduce["buffer_bytes"], reduced, "B", TRAFFIC_TOLERANCE),
        Row("cp", "loss, the ranks' shares against one card", ranks[0]["checks"]["one_card_loss"], loss, "value",
            ONE_CARD_TOLERANCE),
        Row("cp", "largest gradient difference from one card", 0, gap, "value", accounted=ONE_CARD_TOLERANCE,
            at_most=True, note="fp32 sums taken in another order"),
    ]  # fmt: skip


def ep_rows(cost: dict[str, Any], ranks: list[dict[str, Any]], n: int, shape: Shape) -> list[Row]:
    """Expert parallelism: each rank's experts (state), the all-to-alls a step and each one's
    buffer, and the bytes that leave the rank; the shared weights' gradient all-reduce."""
    row = cost["comm"]["collectives"]["ep_all_to_all"]
    issued = ranks[0]["collectives"]
    count, _ = _sum(issued, "all_to_all")
    sizes = {c["bytes"] for c in issued if c["kind"] == "all_to_all"}
    each = sizes.pop() if len(sizes) == 1 else float("nan")
    left = _same([r["checks"]["all_to_all_bytes_sent"] for r in ranks])
    reduces, reduced = _sum(issued, "all_reduce")
    expert_grads = shape.layers * EXPERTS // n * 3 * shape.hidden * shape.ffn * 4  # fp32, this rank's experts
    return [
        *_state_rows("ep", cost, ranks),
        _step_counter_row("ep", ranks),
        Row("ep", "all-to-alls: dispatch and combine, forward and backward, a layer", row["calls"], count, "count"),
        Row("ep", "all-to-all buffer (tokens x k x hidden)", row["buffer_bytes"], each, "B"),
        Row("ep", "all-to-all bytes a rank sends to the others", row["bytes"], left, "B", TRAFFIC_TOLERANCE),
        Row("ep", "gradient all-reduces over the dp cards", 1, reduces, "count"),
        Row("ep", "all-reduce payload", cost["comm"]["gradient_buffer"], reduced, "B", TRAFFIC_TOLERANCE,
            accounted=-expert_grads, note="the experts' gradients reduce over dp / ep cards (here 1: none);"
            " the cost model prices them in the dp all-reduce"),
        Row("ep", "other collectives", 0, len(issued) - count - reduces, "count"),
    ]  # fmt: skip


def rows_for(strategy: str, ranks: list[dict[str, Any]], n: int, shape: Shape, pp_micro_batches: int) -> list[Row]:
    cost, ledgers = ask_cost_model(cost_inputs(strategy, n, shape, pp_micro_batches))
    ranks = sorted(ranks, key=lambda r: r["rank"])
    if strategy == "ddp":
        return ddp_rows(cost, ranks, n)
    if strategy == "zero1":
        return zero1_rows(cost, ranks, n)
    if strategy == "fsdp":
        return fsdp_rows(cost, ranks, n, shape)
    if strategy == "tp":
        return tp_rows(cost, ranks, n, shape)
    if strategy == "cp":
        return cp_rows(cost, ranks, n)
    if strategy == "ep":
        return ep_rows(cost, ranks, n, shape)
    if strategy == "overlap":
        return overlap_rows("overlap", cost, ranks)
    return pp_rows(cost, ledgers, ranks, n)


def _same(values: list[float]) -> float:
    """A figure every rank agrees on; NaN (the row differs) where they do not."""
    return values[0] if len(set(values)) == 1 else float("nan")


def model_buckets(cost: dict[str, Any], cap_mb: float) -> tuple[int, float]:
    """The cost model's bucket count at the run's cap, and the gradient bytes that give it at the
    model's own bucket size: overlap.dp_buckets is ceil(gradient bytes / bucket_bytes) at the
    estimate's bucket_bytes (DDP's 25 MiB default), asked at `cap_mb` by scaling the gradients by
    bucket_bytes / cap."""
    scaled = cost["comm"]["gradient_buffer"] * cost["overlap"]["dp_buckets"]["bucket_bytes"] / (cap_mb * 2**20)
    return int(overlap.dp_buckets(scaled)), scaled


def overlap_rows(label: str, cost: dict[str, Any], ranks: list[dict[str, Any]]) -> list[Row]:
    """DDP's buckets against the cost model's `framework` overlap: as many buckets as the model
    counts, each all-reduce issued as its bucket fills, in order, all but the last before the
    backward pass computes its last gradient."""
    cap = ranks[0]["bucket_cap_mb"]
    k, _ = model_buckets(cost, cap)
    issued = [r["issued"] for r in ranks]
    return [
        Row(label, f"gradient buckets at bucket_cap_mb {cap:g}", k, _same([len(r["ddp_buckets"]) for r in ranks]),
            "count"),
        Row(label, "bucket all-reduces issued in the backward pass", k, _same([len(i) for i in issued]), "count"),
        Row(label, "issued in the order the buckets fill", k,
            _same([sum(b["bucket"] == n for n, b in enumerate(i)) for i in issued]), "count"),
        Row(label, "issued before the last gradient op ends", k - 1,
            _same([sum(b["issued_ms"] < r["compute_end_ms"] for b in r["issued"]) for r in ranks]), "count"),
    ]  # fmt: skip


def overlap_figures(cost: dict[str, Any], ranks: list[dict[str, Any]]) -> dict[str, Any]:
    """Rank 0's timeline in ms beside the cost model's for the same figures: the buckets due as the
    backward computes (bucket i at i/k of it) and the exposed part, max(T/k, T - B (k-1)/k) for the
    all-reduces' busy time T and the backward's B (dtfilm.cost.overlap), both measured."""
    rank = min(ranks, key=lambda r: r["rank"])
    backward = rank["run_compute_end_ms"]
    spans = sorted((a["start_ms"], a["end_ms"]) for a in rank["all_reduces"])
    busy = beside = 0.0
    reach = float("-inf")
    for start, end in spans:  # the union of the spans (a bucket queues while the one before runs)
        start = max(start, reach)
        if end > start:
            busy += end - start
            beside += max(0.0, min(end, backward) - min(start, backward))
            reach = end
    k, scaled = model_buckets(cost, rank["bucket_cap_mb"])
    due = overlap.dp_bucket_timeline(busy, scaled, backward)
    runs = rank["all_reduces"]
    sizes = rank["ddp_buckets"]
    return {
        "rank": rank["rank"],
        "bucket_cap_mb": rank["bucket_cap_mb"],
        "backward_ms": backward,
        "busy_ms": busy,
        "beside_ms": beside,
        "after_ms": max(0.0, max((end for _, end in spans), default=backward) - backward),
        "ran_before_end": sum(start < backward for start, _ in spans),
        "model_after_ms": float(overlap.dp_bucketed_exposed(busy, scaled, backward)),
        "model_buckets": k,
        "buckets": [
            {
                "bucket": mark["bucket"],
                "bucket_bytes": sizes[mark["bucket"]] if mark["bucket"] < len(sizes) else 0,
                "issued_ms": mark["issued_ms"],
                # gloo's workers and NCCL's stream run them in the order issued
                "start_ms": runs[i]["start_ms"] if i < len(runs) else float("nan"),
                "end_ms": runs[i]["end_ms"] if i < len(runs) else float("nan"),
                "model_due_ms": due[i]["ready"] if i < len(due) else float("nan"),
            }
            for i, mark in enumerate(rank["issued"])
        ],
    }
