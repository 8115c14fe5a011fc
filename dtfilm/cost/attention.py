"""How fast FlashAttention runs, by the sequence length its kernel sees and the head size.

One share of peak at every length predicts short sequences too fast and says nothing of the
head size. FlashAttention's published measurements give TFLOP/s by sequence length (512 to 16K)
and head dimension (64, 128), forward and backward apart; this module interpolates them.

Source: Shah et al. 2024, "FlashAttention-3" (arXiv 2407.08608), Figure 5 (attention forward
speed, BF16, with causal mask, H100 80GB SXM5) and Figure 6 (attention backward speed, BF16,
H100 80GB SXM5): the FlashAttention-2 bars, which are what the runs of 2023-24 ran (Llama 3
among them). Batch x sequence = 16K tokens, hidden 2,048, as the paper sets them.

Under `overlap: none`, the seeds' whiteboard, attention keeps the card's one share (its fitted
shares were fitted so). A card with no table of its own takes the H100's curve, scaled so that its longest-sequence,
head-128 figure is the card's `attention_efficiency` (FlashAttention-2's 50-73% of an A100's peak,
Dao 2023, abstract; 0.6 taken). The kernel's sequence is the sequence a card's attention call
sees: s/c under context parallelism (each ring step multiplies an s/c block of queries by an
s/c block of keys). Lengths outside 512..16K take the nearest end; head sizes outside 64..128
the nearest (interpolated in log2 between them).

Functions take numpy arrays (dtfilm.cost.model: one entry per plan, an estimate one row) or scalars.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from dtfilm.cost.hardware import Card

KERNEL_SEQ_LENS = (512, 1024, 2048, 4096, 8192, 16384)
HEAD_DIMS = (64, 128)
# TFLOP/s, FlashAttention-2 on H100 SXM5 in BF16 (FlashAttention-3 paper, Figures 5 and 6).
FA2_H100_FORWARD_CAUSAL_TFLOPS = {
    64: (180, 229, 262, 284, 295, 299),
    128: (191, 260, 298, 319, 333, 335),
}
FA2_H100_BACKWARD_TFLOPS = {
    64: (198, 238, 264, 279, 287, 291),
    128: (214, 260, 291, 310, 318, 322),
}
H100_BF16_PEAK_FLOPS = 989e12  # the datasheet's dense BF16 peak the shares are taken against
# The cost model counts a backward pass as two forwards' FLOPs (Kaplan et al. 2020), and runs
# one forward and one backward per micro-batch (recomputation adds forwards).
_FORWARD_WEIGHT, _BACKWARD_WEIGHT = 1, 2


def _table_tflops(table: Mapping[int, tuple[int, ...]], kernel_seq_len: Any, head_dim: int) -> Any:
    """TFLOP/s of `table` at the kernel's sequence length and head size (log2 interpolation)."""
    x = np.log2(np.maximum(np.asarray(kernel_seq_len, dtype=float), 1.0))
    xs = np.log2(KERNEL_SEQ_LENS)
    low, high = (np.interp(x, xs, table[d]) for d in HEAD_DIMS)
    weight = float(np.clip(np.log2(max(head_dim, 1) / HEAD_DIMS[0]) / np.log2(HEAD_DIMS[1] / HEAD_DIMS[0]), 0, 1))
    out = low + (high - low) * weight
    return float(out) if np.ndim(out) == 0 else out


def _combined_tflops(forward: Any, backward: Any) -> Any:
    return (_FORWARD_WEIGHT + _BACKWARD_WEIGHT) / (_FORWARD_WEIGHT / forward + _BACKWARD_WEIGHT / backward)


# The H100's FlashAttention-2 at its longest sequence and head 128, forward and backward together:
# 0.33 of the BF16 peak (the paper's introduction rounds it to 35%). Other cards scale from it.
FA2_H100_LONG_SEQUENCE_SHARE = (
    _combined_tflops(FA2_H100_FORWARD_CAUSAL_TFLOPS[128][-1], FA2_H100_BACKWARD_TFLOPS[128][-1])
    * 1e12
    / H100_BF16_PEAK_FLOPS
)


# The cards the table was measured on (the H200 has the H100's compute).
MEASURED_ON = frozenset({"h100-sxm-80gb", "h200-141gb"})


def attention_shares(card: Card, kernel_seq_len: Any, head_dim: int) -> tuple[Any, Any]:
    """(forward, backward) shares of peak that FlashAttention reaches on `card` at this kernel
    sequence length and head size: the table itself on the cards it was measured on, else its
    curve scaled so that the long-sequence, head-128 share is the card's `attention_efficiency`."""
    return scaled_shares(card.attention_efficiency, kernel_seq_len, head_dim, card.name in MEASURED_ON)


def scaled_shares(card_share: float, kernel_seq_len: Any, head_dim: int, measured: bool = False) -> tuple[Any, Any]:
    reference = _combined_tflops(FA2_H100_FORWARD_CAUSAL_TFLOPS[128][-1], FA2_H100_BACKWARD_TFLOPS[128][-1])
    scale = 1e12 / H100_BF16_PEAK_FLOPS if measured else card_share / reference
    forward = _table_tflops(FA2_H100_FORWARD_CAUSAL_TFLOPS, kernel_seq_len, head_dim) * scale
    backward = _table_tflops(FA2_H100_BACKWARD_TFLOPS, kernel_seq_len, head_dim) * scale
    return forward, backward


def attention_share(card_share: float, kernel_seq_len: Any, head_dim: int, measured: bool = False) -> Any:
    """The share of peak over one forward and one backward (the `compute` figure shown)."""
    forward, backward = scaled_shares(card_share, kernel_seq_len, head_dim, measured)
    return _combined_tflops(forward, backward)
