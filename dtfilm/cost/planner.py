"""The planner: every plan for a model on N cards, vectorised with numpy, ranked by time
per token, with the pick explained in the words of seed 001's decision tree.

The numbers are `dtfilm.cost.model`'s, the estimate's own body, called on the grid of every plan
(one row per plan); an estimate is the same call on one row, so the two cannot disagree.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from dtfilm.cost import batch, memory, model, pipeline
from dtfilm.cost import ledger as terms
from dtfilm.cost.setup import Setup
from dtfilm.units import format_quantity

ZERO_STAGES = (0, 1, 2, 3)
MAX_MICRO_BATCHES = 1024  # the envelope's bounds (dtfilm.cost.inputs takes them from here)
MAX_MICRO_BATCH_SIZE = 1024
SCHEDULE_NAMES = model.SCHEDULE_NAMES  # index 0: 1f1b, 1: gpipe
FULL = model.FULL
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
    # a MoE model's expert-parallel degrees (None for a dense model: its rows name no ep)
    ep: np.ndarray | None = None

    def degree(self, name: str) -> np.ndarray:
        """A degree by name; a dense model's plans all have ep 1."""
        if name == "ep" and self.ep is None:
            return np.ones_like(self.dp)
        return getattr(self, name)

    def row(self, i: int) -> dict[str, Any]:
        moe = {} if self.ep is None else {"ep": int(self.ep[i])}
        return {
            "dp": int(self.dp[i]),
            "tp": int(self.tp[i]),
            "pp": int(self.pp[i]),
            "cp": int(self.cp[i]),
            **moe,
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


Degrees = Callable[[str], np.ndarray]  # a sweep's degree by name ("ep" 1 where it has none)


def _grid(
    setup: Setup,
    global_batch: int,
    layouts: list[tuple[int, int, int, int]] | None = None,
    virtual_stages: tuple[int, ...] = VIRTUAL_STAGE_CHOICES,
    search_ep: bool = True,
) -> dict[str, np.ndarray]:
    """Every combination: factorisation (or only `layouts`) x micro-batch split x ZeRO x
    recomputation x schedule x virtual stages (`virtual_stages`' choices), and for a MoE model x
    expert-parallel degree (unless `search_ep` is off: every plan's ep 1, as the benchmark
    times the search without it)."""
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
    names: tuple[str, ...] = ("dp", "tp", "pp", "cp", "micro_batches", "micro_batch_size")
    if setup.shape.moe and search_ep:  # every expert-parallel degree that divides dp and the experts
        experts = setup.shape.experts
        rows = np.array([(*row, ep) for row in base for ep in divisors(math.gcd(row[0], experts))], dtype=np.int64)
        names = (*names, "ep")
    rows_rep = np.repeat(rows, len(extra), axis=0)
    extra_tiled = np.tile(extra, (len(rows), 1))
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


def evaluate(
    setup: Setup,
    global_batch: int,
    layouts: list[tuple[int, int, int, int]] | None = None,
    virtual_stages: tuple[int, ...] = VIRTUAL_STAGE_CHOICES,
    search_ep: bool = True,
    where: Callable[[Degrees], np.ndarray] | None = None,
) -> Plans:
    """Memory, traffic and time of every plan (dtfilm.cost.model, the estimate's own body); with
    `layouts`, of the plans with those (dp, tp, pp, cp) only, each plan priced as in the full sweep.
    `virtual_stages`: the interleaving depths tried (a published run may state one outside
    VIRTUAL_STAGE_CHOICES, as Megatron's 3 layers a stage in one virtual stage each).
    `search_ep` off: a MoE model's plans all with ep 1 (benchmarks/planner_speed.py).
    `where`: only the plans it selects, given each degree by name, in the sweep's order (a plan's
    price never depends on the others': a published run's own plans cost a tenth of the sweep)."""
    g = _grid(setup, global_batch, layouts, virtual_stages, search_ep)
    if g and where is not None:
        keep = where(lambda name: g[name] if name in g or name != "ep" else np.ones_like(g["dp"]))
        g = {name: values[keep] for name, values in g.items()}
        g = g if g["dp"].size else {}
    if not g:
        empty = np.zeros(0)
        arrays = {f.name: empty for f in fields(Plans) if f.name not in ("_capacity", "ep")}
        return Plans(**arrays, _capacity=setup.card.memory_bytes)
    # a MoE model's plans each with its ep; a dense model's all ep 1
    plans = model.Layouts(**{name: g[name] for name in model.LAYOUT_FIELDS}, ep=g.get("ep", np.ones_like(g["dp"])))
    result = model.evaluate(setup, plans)
    return Plans(
        **{name: g[name] for name in model.LAYOUT_FIELDS},
        memory_total=result.memory_total_bytes,
        comm_bytes=result.comm_total_bytes,
        comm_seconds=result.comm_seconds,
        compute_seconds=result.compute_seconds,
        bubble_seconds=result.bubble_seconds,
        step_seconds=result.step_seconds,
        exposed_seconds=result.exposed_seconds,
        tokens_per_step=result.tokens_per_step,
        _capacity=setup.card.memory_bytes,
        ep=g.get("ep"),
    )


def setup_for(setup: Setup, plan: dict[str, Any]) -> Setup:
    """The Setup of one planned row (to estimate a plan the planner ranked, as `published` does)."""
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
    return replace(setup, **{k: plan[k] for k in keys}, ep=plan.get("ep", 1))


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
    is picked only when no plan has room. Ranked as the planner ranks its pick (`ranked`: a tie
    in time per token to the least memory), so that over every fitting plan it is the pick: the
    tree's plan took the first of a tie (cp's ZeRO 1 at 69.2 GB beside the pick's ZeRO 2 at
    56.1 GB, both 19 min a step) and its "3D:" line read ZeRO 1 beside the pick's ZeRO 2."""
    order = ranked(plans)
    chosen = order[mask[order]]
    return int(chosen[0]) if chosen.size else None


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
    if row.get("ep", 1) > 1:
        name += f" with ep {row['ep']}"
    if row["zero"]:
        name += f", ZeRO-{row['zero']}" + (" (FSDP)" if row["zero"] == 3 else "")
    lines.append(f"The fastest plan that fits: {name}, {row['step_seconds']:.3g} s per step.")
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
            f"{row['pp']} pipeline stages of about {setup.shape.layers // row['pp']} layers{interleaved};"
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
FIXABLE = ("dp", "tp", "pp", "cp", "ep", "zero")


def matching(plans: Plans, fixed: dict[str, int]) -> np.ndarray:
    """The plans whose degrees (and ZeRO stage) are those `fixed` names."""
    mask = np.ones(plans.count, dtype=bool)
    for name, value in fixed.items():
        mask &= plans.degree(name) == value
    return mask


def plan(
    setup: Setup, global_batch: int, top: int = 10, fixed: dict[str, int] | None = None, search_ep: bool = True
) -> dict[str, Any]:
    """Evaluate every plan; keep those that fit (and match `fixed`, the degrees given as flags),
    ranked by time per token. `search_ep` off leaves a MoE model's ep at 1 (only the benchmark
    turns it off, to time the search with EP against the search without)."""
    fixed = dict(fixed or {})
    started = time.perf_counter()
    plans = evaluate(setup, global_batch, search_ep=search_ep)
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
