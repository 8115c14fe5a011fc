"""The planner: every plan for a model on N cards, vectorised with numpy, ranked by time
per token, with the pick explained in the words of seed 001's decision tree.

The formulas mirror `estimate_setup` element for element (a test compares the two plan by
plan; the complete ledger's terms, `dtfilm.cost.ledger`, and the network's, `dtfilm.cost.network`,
are the estimate's own functions, called on arrays); here they run on arrays, one row per plan,
grouped by pipeline depth so that the most loaded stage is a max over a (plans x stages) matrix.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dtfilm.cost import batch, efficiency, memory, network, overlap, pipeline
from dtfilm.cost import ledger as terms
from dtfilm.cost.comm import (
    all_gather_bytes,
    all_reduce_bytes,
    fsdp_calls,
    group_crosses_nodes,
    shard_group_crosses_nodes,
    tp_exchanges_per_layer,
)
from dtfilm.cost.hardware import LINKS
from dtfilm.cost.models import head_matmul_params, layer_params, param_count
from dtfilm.cost.setup import Setup
from dtfilm.units import format_quantity

ZERO_STAGES = (0, 1, 2, 3)
MAX_MICRO_BATCHES = 1024  # the envelope's bounds (dtfilm.cost.inputs takes them from here)
MAX_MICRO_BATCH_SIZE = 1024
SCHEDULE_NAMES = pipeline.SCHEDULES  # index 0: 1f1b, 1: gpipe
FULL = memory.RECOMPUTE_MODES.index("full")
# Virtual stages the planner tries under 1F1B (Megatron-LM needs them to divide a stage's layers;
# the planner asks only that every stage have at least v layers, as the estimate does).
VIRTUAL_STAGE_CHOICES = (1, 2, 4, 8)


def divisors(n: int) -> list[int]:
    """Every divisor of n, ascending, in O(sqrt n): a global batch of millions of sequences
    split over a few replicas must not take a loop of millions."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return small + [n // d for d in reversed(small) if d * d != n]


def factorisations(setup: Setup) -> list[tuple[int, int, int, int]]:
    """(dp, tp, pp, cp) with dp*tp*pp*cp = cards that the model allows: tp divides the heads
    (and divides or is a multiple of the KV heads), pp at most the layers, cp divides s."""
    shape, cards = setup.shape, setup.cards
    out = []
    for tp in divisors(cards):
        if shape.heads % tp or (shape.kv_heads % tp and tp % shape.kv_heads):
            continue
        for pp in divisors(cards // tp):
            if pp > shape.layers:
                continue
            for cp in divisors(cards // (tp * pp)):
                if setup.seq_len % cp:
                    continue
                out.append((cards // (tp * pp * cp), tp, pp, cp))
    return out


def no_layout_reason(setup: Setup, global_batch: int) -> str | None:
    """Why no plan can even be laid out for these cards and this batch (None when some can):
    which divisibility rule leaves nothing, so the user knows what to change."""
    shape, cards = setup.shape, setup.cards
    layouts = factorisations(setup)
    if not layouts:
        return (
            f"no layout splits {cards:,} cards as dp x tp x pp x cp: tp must divide the {shape.heads} heads, pp be at"
            f" most the {shape.layers} layers and cp divide the {setup.seq_len:,} tokens of a sequence"
        )
    degrees = sorted({dp for dp, *_ in layouts})
    if not any(global_batch % dp == 0 for dp in degrees):
        shown = ", ".join(f"{dp:,}" for dp in degrees[:8]) + (", ..." if len(degrees) > 8 else "")
        return (
            f"no layout divides {cards:,} cards and a global batch of {global_batch:,} sequences: dp must divide the"
            f" batch, and these cards allow dp = {shown}; valid: a global batch that one of them divides, or a card"
            " count whose layouts do"
        )
    for dp in degrees:
        if global_batch % dp == 0:
            per_replica = global_batch // dp
            if any(m <= MAX_MICRO_BATCHES and per_replica // m <= MAX_MICRO_BATCH_SIZE for m in divisors(per_replica)):
                return None
    return (
        f"a global batch of {global_batch:,} sequences on {cards:,} cards needs more than {MAX_MICRO_BATCHES:,}"
        f" micro-batches of at most {MAX_MICRO_BATCH_SIZE:,} sequences on every layout; valid: a smaller global batch"
        " or more cards"
    )


@dataclass(frozen=True)
class Plans:
    """Every evaluated plan as parallel arrays (one entry per plan)."""

    dp: np.ndarray
    tp: np.ndarray
    pp: np.ndarray
    cp: np.ndarray
    zero: np.ndarray
    micro_batches: np.ndarray
    micro_batch_size: np.ndarray
    recompute: np.ndarray  # index into memory.RECOMPUTE_MODES
    schedule: np.ndarray
    virtual_stages: np.ndarray
    memory_total: np.ndarray
    comm_bytes: np.ndarray
    comm_seconds: np.ndarray
    compute_seconds: np.ndarray
    bubble_seconds: np.ndarray
    step_seconds: np.ndarray
    exposed_seconds: np.ndarray  # the traffic the step waits for (all of it under overlap none)
    tokens_per_step: np.ndarray

    @property
    def count(self) -> int:
        return int(self.dp.size)

    @property
    def fits(self) -> np.ndarray:
        return self.memory_total <= self._capacity

    @property
    def roomy(self) -> np.ndarray:
        """Fits with at least `fit_margin` to spare: room for the allocator's fragmentation,
        which `memory_total` does not count (dtfilm.cost.ledger.FIT_MARGIN_SHARE)."""
        return self.memory_total <= (1 - terms.FIT_MARGIN_SHARE) * self._capacity

    _capacity: float = 0.0

    def row(self, i: int) -> dict[str, Any]:
        return {
            "dp": int(self.dp[i]),
            "tp": int(self.tp[i]),
            "pp": int(self.pp[i]),
            "cp": int(self.cp[i]),
            "zero": int(self.zero[i]),
            "micro_batches": int(self.micro_batches[i]),
            "micro_batch_size": int(self.micro_batch_size[i]),
            "checkpointing": bool(self.recompute[i] == FULL),
            "recompute": memory.RECOMPUTE_MODES[int(self.recompute[i])],
            "schedule": SCHEDULE_NAMES[int(self.schedule[i])],
            "virtual_stages": int(self.virtual_stages[i]),
            "memory_total": float(self.memory_total[i]),
            "comm_bytes": float(self.comm_bytes[i]),
            "comm_seconds": float(self.comm_seconds[i]),
            "compute_seconds": float(self.compute_seconds[i]),
            "bubble_seconds": float(self.bubble_seconds[i]),
            "exposed_seconds": float(self.exposed_seconds[i]),
            "step_seconds": float(self.step_seconds[i]),
            "tokens_per_step": int(self.tokens_per_step[i]),
            "seconds_per_token": float(self.step_seconds[i] / self.tokens_per_step[i]),
        }


def _grid(
    setup: Setup,
    global_batch: int,
    layouts: list[tuple[int, int, int, int]] | None = None,
    virtual_stages: tuple[int, ...] = VIRTUAL_STAGE_CHOICES,
) -> dict[str, np.ndarray]:
    """Every combination: factorisation (or only `layouts`) x micro-batch split x ZeRO x
    recomputation x schedule x virtual stages (`virtual_stages`' choices)."""
    base = []
    for dp, tp, pp, cp in factorisations(setup) if layouts is None else layouts:
        if global_batch % dp:
            continue
        per_replica = global_batch // dp
        for m in divisors(per_replica):
            # only plans inside the envelope, so that the pick renders as any input would
            if m <= MAX_MICRO_BATCHES and per_replica // m <= MAX_MICRO_BATCH_SIZE:
                base.append((dp, tp, pp, cp, m, per_replica // m))
    if not base:
        return {}
    rows = np.array(base, dtype=np.int64)
    extra = np.array(
        [
            (z, r, s, v)
            for z in ZERO_STAGES
            for r in range(len(memory.RECOMPUTE_MODES))
            for s in (0, 1)
            for v in virtual_stages
        ],
        dtype=np.int64,
    )
    rows_rep = np.repeat(rows, len(extra), axis=0)
    extra_tiled = np.tile(extra, (len(rows), 1))
    names = ("dp", "tp", "pp", "cp", "micro_batches", "micro_batch_size")
    grid = {name: rows_rep[:, i] for i, name in enumerate(names)}
    grid.update(
        zero=extra_tiled[:, 0],
        recompute=extra_tiled[:, 1],
        schedule=extra_tiled[:, 2],
        virtual_stages=extra_tiled[:, 3],
    )
    # The schedule only matters with a pipeline, ZeRO only with cards to shard over, virtual stages
    # only with an interleaved 1F1B pipeline whose every stage has as many layers: drop twins.
    fewest_layers = setup.shape.layers // grid["pp"]
    interleaved_ok = (grid["virtual_stages"] == 1) | (
        (grid["pp"] > 1) & (grid["schedule"] == 0) & (grid["virtual_stages"] <= fewest_layers)
    )
    shards = grid["dp"] * grid["cp"]  # ZeRO shards over the cards that share weights
    keep = ((grid["schedule"] == 0) | (grid["pp"] > 1)) & ((grid["zero"] == 0) | (shards > 1)) & interleaved_ok
    if setup.flash_attention:  # FlashAttention recomputes the scores anyway: "none" is "selective"
        keep &= grid["recompute"] != memory.RECOMPUTE_MODES.index("none")
    return {k: v[keep] for k, v in grid.items()}


def _crossing(setup: Setup, size: np.ndarray, stride: np.ndarray) -> np.ndarray:
    """Whether each plan's group of `size` cards `stride` ranks apart spans two nodes."""
    # Each (stride, size) pair as one integer: np.unique of rows sorts them as records, 8x slower
    base = int(size.max(initial=0)) + 1
    unique, inverse = np.unique(stride.astype(np.int64) * base + size, return_inverse=True)
    crossing = np.array(
        [group_crosses_nodes(int(k) // base, int(k) % base, setup.cards, setup.cards_per_node) for k in unique],
        dtype=bool,
    )
    return crossing[inverse.reshape(-1)]


def evaluate(
    setup: Setup,
    global_batch: int,
    layouts: list[tuple[int, int, int, int]] | None = None,
    virtual_stages: tuple[int, ...] = VIRTUAL_STAGE_CHOICES,
) -> Plans:
    """Memory, traffic and time of every plan (the scalar model's formulas, on arrays); with
    `layouts`, of the plans with those (dp, tp, pp, cp) only, each plan priced as in the full sweep.
    `virtual_stages`: the interleaving depths tried (a published run may state one outside
    VIRTUAL_STAGE_CHOICES, as Megatron's 3 layers a stage in one virtual stage each)."""
    g = _grid(setup, global_batch, layouts, virtual_stages)
    if not g:
        empty = np.zeros(0)
        return Plans(*([empty] * 18), _capacity=setup.card.memory_bytes)
    shape = setup.shape
    per = memory.BYTES_PER_PARAM[setup.precision]
    element = memory.ACTIVATION_ELEMENT_BYTES[setup.precision]
    arch_total = param_count(shape)
    scale = setup.params / arch_total
    dp, tp, pp, cp, m, b = (g[k] for k in ("dp", "tp", "pp", "cp", "micro_batches", "micro_batch_size"))
    zero, rec, sched, v = g["zero"], g["recompute"], g["schedule"], g["virtual_stages"]
    ckpt = rec == FULL
    n = dp.size
    total = np.zeros(n)
    params_card = np.zeros(n)
    layers_card = np.zeros(n)
    ends_card = np.zeros(n)
    stage_seconds = np.zeros(n)
    stage_matmul = np.zeros(n)  # the busiest stage's terms, that its traffic hides under
    stage_attention = np.zeros(n)
    per_layer = (
        memory.activation_factor(
            rec,
            shape.heads,
            setup.seq_len,
            shape.hidden,
            setup.flash_attention,
            tp,
            setup.sequence_parallel,
            shape.kv_heads,
        )
        * setup.seq_len
        * b
        * shape.hidden
        * memory.ACTIVATION_BYTES_SCALE[setup.precision]
    ) / cp
    shards = dp * cp  # the cards that share weights (Setup.shard_group)
    opt_share = np.where(zero >= 1, 1 / shards, 1.0)
    grad_share = np.where(zero >= 2, 1 / shards, 1.0)
    weight_share = np.where(zero >= 3, 1 / shards, 1.0)
    state_per_param = (
        per.weights * weight_share
        + per.gradients * grad_share
        + (per.master_weights + per.adam_m + per.adam_v) * opt_share
    )
    head = head_matmul_params(shape) * scale
    # the complete ledger's terms (dtfilm.cost.ledger), the same functions the estimate calls
    working_set = terms.recompute_working_set(
        ckpt, shape.heads, setup.seq_len, shape.hidden, setup.precision, b, tp, cp,
        setup.flash_attention, setup.sequence_parallel, shape.kv_heads,
    )  # fmt: skip
    reserve = terms.reserve_bytes(setup.card.name, shards, tp, pp, cp)
    fp8_copies_per_param = terms.fp8_weight_copies(1.0, setup.precision, weight_share)
    for p in np.unique(pp):
        rows = np.nonzero(pp == p)[0]
        p = int(p)
        arch = np.array(pipeline.stage_architecture_params(shape, p), dtype=float)
        norms = np.array(pipeline.stage_norm_params(shape, p), dtype=float)
        ends = np.array([pipeline.tp_end_exchanges(i, p) for i in range(p)], dtype=float)
        layers = np.array(pipeline.stage_layers(shape.layers, p), dtype=float)
        stage = np.arange(p)
        in_flight = pipeline.micro_batches_in_flight(
            stage[None, :], p, m[rows][:, None], sched[rows][:, None], v[rows][:, None]
        )
        params = setup.params * ((arch - norms)[None, :] / tp[rows][:, None] + norms[None, :]) / arch_total
        in_flight = np.broadcast_to(in_flight, (rows.size, p))
        gpipe = sched[rows] == SCHEDULE_NAMES.index("gpipe")
        logits_in_flight = terms.logits_micro_batches(in_flight[:, -1], gpipe)
        logits = terms.logits_bytes(b[rows], setup.seq_len, shape.vocab, tp[rows], cp[rows], logits_in_flight)
        kept = params * state_per_param[rows][:, None] + layers[None, :] * per_layer[rows][:, None] * in_flight
        stage_total = (
            kept
            + params * fp8_copies_per_param[rows][:, None]
            + (working_set[rows] + reserve[rows])[:, None]
            + np.where(stage == p - 1, 1.0, 0.0)[None, :] * logits[:, None]
        )
        pick = np.arange(rows.size)
        total[rows] = stage_total[pick, np.argmax(stage_total, axis=1)]
        # the traffic is the card's with the most state and activations (estimate._traffic_stage)
        worst = np.argmax(kept, axis=1)
        params_card[rows] = params[pick, worst]
        layers_card[rows] = layers[worst]
        ends_card[rows] = ends[worst]
        times = efficiency.stage_time(
            setup.card,
            setup.precision,
            layers=layers[None, :],
            tokens=(b[rows] * setup.seq_len / cp[rows])[:, None],
            seq_len=setup.seq_len,
            hidden=shape.hidden,
            tp=tp[rows][:, None],
            layer_params=layer_params(shape) * scale,
            head_params=np.where(stage == p - 1, head, 0.0)[None, :],
            recompute=rec[rows][:, None],
            heads=shape.heads,
            cp=cp[rows][:, None],
            flash=setup.flash_attention,
            sequence_parallel=setup.sequence_parallel,
            overlap=setup.overlap,
            fp8_attention=setup.fp8_attention,
        )
        seconds = np.broadcast_to(times.seconds, (rows.size, p))
        busiest = np.argmax(seconds, axis=1)
        stage_seconds[rows] = seconds[pick, busiest]
        stage_matmul[rows] = np.broadcast_to(times.matmul, (rows.size, p))[pick, busiest]
        stage_attention[rows] = np.broadcast_to(times.attention, (rows.size, p))[pick, busiest]

    weight_bytes, grad_bytes = params_card * per.weights, params_card * per.gradients
    # Every call priced by dtfilm.cost.network, the estimate's own functions, on arrays.
    k = setup.cards_per_node
    fabric = LINKS[setup.card.nvlink]

    def call(collective: str, bytes_each: Any, steps: Any, size: Any, per_node: Any, crosses: Any) -> Any:
        price = network.price_call(
            setup.network, collective, bytes_each, steps, size, per_node, crosses, fabric, setup.inter_node, k
        )
        return price.seconds

    strides = {"tp": np.ones(n, dtype=np.int64), "cp": tp, "pp": tp * cp}
    groups = {"tp": tp, "pp": pp, "cp": cp}
    crosses = {name: _crossing(setup, size, strides[name]) for name, size in groups.items()}
    per_node = {name: network.members_per_node(strides[name], size, k) for name, size in groups.items()}
    # gradients (and ZeRO-3's weights) travel over the dp x cp cards that share weights
    degrees = np.stack([tp, cp, pp, dp], axis=1)
    unique, inverse = np.unique(degrees, axis=0, return_inverse=True)
    shared = np.array(
        [shard_group_crosses_nodes(*map(int, row), setup.cards, setup.cards_per_node) for row in unique], dtype=bool
    )
    crosses["dp"] = shared[inverse.reshape(-1)]
    per_node["dp"] = network.shard_members_per_node(tp, cp, pp, dp, k)

    def dp_call(collective: str, bytes_each: Any, steps: Any) -> Any:
        return call(collective, bytes_each, steps, shards, per_node["dp"], crosses["dp"])

    dp_plain_bytes = all_reduce_bytes(grad_bytes, shards)
    dp_plain_secs = 1 * dp_call("all-reduce", dp_plain_bytes, 2 * (shards - 1))
    fsdp_count, split = fsdp_calls(setup.network, m, np.maximum(layers_card, 1))
    gather_each = all_gather_bytes(weight_bytes / split, shards)
    scatter_each = all_gather_bytes(grad_bytes / split, shards)
    dp_fsdp_bytes = 2 * fsdp_count * gather_each + fsdp_count * scatter_each
    dp_gather_secs = 2 * fsdp_count * dp_call("all-gather", gather_each, shards - 1)
    dp_scatter_secs = fsdp_count * dp_call("reduce-scatter", scatter_each, shards - 1)
    dp_fsdp_secs = dp_gather_secs + dp_scatter_secs
    active = shards > 1
    dp_bytes = np.where(active, np.where(zero >= 3, dp_fsdp_bytes, dp_plain_bytes), 0.0)
    dp_secs = np.where(active, np.where(zero >= 3, dp_fsdp_secs, dp_plain_secs), 0.0)

    act_buffer = b * setup.seq_len / cp * shape.hidden * element
    per_layer_tp = np.where(ckpt, tp_exchanges_per_layer(True)["total"], tp_exchanges_per_layer(False)["total"])
    tp_count = (per_layer_tp * layers_card + ends_card) * m
    tp_each = all_reduce_bytes(act_buffer, tp)
    tp_bytes = np.where(tp > 1, tp_count * tp_each, 0.0)
    tp_call = call("all-reduce", tp_each, 2 * (tp - 1), tp, per_node["tp"], crosses["tp"])
    tp_secs = np.where(tp > 1, tp_count * tp_call, 0.0)

    pp_each = act_buffer / tp
    pp_count = 2 * m * v
    pp_bytes = np.where(pp > 1, pp_count * pp_each, 0.0)
    pp_secs = np.where(pp > 1, pp_count * call("send/recv", pp_each, 1, pp, per_node["pp"], crosses["pp"]), 0.0)

    kv_buffer = 2 * (b * setup.seq_len / cp * shape.kv_hidden * element) / tp
    cp_passes = layers_card * m  # K/V: c-1 hops forward and c-1 backward; their gradients c hops
    cp_bytes = np.where(cp > 1, cp_passes * (2 * (cp - 1) + cp) * kv_buffer, 0.0)
    # the K/V ring (2 passes of c-1 hops) and the gradients' ring (c hops), timed as `comm` rows
    cp_ring = call("ring send/recv", (cp - 1) * kv_buffer, cp - 1, cp, per_node["cp"], crosses["cp"])
    cp_grad = call("gradient ring", cp * kv_buffer, cp, cp, per_node["cp"], crosses["cp"])
    cp_ring_secs = np.where(cp > 1, 2 * cp_passes * cp_ring, 0.0)
    cp_grad_secs = np.where(cp > 1, cp_passes * cp_grad, 0.0)
    cp_secs = cp_ring_secs + cp_grad_secs

    tokens = dp * m * b * setup.seq_len
    compute = m * stage_seconds
    comm_secs = dp_secs + tp_secs + pp_secs + cp_secs
    exposed = overlap.exposed_by_group(
        setup.overlap,
        dp_seconds=dp_secs,
        dp_gather_seconds=np.where(active & (zero >= 3), dp_gather_secs, 0.0),
        dp_scatter_seconds=np.where(active & (zero >= 3), dp_scatter_secs, 0.0),
        zero=zero,
        gradient_bytes=grad_bytes,
        layers=layers_card,
        micro_batches=m,
        micro_batch_seconds=stage_seconds,
        matmul_seconds=stage_matmul,
        attention_seconds=stage_attention,
        full_recompute=ckpt,
        tp_seconds=tp_secs,
        tp=tp,
        tp_forward_share=tp_exchanges_per_layer(False)["forward"] / per_layer_tp,
        sequence_parallel=setup.sequence_parallel,
        tp_overlap=setup.tp_overlap,
        dp_overlap=setup.dp_overlap,
        pp_overlap=setup.pp_overlap,
        pp_seconds=pp_secs,
        pp=pp,
        virtual_stages=v,
        cp_ring_seconds=cp_ring_secs,
        cp_gradient_seconds=cp_grad_secs,
        cp=cp,
        tp_crosses_nodes=crosses["tp"],
    )
    exposed_secs = exposed["dp"] + exposed["tp"] + exposed["pp"] + exposed["cp"]
    # the same sum as the estimate's, over arrays
    step, bubble = overlap.step_seconds(setup.overlap, compute, pipeline.bubble_overhead(pp, m, v), comm_secs, exposed)
    return Plans(
        dp=dp, tp=tp, pp=pp, cp=cp, zero=zero, micro_batches=m, micro_batch_size=b,
        recompute=rec, schedule=sched, virtual_stages=v, memory_total=total,
        comm_bytes=dp_bytes + tp_bytes + pp_bytes + cp_bytes, comm_seconds=comm_secs,
        compute_seconds=compute, bubble_seconds=bubble, step_seconds=step, exposed_seconds=exposed_secs,
        tokens_per_step=tokens, _capacity=setup.card.memory_bytes,
    )  # fmt: skip


def setup_for(setup: Setup, plan: dict[str, Any]) -> Setup:
    """The scalar Setup of one planned row (for the test that compares the two models)."""
    keys = (
        "dp",
        "tp",
        "pp",
        "cp",
        "zero",
        "micro_batches",
        "micro_batch_size",
        "recompute",
        "schedule",
        "virtual_stages",
    )
    return replace(setup, **{k: plan[k] for k in keys})


def branch(plans: Plans, best: int | None = None) -> str:
    """Where seed 001's decision tree ends: "ddp" (one card holds it all), "fsdp" (sharding
    over the data-parallel group is enough), "cp" (the sequence is too long: with the layers
    split as the fastest plan splits them, only plans that also split the sequence fit) or
    "3d" (the layers must be split)."""
    plain = (plans.tp == 1) & (plans.pp == 1) & (plans.cp == 1)
    if np.any(plans.fits & plain & (plans.zero == 0)):
        return "ddp"
    if np.any(plans.fits & plain):
        return "fsdp"
    if best is not None and plans.cp[best] > 1:
        same_layers = (plans.tp == plans.tp[best]) & (plans.pp == plans.pp[best]) & (plans.cp == 1)
        if not np.any(plans.fits & same_layers):
            return "cp"
    return "3d"


def fastest(plans: Plans, mask: np.ndarray) -> int | None:
    """The plan with the least time per token among those `mask` selects (None if none)."""
    candidates = np.nonzero(mask)[0]
    if not candidates.size:
        return None
    return int(candidates[np.argmin(plans.step_seconds[candidates] / plans.tokens_per_step[candidates])])


def fastest_with_room(plans: Plans, mask: np.ndarray) -> int | None:
    """The fastest plan `mask` selects that fits with `fit_margin` to spare, else the fastest
    that fits at all: a plan at 79 GB of 80 is one the allocator's fragmentation may stop, so it
    is picked only when no plan has room (the planner's pick and the tree's plan)."""
    with_room = fastest(plans, mask & plans.roomy)
    return with_room if with_room is not None else fastest(plans, mask)


def ranked(plans: Plans) -> np.ndarray:
    """The plans that fit: those with `fit_margin` to spare first, then the tight fits; within
    each, fastest per token first, then the least memory. `ranked(plans)[0]` is the pick."""
    fits = np.nonzero(plans.fits)[0] if plans.count else np.zeros(0, dtype=int)
    per_token = plans.step_seconds[fits] / plans.tokens_per_step[fits]
    return fits[np.lexsort((plans.memory_total[fits], per_token, ~plans.roomy[fits]))]


def best_plain(plans: Plans) -> int | None:
    """The fastest fitting plan that splits only the batch (data parallel, with any ZeRO stage)."""
    plain = (plans.tp == 1) & (plans.pp == 1) & (plans.cp == 1)
    return fastest(plans, plans.fits & plain)


def best_without_cp(plans: Plans) -> int | None:
    """The fastest fitting plan that does not split the sequence (cp 1): named beside a pick
    that does, since at short sequences practice keeps cp 1 (Llama 3 at 8K tokens)."""
    return fastest(plans, plans.fits & (plans.cp == 1))


def _least_stage(plans: Plans, best: int | None) -> str:
    """The least ZeRO stage that fits with the batch split alone, said beside the pick's own
    stage, so that "stage 3 is the least that fits" never stands beside a ZeRO-2 pick unexplained."""
    plain = (plans.tp == 1) & (plans.pp == 1) & (plans.cp == 1)
    stage = int(plans.zero[plans.fits & plain].min())
    if best is None:
        return f"stage {stage} is the least that fits"
    if not plain[best]:
        return f"with the batch split alone, stage {stage} is the least that fits; the pick also splits the layers"
    if int(plans.zero[best]) != stage:
        return f"stage {stage} is the least that fits; the pick takes stage {int(plans.zero[best])}"
    return f"stage {stage} is the least that fits"


def explain(setup: Setup, plans: Plans, best: int | None) -> list[str]:
    """The pick in the words of seed 001's decision tree, with the figures behind it."""
    plain = (plans.tp == 1) & (plans.pp == 1) & (plans.cp == 1)
    lines = []
    taken = branch(plans, best)
    if taken == "ddp":
        lines.append("Does one GPU hold the full training state? Yes: DDP, the simple and efficient first choice.")
    elif taken == "fsdp":
        lines.append(
            "One GPU does not hold the full training state, but sharding it over the data-parallel"
            f" group does: FSDP / ZeRO ({_least_stage(plans, best)})."
        )
    elif taken == "cp":
        lines.append(
            "Even with the layers split, one sequence's activations do not fit: the sequence is too long."
            " Add context parallelism (SP / CP) to split it."
        )
    else:
        lines.append(
            "Even sharded over every card, one GPU does not hold it: add tensor parallelism inside a node,"
            " pipeline stages across nodes, and context parallelism for long sequences."
        )
    if best is None:
        lines.append("No plan fits: more cards, a card with more memory, or a shorter sequence.")
        return lines
    row = plans.row(best)
    name = f"dp {row['dp']} x tp {row['tp']} x pp {row['pp']} x cp {row['cp']}"
    if row["zero"]:
        name += f", ZeRO-{row['zero']}" + (" (FSDP)" if row["zero"] == 3 else "")
    lines.append(f"The fastest plan that fits: {name}, {row['step_seconds']:.3g} s per step.")
    if row["tp"] > 1:
        inside = f"inside a node, on {LINKS[setup.card.nvlink].label}"
        where = inside if row["tp"] <= setup.cards_per_node else "across nodes (slow links)"
        lines.append(f"Tensor parallel {row['tp']} {where}: each card holds 1/{row['tp']} of every layer.")
    if row["pp"] > 1:
        bubble = pipeline.bubble_fraction(row["pp"], row["micro_batches"], row["virtual_stages"])
        interleaved = (
            f", interleaved as {row['virtual_stages']} virtual stages per card" if row["virtual_stages"] > 1 else ""
        )
        lines.append(
            f"{row['pp']} pipeline stages of about {setup.shape.layers // row['pp']} layers{interleaved};"
            f" {row['micro_batches']} micro-batches keep the bubble at {format_quantity(bubble, '%')}."
        )
    if row["cp"] > 1:
        lines.append(f"Context parallel {row['cp']} splits each {setup.seq_len}-token sequence.")
    if row["recompute"] == "full":
        lines.append("Gradient checkpointing: activations are recomputed, a third more compute for far less memory.")
    elif row["recompute"] == "none":
        lines.append("No recomputation: the attention scores are kept, the fastest when they fit.")
    without = best_without_cp(plans)
    if row["cp"] > 1 and without is not None:
        other = plans.row(without)
        slower = other["seconds_per_token"] / row["seconds_per_token"] - 1
        lines.append(
            f"Without context parallelism the fastest is dp {other['dp']} x tp {other['tp']} x pp {other['pp']},"
            f" {other['step_seconds']:.3g} s per step, {100 * slower:.1f}% slower per token."
        )
    alone = best_plain(plans)
    if alone is not None and not plain[best]:
        other = plans.row(alone)
        said = (
            f"Data parallelism alone would take {other['step_seconds']:.3g} s per step, of which"
            f" {other['comm_seconds']:.3g} s is traffic"
        )
        if row["comm_seconds"] < other["comm_seconds"]:
            said += f": sharding the layers shrinks the buffer each card exchanges ({row['comm_seconds']:.3g} s here)."
        else:  # (not "shrinks" beside more traffic: the pick is faster for other reasons)
            said += (
                f"; the pick moves more ({row['comm_seconds']:.3g} s) and is faster all the same"
                f" (`dtfilm plan --rank --tp 1 --pp 1 --cp 1 --zero {other['zero']}` says why)."
            )
        lines.append(said)
    return lines


# What a user may fix on `dtfilm plan`'s command line (CONTRACT.md: "degrees given as flags
# restrict the search, and plans[0] is the pick"); ZeRO's stage with them, as a plan is written.
FIXABLE = ("dp", "tp", "pp", "cp", "zero")


def matching(plans: Plans, fixed: dict[str, int]) -> np.ndarray:
    """The plans whose degrees (and ZeRO stage) are those `fixed` names."""
    mask = np.ones(plans.count, dtype=bool)
    for name, value in fixed.items():
        mask &= getattr(plans, name) == value
    return mask


def plan(setup: Setup, global_batch: int, top: int = 10, fixed: dict[str, int] | None = None) -> dict[str, Any]:
    """Evaluate every plan; keep those that fit (and match `fixed`, the degrees given as flags),
    ranked by time per token."""
    fixed = dict(fixed or {})
    started = time.perf_counter()
    plans = evaluate(setup, global_batch)
    order = ranked(plans)
    if fixed:
        order = order[matching(plans, fixed)[order]]
    seconds = time.perf_counter() - started
    best = int(order[0]) if order.size else None
    tokens = global_batch * setup.seq_len
    reason = explain(setup, plans, best)
    if fixed:
        given = ", ".join(f"{name} {value}" for name, value in fixed.items())
        reason.insert(0, f"Restricted to the plans with {given}, as given.")
    return {
        "cards": setup.cards,
        "global_batch": global_batch,
        "tokens_per_step": tokens,
        # where that batch stands against published runs of this size ("" within them)
        "batch_note": batch.standing(setup.params, tokens).note,
        "fixed": fixed,
        "evaluated": plans.count,
        "fitting": int(order.size),
        "seconds": seconds,
        "plans": [plans.row(int(i)) for i in order[:top]],
        "pick": plans.row(best) if best is not None else None,
        "branch": branch(plans, best),
        "data_parallel_only": plans.row(alone) if (alone := best_plain(plans)) is not None else None,
        # the fastest fitting plan with cp 1, beside a pick that splits the sequence
        "without_cp": plans.row(other) if (other := best_without_cp(plans)) is not None else None,
        "overlap": setup.overlap,
        "reason": reason,
    }
