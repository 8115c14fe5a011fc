"""Model shapes, presets and the parameter count derived from a shape.

Shapes: LLaMA (Touvron et al. 2023, Table 2), Llama 2 70B, Llama 3.1 405B (Meta's model
cards), GPT-3 175B (Brown et al. 2020, Table 2.1); Llama 3.1 8B and 70B, Mistral 7B and Qwen 2.5
72B from their published config.json (each named beside it). See ../shared/REFERENCES.md.

Mixture of experts (issue 60): a MoE layer replaces the MLP by E routed experts, each a SwiGLU
MLP of `expert_ffn`, of which a router (an h x E matrix) sends each token to k (GShard, Lepikhin
et al. 2020; Switch Transformer, Fedus et al. 2021, k = 1), plus shared experts every token
passes through (DeepSpeed-MoE, Rajbhandari et al. 2022; DeepSeekMoE), `shared_ffn` wide in all.
The first `dense_layers` layers keep a dense MLP of `ffn` (DeepSeek-V3's first three, DeepSeek-AI
2024, section 4.2). Total parameters count every expert; active parameters (what one token
multiplies by, and so the FLOPs) count k routed experts. `capacity_factor` 0 is dropless routing
(Megatron-Core MoE's default, DeepSeek-V3's "no token-dropping"); above 0 each expert takes at most
capacity x tokens x k / E tokens (GShard, Switch), which bounds the busiest expert's load.
DeepSeek's multi-head latent attention (DeepSeek-V2, section 2.1) is priced by its parameters
and their FLOPs only: its compressed KV cache and the attention core's head width (192, not
h / heads) are a gap; the attention core is priced as the film's.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from dtfilm.errors import did_you_mean


@dataclass(frozen=True)
class LatentAttention:
    """DeepSeek's multi-head latent attention, by its projections' widths (config.json's
    q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim)."""

    q_rank: int
    kv_rank: int
    nope_dim: int
    rope_dim: int
    v_dim: int


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
    experts: int = 0  # routed experts per MoE layer (0: a dense model)
    top_k: int = 0  # routed experts each token goes to
    expert_ffn: int = 0  # one routed expert's MLP width
    shared_ffn: int = 0  # the shared experts' MLP width, all of them together
    dense_layers: int = 0  # the first layers keep a dense MLP of `ffn` (DeepSeek-V3: 3)
    capacity_factor: float = 0.0  # 0: dropless routing; else each expert's capacity
    latent: LatentAttention | None = None  # multi-head latent attention (DeepSeek), else the film's
    # Fields a catalog entry left to their defaults (mlp, tied_embeddings), which `dtfilm estimate`
    # says beside the derived count; not part of the shape (two equal shapes are the same model).
    defaulted: tuple[str, ...] = field(default=(), compare=False)

    @property
    def moe(self) -> bool:
        return self.experts > 0

    @property
    def kv_hidden(self) -> int:
        """Width of the K (or V) projection: h * kv_heads / heads (grouped-query attention)."""
        return self.hidden * self.kv_heads // self.heads


def attention_params(shape: ModelShape) -> int:
    """One layer's attention parameters (SwiGLU models, no biases): Wq, Wo (h x h), Wk, Wv
    (h x kv); under latent attention its down- and up-projections and their two RMSNorms."""
    h, latent = shape.hidden, shape.latent
    if latent is None:
        return 2 * h * h + 2 * h * shape.kv_hidden
    heads, qk = shape.heads, latent.nope_dim + latent.rope_dim
    query = h * latent.q_rank + latent.q_rank + latent.q_rank * heads * qk if latent.q_rank else h * heads * qk
    key_value = h * (latent.kv_rank + latent.rope_dim) + latent.kv_rank
    key_value += latent.kv_rank * heads * (latent.nope_dim + latent.v_dim)
    return query + key_value + heads * latent.v_dim * h


def routed_expert_params(shape: ModelShape) -> int:
    """One routed expert's SwiGLU MLP (gate, up, down)."""
    return 3 * shape.hidden * shape.expert_ffn


def moe_layer_params(shape: ModelShape, experts: int) -> int:
    """A MoE layer with `experts` routed experts counted (E for the total, k for the active):
    attention, the router (h x E, always whole), the routed and shared experts, two RMSNorms."""
    h = shape.hidden
    shared = 3 * h * shape.shared_ffn
    return attention_params(shape) + h * shape.experts + experts * routed_expert_params(shape) + shared + 2 * h


def moe_layers(shape: ModelShape, first: int, count: int) -> int:
    """How many of layers first .. first + count - 1 are MoE layers."""
    if not shape.moe:
        return 0
    return max(0, first + count - max(first, shape.dense_layers))


def layers_params(shape: ModelShape, first: int, count: int, active: bool = False) -> int:
    """Parameters of layers first .. first + count - 1 (all experts, or the k a token uses)."""
    moe = moe_layers(shape, first, count)
    if not moe:
        return count * layer_params(shape)
    routed = shape.top_k if active else shape.experts
    return (count - moe) * layer_params(shape) + moe * moe_layer_params(shape, routed)


def layers_routed_params(shape: ModelShape, first: int, count: int) -> int:
    """The routed experts' parameters in layers first .. first + count - 1: what EP shards."""
    return moe_layers(shape, first, count) * shape.experts * routed_expert_params(shape)


def busiest_expert_load(shape: ModelShape, imbalance: float) -> float:
    """The busiest expert's routed tokens over the mean: the routing's imbalance, capped by the
    capacity factor where the model has one (GShard, Switch: tokens past capacity are dropped)."""
    return min(imbalance, shape.capacity_factor) if shape.capacity_factor else imbalance


def layer_params(shape: ModelShape) -> int:
    """Parameters of one dense transformer block (a MoE model's dense layers)."""
    h, kv = shape.hidden, shape.kv_hidden
    if shape.mlp == "swiglu":
        if shape.latent is not None:
            return attention_params(shape) + 3 * h * shape.ffn + 2 * h
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
    return layers_params(shape, 0, shape.layers) + input_embedding_params(shape) + output_head_params(shape)


def active_param_count(shape: ModelShape) -> int:
    """Parameters one token multiplies by: a MoE model's k routed experts of E (the total when dense)."""
    return (
        layers_params(shape, 0, shape.layers, active=True) + input_embedding_params(shape) + output_head_params(shape)
    )


# The built-in model shapes, read-only: a film's own join them in its Catalog (dtfilm.cost.catalog).
_PRESETS: dict[str, ModelShape] = {
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
    # Mixtral 8x7B, huggingface.co/mistralai/Mixtral-8x7B-v0.1 config.json: 32 layers, hidden 4096,
    # 32 heads, 8 KV heads, num_local_experts 8, num_experts_per_tok 2, intermediate 14336, vocab
    # 32000, untied (46.7B total, 12.9B active: Jiang et al. 2024, "Mixtral of Experts", section 2).
    "mixtral-8x7b": ModelShape("Mixtral 8x7B", 32, 4096, 32, 8, 14336, 32000, experts=8, top_k=2, expert_ffn=14336),
    # Qwen2 57B-A14B, huggingface.co/Qwen/Qwen2-57B-A14B config.json: 28 layers, hidden 3584, 28
    # heads, 4 KV heads, num_experts 64, num_experts_per_tok 8, moe_intermediate_size 2560,
    # shared_expert_intermediate_size 20480, vocab 151936, untied (57B total, 14B active: Qwen2
    # technical report, Table 1). Its Q, K, V biases and shared-expert gate (0.1B) are left out.
    "qwen2-57b-a14b": ModelShape(
        "Qwen2 57B-A14B", 28, 3584, 28, 4, 18944, 151936, experts=64, top_k=8, expert_ffn=2560, shared_ffn=20480
    ),
    # DeepSeek-V3, huggingface.co/deepseek-ai/DeepSeek-V3 config.json: 61 layers, hidden 7168, 128
    # heads, n_routed_experts 256, num_experts_per_tok 8, n_shared_experts 1, moe_intermediate_size
    # 2048, first_k_dense_replace 3 with intermediate_size 18432, q_lora_rank 1536, kv_lora_rank 512,
    # qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128, vocab 129280, untied (671B total,
    # 37B active: DeepSeek-AI 2024, the DeepSeek-V3 technical report, section 4.2; its multi-token
    # prediction module, 14B more, is not counted, as the report's 671B does not count it).
    "deepseek-v3": ModelShape(
        "DeepSeek-V3",
        61,
        7168,
        128,
        128,
        18432,
        129280,
        experts=256,
        top_k=8,
        expert_ffn=2048,
        shared_ffn=2048,
        dense_layers=3,
        latent=LatentAttention(q_rank=1536, kv_rank=512, nope_dim=128, rope_dim=64, v_dim=128),
    ),
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
PRESETS: Mapping[str, ModelShape] = MappingProxyType(_PRESETS)
del _PRESETS  # (only the read-only view is left)


def shape_with(shape: ModelShape, **changes: int | None) -> ModelShape:
    """A preset's shape with some dimensions replaced (from a storyboard or flags); None keeps one."""
    given: dict[str, Any] = {k: v for k, v in changes.items() if v is not None}  # replace() checks the names
    return replace(shape, **given)


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


SAME_SIZE_LOG = math.log(1.1)  # sizes within 10% name the same model size (8x7B's 46.7B is not 47B's)


def _same_size(one: float | None, other: float | None) -> bool:
    """Whether two model sizes name the same size (within SAME_SIZE_LOG); False where either is unknown."""
    return bool(one and other and abs(math.log(one / other)) < SAME_SIZE_LOG)


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
    sized_alike = [c for c in choices if _same_size(_size(c), size)]
    if size and distance(meant)[0] >= math.log(2) and len(sized_alike) == 1:
        # the family typed has nothing within twice the size, one other has it: 'llama-405b' is
        # Llama 3.1's (a new user's trial: it offered LLaMA 65B)
        meant = sized_alike[0]
    return f" (did you mean {meant!r}?)" if meant != word else ""
