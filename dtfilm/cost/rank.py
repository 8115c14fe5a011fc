"""Where a user's own plan stands among every plan (`dtfilm plan --rank`).

The planner ranks every plan that fits; a user with a plan of their own (a run already set up,
tp 8 x pp 4 x dp 8 under ZeRO-1) asks what the planner's pick changes and why it is faster.
This module answers with the planner's public functions only (`evaluate`, `ranked`,
`matching`, `Plans.row`) and the scalar estimate of the two plans compared, so that the why is
the cost model's own parts of a step: compute, the bubble, each group's exposed traffic, the
overlap's slowdown, and memory per card.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtfilm.cost.estimate import estimate_setup
from dtfilm.cost.planner import (
    FIXABLE,
    MAX_MICRO_BATCH_SIZE,
    MAX_MICRO_BATCHES,
    Plans,
    evaluate,
    matching,
    ranked,
    setup_for,
)
from dtfilm.cost.setup import Setup
from dtfilm.units import counted, format_quantity

# The degrees a change is told by, in the order a plan is written.
DEGREES = FIXABLE
# At most this many distinct changes are listed among the faster plans (the rest counted).
CHANGES_LISTED = 5
# The parts of a step the why compares, as the estimate names them (seconds each).
GROUPS = ("dp", "tp", "pp", "cp", "ep")


def plan_name(row: dict[str, Any]) -> str:
    """A plan as the planner writes it: 'dp 8 x tp 8 x pp 4 x cp 1, ZeRO-1'."""
    name = f"dp {row['dp']} x tp {row['tp']} x pp {row['pp']} x cp {row['cp']}"
    name += f" with ep {row['ep']}" if row.get("ep", 1) > 1 else ""
    return name + (f", ZeRO-{row['zero']}" if row["zero"] else "")


def _step_parts(setup: Setup, row: dict[str, Any]) -> dict[str, float]:
    """One plan's step in the estimate's own parts (seconds), and its memory per card (bytes)."""
    numbers = estimate_setup(setup_for(setup, row))
    compute, comm = numbers["compute"], numbers["comm"]
    parts = {
        "compute": float(compute["compute_seconds"]),
        "bubble": float(compute["bubble_seconds"]),
        **{f"exposed.{g}": float(comm["exposed_seconds_by_group"].get(g, 0.0)) for g in GROUPS},
        "overlap_slowdown": float(compute.get("overlap_slowdown_seconds", 0.0)),
        "step": float(compute["step_seconds"]),
        "memory": float(numbers["memory"]["total"]),
    }
    return parts


def _seconds(value: float) -> str:
    """A time in the unit that keeps it short; none at all is "none" (not "0 µs")."""
    return format_quantity(value, "time") if value > 0 else "none"


PART_WORDS = {
    "compute": "compute",
    "bubble": "the pipeline bubble",
    "exposed.dp": "exposed data-parallel traffic",
    "exposed.tp": "exposed tensor-parallel traffic",
    "exposed.pp": "exposed pipeline traffic",
    "exposed.cp": "exposed context-parallel traffic",
    "exposed.ep": "exposed expert-parallel traffic (the all-to-all)",
    "overlap_slowdown": "compute slowed beside overlapped traffic",
}


def _why(given: dict[str, float], pick: dict[str, float], capacity: float) -> list[dict[str, Any]]:
    """The parts of a step where the given plan and the pick differ, the largest gap first,
    then memory per card: each with both values and a sentence."""
    out = []
    gaps = sorted(PART_WORDS, key=lambda k: -abs(given[k] - pick[k]))
    for key in gaps:
        delta = given[key] - pick[key]
        if abs(delta) < 0.001 * max(given["step"], 1e-12):  # under a thousandth of the step: no reason
            continue
        more = "more" if delta > 0 else "less"
        text = (
            f"{PART_WORDS[key]}: {_seconds(given[key])} against the pick's"
            f" {_seconds(pick[key])} ({_seconds(abs(delta))} {more} a step)"
        )
        out.append({"part": key, "unit": "seconds", "given": given[key], "pick": pick[key], "text": text})
    text = (
        f"memory per card: {format_quantity(given['memory'], 'bytes')} against the pick's"
        f" {format_quantity(pick['memory'], 'bytes')}, of {format_quantity(capacity, 'bytes')}"
    )
    out.append({"part": "memory", "unit": "bytes", "given": given["memory"], "pick": pick["memory"], "text": text})
    return out


def _changes(rows: list[dict[str, Any]], given: dict[str, Any]) -> list[dict[str, Any]]:
    """The faster plans grouped by the degrees they change from the given plan's, fastest first:
    {changes: {name: [given, theirs]}, plans, best_step_seconds}."""
    groups: dict[tuple[tuple[str, int], ...], dict[str, Any]] = {}
    for row in rows:
        # a dense model's rows name no ep: its plans all have ep 1
        key = tuple((name, row.get(name, 1)) for name in DEGREES if row.get(name, 1) != given.get(name, 1))
        entry = groups.setdefault(
            key,
            {
                "changes": {name: [given.get(name, 1), value] for name, value in key},
                "plans": 0,
                "best_step_seconds": row["step_seconds"],
            },
        )
        entry["plans"] += 1
        entry["best_step_seconds"] = min(entry["best_step_seconds"], row["step_seconds"])
    return sorted(groups.values(), key=lambda e: e["best_step_seconds"])


def rank(setup: Setup, global_batch: int, given: dict[str, int]) -> dict[str, Any]:
    """Where the plans with the `given` degrees stand among every plan that fits.

    `position` (1-based) is the place of the best of them in the planner's ranking, of `of` plans
    that fit (None when none of them fits); `faster` the plans with less time per token than it
    (wherever the ranking puts a tight fit), grouped by the degrees they change; `why` the parts
    of a step where the pick and the given plan differ, from the scalar estimate of each."""
    plans = evaluate(setup, global_batch)
    order = ranked(plans, twins=given.get("zero") == 2)
    mine = matching(plans, given)
    laid_out = int(np.count_nonzero(mine))
    fitting_mine = order[mine[order]]
    result: dict[str, Any] = {
        "given": dict(given),
        "laid_out": laid_out,
        "of": int(order.size),
        "global_batch": global_batch,
    }
    pick = plans.row(int(order[0])) if order.size else None
    if not fitting_mine.size:
        # none of the given plans fits: say by how much the least hungry of them is over
        least = int(np.nonzero(mine)[0][np.argmin(plans.memory_total[mine])]) if laid_out else None
        result.update(position=None, plan=plans.row(least) if least is not None else None, faster=None)
        result["why"] = _over_memory(setup, plans, least, pick) if least is not None else []
        result["pick"] = pick
        return result
    best = int(fitting_mine[0])
    row = plans.row(best)
    per_token = plans.step_seconds[order] / plans.tokens_per_step[order]
    quicker = order[per_token < row["seconds_per_token"]]
    faster_rows = [plans.row(int(i)) for i in quicker]
    result.update(
        position=int(np.nonzero(order == best)[0][0]) + 1,
        plan=row,
        pick=pick,
        faster={
            "count": len(faster_rows),
            # faster, but with less than fit_margin to spare: the ranking puts them after the roomy plans
            "tight": int(np.count_nonzero(~plans.roomy[quicker])),
            "changes": _changes(faster_rows, row),
        },
    )
    if pick is None or best == int(order[0]):
        result["why"] = []
        return result
    result["why"] = _why(_step_parts(setup, row), _step_parts(setup, pick), setup.card.memory_bytes)
    return result


def _over_memory(setup: Setup, plans: Plans, least: int, pick: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Why none of the given plans fits: the least memory any of them needs (plan `least`), over the card's."""
    return [
        {
            "part": "memory",
            "unit": "bytes",
            "given": float(plans.memory_total[least]),
            "pick": pick["memory_total"] if pick else None,
            "text": f"the least memory any of them needs per card is"
            f" {format_quantity(float(plans.memory_total[least]), 'bytes')}, over the card's"
            f" {format_quantity(setup.card.memory_bytes, 'bytes')}",
        }
    ]


def _change_text(change: dict[str, Any]) -> str:
    moves = ", ".join(
        f"ZeRO-{a} to ZeRO-{b}" if name == "zero" else f"{name} {a} to {b}"
        for name, (a, b) in change["changes"].items()
    )
    return moves or "the same degrees, split into other micro-batches or recomputed otherwise"


def rank_lines(result: dict[str, Any]) -> list[str]:
    """The rank in words, under the planner's table."""
    given = ", ".join(f"{name} {value}" for name, value in result["given"].items())
    if result["laid_out"] == 0:
        return [
            f"Your plan ({given}): no plan splits a global batch of {result['global_batch']:,} sequences with those"
            f" degrees (dp must divide it, into at most {MAX_MICRO_BATCHES:,} micro-batches of at most"
            f" {MAX_MICRO_BATCH_SIZE:,} sequences)."
        ]
    if result["position"] is None:
        lines = [f"Your plan ({given}) does not fit:"]
        return lines + [f"  {w['text']}." for w in result["why"]]
    row = result["plan"]
    lines = [
        f"Your plan ({given}) at its best, {plan_name(row)}, {row['micro_batches']} micro-batches of"
        f" {row['micro_batch_size']}, {format_quantity(row['step_seconds'], 'time')} a step:"
        f" ranked {result['position']:,} of {result['of']:,} plans that fit.",
    ]
    faster = result["faster"]
    if faster["count"] == 0:
        lines.append("No plan is faster per token.")
        return lines
    tight = f" ({faster['tight']:,} of them tight fits, ranked after the plans with room)" if faster["tight"] else ""
    verb = "is" if faster["count"] == 1 else "are"
    lines.append(f"{counted(faster['count'], 'plan')} {verb} faster per token{tight}; what they change:")
    for change in faster["changes"][:CHANGES_LISTED]:
        lines.append(
            f"  {_change_text(change)}: {counted(change['plans'], 'plan')}, the best"
            f" {format_quantity(change['best_step_seconds'], 'time')} a step"
        )
    rest = len(faster["changes"]) - CHANGES_LISTED
    if rest > 0:
        lines.append(f"  and {counted(rest, 'other change')}")
    if result["why"]:
        pick = result["pick"]
        lines.append(
            f"Why the pick, {plan_name(pick)}, is faster"
            f" ({_seconds(row['step_seconds'] - pick['step_seconds'])} less a step):"
        )
        lines += [f"  {w['text']}" for w in result["why"]]
    return lines
