"""The pick explained in the words of seed 001's decision tree, with the figures behind it: the
tree's branch, the plan's name, what each of its degrees does, its recomputation, and the
plans it beats (without context parallelism, with data parallelism alone)."""

from __future__ import annotations

from typing import Any

import numpy as np

from dtfilm.cost import pipeline
from dtfilm.cost.plan_ranking import best_plain, best_without_cp, branch, plain_plans
from dtfilm.cost.plans import Plans
from dtfilm.cost.setup import Setup
from dtfilm.units import format_quantity


def _least_stage(plans: Plans, best: int | None) -> str:
    """The least ZeRO stage that fits with the batch split alone, said beside the pick's own
    stage, so that "stage 3 is the least that fits" never stands beside a ZeRO-2 pick unexplained."""
    plain = plain_plans(plans)
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
    lines = [_branch_line(plans, best)]
    if best is None:
        lines.append("No plan fits: more cards, a card with more memory, or a shorter sequence.")
        return lines
    row = plans.row(best)
    lines.append(f"The fastest plan that fits: {_plan_name(row)}, {row['step_seconds']:.3g} s per step.")
    return lines + _degree_lines(setup, row) + _recompute_lines(row) + _beaten_lines(plans, best, row)


def _branch_line(plans: Plans, best: int | None) -> str:
    """Where the decision tree ends, as its question and answer."""
    taken = branch(plans, best)
    if taken == "ddp":
        return "Does one GPU hold the full training state? Yes: DDP, the simple and efficient first choice."
    if taken == "fsdp":
        return (
            "One GPU does not hold the full training state, but sharding it over the data-parallel"
            f" group does: FSDP / ZeRO ({_least_stage(plans, best)})."
        )
    if taken == "cp":
        return (
            "Even with the layers split, one sequence's activations do not fit: the sequence is too long."
            " Add context parallelism (SP / CP) to split it."
        )
    plain = plain_plans(plans)
    if plans.count and not np.any(plain):  # (a new user's trial: 32 sequences on 256 cards, where FSDP fits)
        sequences = int(plans.dp[0] * plans.micro_batches[0] * plans.micro_batch_size[0])
        replicas = int(plans.dp[0] * plans.tp[0] * plans.pp[0] * plans.cp[0])
        return (
            f"The batch alone cannot spread over every card: {sequences:,} sequences a step do not split"
            f" into {replicas:,} data-parallel replicas (dp divides the global batch), so every plan splits"
            " the layers or the sequence too, whether or not sharding alone would hold the state."
        )
    return (
        "Even sharded over every card, one GPU does not hold it: add tensor parallelism inside a node,"
        " pipeline stages across nodes, and context parallelism for long sequences."
    )


def _plan_name(row: dict[str, Any]) -> str:
    """A plan by its degrees and ZeRO stage: "dp 8 x tp 8 x pp 4 x cp 1, ZeRO-1"."""
    name = f"dp {row['dp']} x tp {row['tp']} x pp {row['pp']} x cp {row['cp']}"
    if row.get("ep", 1) > 1:
        name += f" with ep {row['ep']}"
    if row["zero"]:
        name += f", ZeRO-{row['zero']}" + (" (FSDP)" if row["zero"] == 3 else "")
    return name


def _degree_lines(setup: Setup, row: dict[str, Any]) -> list[str]:
    """What each of the pick's degrees above 1 does: tensor, pipeline, context and expert parallelism."""
    lines = []
    if row["tp"] > 1:
        inside = f"inside a node, on {setup.intra_node.label}"
        where = inside if row["tp"] <= setup.cards_per_node else "across nodes (slow links)"
        lines.append(f"Tensor parallel {row['tp']} {where}: each card holds 1/{row['tp']} of every layer.")
    if row["pp"] > 1:
        bubble = pipeline.bubble_fraction(row["pp"], row["micro_batches"], row["virtual_stages"])
        interleaved = (
            f", interleaved as {row['virtual_stages']} virtual stages per card" if row["virtual_stages"] > 1 else ""
        )
        lines.append(
            f"{row['pp']} pipeline stages of {_stage_layers(setup.shape.layers, row['pp'])} layers{interleaved};"
            f" {row['micro_batches']} micro-batches keep the bubble at {format_quantity(bubble, '%')}."
        )
    if row["cp"] > 1:
        lines.append(f"Context parallel {row['cp']} splits each {setup.seq_len}-token sequence.")
    if row.get("ep", 1) > 1:
        experts = setup.shape.experts
        lines.append(
            f"Expert parallel {row['ep']}: each card holds {experts // row['ep']} of the {experts} experts of each"
            " MoE layer, and the tokens travel to them and back by all-to-all."
        )
    return lines


def _recompute_lines(row: dict[str, Any]) -> list[str]:
    """The pick's recomputation, where it is not the selective default."""
    if row["recompute"] == "full":
        return ["Gradient checkpointing: activations are recomputed, a third more compute for far less memory."]
    if row["recompute"] == "none":
        return ["No recomputation: the attention scores are kept, the fastest when they fit."]
    return []


def _beaten_lines(plans: Plans, best: int, row: dict[str, Any]) -> list[str]:
    """The plans the pick beats, with by how much: the fastest without context parallelism (beside
    a pick that splits the sequence) and data parallelism alone (beside a pick that splits more)."""
    lines = []
    without = best_without_cp(plans)
    if row["cp"] > 1 and without is not None:
        other = plans.row(without)
        slower = other["seconds_per_token"] / row["seconds_per_token"] - 1
        lines.append(
            f"Without context parallelism the fastest is dp {other['dp']} x tp {other['tp']} x pp {other['pp']},"
            f" {other['step_seconds']:.3g} s per step, {100 * slower:.1f}% slower per token."
        )
    plain = plain_plans(plans)
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


def _stage_layers(layers: int, pp: int) -> str:
    """Layers a stage, as pipeline.stage_layers lays them: "20", or "15 or 16" where pp does not
    divide them (126 over 8: it said "about 15" of 15.75, a new user's trial)."""
    counts = pipeline.stage_layers(layers, pp)
    return f"{min(counts)}" if min(counts) == max(counts) else f"{min(counts)} or {max(counts)}"
