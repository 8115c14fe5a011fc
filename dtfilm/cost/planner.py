"""The planner: every plan for a model on N cards, vectorised with numpy, ranked by time
per token, with the pick explained in the words of seed 001's decision tree.

The numbers are `dtfilm.cost.model`'s, the estimate's own body, called on the grid of every plan
(one row per plan); an estimate is the same call on one row, so the two cannot disagree.
"""

from __future__ import annotations

import time
from typing import Any

from dtfilm.cost import batch
from dtfilm.cost.layouts import SCHEDULE_NAMES
from dtfilm.cost.plan_grid import (
    MAX_MICRO_BATCH_SIZE,
    MAX_MICRO_BATCHES,
    VIRTUAL_STAGE_CHOICES,
    factorisations,
    no_layout_reason,
)
from dtfilm.cost.plan_ranking import (
    FIXABLE,
    best_plain,
    best_without_cp,
    branch,
    fastest,
    fastest_with_room,
    matching,
    ranked,
)
from dtfilm.cost.plan_reasons import explain
from dtfilm.cost.plans import Degrees, Plans, evaluate, setup_for
from dtfilm.cost.setup import Setup

# `plan`, and the planner's names other modules import from here (the commands, the storyboard, the
# published runs' checks), each defined where its part lives: the grid (plan_grid), the plans priced
# (plans), their ranking (plan_ranking); the pick's explanation is plan_reasons'
__all__ = [
    "FIXABLE",
    "MAX_MICRO_BATCHES",
    "MAX_MICRO_BATCH_SIZE",
    "SCHEDULE_NAMES",
    "VIRTUAL_STAGE_CHOICES",
    "Degrees",
    "Plans",
    "evaluate",
    "factorisations",
    "fastest",
    "fastest_with_room",
    "matching",
    "no_layout_reason",
    "plan",
    "ranked",
    "setup_for",
]


def plan(
    setup: Setup, global_batch: int, top: int = 10, fixed: dict[str, int] | None = None, search_ep: bool = True
) -> dict[str, Any]:
    """Evaluate every plan; keep those that fit (and match `fixed`, the degrees given as flags),
    ranked by time per token. `search_ep` off leaves a MoE model's ep at 1 (only the benchmark
    turns it off, to time the search with EP against the search without)."""
    fixed = dict(fixed or {})
    started = time.perf_counter()
    plans = evaluate(setup, global_batch, search_ep=search_ep)
    order = ranked(plans, twins=fixed.get("zero") == 2)
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
