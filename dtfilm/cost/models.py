"""Model shapes, presets and the parameter count derived from a shape.

Shapes: LLaMA (Touvron et al. 2023, Table 2), Llama 2 70B, Llama 3.1 405B (Meta's model
cards), GPT-3 175B (Brown et al. 2020, Table 2.1). See ../shared/REFERENCES.md.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class ModelShape:
    """A decoder-only transformer's architecture, enough to count parameters and activations."""

    label: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    mlp: str = "swiglu"  # "swiglu" (3 matrices, no biases) or "gelu" (2 matrices with biases)
    tied_embeddings: bool = False
    learned_positions: int = 0  # rows of a learned position table; 0 for rotary

    @property
    def kv_hidden(self) -> int:
        """Width of the K (or V) projection: h * kv_heads / heads (grouped-query attention)."""
        return self.hidden * self.kv_heads // self.heads


def layer_params(shape: ModelShape) -> int:
    """Parameters of one transformer block."""
    h, kv = shape.hidden, shape.kv_hidden
    if shape.mlp == "swiglu":
        # LLaMA: Wq, Wo (h x h), Wk, Wv (h x kv), gate/up/down (h x ffn), two RMSNorm weights.
        return 2 * h * h + 2 * h * kv + 3 * h * shape.ffn + 2 * h
    # GPT-3: QKV and output projections with biases, 4h GELU MLP with biases, two LayerNorms.
    attention = (2 * h * h + 2 * h * kv) + (2 * h + 2 * kv)
    mlp = 2 * h * shape.ffn + shape.ffn + h
    return attention + mlp + 4 * h


def input_embedding_params(shape: ModelShape) -> int:
    """Token embeddings (plus a learned position table), held by the first pipeline stage."""
    return shape.vocab * shape.hidden + shape.learned_positions * shape.hidden


def output_head_params(shape: ModelShape) -> int:
    """Final norm plus the output projection (zero extra rows when tied to the input embedding)."""
    norm = shape.hidden if shape.mlp == "swiglu" else 2 * shape.hidden
    head = 0 if shape.tied_embeddings else shape.vocab * shape.hidden
    return norm + head


def head_matmul_params(shape: ModelShape) -> int:
    """The output head's matrix, the one the logits multiply by (the embedding's when tied)."""
    return shape.vocab * shape.hidden


def param_count(shape: ModelShape) -> int:
    """Total parameters derived from the architecture."""
    return shape.layers * layer_params(shape) + input_embedding_params(shape) + output_head_params(shape)


PRESETS: dict[str, ModelShape] = {
    "llama-7b": ModelShape("LLaMA 7B", 32, 4096, 32, 32, 11008, 32000),
    "llama-13b": ModelShape("LLaMA 13B", 40, 5120, 40, 40, 13824, 32000),
    "llama-33b": ModelShape("LLaMA 33B", 60, 6656, 52, 52, 17920, 32000),
    "llama-65b": ModelShape("LLaMA 65B", 80, 8192, 64, 64, 22016, 32000),
    "llama2-70b": ModelShape("Llama 2 70B", 80, 8192, 64, 8, 28672, 32000),
    "llama3.1-405b": ModelShape("Llama 3.1 405B", 126, 16384, 128, 8, 53248, 128256),
    "gpt3-175b": ModelShape(
        "GPT-3 175B",
        96,
        12288,
        96,
        96,
        4 * 12288,
        50257,
        mlp="gelu",
        tied_embeddings=True,
        learned_positions=2048,
    ),
    # BLOOM (BigScience 2022, Table 3): ALiBi positions (no table), embeddings tied, vocabulary
    # padded to 250,880 rows.
    "bloom-176b": ModelShape("BLOOM 176B", 70, 14336, 112, 112, 4 * 14336, 250880, mlp="gelu", tied_embeddings=True),
    # Megatron-Turing NLG 530B (Smith et al. 2022, section 2.3): GPT-3's architecture, scaled.
    "mt-nlg-530b": ModelShape(
        "MT-NLG 530B",
        105,
        20480,
        128,
        128,
        4 * 20480,
        50272,
        mlp="gelu",
        tied_embeddings=True,
        learned_positions=2048,
    ),
}


def shape_with(shape: ModelShape, **changes: int) -> ModelShape:
    """A preset's shape with some dimensions replaced (from a storyboard or flags)."""
    return replace(shape, **{k: v for k, v in changes.items() if v is not None})
