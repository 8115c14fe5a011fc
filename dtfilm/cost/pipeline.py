"""Pipeline stages, micro-batches in flight, and the bubble.

GPipe (Huang et al. 2019) and 1F1B (Narayanan et al. 2021): p-1 slots fill and p-1 drain.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtfilm.cost.models import (
    ModelShape,
    input_embedding_params,
    layers_params,
    layers_routed_params,
    output_head_params,
)

SCHEDULES = ("1f1b", "gpipe")


def stage_layers(layers: int, pp: int) -> list[int]:
    """Layers on each stage. Where p does not divide L, the middle stages take the extra
    layers first, since the end stages already hold the embedding and the output head."""
    base, extra = divmod(layers, pp)
    counts = [base] * pp
    order = [*list(range(1, pp - 1)), 0, pp - 1] if pp > 2 else list(range(pp))
    for stage in order[:extra]:
        counts[stage] += 1
    return counts


def stage_spans(layers: int, pp: int) -> list[tuple[int, int]]:
    """Each stage's first layer and its count of layers."""
    counts = stage_layers(layers, pp)
    return [(sum(counts[:i]), n) for i, n in enumerate(counts)]


def stage_routed_params(shape: ModelShape, pp: int) -> list[int]:
    """The routed experts' parameters on each stage (what EP shards; 0 for a dense model)."""
    return [layers_routed_params(shape, first, n) for first, n in stage_spans(shape.layers, pp)]


def stage_active_layer_params(shape: ModelShape, pp: int, routed_load: float = 1.0) -> list[float]:
    """Each stage's layers' active parameters (a token's k routed experts of E), the routed
    experts' share scaled by `routed_load`, the busiest expert's load over the mean (the whole
    group waits for it)."""
    out = []
    for first, n in stage_spans(shape.layers, pp):
        active = layers_params(shape, first, n, active=True)
        routed = layers_routed_params(shape, first, n) * shape.top_k / max(shape.experts, 1)
        out.append(active + routed * (routed_load - 1.0))
    return out


def stage_architecture_params(shape: ModelShape, pp: int) -> list[int]:
    """Architectural parameters on each stage: its layers, the input embedding on the first,
    the final norm and output head on the last (Megatron keeps a copy of tied embeddings there)."""
    params = [layers_params(shape, first, n) for first, n in stage_spans(shape.layers, pp)]
    params[0] += input_embedding_params(shape)
    params[-1] += output_head_params(shape)
    if shape.tied_embeddings and pp > 1:
        params[-1] += shape.vocab * shape.hidden
    return params


def stage_norm_params(shape: ModelShape, pp: int) -> list[int]:
    """Norm weights (and biases) on each stage: tensor parallelism replicates them, it does not
    split them (Megatron-LM keeps LayerNorm/RMSNorm whole on every TP rank; measured by
    `dtfilm validate`)."""
    per_layer = 2 * shape.hidden if shape.mlp == "swiglu" else 4 * shape.hidden
    final = shape.hidden if shape.mlp == "swiglu" else 2 * shape.hidden
    norms = [n * per_layer for n in stage_layers(shape.layers, pp)]
    norms[-1] += final
    return norms


def end_modules(stage: int, pp: int) -> int:
    """The modules outside the transformer layers a stage holds: the embedding on the first stage,
    the output head on the last (both on a pipeline of one)."""
    return int(stage == 0) + int(stage == pp - 1)


def tp_end_exchanges(stage: int, pp: int) -> int:
    """Tensor-parallel all-reduces outside the layers, per micro-batch: the vocabulary-parallel
    embedding's forward on the first stage, the column-parallel output head's input gradient on
    the last (Megatron-LM; measured by `dtfilm validate`): one a module at the ends."""
    return end_modules(stage, pp)


def micro_batches_in_flight(stage: Any, pp: int, micro_batches: Any, schedule: Any, virtual_stages: Any = 1) -> Any:
    """Micro-batches' worth of the stage's activations it holds at its peak (scalars or arrays).

    1F1B: stage i holds min(m, p - i) (the first stage min(m, p)); all-forward-all-backward
    (GPipe) holds all m on every stage. With p = 1 there is no pipeline: gradient accumulation
    runs each micro-batch's forward and backward in turn and holds one (CONTRACT.md).
    Interleaved 1F1B with v virtual stages (Narayanan et al. 2021, 2.2.2): a card holds v chunks
    of its layers, and its warm-up runs 2(p - i - 1) + (v - 1)p chunk forwards before the first
    backward (Megatron-LM's schedule), so it holds min(v*m, that + 1) chunks of 1/v of its
    layers: on the first stage p(1 + (p - 1)/(p*v)) micro-batches' worth once m >= p, the factor
    Korthikanti et al. 2022 (4.2.3) give."""
    gpipe = schedule == "gpipe" if isinstance(schedule, str) else np.asarray(schedule) == SCHEDULES.index("gpipe")
    plain = np.where(gpipe, micro_batches, np.minimum(micro_batches, pp - stage))
    chunks = np.minimum(
        virtual_stages * np.asarray(micro_batches), 2 * (pp - stage - 1) + (virtual_stages - 1) * pp + 1
    )
    held = np.where(np.asarray(virtual_stages) > 1, chunks / virtual_stages, plain)
    held = np.where(pp == 1, 1, held)
    return held.item() if np.ndim(held) == 0 else held


def bubble_fraction(pp: Any, micro_batches: Any, virtual_stages: Any = 1) -> Any:
    """Idle share of the timeline: (p-1)/(v*m+p-1), the definition the timeline draws (v = 1)."""
    return (pp - 1) / (virtual_stages * micro_batches + pp - 1)


def bubble_overhead(pp: Any, micro_batches: Any, virtual_stages: Any = 1) -> Any:
    """Idle time relative to the ideal compute time: (p-1)/(v*m), the interleaved schedule's
    bubble divided by its v virtual stages (Narayanan et al. 2021, 2.2.2)."""
    return (pp - 1) / (virtual_stages * micro_batches)


# A backward pass costs about twice a forward (Narayanan et al. 2021, Figure 4 draws it so).
FORWARD_SLOTS = 1
BACKWARD_SLOTS = 2


def stage_order(stage: int, pp: int, micro_batches: int, schedule: str) -> list[tuple[str, int]]:
    """The order a stage runs its work: ("F", j) and ("B", j) for micro-batches j = 1..m.

    GPipe: every forward, then every backward. 1F1B (PipeDream-Flush, Narayanan et al. 2021):
    p - stage - 1 warm-up forwards, then one forward and one backward in turn, then the rest
    of the backwards."""
    m = micro_batches
    if schedule == "gpipe":
        return [("F", j) for j in range(1, m + 1)] + [("B", j) for j in range(1, m + 1)]
    warmup = min(pp - stage - 1, m)
    order = [("F", j) for j in range(1, warmup + 1)]
    forward, backward = warmup + 1, 1
    while forward <= m:
        order += [("F", forward), ("B", backward)]
        forward, backward = forward + 1, backward + 1
    order += [("B", j) for j in range(backward, m + 1)]
    return order


def simulate_schedule(pp: int, micro_batches: int, schedule: str) -> list[list[tuple[str, int, int, int]]]:
    """When each stage runs each piece of work, in slots: per stage, (kind, micro-batch,
    start, end). A forward needs the previous stage's forward of that micro-batch; a backward
    needs the next stage's backward (or, on the last stage, its own forward)."""
    orders = [stage_order(s, pp, micro_batches, schedule) for s in range(pp)]
    done: dict[tuple[str, int, int], int] = {}
    blocks: list[list[tuple[str, int, int, int]]] = [[] for _ in range(pp)]
    free = [0] * pp
    position = [0] * pp
    while any(position[s] < len(orders[s]) for s in range(pp)):
        progressed = False
        for s in range(pp):
            if position[s] >= len(orders[s]):
                continue
            kind, j = orders[s][position[s]]
            if kind == "F":
                needed = ("F", s - 1, j) if s > 0 else None
            else:
                needed = ("B", s + 1, j) if s < pp - 1 else ("F", s, j)
            if needed is not None and needed not in done:
                continue
            start = max(free[s], done[needed] if needed else 0)
            end = start + (FORWARD_SLOTS if kind == "F" else BACKWARD_SLOTS)
            done[(kind, s, j)] = end
            blocks[s].append((kind, j, start, end))
            free[s] = end
            position[s] += 1
            progressed = True
        if not progressed:
            raise RuntimeError("pipeline schedule deadlocked")  # a bug in stage_order, never input
    return blocks
