"""The settings the envelope is sampled at: what the sampled check (tests/test_check.py) and
benchmarks/envelope_refusals.py draw from, so that both speak of the same envelope."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

BOOLEAN = (False, True)
CARDS = (1, 2, 3, 8, 16, 64, 1024, 16384, 65536, 131072)  # to the envelope's 131,072
# every input drawn, in the order drawn (a sample's draws stay the same as long as this does)
CHOICES: dict[str, Sequence[Any]] = {
    "model": ("llama-7b", "llama-13b", "llama2-70b", "llama3.1-405b", "gpt3-175b"),
    "gpu": ("a100-80gb", "h100-sxm-80gb", "h200-141gb"),
    "cards": CARDS,
    "precision": ("bf16", "fp32", "fp8"),
    "checkpointing": BOOLEAN,
    "seq_len": (128, 2048, 4096, 32768, 131072, 1048576),
    "micro_batches": (1, 2, 8, 64, 1024),
    "micro_batch_size": (1, 4, 64),
    "tokens": (1e9, 1e12, 15e12, 1e15),
    "recompute": ("none", "selective", "full"),
    "flash_attention": BOOLEAN,
    "sequence_parallel": BOOLEAN,
    "virtual_stages": (1, 1, 2, 4),  # refused in one line where it cannot be
}
DEGREE_VALUES = (1, 2, 4, 8, 16, 32, 64, 128)
# pp up to the layers (legible to the envelope's limits; past a model's layers it is refused)
MOST = {"tp": 16, "pp": 128, "cp": 16}


def sampled_flags(choose: Callable[[Sequence[Any]], Any], coin: Callable[[], bool]) -> dict[str, Any]:
    """One setting: each input chosen from CHOICES (`coin` for yes/no), then tp, pp and cp, each
    or not, of degrees that divide the cards left, so that most plans are whole."""
    flags = {name: coin() if values is BOOLEAN else choose(values) for name, values in CHOICES.items()}
    left = flags["cards"]
    for degree, most in MOST.items():
        if coin():
            flags[degree] = choose([d for d in DEGREE_VALUES if d <= most and left % d == 0])
            left //= flags[degree]
    return flags
