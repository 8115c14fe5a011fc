"""Can fewer contiguous micro-batches per virtual stage (N < p) let Llama 3 405B interleave on 8,192 H100s?

    python benchmarks/interleaved_group_size.py

Megatron-Core's interleaved schedule with its tunable group size N
(`microbatch_group_size_per_vp_stage`, added in NVIDIA/Megatron-LM 4295be1a, "tunable schedule
with overlapping", 2024-11-01; read at d98e8a64, megatron/core/pipeline_parallel/schedules.py):
`get_schedule_table` orders a rank's chunk forwards in groups of N micro-batches, every chunk of
a group before the next group (the backwards the same, chunks reversed); `get_pp_rank_microbatches`
warms up 2(p - rank - 1) + (v - 1)N chunk forwards, then runs one forward and one backward in turn,
then the remaining backwards. `forward_backward_pipelining_with_interleaving` refuses N < p or
N > M, and a last group of fewer than p micro-batches ("dependency bubbles"). The Llama 3 paper
(section 3.3.2) places its N between the depth-first N = PP and the breadth-first N = M.

This script prices, for the fit run llama3-405b-8k-8192 (p = 16, m = 32), what each (v, N) would
hold on the card (the cost model's ledger: each stage's state, plus its layers' activations times
the chunks in flight, warm-up + 1, over v, plus the complete ledger's other terms: the CUDA/NCCL
reserve, and the last stage's fp32 logits, one micro-batch's under 1F1B) and
simulates each rank's order with every dependency (a forward needs the previous stage's, or the
last stage's previous chunk; a backward the next stage's, or the first stage's next chunk; forward
1 slot, backward 2, communication free). The order is strict, as Megatron-LM's blocking
send/receive pairs make it: a wait that never ends is a deadlock. Nothing here changes the cost
model; docs/published-runs.md quotes the output.
"""

from __future__ import annotations

import sys
from dataclasses import replace

from dtfilm.cost.estimate import LEDGER_EXTRA_PARTS, card_ledgers
from dtfilm.cost.inputs import Value, builtin_layer, parse_value, resolve
from dtfilm.cost.memory import MEMORY_PARTS, STATE_PARTS
from dtfilm.cost.published_runs import load_runs
from dtfilm.cost.setup import Setup
from dtfilm.cost.setup_checks import build_setup
from dtfilm.errors import Where

RUN = "llama3-405b-8k-8192"
GROUP_SIZES = (1, 2, 4, 8, 16, 32)
VIRTUAL_STAGES = (2, 4)
Task = tuple[str, int, int]  # ("F" or "B", micro-batch, model chunk)


def schedule_table(m: int, v: int, n: int) -> list[tuple[int, int]]:
    """(micro-batch, chunk) in a rank's forward order: Megatron-Core's get_schedule_table."""
    table: list[tuple[int, int]] = []
    for low in range(0, m, n):
        high = m if low + n >= m else low + n
        table += [(j, c) for c in range(v) for j in range(low, high)]
    return table


def warmup(p: int, rank: int, m: int, v: int, n: int) -> int:
    """Chunk forwards before the first backward: Megatron-Core's get_pp_rank_microbatches."""
    return min(2 * (p - rank - 1) + (v - 1) * n, v * m)


def rank_order(p: int, rank: int, m: int, v: int, n: int) -> list[Task]:
    table = schedule_table(m, v, n)
    forwards = [("F", j, c) for j, c in table]
    backwards = [("B", j, v - 1 - c) for j, c in table]
    w = warmup(p, rank, m, v, n)
    order = forwards[:w]
    for k in range(v * m - w):
        order += [forwards[w + k], backwards[k]]
    return order + backwards[v * m - w :]


def _needs(p: int, v: int, rank: int, task: Task) -> tuple[str, int, int, int] | None:
    kind, j, c = task
    if kind == "F":
        if rank > 0:
            return ("F", rank - 1, j, c)
        return ("F", p - 1, j, c - 1) if c > 0 else None
    if rank < p - 1:
        return ("B", rank + 1, j, c)
    return ("B", 0, j, c + 1) if c < v - 1 else ("F", rank, j, c)


def simulate(p: int, m: int, v: int, n: int) -> tuple[float | None, list[Task | None]]:
    """Bubble overhead (idle over work) of the strict orders, or None and where each rank waits."""
    orders = [rank_order(p, r, m, v, n) for r in range(p)]
    done: dict[tuple[str, int, int, int], int] = {}
    free, position = [0] * p, [0] * p
    progressed = True
    while progressed:
        progressed = False
        for r in range(p):
            while position[r] < len(orders[r]):
                task = orders[r][position[r]]
                need = _needs(p, v, r, task)
                if need is not None and need not in done:
                    break
                start = max(free[r], done[need] if need else 0)
                free[r] = done[(task[0], r, task[1], task[2])] = start + (1 if task[0] == "F" else 2)
                position[r] += 1
                progressed = True
    if all(position[r] == len(orders[r]) for r in range(p)):
        return max(free) / (3 * v * m) - 1, []
    return None, [orders[r][position[r]] if position[r] < len(orders[r]) else None for r in range(p)]


def run_setup() -> tuple[Setup, int]:
    run = load_runs()[RUN]
    layer = {k: parse_value(k, val, "storyboard", run.where) for k, val in run.settings.items()}
    micro_batches = run.global_batch // run.settings["dp"]
    extra = {"micro_batches": micro_batches, "micro_batch_size": 1, "virtual_stages": 1}
    layer |= {k: Value(val, "flag", Where(flag=k)) for k, val in extra.items()}
    setup, _ = build_setup(resolve([builtin_layer(), layer]))
    return setup, micro_batches


def card_gb(setup: Setup, v: int, n: int) -> float:
    """The fullest card's GB with (v, N), counted as the cost model's ledger counts a card: each
    stage's state, warm-up + 1 chunks of 1/v its layers, and the complete ledger's other terms
    (recompute working set, fp8 recipe copies, the CUDA/NCCL reserve; the logits on the last stage,
    one micro-batch's: the head's chunk runs each forward then its backward, as the ledger counts them)."""
    ledgers = card_ledgers(setup)
    per_layer = ledgers[0]["activations"] / (ledgers[0]["layers"] * ledgers[0]["micro_batches_in_flight"])
    states = [sum(ledger[k] for k in STATE_PARTS) for ledger in ledgers]
    m, p = setup.micro_batches, setup.pp
    held = [min(v * m, warmup(p, s, m, v, n) + 1) / v for s in range(p)]
    extra = [sum(ledger[k] for k in LEDGER_EXTRA_PARTS) for ledger in ledgers]  # logits: the last stage's, one
    return max(states[s] + ledgers[s]["layers"] * per_layer * held[s] + extra[s] for s in range(p)) / 1e9


def fullest_gb(setup: Setup) -> float:
    """The cost model's own fullest card, in GB."""
    return max(sum(ledger[k] for k in MEMORY_PARTS) for ledger in card_ledgers(setup)) / 1e9


def main() -> int:
    setup, m = run_setup()
    p = setup.pp
    for v in VIRTUAL_STAGES:  # the ledger's held chunks are the model's own at N = p
        assert abs(fullest_gb(replace(setup, virtual_stages=v)) - card_gb(setup, v, p)) < 1e-6
    v1 = fullest_gb(setup)
    print(f"{RUN}: p = {p}, m = {m}, card {setup.card.memory_bytes / 1e9:.0f} GB")
    print(f"v = 1 (plain 1F1B): {v1:.1f} GB, bubble overhead (p-1)/m = {(p - 1) / m:.3f}")
    print("GB: the fullest card if Megatron's warm-up ran; Megatron-Core: whether it accepts N")
    print(f"{'v':>2} {'N':>3}  {'GB':>6}  {'Megatron-Core':<14} simulated Megatron order")
    for v in VIRTUAL_STAGES:
        for n in GROUP_SIZES:
            accepted = p <= n <= m and not 0 < m % n < p
            overhead, stuck = simulate(p, m, v, n)
            ran = (
                f"bubble {overhead:.3f} ((p-1)/(vm) = {(p - 1) / (v * m):.3f})" if overhead is not None else "deadlock"
            )
            print(f"{v:>2} {n:>3}  {card_gb(setup, v, n):6.1f}  {'runs' if accepted else 'refuses':<14} {ran}")
    overhead, stuck = simulate(4, 4, 2, 2)
    print("smallest case, p = 4, m = 4, v = 2, N = 2:", "deadlock" if overhead is None else overhead)
    for rank, task in enumerate(stuck):  # counted from 0, as Megatron-LM counts them
        if task is not None:
            kind = "forward" if task[0] == "F" else "backward"
            print(f"  rank {rank} waits to run the {kind} of micro-batch {task[1]}, chunk {task[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
