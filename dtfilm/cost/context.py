"""Context parallelism under a causal mask: which attention blocks each card computes.

The sequence is cut into chunks; card i keeps its chunks' queries while every chunk's keys and
values travel the ring. Under a causal mask a query chunk attends only to key chunks at or
before it, and a chunk attends to itself through half a block (the diagonal).

- contiguous: card i holds the i-th c-th of the sequence. It computes i whole blocks and half of
  one, so the last card does (2c - 1) / c the average work and every ring step waits for it.
- zig-zag: 2c chunks, card i holds chunk i and chunk 2c - 1 - i (Llama 3, section 3.3.2:
  "we split the input sequence into 2 x CP chunks so each CP rank receives two chunks for better
  load balancing"). Every card computes the same work; the step model assumes this layout.
"""

from __future__ import annotations

LAYOUTS = ("contiguous", "zigzag")


def chunk_owners(cp: int, layout: str) -> list[int]:
    """The card that holds each of 2c chunks (0 is the start of the sequence): contiguous gives
    card i chunks 2i and 2i + 1, zig-zag chunks i and 2c - 1 - i."""
    if layout == "contiguous":
        return [chunk // 2 for chunk in range(2 * cp)]
    if layout == "zigzag":
        return [chunk if chunk < cp else 2 * cp - 1 - chunk for chunk in range(2 * cp)]
    raise ValueError(f"unknown layout {layout!r}; valid: {', '.join(LAYOUTS)}")


def causal_share(query: int, key: int) -> float:
    """How much of the block (query chunk, key chunk) a causal mask leaves: all of it below the
    diagonal, half on it, none above."""
    return 1.0 if key < query else 0.5 if key == query else 0.0


def work_per_card(cp: int, layout: str) -> list[float]:
    """Each card's attention work as a share of the whole causal attention (they sum to 1)."""
    owners = chunk_owners(cp, layout)
    works = [0.0] * cp
    for query, card in enumerate(owners):
        works[card] += sum(causal_share(query, key) for key in range(len(owners)))
    total = sum(works)
    return [w / total for w in works]


def imbalance(cp: int, layout: str) -> float:
    """The busiest card's work over the average: what a ring step waits for."""
    works = work_per_card(cp, layout)
    return max(works) * len(works)
