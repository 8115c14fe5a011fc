"""Model shapes, presets and the parameter count derived from a shape.

Shapes: LLaMA (Touvron et al. 2023, Table 2), Llama 2 70B, Llama 3.1 405B (Meta's model
cards), GPT-3 175B (Brown et al. 2020, Table 2.1); Llama 3.1 8B and 70B, Mistral 7B and Qwen 2.5
72B from their published config.json (each named beside it). See ../shared/REFERENCES.md.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from dtfilm.errors import did_you_mean


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
    # Fields a catalog entry left to their defaults (mlp, tied_embeddings), which `dtfilm estimate`
    # says beside the derived count; not part of the shape (two equal shapes are the same model).
    defaulted: tuple[str, ...] = field(default=(), compare=False)

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
    # Llama 3.1 8B, huggingface.co/meta-llama/Llama-3.1-8B config.json: num_hidden_layers 32,
    # hidden_size 4096, num_attention_heads 32, num_key_value_heads 8, intermediate_size 14336,
    # vocab_size 128256, tie_word_embeddings false (8.03B parameters, the model card's 8B).
    "llama3.1-8b": ModelShape("Llama 3.1 8B", 32, 4096, 32, 8, 14336, 128256),
    # Llama 3.1 70B, huggingface.co/meta-llama/Llama-3.1-70B config.json: 80 layers, hidden 8192,
    # 64 heads, 8 KV heads, intermediate 28672, vocab 128256, untied (70.6B parameters).
    "llama3.1-70b": ModelShape("Llama 3.1 70B", 80, 8192, 64, 8, 28672, 128256),
    # Mistral 7B, huggingface.co/mistralai/Mistral-7B-v0.1 config.json: 32 layers, hidden 4096,
    # 32 heads, 8 KV heads, intermediate 14336, vocab 32000, untied (7.24B parameters; Jiang et
    # al. 2023, Table 1). Its sliding-window attention is not modelled: attention is full.
    "mistral-7b": ModelShape("Mistral 7B", 32, 4096, 32, 8, 14336, 32000),
    # Qwen 2.5 72B, huggingface.co/Qwen/Qwen2.5-72B config.json: 80 layers, hidden 8192, 64 heads,
    # 8 KV heads, intermediate 29568, vocab 152064, tie_word_embeddings false (72.7B parameters,
    # Qwen2.5 technical report, Table 1). Its Q, K and V biases (0.8M) are left out of the count.
    "qwen2.5-72b": ModelShape("Qwen 2.5 72B", 80, 8192, 64, 8, 29568, 152064),
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


_SIZE = re.compile(r"-([0-9.]+)([kmbt]?)$", re.IGNORECASE)
_SIZE_SCALE = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def family(name: str) -> str:
    """A preset's family, its name less the size: llama3.1-70b -> llama3.1, mt-nlg-530b -> mt-nlg."""
    return _SIZE.sub("", name.lower())


def _size(name: str) -> float | None:
    """The size a name ends in (70b -> 7e10), None without one."""
    match = _SIZE.search(name.lower())
    try:
        return float(match.group(1)) * _SIZE_SCALE[match.group(2)] if match else None
    except ValueError:
        return None


def model_did_you_mean(word: object, options: Iterable[str]) -> str:
    """' (did you mean 'x'?)' kept to the family typed: `llama3-70b` means a Llama 3 (3.1 is
    the one there is), not Llama 2 70B, though that is closer in spelling. The family typed
    begins the candidates' (llama3 begins llama3.1); among them the nearest in size, then in
    spelling. With no such family, any name close in spelling."""
    if not isinstance(word, str):
        return ""
    choices = list(options)
    typed = family(word)
    kin = [c for c in choices if family(c) == typed] or [c for c in choices if typed and family(c).startswith(typed)]
    if not kin:
        return did_you_mean(word, choices)
    size = _size(word)
    spelling = {c: difflib.SequenceMatcher(None, word.lower(), c.lower()).ratio() for c in kin}

    def distance(option: str) -> tuple[float, float]:
        other = _size(option)
        apart = abs(math.log(other / size)) if size and other else 0.0
        return apart, -spelling[option]

    meant = min(kin, key=distance)
    return f" (did you mean {meant!r}?)" if meant != word else ""
