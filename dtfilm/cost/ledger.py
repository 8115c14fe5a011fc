"""What a card holds beyond its training state and kept activations: the terms that make real
runs run out of memory. Each is a key of its own in `memory`, counted in `total`.

Written once, on numpy arrays (one entry per plan) or scalars, and called by the model's one
body (dtfilm.cost.stage_ledgers), whose one-row call is the estimate.

- recompute working set: under full recomputation the backward recomputes one layer's forward
  at a time and holds that whole layer's activations while it runs its backward (Korthikanti et
  al. 2022, section 5; Chen et al. 2016, "Training Deep Nets with Sublinear Memory Cost": the
  segment being recomputed is held whole while its backward runs).
- logits and loss: the stage with the output head holds b * s/c * V/t logits in fp32 for each
  micro-batch whose loss is alive there (`logits_micro_batches`: one under 1F1B, all under
  GPipe). Megatron-LM's vocabulary-parallel cross-entropy
  (megatron/core/tensor_parallel/cross_entropy.py) casts the logits to fp32, turns them into the
  softmax in place, saves that one buffer for the backward and writes the gradient into it in
  place: one fp32 copy (an unfused cross-entropy keeps the log-softmax and the gradient beside it).
- fp8 recipe copies: Transformer Engine keeps each weight in bf16 as the module's parameter and
  caches its fp8 cast and the cast's transpose across micro-batches (the fp8 GEMMs of Hopper take
  both layouts; TE's documentation, "Using FP8 with Transformer Engine", and `is_first_microbatch`);
  torchao's float8 keeps the high-precision weight too. The ledger's `weights` are the 1 fp8 byte;
  these are the 2 + 1 bytes beside them, sharded as the weights are.
- reserve: what the process holds before any tensor: the CUDA context (with lazy module loading,
  the default since CUDA 11.7; PyTorch's "CUDA semantics" page: the memory nvidia-smi shows
  includes it, memory_reserved does not) and NCCL's buffers: NCCL_BUFFSIZE (4 MiB by default, NCCL's
  environment-variable documentation) for each channel and each ring peer (the previous and the
  next rank), for each communicator a card belongs to (one per parallel group of more than one
  card), at up to NCCL's MAXCHANNELS = 32 channels (src/include/device.h, NCCL 2.12-2.18), which
  NCCL opens on NVSwitch nodes. The caching allocator's fragmentation has no documented size and
  is not counted here: `fit_margin` (estimate.py) stays the headroom under which a fit is tight.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtfilm.cost.memory import ACTIVATION_BYTES_SCALE, activation_factor

# "Fits" is total <= capacity (the contract's meaning); `total` counts the CUDA context and NCCL's
# buffers (ledger.reserve), but not the caching allocator's fragmentation, which no documentation
# sizes (PyTorch's CUDA semantics page describes the cache, not its waste): a fit with less than
# this share of the card to spare (4 GB of an 80 GB card) is a tight fit: the film says so
# (docs/contract.md, "fit_margin"), and the planner picks a tight fit only when no plan has this
# much room. An assumption, not a measurement: measure it on a card.
FIT_MARGIN_SHARE = 0.05

LEDGER_EXTRA_PARTS = ("recompute_working_set", "logits", "fp8_weight_copies", "reserve")
EXTRA_PART_LABELS = {
    "recompute_working_set": "recompute working set",
    "logits": "logits (fp32)",
    "fp8_weight_copies": "fp8 recipe copies",
    "reserve": "CUDA + NCCL reserve",
}

LOGITS_BYTES_PER_ELEMENT = 4  # fp32
LOGITS_FP32_COPIES = 1  # Megatron-LM's fused vocabulary-parallel cross-entropy: the softmax, reused for its gradient
# Bytes per parameter an fp8 recipe keeps beside the fp8 weight: the bf16 parameter (2) and the
# cached fp8 transpose (1) (Transformer Engine); 0 for the other precisions.
FP8_RECIPE_EXTRA_BYTES_PER_PARAM = {"fp8": 2 + 1, "bf16": 0, "fp32": 0}

MIB = 2**20
NCCL_BUFFSIZE_BYTES = 4 * MIB  # NCCL_BUFFSIZE's default (NCCL documentation, environment variables)
NCCL_CHANNELS = 32  # MAXCHANNELS (NCCL src/include/device.h), opened on NVSwitch nodes
NCCL_RING_PEERS = 2  # a ring channel connects to the previous and the next rank
# The CUDA context a PyTorch process creates on its first CUDA call: 723 MiB measured on the
# PyTorch forums ("What is the reason for pytorch's GPU memory floor?", discuss.pytorch.org/t/73021);
# "depending on the CUDA version, used GPU etc." (the same thread). No measurement per card type
# was found, and none could be made (no card was lent): every card takes that figure until one is.
DEFAULT_CUDA_CONTEXT_BYTES = 723 * MIB
CUDA_CONTEXT_BYTES: dict[str, float] = {}


def recompute_working_set(
    full: Any,  # bool, or a bool array: full recomputation
    heads: int,
    seq_len: int,
    hidden: int,
    precision: str,
    micro_batch_size: Any,
    tp: Any,
    cp: Any,
    flash: bool,
    sequence_parallel: bool,
    kv_heads: int | None = None,
) -> Any:
    """Bytes of one layer's whole activations for one micro-batch, held while that layer is
    recomputed and run backward; 0 unless recomputation is full."""
    per_token_hidden = activation_factor("none", heads, seq_len, hidden, flash, tp, sequence_parallel, kv_heads)
    whole = per_token_hidden * seq_len * micro_batch_size * hidden * ACTIVATION_BYTES_SCALE[precision] / cp
    return whole * full


def logits_bytes(micro_batch_size: Any, seq_len: int, vocab: int, tp: Any, cp: Any, in_flight: Any) -> Any:
    """fp32 logits (the loss's softmax and its gradient) on the stage with the output head:
    b * s/c tokens by V/t words, for each micro-batch in flight on that stage."""
    tokens = micro_batch_size * seq_len / cp
    return LOGITS_FP32_COPIES * LOGITS_BYTES_PER_ELEMENT * tokens * vocab / tp * in_flight


def logits_micro_batches(in_flight: Any, gpipe: Any) -> Any:
    """Micro-batches whose logits the head's stage holds at once. GPipe runs every forward
    before any backward: all of them (`in_flight`). Under 1F1B one: the last stage runs each
    micro-batch's forward and then its backward, and under the interleaved schedule the head's
    chunk does the same (Megatron-LM's warm-up on the last rank, (v-1)p forwards, runs only
    the earlier chunks; Narayanan et al. 2021, 2.2.2), though earlier chunks keep more
    micro-batches' activations."""
    return np.where(gpipe, in_flight, 1)


def fp8_weight_copies(params_on_card: Any, precision: str, weight_share: Any) -> Any:
    """Bytes an fp8 recipe keeps beside the fp8 weights (sharded as they are under ZeRO-3)."""
    return params_on_card * FP8_RECIPE_EXTRA_BYTES_PER_PARAM[precision] * weight_share


def communicators(shard_group: Any, tp: Any, pp: Any, cp: Any) -> Any:
    """NCCL communicators a card belongs to: one per parallel group of more than one card."""
    return (shard_group > 1) * 1 + (tp > 1) * 1 + (pp > 1) * 1 + (cp > 1) * 1


def nccl_buffer_bytes(communicator_count: Any) -> Any:
    return communicator_count * NCCL_BUFFSIZE_BYTES * NCCL_CHANNELS * NCCL_RING_PEERS


def cuda_context_bytes(card_name: str) -> float:
    return CUDA_CONTEXT_BYTES.get(card_name, DEFAULT_CUDA_CONTEXT_BYTES)


def reserve_bytes(card_name: str, shard_group: Any, tp: Any, pp: Any, cp: Any) -> Any:
    """The CUDA context and NCCL's buffers: held whatever the model (see the module's docstring)."""
    return cuda_context_bytes(card_name) + nccl_buffer_bytes(communicators(shard_group, tp, pp, cp))
