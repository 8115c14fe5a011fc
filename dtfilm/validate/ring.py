"""Ring attention on gloo, written out: what `dtfilm validate` runs for context parallelism,
since `torch.distributed.tensor.experimental.context_parallel` does not run on CPU ranks.

Each of c ranks holds s/c tokens of the sequence (rank r the r-th chunk) and its queries stay
put, while the key/value blocks travel the ring (Liu et al. 2023, "Ring Attention"):

- forward: c - 1 hops of each K/V block, each rank folding the blocks it may see (those of
  earlier chunks whole, its own under the causal mask) into its output with an online softmax;
- backward: the K/V blocks go round again (a rank keeps only its own), each with a gradient
  accumulator that every rank adds its queries' share to, and one last hop takes each
  accumulator home: c - 1 hops of K/V and c of their gradients (as ring-flash-attention does).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist


def _hop(block: torch.Tensor, rank: int, ranks: int) -> torch.Tensor:
    """Send `block` to the next rank and receive the previous rank's: one ring step."""
    received = torch.empty_like(block)
    ops = [
        dist.P2POp(dist.isend, block.contiguous(), (rank + 1) % ranks),
        dist.P2POp(dist.irecv, received, (rank - 1) % ranks),
    ]
    for request in dist.batch_isend_irecv(ops):
        request.wait()
    return received


def _scores(q: torch.Tensor, k: torch.Tensor, scale: float, diagonal: bool) -> torch.Tensor:
    scores = q @ k.transpose(-1, -2) * scale
    if diagonal:  # the rank's own chunk: each query sees the keys up to its own position
        n = scores.shape[-1]
        scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return scores


class RingAttention(torch.autograd.Function):
    """Causal attention of this rank's queries over the whole sequence's keys and values."""

    @staticmethod
    def forward(ctx: Any, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, rank: int, ranks: int) -> torch.Tensor:
        scale = q.shape[-1] ** -0.5
        out = torch.zeros_like(q)
        running_max = torch.full(q.shape[:-1], float("-inf"))
        total = torch.zeros(q.shape[:-1])
        block = torch.cat([k, v], dim=-1)
        for step in range(ranks):
            source = (rank - step) % ranks
            incoming = _hop(block, rank, ranks) if step + 1 < ranks else None
            if source <= rank:  # later chunks are all masked: passed on, not used
                kk, vv = block.split(k.shape[-1], dim=-1)
                scores = _scores(q, kk, scale, source == rank)
                new_max = torch.maximum(running_max, scores.amax(dim=-1))
                weights = torch.exp(scores - new_max[..., None])
                shrink = torch.exp(running_max - new_max)
                total = total * shrink + weights.sum(dim=-1)
                out = out * shrink[..., None] + weights @ vv
                running_max = new_max
            if incoming is not None:
                block = incoming
        out = out / total[..., None]
        ctx.save_for_backward(q, k, v, out, running_max + torch.log(total))
        ctx.rank, ctx.ranks = rank, ranks
        return out

    @staticmethod
    def backward(ctx: Any, grad_out: torch.Tensor) -> tuple[Any, ...]:
        q, k, v, out, lse = ctx.saved_tensors
        rank, ranks = ctx.rank, ctx.ranks
        scale = q.shape[-1] ** -0.5
        width = k.shape[-1]
        delta = (grad_out * out).sum(dim=-1)
        grad_q = torch.zeros_like(q)
        block = torch.cat([k, v], dim=-1)
        grad_block = torch.zeros_like(block)  # the visiting block's accumulated dK | dV
        for step in range(ranks):
            source = (rank - step) % ranks
            if source <= rank:
                kk, vv = block.split(width, dim=-1)
                weights = torch.exp(_scores(q, kk, scale, source == rank) - lse[..., None])
                grad_v = weights.transpose(-1, -2) @ grad_out
                grad_scores = weights * (grad_out @ vv.transpose(-1, -2) - delta[..., None])
                grad_q += grad_scores @ kk * scale
                grad_k = grad_scores.transpose(-1, -2) @ q * scale
                grad_block = grad_block + torch.cat([grad_k, grad_v], dim=-1)
            if step + 1 < ranks:  # the block and its accumulator travel on together
                block = _hop(block, rank, ranks)
                grad_block = _hop(grad_block, rank, ranks)
        grad_block = _hop(grad_block, rank, ranks) if ranks > 1 else grad_block  # home to its owner
        grad_k, grad_v = grad_block.split(width, dim=-1)
        return grad_q, grad_k, grad_v, None, None


def ring_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, rank: int, ranks: int) -> torch.Tensor:
    return RingAttention.apply(q, k, v, rank, ranks)
