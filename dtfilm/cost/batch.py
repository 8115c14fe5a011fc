"""The global batch: how it is written (sequences, or tokens with K/M), how micro-batches per
replica follow from it, and how it stands against the batches published runs used.

Why a table and not a rule: how large a batch a model can use without wasting tokens (the
critical batch size, McCandlish et al. 2018, "An Empirical Model of Large-Batch Training")
depends on the data and the loss reached, which the cost model does not know. What it can say
is where a plan's batch stands against what practice has used at that size, from the papers'
own figures: no fit, no extrapolation.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from dtfilm.units import format_si

# The envelope: a batch of 1 sequence up to every card of the largest cluster running the most
# micro-batches of the largest size (dtfilm.cost.inputs checks the derived count against those).
MAX_SEQUENCES = 2**40
_TOKENS_SCALE = {"K": 2**10, "M": 2**20}
# "4M", "4M tokens", "1.5M", "512K tokens"; "1024", "1024 sequences". K and M are binary, as
# sequence lengths are named, so that 4M tokens is 1,024 sequences of 4,096.
_WRITTEN = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([KMkm]?)\s*(tokens?|sequences?)?\s*$")
WRITTEN_TEXT = "a whole number of sequences (1024), or tokens with K or M (4M = 4,194,304 tokens, 512K tokens)"


@dataclass(frozen=True)
class GlobalBatch:
    """A global batch as written: `count` sequences, or `count` tokens (when written with K/M)."""

    count: int
    unit: str  # "sequences" or "tokens"

    def sequences(self, seq_len: int) -> int | None:
        """Sequences a step; None when tokens do not split into whole sequences of `seq_len`."""
        if self.unit == "sequences":
            return self.count
        return self.count // seq_len if self.count % seq_len == 0 else None

    def whole_sequences(self, seq_len: int) -> int:
        """Sequences a step; ValueError saying what would do where the tokens do not split."""
        sequences = self.sequences(seq_len)
        if sequences is None:
            raise ValueError(
                f"a global batch of {self} is not a whole number of sequences of seq_len {seq_len:,} tokens;"
                f" valid: a multiple of {seq_len:,} tokens, such as {nearby_multiples(seq_len, self.count)}"
            )
        return sequences

    def json(self) -> int | str:
        """As `inputs.global_batch.value`: sequences as a number, tokens as written back ("4M")."""
        if self.unit == "sequences":
            return self.count
        for suffix in ("M", "K"):
            scale = _TOKENS_SCALE[suffix]
            if self.count >= scale:
                return f"{self.count / scale:.12g}{suffix}"
        return f"{self.count / 1024:.12g}K"

    def __str__(self) -> str:
        if self.unit == "sequences":
            return f"{self.count:,} {'sequence' if self.count == 1 else 'sequences'}"
        return f"{self.json()} tokens ({self.count:,})"


def parse_global_batch(raw: Any) -> GlobalBatch:
    """A global batch as a flag or a storyboard writes it; ValueError says what would do."""
    if isinstance(raw, bool):
        raise ValueError(f"{raw!r} is not a global batch; valid: {WRITTEN_TEXT}")
    if isinstance(raw, int):
        text = str(raw)
    elif isinstance(raw, float) and raw.is_integer():
        text = str(int(raw))
    elif isinstance(raw, str):
        text = raw
    else:
        raise ValueError(f"{raw!r} is not a global batch; valid: {WRITTEN_TEXT}")
    match = _WRITTEN.match(text)
    if not match:
        raise ValueError(f"{raw!r} is not a global batch; valid: {WRITTEN_TEXT}")
    number, suffix, unit = float(match.group(1)), match.group(2).upper(), (match.group(3) or "").lower()
    if suffix:
        if unit.startswith("sequence"):
            raise ValueError(f"{raw!r}: K and M count tokens, not sequences; valid: {WRITTEN_TEXT}")
        tokens = number * _TOKENS_SCALE[suffix]
        if not tokens.is_integer() or not 1 <= tokens <= MAX_SEQUENCES:
            raise ValueError(f"{raw!r} is not a whole number of tokens from 1K; valid: {WRITTEN_TEXT}")
        return GlobalBatch(int(tokens), "tokens")
    if unit.startswith("token"):
        raise ValueError(f"{raw!r}: tokens are written with K or M; valid: {WRITTEN_TEXT}")
    if not number.is_integer() or not 1 <= number <= MAX_SEQUENCES:
        raise ValueError(f"{raw!r} is not a whole number of sequences, 1 or more; valid: {WRITTEN_TEXT}")
    return GlobalBatch(int(number), "sequences")


@dataclass(frozen=True)
class PublishedBatch:
    """One published run's batch: the model's size, tokens per step, and where it is stated."""

    run: str
    params: float
    tokens: int
    source: str


# Each run's largest batch, in tokens a step (sequences x their length where the paper gives
# both; its own rounded figure in the comment). Where a run ramped its batch up, the last.
PUBLISHED_BATCHES: tuple[PublishedBatch, ...] = (
    # GPT-3 (Brown et al. 2020, Table 2.1): 0.5M, 1M, 2M, 2M and 3.2M tokens, sequences of 2,048.
    PublishedBatch("GPT-3 Small", 125e6, 256 * 2048, "Brown et al. 2020, Table 2.1"),
    PublishedBatch("GPT-3 XL", 1.3e9, 512 * 2048, "Brown et al. 2020, Table 2.1"),
    PublishedBatch("GPT-3 6.7B", 6.7e9, 1024 * 2048, "Brown et al. 2020, Table 2.1"),
    PublishedBatch("GPT-3 13B", 13e9, 1024 * 2048, "Brown et al. 2020, Table 2.1"),
    PublishedBatch("GPT-3 175B", 175e9, 1536 * 2048, "Brown et al. 2020, Table 2.1"),
    # LLaMA (Touvron et al. 2023, Table 2): 4M tokens for every size, sequences of 2,048.
    PublishedBatch("LLaMA 7B", 6.7e9, 2048 * 2048, "Touvron et al. 2023, Table 2"),
    PublishedBatch("LLaMA 13B", 13.0e9, 2048 * 2048, "Touvron et al. 2023, Table 2"),
    PublishedBatch("LLaMA 33B", 32.5e9, 2048 * 2048, "Touvron et al. 2023, Table 2"),
    PublishedBatch("LLaMA 65B", 65.2e9, 2048 * 2048, "Touvron et al. 2023, Table 2"),
    # Llama 2 (Touvron et al. 2023b, Table 1): 4M tokens, sequences of 4,096.
    PublishedBatch("Llama 2 70B", 70e9, 1024 * 4096, "Touvron et al. 2023b, Table 1"),
    # Chinchilla (Hoffmann et al. 2022, Table 4): 1.5M then 3M tokens.
    PublishedBatch("Chinchilla 70B", 70e9, 1536 * 2048, "Hoffmann et al. 2022, Table 4"),
    # Gopher (Rae et al. 2021, Table 1): 3M then 6M tokens.
    PublishedBatch("Gopher 280B", 280e9, 3072 * 2048, "Rae et al. 2021, Table 1"),
    # MT-NLG (Smith et al. 2022, section 3.2): 1,920 sequences of 2,048 after the ramp-up.
    PublishedBatch("MT-NLG 530B", 530e9, 1920 * 2048, "Smith et al. 2022, section 3.2"),
    # Llama 3 (Dubey et al. 2024, section 3.4.1): 4M, then 8M, then 16M tokens (2,048 of 8,192).
    PublishedBatch("Llama 3 405B", 405e9, 2048 * 8192, "Dubey et al. 2024, section 3.4.1"),
)
# A model within 10% of a run's size is that run's size (Llama 2 70B counts 69.0B parameters).
SIZE_TOLERANCE = 0.1


@dataclass(frozen=True)
class BatchStanding:
    """Where a batch stands: the largest batch a published run of this size or smaller used
    (the smallest run's where the model is smaller than all), and whether the batch is past it."""

    reference: PublishedBatch
    tokens: int

    @property
    def large(self) -> bool:
        return self.tokens > self.reference.tokens

    @property
    def note(self) -> str:
        if not self.large:
            return ""
        ref = self.reference
        return (
            f"a global batch of {format_si(self.tokens)} tokens a step is past the"
            f" {format_si(ref.tokens)} of {ref.run} ({ref.source}), the largest batch a published run"
            " of this size or smaller used; past the critical batch size more tokens a step buy"
            " little progress (McCandlish et al. 2018)"
        )


def standing(params: float, tokens: int) -> BatchStanding:
    """The batch of `tokens` a step against published runs no larger than `params` (within
    SIZE_TOLERANCE): larger models have used larger batches, so a batch past every run of this
    size or smaller is past practice. Among runs with the same batch the largest is named."""
    smaller = [run for run in PUBLISHED_BATCHES if run.params <= params * (1 + SIZE_TOLERANCE)]
    if not smaller:
        smaller = [min(PUBLISHED_BATCHES, key=lambda run: run.params)]
    reference = max(smaller, key=lambda run: (run.tokens, run.params))
    return BatchStanding(reference, int(tokens))


def training_json(params: float, dp: int, micro_batches: int, micro_batch_size: int, seq_len: int) -> dict[str, Any]:
    """The estimate's `training` block: the global batch in sequences and tokens, and where it
    stands against published runs (`batch_note` is "" when it is within them)."""
    sequences = dp * micro_batches * micro_batch_size
    tokens = sequences * seq_len
    where = standing(params, tokens)
    return {
        "global_batch": sequences,
        "tokens_per_step": tokens,
        "micro_batches": micro_batches,
        "batch_large": where.large,
        "batch_note": where.note,
        "published_batch_tokens": where.reference.tokens,
        "published_batch_run": where.reference.run,
        "published_batch_source": where.reference.source,
    }


def derived_micro_batches(sequences: int, dp: int, micro_batch_size: int) -> int | None:
    """m = global batch / (dp x b), or None when not whole."""
    per_step = dp * micro_batch_size
    return sequences // per_step if sequences % per_step == 0 else None


def nearby_multiples(step: int, around: int) -> str:
    """Two multiples of `step` around `around` (for an error's 'valid:')."""
    below = max(step, around // step * step)
    above = below + step if below >= around else math.ceil(around / step) * step
    return f"{below:,} or {above:,}" if below != above else f"{below:,}"
