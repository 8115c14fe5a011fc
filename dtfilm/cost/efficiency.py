"""How long a card takes for one micro-batch through its pipeline stage, and so how efficient
it is: the compute efficiency that falls as the work per card shrinks.

The curve is a roofline (Williams, Waterman and Patterson 2009: each kernel takes the longer of
its arithmetic at the achievable rate and its bytes at the memory bandwidth) with a fixed cost
per layer per pass (Hockney's model, t = t0 + work/rate, the one `comm` uses for links: the
work at which half the rate is reached is n_half = t0 * rate). Per layer per micro-batch:

1. matmuls: 2 FLOPs per parameter per token forward, twice that backward (Kaplan et al. 2020),
   on the card's share of them (1/t under tensor parallelism), at the card's Maximum Achievable
   Matmul FLOPS (`Card.matmul_share`, measured per card);
2. attention's core (Q K^T and the weighted sum of V): 2*s*h FLOPs per token forward under a
   causal mask, which FlashAttention and ring attention skip (the unmasked count is 4*s*h;
   Narayanan et al. 2021, eq. 3's s/6h term), at FlashAttention's measured share of peak for
   the kernel's sequence length (s/c) and head size, forward and backward apart
   (dtfilm.cost.attention: FlashAttention-3 paper, Figures 5 and 6); in bf16 under fp8 unless
   `fp8_attention` asks for fp8 attention (fp8 recipes run only the linear layers' GEMMs in fp8:
   Transformer Engine's documentation, torchao float8; Micikevicius et al. 2022). The output head
   stays in bf16 under fp8 too (Megatron-LM's output layer is not a Transformer Engine layer);
3. memory-bound work (norms, activation functions, residual adds, dropout): every activation
   byte a layer keeps (Korthikanti's 34*s*b*h) crosses HBM MEMORY_PASSES times: written and read
   in the forward, read again with its gradient written in the backward;
4. LAYER_OVERHEAD_SECONDS per layer per pass: kernel launches and the synchronisation between
   them, which no amount of work hides when the work per card is small; under context
   parallelism once more per ring step, since each of the c - 1 steps launches its own attention
   kernels and waits for its neighbour's K and V (ring attention, Liu et al. 2023).

All of it divided by SUSTAINED_SHARE: the share of these kernel ceilings that end-to-end training
sustains, fitted to the published runs (dtfilm/data/published_runs.yaml, `dtfilm plan --compare`):
what the whiteboard leaves out (stragglers, the optimizer step, data loading, kernels it does not
list). Runs of 2021-22 with unfused attention (Megatron-LM, MT-NLG, BLOOM) sustained less than
runs with FlashAttention and the fused kernels that came with it (Llama 3), so the share is kept
per stack. It is kept per `overlap` mode too, fitted under each: under `framework` part of the
traffic hides and the compute beside it slows (overlap.py), so the share that matches the same runs
differs from the whiteboard's; `none` keeps its own, the numbers the film shows.

Terms 1 and 2 shrink with the tokens per micro-batch per card (b*s/c) and the hidden size per TP
slice (h/t) together; term 3 with b*s/c only, so its share grows as h falls; term 4 stays. So
the efficiency is high for wide layers and long micro-batches and falls as either shrinks.
Recomputation repeats the forward: a full one the whole forward, a selective one the attention
core (Korthikanti et al. 2022, section 5: 2.7% more FLOPs for GPT-3 175B).

Functions take numpy arrays (dtfilm.cost.model: one entry per plan, an estimate one row) or scalars.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dtfilm.cost.attention import attention_shares
from dtfilm.cost.hardware import Card
from dtfilm.cost.memory import (
    ACTIVATION_BYTES_SCALE,
    ATTENTION_SCORE_BYTES_PER_HEAD_TOKEN,
    RECOMPUTE_MODES,
    activation_factor,
)

MEMORY_PASSES = 4  # per activation byte: written and read forward, read with its gradient backward
RECOMPUTED_MEMORY_PASSES = 2  # a full recomputation writes and reads the forward's bytes again
FORWARD_PASSES, BACKWARD_PASSES = 1, 2  # a backward pass costs twice a forward (Kaplan et al. 2020)
# The fitted constants, one set per `overlap` mode (overlap.OVERLAP_MODES), each fitted on the fit
# set of the published runs (`set: fit`; published.FITTED_ON names them) under its own mode: what
# the model leaves out is not the same once it hides traffic under compute, so the same share
# cannot serve both. The `set: test` runs are held out from both fits.
# - `none`: each share the value that makes its group's largest MFU error smallest (True: the three
#   Llama 3 405B runs; False: BLOOM 176B, Narayanan et al.'s ten and MT-NLG's three), with the
#   overhead set beside them (commits 0162d83, b4784ef). The seeds' whiteboard and the film's
#   on-screen numbers: tests/data/overlap_none_golden.json holds them to the last digit.
# - `framework`: the two shares, by benchmarks/fit_shares.py (its docstring says the objective), with
#   Narayanan et al.'s micro-batch sizes and virtual stages as the authors' scripts set them
#   (Megatron-LM examples/sc21/run_table_1.sh; 0.69 when the model filled them with its fastest),
#   and the bubble's slots as long as a micro-batch with its TP waits (0.72 with compute-only slots).
# Keyed by overlap mode, then by flash_attention.
SUSTAINED_SHARE = {
    "none": {True: 0.87, False: 0.68},
    "framework": {True: 0.81, False: 0.73},
}
# per layer per pass: launches and synchronisation of its kernels. No source: set with `none`'s
# shares, and one for both modes: under `framework` the fit set cannot tell it apart from zero
# (benchmarks/fit_shares.py prints the profile: 0 to 80 us move the fit set's mean by a few tenths
# of a point), so it is not refitted there.
LAYER_OVERHEAD_SECONDS = 40e-6


def _matmul_rate(card: Card, precision: str) -> float:
    """FLOP/s the card's best matmuls reach in `precision` (bf16 where it has no such cores)."""
    peak, _ = card.peak_for(precision)
    return peak * card.matmul_share(precision)


def _mode_index(recompute: Any) -> Any:
    return RECOMPUTE_MODES.index(recompute) if isinstance(recompute, str) else np.asarray(recompute)


@dataclass(frozen=True)
class StageTime:
    """One micro-batch through one card of a stage, forward and backward, by term (seconds),
    with the FLOPs it runs (hardware FLOPs: recomputation included)."""

    matmul: Any
    attention: Any
    memory: Any
    overhead: Any
    matmul_flops: Any
    attention_flops: Any

    @property
    def seconds(self) -> Any:
        return self.matmul + self.attention + self.memory + self.overhead

    @property
    def flops(self) -> Any:
        return self.matmul_flops + self.attention_flops


def _recomputed(recompute: Any, flash: bool) -> tuple[Any, Any]:
    """(the whole forward runs again, attention's scores are computed again in the backward):
    FlashAttention recomputes its scores whatever the recomputation mode."""
    mode = _mode_index(recompute)
    return mode == RECOMPUTE_MODES.index("full"), (mode != RECOMPUTE_MODES.index("none")) | flash


def _bf16_under_fp8(precision: str) -> str:
    """The precision of attention and the output head: fp8 recipes run only the transformer
    layers' linear GEMMs in fp8, the rest in bf16."""
    return "bf16" if precision == "fp8" else precision


def _matmul_seconds(card: Card, precision: str, overlap: str, layer_flops: Any, head_flops: Any) -> Any:
    """The matmuls at the card's achievable rate: under `none` (the seeds' whiteboard, the numbers
    of before issue 57) all at `precision`'s; else the output head at its own precision's."""
    matmul_rate = _matmul_rate(card, precision)
    if overlap == "none":
        return (layer_flops + head_flops) / matmul_rate
    return layer_flops / matmul_rate + head_flops / _matmul_rate(card, _bf16_under_fp8(precision))


def _attention_seconds(
    card: Card,
    precision: str,
    *,
    overlap: str,
    flash: bool,
    fp8_attention: bool,
    pass_flops: Any,
    passes: Any,
    kernel_seq_len: Any,
    head_dim: int,
) -> Any:
    """Attention's core, `passes` passes of `pass_flops` each (the backward two of them).

    Under `overlap: none` (the seeds' whiteboard, whose fitted shares were fitted on it) every GEMM
    and attention run at the precision's peak and attention at the card's one share, as before
    issue 57; under `framework` (what frameworks do), precision per operation and the measured
    attention shares apply.

    `fp8_attention`: under `framework` and fp8, attention's core at the fp8 peak (FlashAttention-3's fp8 kernels,
    at the same measured share: 1.2 PFLOP/s of 1,979 against 740 of 989 in BF16, Shah et al. 2024,
    abstract, are shares alike); else at the bf16 peak."""
    flops = pass_flops * passes
    if overlap == "none":  # the seeds' whiteboard, its shares fitted on it: attention at the
        # precision's peak and at one share (the numbers of before issue 57)
        peak, _ = card.peak_for(precision)
        return flops / (peak * card.attention_efficiency if flash else _matmul_rate(card, precision))
    attention_precision = precision if fp8_attention else _bf16_under_fp8(precision)
    if not flash:
        return flops / _matmul_rate(card, attention_precision)
    attention_peak, _ = card.peak_for(attention_precision)
    forward_share, backward_share = attention_shares(card, kernel_seq_len, head_dim)
    forward_passes = passes - BACKWARD_PASSES
    return pass_flops / attention_peak * (forward_passes / forward_share + BACKWARD_PASSES / backward_share)


def _memory_bytes(
    precision: str,
    *,
    layers: Any,
    tokens: Any,
    seq_len: Any,
    hidden: int,
    tp: Any,
    heads: int,
    flash: bool,
    full: Any,
    scores_again: Any,
    sequence_parallel: bool,
) -> Any:
    """The bytes a stage's memory-bound kernels touch: its activations (without sequence
    parallelism the norms' and dropouts' stay whole on every TP rank), and without `flash` the
    attention scores' softmax and dropout too: 5*a*s bytes per token per layer (Korthikanti's
    5as/h term) at MEMORY_PASSES, again when recomputed."""
    per_token = activation_factor("selective", heads, seq_len, hidden, True, tp, sequence_parallel)
    kept = per_token * tokens * hidden * ACTIVATION_BYTES_SCALE[precision]
    memory_bytes = kept * layers * (MEMORY_PASSES + full * RECOMPUTED_MEMORY_PASSES)
    if flash:
        return memory_bytes
    scores = ATTENTION_SCORE_BYTES_PER_HEAD_TOKEN * heads * seq_len * tokens / tp
    return memory_bytes + scores * layers * (MEMORY_PASSES + scores_again * RECOMPUTED_MEMORY_PASSES)


def stage_time(
    card: Card,
    precision: str,
    *,
    layers: Any,
    tokens: Any,
    seq_len: Any,  # an int, or each plan's (a column: plans x 1)
    hidden: int,
    tp: Any,
    layer_params: Any,
    head_params: Any,
    recompute: Any,
    heads: int,
    cp: Any = 1,
    flash: bool = True,
    sequence_parallel: bool = True,
    overlap: str = "none",
    fp8_attention: bool = False,
) -> StageTime:
    """A stage's `layers` (and its output head's `head_params`, on the last stage) for one
    micro-batch of `tokens` tokens on one card (b*s/c), its matrices split t ways.

    `layer_params` counts one layer's matrix parameters (a storyboard's `params` rescales them);
    `recompute` is a mode name or an array of indices into RECOMPUTE_MODES.

    `flash`: FlashAttention (Dao et al. 2022) computes attention in one kernel that skips the
    causal mask's empty half, never writes the scores to HBM and recomputes them in its backward.
    Without it (the unfused kernels of 2021-22), the full a*s*s score matrix is multiplied as
    batched matmuls and its softmax and dropout cross HBM (_memory_bytes).

    `overlap`: the mode whose fitted shares apply (SUSTAINED_SHARE); it and `fp8_attention` pick
    the rates (_attention_seconds says how)."""
    full, scores_again = _recomputed(recompute, flash)
    matmul_passes = FORWARD_PASSES + BACKWARD_PASSES + full * FORWARD_PASSES
    attention_passes = FORWARD_PASSES + BACKWARD_PASSES + scores_again * FORWARD_PASSES
    masked_share = 1 if flash else 2  # unfused kernels multiply the masked half too
    layer_matmul_flops = 2 * tokens * layers * layer_params / tp * matmul_passes
    head_matmul_flops = 2 * tokens * head_params / tp * matmul_passes
    # one forward pass of attention's core; the backward is two of them
    attention_pass_flops = 2 * masked_share * tokens * seq_len * hidden / tp * layers
    matmul_seconds = _matmul_seconds(card, precision, overlap, layer_matmul_flops, head_matmul_flops)
    attention_seconds = _attention_seconds(
        card, precision, overlap=overlap, flash=flash, fp8_attention=fp8_attention,
        pass_flops=attention_pass_flops, passes=attention_passes,
        kernel_seq_len=seq_len / cp, head_dim=hidden // heads,
    )  # fmt: skip
    memory_bytes = _memory_bytes(
        precision, layers=layers, tokens=tokens, seq_len=seq_len, hidden=hidden, tp=tp, heads=heads,
        flash=flash, full=full, scores_again=scores_again, sequence_parallel=sequence_parallel,
    )  # fmt: skip
    sustained = SUSTAINED_SHARE[overlap][bool(flash)]
    rounds = layers * (matmul_passes + (cp - 1) * attention_passes)
    return StageTime(
        matmul=matmul_seconds / sustained,
        attention=attention_seconds / sustained,
        memory=memory_bytes / card.hbm_bytes_per_second / sustained,
        overhead=LAYER_OVERHEAD_SECONDS * rounds / sustained,
        matmul_flops=layer_matmul_flops + head_matmul_flops,
        attention_flops=attention_pass_flops * attention_passes,
    )
