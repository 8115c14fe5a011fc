"""Expert parallelism on CPU ranks: the TinyGPT with every MLP a mixture of experts, its routed
experts split over the ranks, tokens dispatched to them and combined back with all-to-alls
(torch.distributed.nn's all_to_all_single, whose backward is the reverse all-to-all: GShard,
section 2.2; Megatron-Core MoE's all-to-all dispatcher).

Routing is balanced by construction, as a hash router routes (Roller et al. 2021, "Hash Layers
For Large Sparse Models"): token t of a rank goes to experts (t k + j) mod E, j < k, so every
expert gets T k / E of each rank's T tokens, the cost model's `routing_imbalance` 1; the router's
softmax still weighs the k outputs, so it trains. What is measured is what the cost model prices:
the all-to-alls a step and the bytes each moves, and the state a rank holds."""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.nn.functional import all_to_all_single

from dtfilm.validate.model import Block, Shape, TinyGPT, loss_of

EXPERTS = 8  # routed experts a layer: 2 a rank on 4 ranks
TOP_K = 2


class Expert(nn.Module):
    """One routed expert: a SwiGLU MLP, gate and up fused as the dense block's are."""

    def __init__(self, hidden: int, ffn: int) -> None:
        super().__init__()
        self.gate_up = nn.Linear(hidden, 2 * ffn, bias=False)
        self.down = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return self.down(nn.functional.silu(gate) * up)


class ExpertLayer(nn.Module):
    """A block's MLP as E routed experts, this rank holding E / ranks of them."""

    def __init__(self, shape: Shape, rank: int, ranks: int) -> None:
        super().__init__()
        self.ranks, self.local = ranks, EXPERTS // ranks
        self.first = rank * self.local
        self.router = nn.Linear(shape.hidden, EXPERTS, bias=False)
        self.experts = nn.ModuleList(Expert(shape.hidden, shape.ffn) for _ in range(self.local))
        self.sent_bytes = 0  # what this layer's forward all-to-alls sent to other ranks
        self.rank = rank

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        tokens = x.reshape(b * s, h)
        count = tokens.shape[0]
        chosen = (torch.arange(count)[:, None] * TOP_K + torch.arange(TOP_K)[None, :]) % EXPERTS
        gates = torch.softmax(self.router(tokens), dim=-1).gather(1, chosen)
        order = torch.argsort(chosen.reshape(-1), stable=True)  # (token, j) pairs by expert: by rank
        sent = tokens[order // TOP_K]
        split = [count * TOP_K // self.ranks] * self.ranks
        received = all_to_all_single(torch.empty_like(sent), sent, split, split)
        # every rank sends the same pattern: the rows for this rank's experts, from each rank
        mine = chosen.reshape(-1)[order][self.first * count * TOP_K // EXPERTS :][: split[0]]
        expert_of = (mine - self.first).repeat(self.ranks)
        outputs = torch.zeros_like(received)
        for e, expert in enumerate(self.experts):
            rows = expert_of == e
            outputs[rows] = expert(received[rows])
        returned = all_to_all_single(torch.empty_like(outputs), outputs, split, split)
        row_bytes = h * sent.element_size()
        self.sent_bytes += sum(n for i, n in enumerate(split) if i != self.rank) * row_bytes * 2
        weighted = returned * gates.reshape(-1)[order][:, None]
        combined = torch.zeros_like(tokens).index_add(0, order // TOP_K, weighted)
        return combined.reshape(b, s, h)


class ExpertBlock(Block):
    """A TinyGPT block whose MLP is the expert layer (its dense MLP dropped)."""

    def __init__(self, shape: Shape, rank: int, ranks: int) -> None:
        super().__init__(shape)
        del self.gate_up, self.down
        self.moe = ExpertLayer(shape, rank, ranks)

    def forward(self, x: torch.Tensor, ring: tuple[int, int] | None = None) -> torch.Tensor:
        b, s, _ = x.shape
        q, k, v = self.qkv(self.attention_norm(x)).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, s, -1, self.head_dim).transpose(1, 2) for t in (q, k, v))
        attended = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.out(attended.transpose(1, 2).reshape(b, s, -1))
        return x + self.moe(self.mlp_norm(x))


def expert_model(shape: Shape, rank: int, ranks: int) -> TinyGPT:
    """The TinyGPT with every block a MoE block (the same seed on every rank: the shared weights
    agree; each rank's experts are its own)."""
    model = TinyGPT(shape)
    model.blocks = nn.ModuleList(ExpertBlock(shape, rank, ranks) for _ in range(shape.layers))
    return model


def ep_builder(shape: Shape, rank: int, ranks: int, checks: dict[str, float]) -> tuple[nn.Module, Any, Any]:
    """Expert parallelism over every rank, the ranks data-parallel replicas: the shared weights'
    gradients all-reduced once a step as one flat buffer, the experts' not at all (no two ranks
    hold the same expert: dp / ep = 1). `checks["all_to_all_bytes_sent"]`: the bytes the step's
    all-to-alls send to other ranks, from the split sizes each call was given."""
    model = expert_model(shape, rank, ranks)
    layers = [block.moe for block in model.blocks]
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    shared = [p for name, p in model.named_parameters() if ".moe.experts." not in name]

    def backward(tokens: torch.Tensor, targets: torch.Tensor) -> None:
        for layer in layers:
            layer.sent_bytes = 0
        loss_of(model(tokens), targets).backward()
        # the forward's two calls a layer counted as issued; the backward's two mirror them
        checks["all_to_all_bytes_sent"] = 2 * sum(layer.sent_bytes for layer in layers)
        flat = torch.cat([p.grad.reshape(-1) for p in shared])
        dist.all_reduce(flat)
        offset = 0
        for p in shared:
            p.grad.copy_(flat[offset : offset + p.numel()].view_as(p.grad) / ranks)
            offset += p.numel()

    return model, optimizer, backward
