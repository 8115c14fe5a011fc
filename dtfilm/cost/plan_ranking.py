"""The plans ranked: the ones that fit, those with room to spare first, fastest per token first
(`ranked(plans)[0]` is the pick); the fastest of a kind (`fastest`, `best_plain`,
`best_without_cp`); where seed 001's decision tree ends (`branch`); the plans a user's flags fix
(`matching`)."""

from __future__ import annotations

import numpy as np

from dtfilm.cost import memory
from dtfilm.cost.plans import Plans


def plain_plans(plans: Plans) -> np.ndarray:
    """The plans that split only the batch: tp, pp and cp of 1 (data parallelism, any ZeRO stage)."""
    return (plans.tp == 1) & (plans.pp == 1) & (plans.cp == 1)


def branch(plans: Plans, best: int | None = None) -> str:
    """Where seed 001's decision tree ends: "ddp" (one card holds it all), "fsdp" (sharding
    over the data-parallel group is enough), "cp" (the sequence is too long: with the layers
    split as the fastest plan splits them, only plans that also split the sequence fit) or
    "3d" (the layers must be split)."""
    plain = plain_plans(plans)
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
    is picked only when no plan has room. Ranked as the planner ranks its pick (`ranked`: a tie
    in time per token to the least memory), so that over every fitting plan it is the pick: the
    tree's plan took the first of a tie (cp's ZeRO 1 at 69.2 GB beside the pick's ZeRO 2 at
    56.1 GB, both 19 min a step) and its "3D:" line read ZeRO 1 beside the pick's ZeRO 2."""
    order = ranked(plans)
    chosen = order[mask[order]]
    return int(chosen[0]) if chosen.size else None


def zero_two_twins(plans: Plans) -> np.ndarray:
    """The plans with ZeRO-2 over more than one micro-batch: they hold and move what the same plan
    with ZeRO-1 does (memory.gradients_sharded), every figure the same."""
    return (plans.zero == 2) & ~memory.gradients_sharded(plans.zero, plans.micro_batches)


def ranked(plans: Plans, twins: bool = False) -> np.ndarray:
    """The plans that fit: those with `fit_margin` to spare first, then the tight fits; within
    each, fastest per token first, then the least memory. `ranked(plans)[0]` is the pick. ZeRO-1's
    twins (`zero_two_twins`) are left out unless `twins` (ZeRO-2 asked for)."""
    listed = plans.fits if twins else plans.fits & ~zero_two_twins(plans)
    fits = np.nonzero(listed)[0] if plans.count else np.zeros(0, dtype=int)
    per_token = plans.step_seconds[fits] / plans.tokens_per_step[fits]
    return fits[np.lexsort((plans.memory_total[fits], per_token, ~plans.roomy[fits]))]


def best_plain(plans: Plans) -> int | None:
    """The fastest fitting plan that splits only the batch (data parallel, with any ZeRO stage)."""
    plain = plain_plans(plans)
    return fastest(plans, plans.fits & plain)


def best_without_cp(plans: Plans) -> int | None:
    """The fastest fitting plan that does not split the sequence (cp 1): named beside a pick
    that does, since at short sequences practice keeps cp 1 (Llama 3 at 8K tokens)."""
    return fastest(plans, plans.fits & (plans.cp == 1))


# What a user may fix on `dtfilm plan`'s command line (CONTRACT.md: "degrees given as flags
# restrict the search, and plans[0] is the pick"); ZeRO's stage with them, as a plan is written.
FIXABLE = ("dp", "tp", "pp", "cp", "ep", "zero")


def matching(plans: Plans, fixed: dict[str, int]) -> np.ndarray:
    """The plans whose degrees (and ZeRO stage) are those `fixed` names."""
    mask = np.ones(plans.count, dtype=bool)
    for name, value in fixed.items():
        mask &= plans.degree(name) == value
    return mask
