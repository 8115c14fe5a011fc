"""Per-card memory: the training-state ledger and activations.

State bytes per parameter: ZeRO paper (Rajbhandari et al. 2019), section 3.1.
ZeRO stages shard over the data-parallel group: stage 1 the optimizer state, stage 2 also
the gradients, stage 3 (FSDP) also the weights (ZeRO, section 5).
Activations: Korthikanti et al. 2022, "Reducing Activation Recomputation", Table 2.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

STATE_PARTS = ("weights", "gradients", "master_weights", "adam_m", "adam_v")
# a card's ledger as drawn: the state, the activations, then `buffers`: the complete ledger's other
# terms together (the recompute working set, the logits, an fp8 recipe's copies and the CUDA/NCCL
# reserve; dtfilm.cost.ledger), so that the parts drawn add up to `memory.total`
MEMORY_PARTS = (*STATE_PARTS, "activations", "buffers")
# How the parts are named on screen and in tables.
PART_LABELS = {
    "weights": "weights",
    "gradients": "gradients",
    "master_weights": "master weights",
    "adam_m": "Adam m",
    "adam_v": "Adam v",
    "activations": "activations",
    "buffers": "buffers + reserve",
}


@dataclass(frozen=True)
class BytesPerParam:
    """Bytes each parameter costs in one training-state part."""

    weights: float
    gradients: float
    master_weights: float
    adam_m: float
    adam_v: float

    @property
    def total(self) -> float:
        return sum(asdict(self).values())


# bf16 mixed 2/2/4/4/4 = 16 (ZeRO 3.1); fp32 4/4/0/4/4 = 16; fp8 is seed 000's illustration
# (weights halve, master and moments stay): real fp8 recipes keep more.
BYTES_PER_PARAM: dict[str, BytesPerParam] = {
    "bf16": BytesPerParam(2, 2, 4, 4, 4),
    "fp32": BytesPerParam(4, 4, 0, 4, 4),
    "fp8": BytesPerParam(1, 2, 4, 4, 4),
}
# The number format each part is kept in, per precision (a part of 0 bytes is absent).
PART_FORMATS: dict[str, dict[str, str]] = {
    "bf16": {"weights": "bf16", "gradients": "bf16", "master_weights": "fp32", "adam_m": "fp32", "adam_v": "fp32"},
    "fp32": {"weights": "fp32", "gradients": "fp32", "master_weights": "", "adam_m": "fp32", "adam_v": "fp32"},
    "fp8": {"weights": "fp8", "gradients": "bf16", "master_weights": "fp32", "adam_m": "fp32", "adam_v": "fp32"},
}
# Activations are kept in 16 bits under bf16 and fp8, in 32 bits under fp32 (twice the bytes).
ACTIVATION_BYTES_SCALE = {"bf16": 1.0, "fp8": 1.0, "fp32": 2.0}
ACTIVATION_ELEMENT_BYTES = {"bf16": 2, "fp8": 2, "fp32": 4}
ACTIVATION_FORMAT = {"bf16": "bf16", "fp8": "bf16", "fp32": "fp32"}

# Korthikanti et al. 2022, Table 2: s*b*h*(34 + 5*a*s/h) bytes per layer with no recomputation;
# 34*s*b*h with selective recomputation, which recomputes the attention scores (the 5as/h term)
# instead of keeping them, as FlashAttention does inside its kernel (derived for a 4h GELU MLP;
# kept for SwiGLU, as the seeds do); 2*s*b*h with full recomputation, which keeps only each
# layer's input.
ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN = 34
ATTENTION_SCORE_BYTES_PER_HEAD_TOKEN = 5  # the 5*a*s/h term: bytes per head per token pair
CHECKPOINTED_BYTES_PER_TOKEN_PER_HIDDEN = 2
RECOMPUTE_MODES = ("none", "selective", "full")


# Korthikanti et al. 2022, Table 2, tensor parallel without sequence parallelism: the 10*s*b*h
# of the norms and dropouts (and a full recomputation's kept input) stay whole on every TP rank;
# the other 24 (and the scores) split t ways. Sequence parallelism splits them all.
REPLICATED_WITHOUT_SP_BYTES_PER_TOKEN_PER_HIDDEN = 10
# Of the 34, K and V are 2*s*b*h each (Korthikanti et al. 2022, section 4.1: "Q and K: 4sbh",
# "V: 2sbh"), derived for multi-head attention. Under grouped-query attention (Ainslie et al. 2023)
# K and V have kv_heads heads of h/a, not a: kv/a the bytes (1/16 on Llama 3 405B's 8 of 128).
KEY_VALUE_BYTES_PER_TOKEN_PER_HIDDEN = 4


def activation_factor(
    recompute: Any,  # a mode name, or an array of indices into RECOMPUTE_MODES
    heads: int,
    seq_len: int,
    hidden: int,
    flash: bool = True,
    tp: Any = 1,  # an int, or an array
    sequence_parallel: bool = True,
    kv_heads: int | None = None,  # None: as many as `heads` (multi-head attention)
) -> Any:
    """Bytes per token per hidden unit per layer that one card of a tensor-parallel group keeps:
    34 + 5as/h with no recomputation, 34 with selective, 2 with full (Korthikanti Table 2),
    divided by t under sequence parallelism; without it 10 of the 34 (and the kept input of a
    full recomputation) stay whole. FlashAttention never keeps the 5as/h scores. Grouped-query
    attention keeps K and V at kv/a of their 4 (KEY_VALUE_BYTES_PER_TOKEN_PER_HIDDEN)."""
    scores = 0 if flash else ATTENTION_SCORE_BYTES_PER_HEAD_TOKEN * heads * seq_len / hidden
    grouped = KEY_VALUE_BYTES_PER_TOKEN_PER_HIDDEN * (1 - (kv_heads or heads) / heads)
    kept = ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN - grouped
    whole = REPLICATED_WITHOUT_SP_BYTES_PER_TOKEN_PER_HIDDEN
    split = kept - whole
    if sequence_parallel:
        table = (
            (kept + scores) / tp,
            kept / tp,
            CHECKPOINTED_BYTES_PER_TOKEN_PER_HIDDEN / tp,
        )
    else:
        table = (whole + (split + scores) / tp, whole + split / tp, CHECKPOINTED_BYTES_PER_TOKEN_PER_HIDDEN + 0 * tp)
    if isinstance(recompute, str):
        return table[RECOMPUTE_MODES.index(recompute)]
    return np.choose(recompute, np.broadcast_arrays(*table))


def gradients_sharded(zero: Any, micro_batches: Any) -> Any:
    """Whether a card holds only its shard of the gradients at its peak: under ZeRO-3 (FSDP
    reduce-scatters them every micro-batch), and under ZeRO-2 at one micro-batch a step, where
    each bucket is reduce-scattered as the backward makes it (ZeRO, section 5.2). With gradient
    accumulation, ZeRO-2 moves what DP moves (one reduction a step: docs/contract.md), so the
    gradients build up whole and the card holds them whole, as under ZeRO-1 (Megatron-Core's
    distributed optimizer keeps a whole gradient buffer too; DeepSpeed's stage 2 instead
    reduces every micro-batch, m times the bytes). Elementwise over arrays."""
    return (np.asarray(zero) >= 3) | ((np.asarray(zero) == 2) & (np.asarray(micro_batches) == 1))


def activation_bytes_per_layer(
    seq_len: int,
    micro_batch_size: int,
    hidden: int,
    precision: str,
    recompute: str,
    heads: int,
    tp: int = 1,
    cp: int = 1,
    flash: bool = True,
    sequence_parallel: bool = True,
    kv_heads: int | None = None,
) -> float:
    """Activation bytes one layer keeps for one micro-batch on one card.

    Tensor parallelism with sequence parallelism divides them by t (without it, by less: see
    `activation_factor`); context parallelism by c (Korthikanti et al. 2022, Table 2;
    Ultra-Scale Playbook, CP section).
    """
    per_token_hidden = activation_factor(recompute, heads, seq_len, hidden, flash, tp, sequence_parallel, kv_heads)
    whole = per_token_hidden * seq_len * micro_batch_size * hidden
    return whole * ACTIVATION_BYTES_SCALE[precision] / cp
