"""The grid the planner searches: every way to lay a model out on N cards (dp x tp x pp x cp
factorisations the model allows), times every micro-batch split inside the envelope, ZeRO stage,
recomputation, schedule, interleaving depth and, for a MoE model, expert-parallel degree."""

from __future__ import annotations

import math

import numpy as np

from dtfilm.cost import memory
from dtfilm.cost.setup import Setup
from dtfilm.units import counted

ZERO_STAGES = (0, 1, 2, 3)
MAX_MICRO_BATCHES = 1024  # the envelope's bounds (dtfilm.cost.inputs takes them from here)
MAX_MICRO_BATCH_SIZE = 1024
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
            f"no layout divides {cards:,} cards and a global batch of {counted(global_batch, 'sequence')}:"
            f" dp must divide the batch, and these cards allow dp = {shown}; valid: a global batch that one of"
            " them divides, or a card count whose layouts do"
        )
    for dp in degrees:
        if global_batch % dp == 0:
            per_replica = global_batch // dp
            if any(m <= MAX_MICRO_BATCHES and per_replica // m <= MAX_MICRO_BATCH_SIZE for m in divisors(per_replica)):
                return None
    return (
        f"a global batch of {counted(global_batch, 'sequence')} on {cards:,} cards needs more than"
        f" {MAX_MICRO_BATCHES:,} micro-batches of at most {MAX_MICRO_BATCH_SIZE:,} sequences on every layout;"
        " valid: a smaller global batch or more cards"
    )


def grid(
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
