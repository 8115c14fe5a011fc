"""Every number of one Setup, as the contract's object (docs/contract.md): the one-row call of
the model's one body (dtfilm.cost.model.evaluate, the planner's own), written into the typed
records of dtfilm.cost.results with what a film shows around it (timelines, FSDP's hiding point,
the whole state, the links)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np

from dtfilm.cost import (
    batch,
    comm,
    compute,
    context,
    efficiency,
    facts,
    memory,
    model,
    network,
    overlap,
    pipeline,
    results,
)
from dtfilm.cost import ledger as terms
from dtfilm.cost.catalog import BUILTIN_CATALOG, Catalog
from dtfilm.cost.inputs import Value
from dtfilm.cost.layouts import Layouts
from dtfilm.cost.models import layer_params, param_count
from dtfilm.cost.setup import Setup
from dtfilm.cost.setup_checks import build_setup
from dtfilm.cost.stage_ledgers import activation_bytes_per_layer, stage_ledgers
from dtfilm.cost.step_overlap import overlap_result

MEMORY_PARTS = memory.MEMORY_PARTS


LEDGER_EXTRA_PARTS = terms.LEDGER_EXTRA_PARTS


DP_ALLREDUCE_LIMIT_FACTOR = 2  # a ring all-reduce sends 2(n-1)/n of the buffer: twice it as n grows


def _first(value: Any) -> Any:
    """The one row's value of a one-row array (or a scalar), as a Python number."""
    return np.asarray(value).reshape(-1)[0].item()


def card_ledgers(setup: Setup) -> list[dict[str, float]]:
    """The memory ledger of one card of each pipeline stage (dp, tp, cp ranks are alike): the
    one-row call of dtfilm.cost.stage_ledgers, the planner's own, by part."""
    stages = stage_ledgers(setup, Layouts.of(setup), setup.pp)
    ledgers = []
    for stage in range(setup.pp):
        card = stages.pick(np.array([stage]))
        parts = (*memory.STATE_PARTS, "activations", *LEDGER_EXTRA_PARTS, "buffers")
        ledger = {p: float(_first(card.part_bytes(p))) for p in parts}
        ledger["params_on_card"] = float(_first(card.params_on_card))
        ledger["layers"] = int(_first(card.layers))
        ledger["micro_batches_in_flight"] = float(_first(card.micro_batches_in_flight))
        ledgers.append(ledger)
    return ledgers


def stage_record(ledger: dict[str, float]) -> dict[str, float]:
    """A stage's card as `memory.stages` gives it: the seven drawn parts, their `total` (the stage's
    own; `memory.total` is the fullest stage's) and its `micro_batches_in_flight`."""
    record = {p: ledger[p] for p in MEMORY_PARTS}
    record["total"] = sum(record.values())
    record["micro_batches_in_flight"] = ledger["micro_batches_in_flight"]
    return record


def memory_result(setup: Setup, result: model.Evaluation, ledgers: list[dict[str, float]]) -> results.Memory:
    """The fullest card's ledger against its capacity; FSDP's gathered layer beside it; every
    stage's parts (`ledgers`, card_ledgers' one per stage)."""
    stage = int(result.fullest_stage[0])
    card = result.fullest
    total = float(_first(card.total_bytes))
    capacity = setup.card.memory_bytes
    context_bytes = terms.cuda_context_bytes(setup.card.name)
    per = memory.BYTES_PER_PARAM[setup.precision]
    # FSDP (ZeRO-3) gathers one whole layer's weights (its TP share) just before use and frees
    # it after: a transient on top of the sharded ledger, not part of `total` (ZeRO's 16P/d).
    layer_share = setup.params * layer_params(setup.shape) / param_count(setup.shape) / setup.tp
    gathered_layer = layer_share * per.weights if setup.zero >= 3 else 0.0
    return results.Memory(
        **{f"{p}_bytes": float(_first(card.part_bytes(p))) for p in (*MEMORY_PARTS, *LEDGER_EXTRA_PARTS)},
        reserve_parts=results.ReserveParts(
            cuda_context_bytes=context_bytes,
            nccl_buffers_bytes=float(_first(card.reserve_bytes)) - context_bytes,
            nccl_communicators=int(terms.communicators(setup.shard_group, setup.tp, setup.pp, setup.cp)),
        ),
        fp8_weight_copy_bytes_per_param=terms.FP8_RECIPE_EXTRA_BYTES_PER_PARAM[setup.precision],
        logits_fp32_copies=terms.LOGITS_FP32_COPIES,
        static_bytes=float(_first(card.state_bytes)),
        total_bytes=total,
        capacity_bytes=capacity,
        fits=total <= capacity,
        over_capacity_ratio=total / capacity,
        headroom_bytes=capacity - total,
        fit_margin_bytes=terms.FIT_MARGIN_SHARE * capacity,
        params_on_card=float(_first(card.params_on_card)),
        layers=int(_first(card.layers)),
        micro_batches_in_flight=float(_first(card.micro_batches_in_flight)),
        card={"dp": 0, "pp": stage, "tp": 0, "cp": 0},
        gathered_layer_bytes=gathered_layer,
        layer_weights_bytes=layer_share * per.weights,
        peak_with_gathered_bytes=total + gathered_layer,
        # a card of each pipeline stage (dp, tp and cp ranks are alike): the parts and their total,
        # in bytes, and the micro-batches' activations it holds at its peak
        stages=[stage_record(part) for part in ledgers],
        # Korthikanti et al. 2022: 34 bytes per token per hidden unit per layer (2 when
        # checkpointed), for 16-bit activations; fp32 doubles them.
        activation_bytes_per_token_per_hidden=memory.activation_bytes_per_layer(
            setup.seq_len, 1, setup.shape.hidden, setup.precision, setup.recompute, setup.shape.heads,
            flash=setup.flash_attention, kv_heads=setup.shape.kv_heads,
        )
        / (setup.seq_len * setup.shape.hidden),
        activations_per_layer_bytes=float(_first(activation_bytes_per_layer(setup, Layouts.of(setup)))),
    )  # fmt: skip


def _row_collectives(setup: Setup, result: model.Evaluation) -> list[comm.Collective]:
    """The one row's collectives that run, in the contract's order, as `comm.Collective` rows."""
    rows = []
    for calls in result.calls:
        if not _first(calls.active):
            continue
        crosses, size = bool(_first(calls.crosses_nodes)), int(_first(calls.group_size))
        nodes = max(2, -(-size // int(_first(calls.cards_per_node_in_group)))) if crosses else 1
        price = network.CallPrice(
            **{
                name: float(_first(getattr(calls.price, name)))
                for name in ("seconds", "latency_seconds", "fabric_bytes", "nic_bytes")
            },
            tree=bool(_first(calls.price.tree)),
        )
        link = setup.inter_node if crosses else setup.intra_node
        rows.append(
            comm.Collective(
                calls.group, calls.collective, int(_first(calls.count)), size, float(_first(calls.buffer_bytes)),
                float(_first(calls.bytes_each)), int(_first(calls.steps_each)), link, setup.cards_per_node, price,
                cards_on_each_node=-(-size // nodes), nodes_spanned=nodes,
            )
        )  # fmt: skip
    return rows


def estimate_setup(setup: Setup) -> dict[str, Any]:
    """Every output of the cost model for one Setup, as the contract's JSON (`estimate_result`)."""
    return results.as_json(estimate_result(setup))


def estimate_result(setup: Setup) -> results.Estimate:
    """Every output of the cost model for one Setup (bytes, seconds, FLOPs): the one-row call of
    dtfilm.cost.model.evaluate, the planner's own body, with what a film shows around it."""
    result = model.evaluate(setup, Layouts.of(setup))
    traffic = result.traffic_card  # the card whose traffic the step counts
    collectives = _row_collectives(setup, result)
    busy = efficiency.StageTime(*(float(_first(getattr(result.busy, f.name))) for f in fields(result.busy)))
    traffic_result = comm_result(setup, result, collectives, float(_first(traffic.params_on_card)))
    gradient_bytes = traffic_result.gradient_buffer_bytes
    return results.Estimate(
        params=setup.params,
        params_active=setup.params_active,
        model=facts.model_facts(setup),
        cluster=facts.cluster_facts(setup),
        plan=facts.plan_facts(setup),
        formats=facts.formats(setup),
        bytes_per_param=facts.bytes_per_param(setup),
        state=facts.state_facts(setup),
        memory=memory_result(setup, result, card_ledgers(setup)),
        links=facts.link_facts(setup),
        comm=traffic_result,
        overlap=overlap_result(setup, collectives, gradient_bytes, int(_first(traffic.layers)), busy),
        pipeline=results.Pipeline(
            bubble_fraction=pipeline.bubble_fraction(setup.pp, setup.micro_batches, setup.virtual_stages),
            bubble_overhead=float(_first(result.bubble_overhead)),
            # The bubble counted on one card's row of the timeline, in slots of one micro-batch's
            # forward and backward: p-1 idle of v*m+p-1 (bubble_fraction is their ratio).
            idle_slots=setup.pp - 1,
            row_slots=setup.virtual_stages * setup.micro_batches + setup.pp - 1,
        ),
        compute=compute_result(setup, result, busy, traffic_result),
    )


def comm_result(
    setup: Setup, result: model.Evaluation, collectives: list[comm.Collective], params_on_card: float
) -> results.Comm:
    """The traffic card's step on the wire (its weights and gradients unsharded by ZeRO): by
    group, what the step waits for under `inputs.overlap` (the rest hidden under compute), every
    call. A group that runs nothing reads 0 (the contract's figure since the seeds)."""
    per = memory.BYTES_PER_PARAM[setup.precision]
    weight_bytes, gradient_bytes = params_on_card * per.weights, params_on_card * per.gradients
    ran = {g: any(c.group == g for c in collectives) for g in comm.GROUPS}
    by_group = {g: float(_first(result.comm_bytes_by_group[g])) if ran[g] else 0 for g in comm.GROUPS}
    seconds_by_group = {g: float(_first(result.comm_seconds_by_group[g])) if ran[g] else 0 for g in comm.GROUPS}
    comm_seconds = float(_first(result.comm_seconds)) if collectives else 0
    exposed = {g: float(_first(result.exposed_seconds_by_group[g])) for g in comm.GROUPS}
    exposed_seconds = sum(exposed.values())
    # the dp row's traffic runs over the dp x cp cards that share weights
    crossing = result.placement.crosses_nodes
    group_links = {g: setup.inter_node if crossing[g][0] else setup.intra_node for g in comm.GROUPS}
    rows = [c.row() for c in collectives]  # (frozen records: the breakdown and the by-name view share them)
    return results.Comm(
        **{f"{g}_bytes": by_group[g] for g in comm.GROUPS},
        total_bytes=sum(by_group.values()),
        nic_bytes=sum(row.nic_bytes for row in rows),
        seconds=comm_seconds,
        seconds_by_group=seconds_by_group,
        exposed_seconds_by_group=exposed,
        hidden_seconds_by_group={g: seconds_by_group[g] - exposed[g] for g in comm.GROUPS},
        exposed_seconds=exposed_seconds,
        hidden_seconds=comm_seconds - exposed_seconds,
        groups={g: results.GroupTraffic(seconds_by_group[g], exposed[g], by_group[g]) for g in comm.GROUPS},
        links={g: link.name for g, link in group_links.items()},
        link_labels={g: link.label for g, link in group_links.items()},
        # The gradient buffer DP all-reduces, and the 2x it approaches as cards grow.
        gradient_buffer_bytes=gradient_bytes,
        dp_allreduce_limit_bytes=DP_ALLREDUCE_LIMIT_FACTOR * gradient_bytes,
        dp_allreduce_limit_factor=DP_ALLREDUCE_LIMIT_FACTOR,
        breakdown=rows,
        # The same rows by name ("dp_all_reduce", "tp_all_reduce", "dp_all_gather" ...), so a
        # shot finds a row whatever else the plan exchanges.
        collectives={c.name: row for c, row in zip(collectives, rows, strict=True)},
        # TP all-reduces per layer per micro-batch: 2 forward, 2 backward (+2 recomputed).
        tp_exchanges=comm.tp_exchanges_per_layer(setup.checkpointing),
        # What ZeRO-3 moves per step against plain DP's all-reduce of the same card's gradients:
        # (2m gathers of the weights + m reduce-scatters) / (2 x the gradients); 1.5 at m = 1 in
        # bf16 (the seeds' figure).
        fsdp_vs_dp_ratio=(2 * setup.micro_batches * weight_bytes + setup.micro_batches * gradient_bytes)
        / (2 * gradient_bytes),
    )


def compute_result(
    setup: Setup, result: model.Evaluation, busy: efficiency.StageTime, traffic: results.Comm
) -> results.Compute:
    """The step (compute, bubble, the traffic it waits for and what the hidden traffic slows),
    the busiest stage's card by term (dtfilm.cost.efficiency), the FLOPs and MFU."""
    peak, _ = setup.card.peak_for(setup.precision)
    tokens_step = compute.tokens_per_step(setup)
    k = compute.flops_per_token_per_param(setup.checkpointing)
    step_seconds = float(_first(result.step_seconds))
    # FLOPs by the active parameters: a MoE token multiplies by k routed experts of E
    train_flops = compute.training_flops(setup.params_active, setup.tokens, setup.checkpointing)
    model_flops_step = compute.flops_per_token_per_param(False) * setup.params_active * tokens_step
    imbalance = context.imbalance(setup.cp, "contiguous")
    return results.Compute(
        tokens_per_step=tokens_step,
        flops_per_token_per_param=k,
        # Forward passes per step for each micro-batch: two when checkpointing recomputes it.
        forward_passes=2 if setup.checkpointing else 1,
        # Compute added by full recomputation: 8PD against 6PD, a third more.
        recompute_overhead=compute.RECOMPUTE_OVERHEAD,
        flops_per_step=k * setup.params_active * tokens_step,
        compute_seconds=float(_first(result.compute_seconds)),
        bubble_seconds=float(_first(result.bubble_seconds)),
        comm_seconds=traffic.seconds,
        # the traffic the step waits for, and what the compute loses to the traffic beside it
        exposed_comm_seconds=traffic.exposed_seconds,
        overlap_slowdown_seconds=overlap.slowdown_seconds(traffic.hidden_seconds),
        overlap_slowdown_share=overlap.OVERLAP_COMPUTE_SLOWDOWN if setup.overlap != "none" else 0.0,
        step_seconds=step_seconds,
        stage_seconds=results.StageSeconds(
            busy.matmul, busy.attention, busy.memory, busy.overhead, busy.seconds, int(result.busiest_stage[0])
        ),
        # Context parallelism under a causal mask (dtfilm.cost.context): the step model deals the
        # sequence zig-zag, every card the same attention work; cut into c contiguous chunks the
        # last card would do (2c-1)/c the average, and each ring step waits for it.
        cp_contiguous_imbalance=imbalance,
        # The busiest card's attention core per step (m micro-batches), as dealt and if contiguous.
        attention_seconds_per_step=setup.micro_batches * busy.attention,
        attention_seconds_per_step_contiguous=setup.micro_batches * busy.attention * imbalance,
        # The share of peak the busiest card reaches while it computes (recomputation counted).
        compute_efficiency=busy.flops / (busy.seconds * peak),
        hardware_flops_per_step=setup.micro_batches * busy.flops * setup.cards,
        # End-to-end MFU the step's breakdown implies: 6*P*tokens / (cards * peak * step).
        predicted_mfu=model_flops_step / (setup.cards * peak * step_seconds),
        tokens_per_second_per_card=tokens_step / step_seconds / setup.cards,
        training_flops=train_flops,
        # The seeds' figure: 6PD (8PD checkpointed) at an assumed MFU (inputs.mfu), which absorbs
        # traffic and bubble: compute-only arithmetic, not the step model's predicted_mfu.
        training_seconds=compute.seconds_at_mfu(train_flops, setup.cards, peak, setup.mfu),
        # The whiteboard step, repeated: steps x (compute + bubble + traffic, no overlap).
        training_steps=setup.tokens / tokens_step,
        training_seconds_from_steps=setup.tokens / tokens_step * step_seconds,
        training_seconds_one_card=compute.seconds_at_mfu(train_flops, 1, peak, setup.mfu),
    )


def stage_times(setup: Setup) -> list[efficiency.StageTime]:
    """One micro-batch forward and backward on one card of each stage: the one-row call of
    dtfilm.cost.model.stage_times, the planner's own."""
    times = model.stage_times(setup, Layouts.of(setup), setup.pp)
    return [
        efficiency.StageTime(*(float(getattr(times, f.name)[0, stage]) for f in fields(times)))
        for stage in range(setup.pp)
    ]


def inputs_json(values: dict[str, Value]) -> dict[str, Any]:
    """Every input with its source; a value that is not JSON's own says how (the global batch:
    sequences as a number, tokens as written, "4M")."""

    def shown(value: Any) -> Any:
        return value.json() if hasattr(value, "json") else value

    return {
        name: {"value": shown(v.value), "source": v.source, "where": str(v.where)} for name, v in sorted(values.items())
    }


def estimate(values: dict[str, Value], catalog: Catalog = BUILTIN_CATALOG) -> dict[str, Any]:
    """The contract's JSON object for resolved inputs (their names `catalog`'s): inputs, outputs
    and warnings. The global batch's standing against published runs is a warning too, where it
    is past them."""
    setup, warnings = build_setup(values, catalog)
    training = batch.training_json(setup.params, setup.dp, setup.micro_batches, setup.micro_batch_size, setup.seq_len)
    notes = [training["batch_note"]] if training["batch_note"] else []
    return {"inputs": inputs_json(values), **estimate_setup(setup), "training": training, "warnings": warnings + notes}
