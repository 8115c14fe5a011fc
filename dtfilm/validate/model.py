"""The model `dtfilm validate` trains: a small LLaMA-shaped transformer whose parameter count
is the cost model's formula exactly (models.layer_params with kv_heads = heads, SwiGLU, RMSNorm,
untied embeddings), with Q, K, V fused into one matrix and gate and up into another, as
Megatron fuses them, so tensor parallelism exchanges four times per layer."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.utils.checkpoint
from torch import nn

from dtfilm.validate.ring import ring_attention


@dataclass(frozen=True)
class Shape:
    layers: int = 4
    hidden: int = 256
    heads: int = 4
    ffn: int = 512
    vocab: int = 1024
    seq_len: int = 64
    micro_batch_size: int = 2

    @classmethod
    def near_one_billion(cls) -> Shape:
        """For `--gpu`: 16 layers of hidden 2048, 953,223,168 parameters, 2,048-token sequences."""
        return cls(layers=16, hidden=2048, heads=16, ffn=5632, vocab=32000, seq_len=2048, micro_batch_size=1)

    def cost_inputs(self) -> dict[str, object]:
        """The same shape as cost-model inputs (flag names)."""
        return {
            "model": "llama-7b",
            "layers": self.layers,
            "hidden": self.hidden,
            "heads": self.heads,
            "kv_heads": self.heads,
            "ffn": self.ffn,
            "vocab": self.vocab,
            "seq_len": self.seq_len,
            "micro_batch_size": self.micro_batch_size,
        }


class Block(nn.Module):
    def __init__(self, shape: Shape) -> None:
        super().__init__()
        h = shape.hidden
        self.head_dim = h // shape.heads
        self.attention_norm = nn.RMSNorm(h)
        self.qkv = nn.Linear(h, 3 * h, bias=False)
        self.out = nn.Linear(h, h, bias=False)
        self.mlp_norm = nn.RMSNorm(h)
        self.gate_up = nn.Linear(h, 2 * shape.ffn, bias=False)
        self.down = nn.Linear(shape.ffn, h, bias=False)

    def forward(self, x: torch.Tensor, ring: tuple[int, int] | None = None) -> torch.Tensor:
        """`ring` = (rank, ranks): x is this rank's chunk of the sequence, and attention runs as
        ring attention over the context-parallel ranks (dtfilm.validate.ring)."""
        b, s, _ = x.shape
        # Under tensor parallelism each rank sees its columns: its share of the heads.
        q, k, v = self.qkv(self.attention_norm(x)).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, s, -1, self.head_dim).transpose(1, 2) for t in (q, k, v))
        if ring is None:
            attended = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            attended = ring_attention(q, k, v, *ring)
        x = x + self.out(attended.transpose(1, 2).reshape(b, s, -1))
        gate, up = self.gate_up(self.mlp_norm(x)).chunk(2, dim=-1)
        return x + self.down(nn.functional.silu(gate) * up)


class Output(nn.Module):
    """The final norm and the output head (the last pipeline stage's extra)."""

    def __init__(self, shape: Shape) -> None:
        super().__init__()
        self.norm = nn.RMSNorm(shape.hidden)
        self.head = nn.Linear(shape.hidden, shape.vocab, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.norm(x))


class TinyGPT(nn.Module):
    def __init__(self, shape: Shape, checkpointing: bool = False) -> None:
        super().__init__()
        self.checkpointing = checkpointing  # recompute each block's forward in the backward
        self.embedding = nn.Embedding(shape.vocab, shape.hidden)
        self.blocks = nn.ModuleList(Block(shape) for _ in range(shape.layers))
        self.output = Output(shape)

    def forward(self, tokens: torch.Tensor, ring: tuple[int, int] | None = None) -> torch.Tensor:
        x = self.embedding(tokens)
        for block in self.blocks:
            if self.checkpointing:
                x = torch.utils.checkpoint.checkpoint(block, x, ring, use_reentrant=False)
            else:
                x = block(x, ring)
        return self.output(x)


def loss_of(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return nn.functional.cross_entropy(logits.flatten(0, 1).float(), targets.flatten())


def batch(shape: Shape, micro_batches: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Tokens and next-token targets for `micro_batches` micro-batches (one rank's data)."""
    generator = torch.Generator().manual_seed(seed)
    rows = micro_batches * shape.micro_batch_size
    tokens = torch.randint(0, shape.vocab, (rows, shape.seq_len + 1), generator=generator)
    return tokens[:, :-1], tokens[:, 1:]


class Stage(nn.Module):
    """One pipeline stage of a TinyGPT: its layers, with the embedding on the first stage and
    the final norm and head on the last (the cost model's split, pipeline.stage_layers)."""

    def __init__(self, model: TinyGPT, first: bool, last: bool, start: int, stop: int) -> None:
        super().__init__()
        self.embedding = model.embedding if first else None
        self.blocks = nn.ModuleList(model.blocks[start:stop])
        self.output = model.output if last else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.embedding is not None:
            x = self.embedding(x)
        for block in self.blocks:
            x = block(x)
        return self.output(x) if self.output is not None else x
