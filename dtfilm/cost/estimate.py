"""Assemble every number of one Setup into the JSON-able object of CONTRACT.md."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from dtfilm.cost import batch, comm, compute, context, efficiency, memory, overlap, pipeline
from dtfilm.cost import ledger as terms
from dtfilm.cost.hardware import LINKS
from dtfilm.cost.inputs import Value, build_setup
from dtfilm.cost.models import head_matmul_params, layer_params, param_count
from dtfilm.cost.planner import MAX_MICRO_BATCH_SIZE
from dtfilm.cost.setup import Setup

MEMORY_PARTS = memory.MEMORY_PARTS
LEDGER_EXTRA_PARTS = terms.LEDGER_EXTRA_PARTS
MAX_SEQ_LEN = 2_097_152  # the envelope's longest sequence (dtfilm.cost.inputs)
DP_ALLREDUCE_LIMIT_FACTOR = 2  # a ring all-reduce sends 2(n-1)/n of the buffer: twice it as n grows


def _activations_per_layer(setup: Setup) -> float:
    return memory.activation_bytes_per_layer(
        setup.seq_len,
        setup.micro_batch_size,
        setup.shape.hidden,
        setup.precision,
        setup.recompute,
        setup.shape.heads,
        setup.tp,
        setup.cp,
        setup.flash_attention,
        setup.sequence_parallel,
        setup.shape.kv_heads,
    )


def card_ledgers(setup: Setup) -> list[dict[str, float]]:
    """The memory ledger of one card of each pipeline stage (dp, tp, cp ranks are alike)."""
    arch = pipeline.stage_architecture_params(setup.shape, setup.pp)
    norms = pipeline.stage_norm_params(setup.shape, setup.pp)
    arch_total = param_count(setup.shape)
    layers = pipeline.stage_layers(setup.shape.layers, setup.pp)
    per_layer = _activations_per_layer(setup)
    working_set = terms.recompute_working_set(
        setup.checkpointing,
        setup.shape.heads,
        setup.seq_len,
        setup.shape.hidden,
        setup.precision,
        setup.micro_batch_size,
        setup.tp,
        setup.cp,
        setup.flash_attention,
        setup.sequence_parallel,
        setup.shape.kv_heads,
    )
    reserve = terms.reserve_bytes(setup.card.name, setup.shard_group, setup.tp, setup.pp, setup.cp)
    weight_share = 1 / setup.shard_group if setup.zero >= 3 else 1.0
    ledgers = []
    for stage in range(setup.pp):
        # A storyboard's `params` rescales every piece of the architecture alike.
        # TP splits the matrices and replicates the norms.
        split = arch[stage] - norms[stage]
        params_on_card = setup.params * (split / setup.tp + norms[stage]) / arch_total
        ledger = memory.state_bytes(params_on_card, setup.precision, setup.zero, setup.shard_group)
        in_flight = pipeline.micro_batches_in_flight(
            stage, setup.pp, setup.micro_batches, setup.schedule, setup.virtual_stages
        )
        ledger["activations"] = layers[stage] * per_layer * in_flight
        ledger["recompute_working_set"] = float(working_set)
        head = stage == setup.pp - 1  # the stage with the output head and the loss
        logits_in_flight = terms.logits_micro_batches(in_flight, setup.schedule == "gpipe")
        ledger["logits"] = float(_logits(setup, logits_in_flight)) if head else 0.0
        ledger["fp8_weight_copies"] = float(terms.fp8_weight_copies(params_on_card, setup.precision, weight_share))
        ledger["reserve"] = float(reserve)
        ledger["buffers"] = sum(ledger[p] for p in LEDGER_EXTRA_PARTS)
        ledger["params_on_card"] = params_on_card
        ledger["layers"] = layers[stage]
        ledger["micro_batches_in_flight"] = in_flight
        ledgers.append(ledger)
    return ledgers


def _logits(setup: Setup, in_flight: Any) -> float:
    return terms.logits_bytes(setup.micro_batch_size, setup.seq_len, setup.shape.vocab, setup.tp, setup.cp, in_flight)


def _traffic_stage(ledgers: list[dict[str, float]]) -> int:
    """The stage whose traffic the step counts: the most state and activations (planner: the same)."""
    return max(range(len(ledgers)), key=lambda i: sum(ledgers[i][p] for p in (*memory.STATE_PARTS, "activations")))


def ledger_total(part: dict[str, float]) -> float:
    """A card's total: its state, kept activations and every term of the complete ledger."""
    return sum(part[p] for p in MEMORY_PARTS)  # `buffers` is the complete ledger's other terms


def _memory_json(setup: Setup, ledger: dict[str, float], stage: int) -> dict[str, Any]:
    static = sum(ledger[p] for p in memory.STATE_PARTS)
    total = ledger_total(ledger)
    capacity = setup.card.memory_bytes
    context_bytes = terms.cuda_context_bytes(setup.card.name)
    return {
        **{p: ledger[p] for p in MEMORY_PARTS},
        **{p: ledger[p] for p in LEDGER_EXTRA_PARTS},
        "reserve_parts": {
            "cuda_context": context_bytes,
            "nccl_buffers": ledger["reserve"] - context_bytes,
            "nccl_communicators": int(terms.communicators(setup.shard_group, setup.tp, setup.pp, setup.cp)),
        },
        "fp8_weight_copy_bytes_per_param": terms.FP8_RECIPE_EXTRA_BYTES_PER_PARAM[setup.precision],
        "logits_fp32_copies": terms.LOGITS_FP32_COPIES,
        "static": static,
        "total": total,
        "capacity": capacity,
        "fits": total <= capacity,
        "over_capacity": total / capacity,
        "headroom": capacity - total,
        "fit_margin": terms.FIT_MARGIN_SHARE * capacity,
        "params_on_card": ledger["params_on_card"],
        "layers": ledger["layers"],
        "micro_batches_in_flight": ledger["micro_batches_in_flight"],
        "card": {"dp": 0, "pp": stage, "tp": 0, "cp": 0},
    }


def _with_gathered(mem: dict[str, Any], gathered_layer: float, layer_weights: float) -> dict[str, Any]:
    return {
        **mem,
        "gathered_layer": gathered_layer,
        "layer_weights": layer_weights,
        "peak_with_gathered": mem["total"] + gathered_layer,
    }


def estimate_setup(setup: Setup) -> dict[str, Any]:
    """Every output of the cost model for one Setup (bytes, seconds, FLOPs)."""
    ledgers = card_ledgers(setup)
    stage = max(range(setup.pp), key=lambda i: ledger_total(ledgers[i]))
    mem = _memory_json(setup, ledgers[stage], stage)
    # The traffic is the card's with the most state and activations (the rule before the complete
    # ledger: the logits can make the last stage the fullest without changing what a card sends).
    stage = _traffic_stage(ledgers)
    per = memory.BYTES_PER_PARAM[setup.precision]
    element = memory.ACTIVATION_ELEMENT_BYTES[setup.precision]

    # The most loaded card's traffic: its weights and gradients unsharded by ZeRO.
    params_on_card = ledgers[stage]["params_on_card"]
    weight_bytes = params_on_card * per.weights
    gradient_bytes = params_on_card * per.gradients
    collectives = [
        *comm.dp_collectives(setup, weight_bytes, gradient_bytes, max(int(ledgers[stage]["layers"]), 1)),
        *comm.tp_collectives(setup, ledgers[stage]["layers"], element, pipeline.tp_end_exchanges(stage, setup.pp)),
        *comm.pp_collectives(setup, element),
        *comm.cp_collectives(setup, ledgers[stage]["layers"], element),
    ]
    by_group = {g: sum(c.bytes for c in collectives if c.group == g) for g in comm.GROUPS}
    seconds_by_group = {g: sum(c.seconds for c in collectives if c.group == g) for g in comm.GROUPS}
    comm_seconds = sum(seconds_by_group.values())

    peak, _ = setup.card.peak_for(setup.precision)
    tokens_step = compute.tokens_per_step(setup)
    k = compute.flops_per_token_per_param(setup.checkpointing)
    flops_step = k * setup.params * tokens_step
    times = stage_times(setup)
    busiest = max(range(setup.pp), key=lambda i: times[i].seconds)
    busy = times[busiest]
    compute_seconds = setup.micro_batches * busy.seconds
    overhead = pipeline.bubble_overhead(setup.pp, setup.micro_batches, setup.virtual_stages)
    exposed = exposed_by_group(setup, collectives, seconds_by_group, gradient_bytes, ledgers[stage]["layers"], busy)
    exposed_seconds = sum(exposed.values())
    hidden_seconds = comm_seconds - exposed_seconds
    slowdown = overlap.slowdown_seconds(hidden_seconds)
    step_seconds, bubble_seconds = overlap.step_seconds(setup.overlap, compute_seconds, overhead, comm_seconds, exposed)
    train_flops = compute.training_flops(setup.params, setup.tokens, setup.checkpointing)
    model_flops_step = compute.flops_per_token_per_param(False) * setup.params * tokens_step

    # the dp row's traffic runs over the dp x cp cards that share weights
    group_links = {g: comm.shard_group_link(setup) if g == "dp" else comm.group_link(setup, g) for g in comm.GROUPS}
    links = {g: link.name for g, link in group_links.items()}
    link_labels = {g: link.label for g, link in group_links.items()}
    # FSDP (ZeRO-3) gathers one whole layer's weights (its TP share) just before use and frees
    # it after: a transient on top of the sharded ledger, not part of `total` (ZeRO's 16P/d).
    layer_share = setup.params * layer_params(setup.shape) / param_count(setup.shape) / setup.tp
    gathered_layer = layer_share * per.weights if setup.zero >= 3 else 0.0
    cards_to_hold = setup.params * per.total / setup.card.memory_bytes
    intra = LINKS[setup.card.nvlink]  # the node's link between its cards
    return {
        "params": setup.params,
        "model": {
            "name": setup.model,
            "label": setup.shape.label,
            "layers": setup.shape.layers,
            "hidden": setup.shape.hidden,
            "heads": setup.shape.heads,
            "kv_heads": setup.shape.kv_heads,
            "ffn": setup.shape.ffn,
            "vocab": setup.shape.vocab,
            "architecture_params": param_count(setup.shape),
            "mlp": setup.shape.mlp,
            "tied_embeddings": setup.shape.tied_embeddings,
            # what a catalog entry left to its default (mlp swiglu, tied_embeddings false)
            "defaulted": list(setup.shape.defaulted),
        },
        "cluster": {
            "gpu": setup.card.name,
            "gpu_label": setup.card.label,
            "cards": setup.cards,
            "cards_per_node": setup.cards_per_node,
            "nodes": setup.nodes,
            "capacity": setup.card.memory_bytes,
            "intra_node_link": intra.name,
            "intra_node_link_label": intra.label,
            # the family the words name the node's fabric by: "NVLink" for NVLink 3, 4 and 5
            "intra_node_fabric": intra.fabric_name,
            "inter_node_link": setup.inter_node.name,
            "inter_node_link_label": setup.inter_node.label,
            # the node's cards share the inter-node link's bandwidth (Ethernet, Omni-Path)
            "inter_node_shared": setup.inter_node.shared_by_node,
            # Each way, per card (Ethernet's node bandwidth shared by the node's cards).
            "intra_node_bandwidth": intra.per_card_bytes_per_second(setup.cards_per_node),
            "inter_node_bandwidth": setup.inter_node.per_card_bytes_per_second(setup.cards_per_node),
            "peak_flops": peak,
            # the precision that peak is at: bf16 where the card lacks the one asked for
            "peak_precision": setup.card.compute_precision(setup.precision),
            # what the step model times the card with (dtfilm.cost.efficiency), and its power limit
            "memory_bandwidth": setup.card.hbm_bytes_per_second,
            "matmul_efficiency": setup.card.matmul_share(setup.precision),
            "attention_efficiency": setup.card.attention_efficiency,
            "power_watts": setup.card.power_watts,
        },
        "plan": {
            "dp": setup.dp,
            "tp": setup.tp,
            "pp": setup.pp,
            "cp": setup.cp,
            "zero": setup.zero,
            "schedule": setup.schedule,
            "virtual_stages": setup.virtual_stages,
            # Cards that share weights (dp x cp): gradients reduce and ZeRO shards over them.
            "shard_group": setup.shard_group,
            "sequence_parallel": setup.sequence_parallel,
            "recompute": setup.recompute,
            "flash_attention": setup.flash_attention,
            "stage_layers": pipeline.stage_layers(setup.shape.layers, setup.pp),
        },
        # The number format each state part is kept in ("" where the part is absent).
        "formats": {**memory.PART_FORMATS[setup.precision], "activations": memory.ACTIVATION_FORMAT[setup.precision]},
        "bytes_per_param": {
            "weights": per.weights,
            "gradients": per.gradients,
            "master_weights": per.master_weights,
            "adam_m": per.adam_m,
            "adam_v": per.adam_v,
            "optimizer": per.master_weights + per.adam_m + per.adam_v,
            "total": per.total,
        },
        "state": {
            # The whole model's training state, unsharded: 16 bytes per parameter in bf16.
            "total": setup.params * per.total,
            "cards_to_hold": cards_to_hold,
            # Whole cards it takes just to hold the state (no activations, nothing spare).
            "cards_needed": math.ceil(cards_to_hold - 1e-9),
        },
        "memory": {
            **_with_gathered(mem, gathered_layer, layer_share * per.weights),
            # a card of each pipeline stage (dp, tp and cp ranks are alike): the parts, in bytes
            "stages": [{p: ledger[p] for p in MEMORY_PARTS} for ledger in ledgers],
            # Korthikanti et al. 2022: 34 bytes per token per hidden unit per layer (2 when
            # checkpointed), for 16-bit activations; fp32 doubles them.
            "activation_bytes_per_token_per_hidden": memory.activation_bytes_per_layer(
                setup.seq_len,
                1,
                setup.shape.hidden,
                setup.precision,
                setup.recompute,
                setup.shape.heads,
                flash=setup.flash_attention,
                kv_heads=setup.shape.kv_heads,
            )
            / (setup.seq_len * setup.shape.hidden),
            "activations_per_layer": _activations_per_layer(setup),
        },
        "links": links_json(setup),
        "comm": {
            **by_group,
            "total": sum(by_group.values()),
            "seconds": comm_seconds,
            "seconds_by_group": seconds_by_group,
            # Under `inputs.overlap`: the seconds of each group's traffic the step waits for (all
            # of it under none), the rest hidden under compute (dtfilm.cost.overlap).
            "exposed_seconds_by_group": exposed,
            "hidden_seconds_by_group": {g: seconds_by_group[g] - exposed[g] for g in comm.GROUPS},
            "exposed_seconds": exposed_seconds,
            "hidden_seconds": hidden_seconds,
            "groups": {
                g: {"seconds": seconds_by_group[g], "exposed_seconds": exposed[g], "bytes": by_group[g]}
                for g in comm.GROUPS
            },
            "links": links,
            "link_labels": link_labels,
            # The gradient buffer DP all-reduces, and the 2x it approaches as cards grow.
            "gradient_buffer": gradient_bytes,
            "dp_allreduce_limit": DP_ALLREDUCE_LIMIT_FACTOR * gradient_bytes,
            "dp_allreduce_limit_factor": DP_ALLREDUCE_LIMIT_FACTOR,
            "breakdown": [c.as_json() for c in collectives],
            # The same rows by name ("dp_all_reduce", "tp_all_reduce", "dp_all_gather" ...), so a
            # shot finds a row whatever else the plan exchanges.
            "collectives": {c.name: c.as_json() for c in collectives},
            # TP all-reduces per layer per micro-batch: 2 forward, 2 backward (+2 recomputed).
            "tp_exchanges": comm.tp_exchanges_per_layer(setup.checkpointing),
            # What ZeRO-3 moves per step against plain DP's all-reduce of the same card's
            # gradients: (2m gathers of the weights + m reduce-scatters) / (2 x the gradients);
            # 1.5 at m = 1 in bf16 (the seeds' figure).
            "fsdp_vs_dp": (2 * setup.micro_batches * weight_bytes + setup.micro_batches * gradient_bytes)
            / (2 * gradient_bytes),
        },
        "overlap": overlap_json(setup, collectives, gradient_bytes, ledgers[stage]["layers"], busy),
        "pipeline": {
            "bubble_fraction": pipeline.bubble_fraction(setup.pp, setup.micro_batches, setup.virtual_stages),
            "bubble_overhead": overhead,
            # The bubble counted on one card's row of the timeline, in slots of one micro-batch's
            # forward and backward: p-1 idle of v*m+p-1 (bubble_fraction is their ratio).
            "idle_slots": setup.pp - 1,
            "row_slots": setup.virtual_stages * setup.micro_batches + setup.pp - 1,
        },
        "compute": {
            "tokens_per_step": tokens_step,
            "flops_per_token_per_param": k,
            # Forward passes per step for each micro-batch: two when checkpointing recomputes it.
            "forward_passes": 2 if setup.checkpointing else 1,
            # Compute added by full recomputation: 8PD against 6PD, a third more.
            "recompute_overhead": compute.RECOMPUTE_OVERHEAD,
            "flops_per_step": flops_step,
            "compute_seconds": compute_seconds,
            "bubble_seconds": bubble_seconds,
            "comm_seconds": comm_seconds,
            # the traffic the step waits for, and what the compute loses to the traffic beside it
            "exposed_comm_seconds": exposed_seconds,
            "overlap_slowdown_seconds": slowdown,
            "overlap_slowdown_share": overlap.OVERLAP_COMPUTE_SLOWDOWN if setup.overlap != "none" else 0.0,
            "step_seconds": step_seconds,
            # The busiest stage's card, one micro-batch forward and backward, by term
            # (dtfilm.cost.efficiency): matmuls, attention's core, memory-bound work, fixed costs.
            "stage_seconds": {
                "matmul": busy.matmul,
                "attention": busy.attention,
                "memory": busy.memory,
                "overhead": busy.overhead,
                "total": busy.seconds,
                "stage": busiest,
            },
            # Context parallelism under a causal mask (dtfilm.cost.context): the step model deals
            # the sequence zig-zag, every card the same attention work; cut into c contiguous
            # chunks the last card would do (2c-1)/c the average, and each ring step waits for it.
            "cp_contiguous_imbalance": context.imbalance(setup.cp, "contiguous"),
            # The busiest card's attention core per step (m micro-batches), as dealt and if contiguous.
            "attention_seconds_per_step": setup.micro_batches * busy.attention,
            "attention_seconds_per_step_contiguous": setup.micro_batches
            * busy.attention
            * context.imbalance(setup.cp, "contiguous"),
            # The share of peak the busiest card reaches while it computes (recomputation counted).
            "compute_efficiency": busy.flops / (busy.seconds * peak),
            "hardware_flops_per_step": setup.micro_batches * busy.flops * setup.cards,
            # End-to-end MFU the step's breakdown implies: 6*P*tokens / (cards * peak * step).
            "predicted_mfu": model_flops_step / (setup.cards * peak * step_seconds),
            "tokens_per_second_per_card": tokens_step / step_seconds / setup.cards,
            "training_flops": train_flops,
            # The seeds' figure: 6PD (8PD checkpointed) at an assumed MFU (inputs.mfu), which absorbs
            # traffic and bubble: compute-only arithmetic, not the step model's predicted_mfu.
            "training_seconds": compute.seconds_at_mfu(train_flops, setup.cards, peak, setup.mfu),
            # The whiteboard step, repeated: steps x (compute + bubble + traffic, no overlap).
            "training_steps": setup.tokens / tokens_step,
            "training_seconds_from_steps": setup.tokens / tokens_step * step_seconds,
            "training_seconds_one_card": compute.seconds_at_mfu(train_flops, 1, peak, setup.mfu),
        },
    }


def exposed_by_group(
    setup: Setup,
    collectives: list[comm.Collective],
    seconds_by_group: dict[str, float],
    gradient_bytes: float,
    layers: int,
    busy: efficiency.StageTime,
) -> dict[str, float]:
    """Each group's exposed seconds under `setup.overlap`, as floats: the traffic of the most
    loaded card beside one micro-batch of the busiest stage's compute (the planner's arrays do the same)."""

    def row(name: str) -> float:
        return sum(c.seconds for c in collectives if c.name == name)

    exchanges = comm.tp_exchanges_per_layer(setup.checkpointing)
    exposed = overlap.exposed_by_group(
        setup.overlap,
        dp_seconds=seconds_by_group["dp"],
        dp_gather_seconds=row("dp_all_gather"),
        dp_scatter_seconds=row("dp_reduce_scatter"),
        zero=setup.zero,
        gradient_bytes=gradient_bytes,
        layers=layers,
        micro_batches=setup.micro_batches,
        micro_batch_seconds=busy.seconds,
        matmul_seconds=busy.matmul,
        attention_seconds=busy.attention,
        full_recompute=setup.checkpointing,
        tp_seconds=seconds_by_group["tp"],
        tp=setup.tp,
        tp_forward_share=exchanges["forward"] / exchanges["total"],
        sequence_parallel=setup.sequence_parallel,
        tp_overlap=setup.tp_overlap,
        dp_overlap=setup.dp_overlap,
        pp_overlap=setup.pp_overlap,
        pp_seconds=seconds_by_group["pp"],
        pp=setup.pp,
        virtual_stages=setup.virtual_stages,
        cp_ring_seconds=row("cp_ring_send_recv"),
        cp_gradient_seconds=row("cp_gradient_ring"),
        cp=setup.cp,
        tp_crosses_nodes=comm.group_placement(setup, "tp")[0],
    )
    return {g: float(exposed[g]) for g in comm.GROUPS}


def _smallest(low: int, high: int, ok: Any) -> int:
    """The smallest n in [low, high] with ok(n), for ok false then true as n grows; 0 if none."""
    if not ok(high):
        return 0
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if ok(middle) else (middle + 1, high)
    return low


def overlap_json(
    setup: Setup, collectives: list[comm.Collective], gradient_bytes: float, layers: int, busy: efficiency.StageTime
) -> dict[str, Any]:
    """What a timeline of one card's step draws, as plain data (whatever `inputs.overlap` is):
    DDP's buckets under the last backward pass, FSDP's gather of unit i+1 under unit i, and the
    micro-batch size and sequence length at which FSDP's gathers hide under the compute."""
    forward, backward = overlap.phase_shares(setup.checkpointing)
    reduce = [c for c in collectives if c.name == "dp_all_reduce"]
    total = sum(c.seconds for c in reduce)
    buckets = int(overlap.dp_buckets(gradient_bytes)) if reduce else 0
    gather = sum(c.seconds for c in collectives if c.name == "dp_all_gather")
    scatter = sum(c.seconds for c in collectives if c.name == "dp_reduce_scatter")
    units = max(layers, 1) if gather else 0
    m = setup.micro_batches
    g = gather / (2 * m * units) if units else 0.0
    r = scatter / (m * units) if units else 0.0

    def hides(candidate: Setup) -> bool:
        # under the busiest stage's compute per unit, forward (g) and backward (g + r)
        seconds = max(t.seconds for t in stage_times(candidate)) / units
        return seconds * forward >= g and seconds * backward >= g + r

    # whether the traffic runs beside the compute at all: `none` hides nothing, and `dp_overlap:
    # after` reduces ZeRO 0-2's gradients once the backward is done (ZeRO-3's prefetch stays)
    prefetched = setup.overlap == "framework"
    under_backward = prefetched and setup.dp_overlap == "buckets"
    fsdp = {
        "units": units,
        "prefetched": prefetched,
        "gather_seconds": g,  # one unit's all-gather
        "reduce_scatter_seconds": r,
        "unit_forward_seconds": busy.seconds * forward / units if units else 0.0,
        "unit_backward_seconds": busy.seconds * backward / units if units else 0.0,
        "hidden": bool(units) and prefetched and hides(setup),
        # the smallest micro-batch size (at this sequence length), and sequence length (at this
        # micro-batch size), at which every gather hides when prefetched; 0 where none in the envelope does
        "hides_at_micro_batch_size": _smallest(
            1, MAX_MICRO_BATCH_SIZE, lambda b: hides(replace(setup, micro_batch_size=b))
        )
        if units
        else 0,
        "hides_at_seq_len": setup.cp
        * _smallest(-(-16 // setup.cp), MAX_SEQ_LEN // setup.cp, lambda n: hides(replace(setup, seq_len=n * setup.cp)))
        if units
        else 0,
        "timeline": overlap.fsdp_unit_timeline(gather, units, m, busy.seconds * forward, prefetched) if units else [],
    }
    return {
        "mode": setup.overlap,
        "slowdown_share": overlap.OVERLAP_COMPUTE_SLOWDOWN,
        "forward_seconds": busy.seconds * forward,  # one micro-batch on the busiest stage's card
        "backward_seconds": busy.seconds * backward,
        "dp_buckets": {
            "count": buckets,
            "under_backward": under_backward,
            "bucket_bytes": overlap.DDP_BUCKET_BYTES,
            "bucket_seconds": total / buckets if buckets else 0.0,
            "timeline": overlap.dp_bucket_timeline(total, gradient_bytes, busy.seconds * backward, under_backward)
            if buckets
            else [],
        },
        "fsdp_units": fsdp,
    }


def stage_times(setup: Setup) -> list[efficiency.StageTime]:
    """One micro-batch forward and backward on one card of each stage."""
    scale = setup.params / param_count(setup.shape)
    layers = pipeline.stage_layers(setup.shape.layers, setup.pp)
    head = head_matmul_params(setup.shape) * scale
    return [
        efficiency.stage_time(
            setup.card,
            setup.precision,
            layers=n,
            tokens=setup.micro_batch_size * setup.seq_len / setup.cp,
            seq_len=setup.seq_len,
            hidden=setup.shape.hidden,
            tp=setup.tp,
            layer_params=layer_params(setup.shape) * scale,
            head_params=head if stage == setup.pp - 1 else 0.0,
            recompute=setup.recompute,
            heads=setup.shape.heads,
            cp=setup.cp,
            flash=setup.flash_attention,
            sequence_parallel=setup.sequence_parallel,
            overlap=setup.overlap,
            fp8_attention=setup.fp8_attention,
        )
        for stage, n in enumerate(layers)
    ]


def links_json(setup: Setup) -> dict[str, Any]:
    """The links this card can use, as one card sees them: its node's link and every link
    between nodes, widest first, bandwidth each way (Ethernet's shared by the node)."""
    cards_per_node = setup.cards_per_node
    usable = [LINKS[setup.card.nvlink], *(link for link in LINKS.values() if link.between_nodes)]
    return {
        link.name: {
            "label": link.label,
            "bandwidth": link.bytes_per_second_each_way,
            "per_card_bandwidth": link.per_card_bytes_per_second(cards_per_node),
            "latency": link.latency_seconds,
            "shared_by_node": link.shared_by_node,
        }
        for link in sorted(usable, key=lambda link: -link.per_card_bytes_per_second(cards_per_node))
    }


def inputs_json(values: dict[str, Value]) -> dict[str, Any]:
    """Every input with its source; a value that is not JSON's own says how (the global batch:
    sequences as a number, tokens as written, "4M")."""

    def shown(value: Any) -> Any:
        return value.json() if hasattr(value, "json") else value

    return {
        name: {"value": shown(v.value), "source": v.source, "where": str(v.where)} for name, v in sorted(values.items())
    }


def estimate(values: dict[str, Value]) -> dict[str, Any]:
    """The contract's JSON object for resolved inputs: inputs, outputs and warnings. The global
    batch's standing against published runs is a warning too, where it is past them."""
    setup, warnings = build_setup(values)
    training = batch.training_json(setup.params, setup.dp, setup.micro_batches, setup.micro_batch_size, setup.seq_len)
    notes = [training["batch_note"]] if training["batch_note"] else []
    return {"inputs": inputs_json(values), **estimate_setup(setup), "training": training, "warnings": warnings + notes}
