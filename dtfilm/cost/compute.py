"""FLOPs and time (Kaplan et al. 2020; seed 001): 6*P*D, 8*P*D with recomputation."""

from __future__ import annotations

from dtfilm.cost.setup import Setup

FORWARD_FLOPS_PER_TOKEN_PER_PARAM = 2  # a multiply and an add
BACKWARD_FLOPS_PER_TOKEN_PER_PARAM = 4  # twice the forward: the inputs' gradients and the weights'


def flops_per_token_per_param(checkpointing: bool) -> int:
    """2 forward + 4 backward; recomputation repeats the forward: 8."""
    forward_passes = 2 if checkpointing else 1
    return forward_passes * FORWARD_FLOPS_PER_TOKEN_PER_PARAM + BACKWARD_FLOPS_PER_TOKEN_PER_PARAM


RECOMPUTE_OVERHEAD = flops_per_token_per_param(True) / flops_per_token_per_param(False) - 1  # a third


def tokens_per_step(setup: Setup) -> int:
    """dp * m * b * s (CONTRACT.md, Batch)."""
    return setup.dp * setup.micro_batches * setup.micro_batch_size * setup.seq_len


def training_flops(params: float, tokens: float, checkpointing: bool) -> float:
    return flops_per_token_per_param(checkpointing) * params * tokens


def seconds_at_mfu(flops: float, cards: int, peak_flops: float, mfu: float) -> float:
    """Time = FLOPs / (cards * peak * MFU)."""
    return flops / (cards * peak_flops * mfu)
