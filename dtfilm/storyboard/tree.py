"""Seed 001's decision tree answered by the cost model: the configurations its questions are
weighed on (one card, the state sharded), each answer as a claim's condition, and the fastest
plan that takes exactly the tree's splits, beside the planner's pick (no manim here)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtfilm.conditions import evaluate
from dtfilm.numbers import Numbers

SPLITS = ("tp", "pp", "cp")  # the bottleneck's splits
# The mixture-of-experts question's split (issue 60): asked of the model whatever the path, since
# the experts are spread over the cards beside any plan (Megatron-Core MoE, the DeepSeek-V3
# report's EP 64 beside PP 16 and ZeRO-1 data parallelism).
EXPERT = "ep"

# Each question as a claim's condition on the configuration it is weighed on: `one_card` (data
# parallel, every card holding everything, ZeRO 0), `sharded` (data parallel with ZeRO stage 3
# over every card), both with one sequence a micro-batch and gradient checkpointing. The
# bottleneck's three questions are weighed on `sharded`.
QUESTIONS: dict[str, tuple[str, str]] = {
    # One card holds the state and one micro-batch's activations: data parallelism.
    "one_card": ("one_card", "memory.total <= memory.capacity"),
    # Sharded over every card (FSDP / ZeRO-3) the busiest card fits.
    "sharded": ("sharded", "memory.total <= memory.capacity"),
    # A pipeline cannot cut below a layer: one layer's training state (bytes a parameter times
    # its parameters) and its activations over the card leave only tensor parallelism.
    "tp": (
        "sharded",
        "memory.layer_weights / bytes_per_param.weights * bytes_per_param.total + memory.activations_per_layer"
        " > memory.capacity",
    ),
    # The whole stack's state does not fit sharded over the cards of one node: the layers must
    # be cut into stages across nodes (pipeline stages can cross them; seed 001, 4.1).
    "pp": ("sharded", "state.total > cluster.cards_per_node * memory.capacity"),
    # One micro-batch's activations do not fit beside the sharded state: cut the sequence.
    "cp": ("sharded", "memory.activations > memory.capacity - memory.static - memory.gathered_layer"),
    # A mixture of experts: its routed experts spread over the cards with expert parallelism.
    "moe": ("sharded", "model.experts > 0"),
}


def probes(numbers_of: Callable[[dict[str, Any]], Numbers], cards: int) -> dict[str, Numbers]:
    """The configurations the tree's questions are weighed on: plain data parallelism at the
    least memory it can have (one sequence a micro-batch, activations recomputed), as the
    planner's plain plans can, so that the tree and the planner agree where the tree stops."""
    plain = {"tp": 1, "pp": 1, "cp": 1, "dp": cards, "micro_batch_size": 1, "checkpointing": True}
    return {"one_card": numbers_of({**plain, "zero": 0}), "sharded": numbers_of({**plain, "zero": 3})}


def answers(configs: dict[str, Numbers]) -> dict[str, bool]:
    """Each question's answer, from its condition on its configuration."""
    return {name: evaluate(condition, configs[on].get, {}) for name, (on, condition) in QUESTIONS.items()}


def tree_splits(answered: dict[str, bool]) -> tuple[str, ...]:
    """What the tree adds: () for data parallelism, ("zero",) for FSDP, else its splits; "ep"
    after them for a mixture of experts, whatever the path."""
    expert = (EXPERT,) if answered["moe"] else ()
    if answered["one_card"]:
        return expert
    if answered["sharded"]:
        return ("zero", *expert)
    return tuple(g for g in SPLITS if answered[g]) + expert


def end(answered: dict[str, bool]) -> str:
    """Where the tree ends: ddp, fsdp, or 3d (the bottleneck's splits); expert parallelism is
    beside any of them."""
    splits = tuple(g for g in tree_splits(answered) if g != EXPERT)
    return "ddp" if not splits else "fsdp" if splits == ("zero",) else "3d"


def follows(plans: Any, splits: tuple[str, ...]) -> np.ndarray:
    """The planner's plans that fit and take exactly the tree's splits (`laid_out`)."""
    return plans.fits & laid_out(plans, splits)


def laid_out(plans: Any, splits: tuple[str, ...]) -> np.ndarray:
    """The planner's plans, fitting or not, that take exactly the tree's splits (ZeRO: any stage;
    without a split, plain data parallelism, ZeRO 0 for DDP; ep above 1 exactly when the tree
    adds it). None where the global batch does not split as the tree's plan needs (dp divides it)."""
    mask = np.ones(plans.count, dtype=bool)
    for g in (*SPLITS, EXPERT):
        degree = plans.degree(g)
        mask &= (degree > 1) if g in splits else (degree == 1)
    if not [g for g in splits if g != EXPERT]:
        mask &= plans.zero == 0
    return mask


def pick_splits(pick: Numbers) -> tuple[str, ...]:
    """The splits of a picked plan, as the tree names them."""
    splits = tuple(g for g in SPLITS if pick.get(f"plan.{g}") > 1)
    if not splits and pick.get("plan.zero"):
        splits = ("zero",)
    return splits + ((EXPERT,) if pick.get("plan.ep") > 1 else ())
