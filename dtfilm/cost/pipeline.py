"""Pipeline stages, micro-batches in flight, and the bubble.

GPipe (Huang et al. 2019) and 1F1B (Narayanan et al. 2021): p-1 slots fill and p-1 drain.
"""

from __future__ import annotations

from dtfilm.cost.models import (
    ModelShape,
    input_embedding_params,
    layer_params,
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


def stage_architecture_params(shape: ModelShape, pp: int) -> list[int]:
    """Architectural parameters on each stage: its layers, the input embedding on the first,
    the final norm and output head on the last (Megatron keeps a copy of tied embeddings there)."""
    counts = stage_layers(shape.layers, pp)
    params = [n * layer_params(shape) for n in counts]
    params[0] += input_embedding_params(shape)
    params[-1] += output_head_params(shape)
    if shape.tied_embeddings and pp > 1:
        params[-1] += shape.vocab * shape.hidden
    return params


def micro_batches_in_flight(stage: int, pp: int, micro_batches: int, schedule: str) -> int:
    """Micro-batches whose activations a stage holds at its peak.

    1F1B: stage i holds min(m, p - i) (the first stage min(m, p)); all-forward-all-backward
    (GPipe) holds all m on every stage."""
    if schedule == "gpipe":
        return micro_batches
    return min(micro_batches, pp - stage)


def bubble_fraction(pp: int, micro_batches: int) -> float:
    """Idle share of the timeline: (p-1)/(m+p-1), the definition the timeline draws."""
    return (pp - 1) / (micro_batches + pp - 1)


def bubble_overhead(pp: int, micro_batches: int) -> float:
    """Idle time relative to the ideal compute time: (p-1)/m."""
    return (pp - 1) / micro_batches
