"""Bytes each card puts on the wire per optimizer step, per parallel group, and their time.

Ring collectives (NCCL tests, PERFORMANCE.md): all-reduce moves 2(n-1)/n of the buffer per
card in 2(n-1) steps; all-gather and reduce-scatter (n-1)/n in n-1 steps.
DP: one all-reduce of the gradients per step. ZeRO-3/FSDP: all-gather forward and backward,
reduce-scatter the gradients, per micro-batch (ZeRO section 7). TP: 4 all-reduces of the
activation buffer per layer per micro-batch, 6 with recomputation (Narayanan et al. 2021).
CP: ring attention passes K and V blocks c-1 times per layer forward and again backward, and
their gradients c times (Liu et al. 2023; measured by `dtfilm validate`). PP: one activation
forward and one gradient backward per micro-batch.
Time: latency * steps + bytes / bandwidth on the slowest link the group crosses, no overlap.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from dtfilm.cost.hardware import LINKS, Link
from dtfilm.cost.setup import Setup

GROUPS = ("dp", "tp", "pp", "cp")


@dataclass(frozen=True)
class Collective:
    """One kind of collective a card joins during a step, `count` times."""

    group: str
    collective: str
    count: int
    group_size: int
    buffer_bytes: float
    bytes_each: float
    steps_each: int
    link: Link
    cards_per_node: int

    @property
    def bytes(self) -> float:
        return self.count * self.bytes_each

    @property
    def name(self) -> str:
        """The row's name: group and collective, as in `comm.collectives.tp_all_reduce`."""
        slug = "".join(ch if ch.isalnum() else "_" for ch in self.collective)
        return f"{self.group}_{slug}"

    @property
    def seconds(self) -> float:
        bandwidth = self.link.per_card_bytes_per_second(self.cards_per_node)
        per_call = self.link.latency_seconds * self.steps_each + self.bytes_each / bandwidth
        return self.count * per_call

    def as_json(self) -> dict[str, object]:
        return {
            "group": self.group,
            "collective": self.collective,
            "count": self.count,
            "group_size": self.group_size,
            "buffer_bytes": self.buffer_bytes,
            "bytes_each": self.bytes_each,
            "steps_each": self.steps_each,
            "ring_steps_per_phase": self.group_size - 1,
            "bytes": self.bytes,
            "link": self.link.name,
            "seconds": self.seconds,
        }


def all_reduce_bytes(buffer_bytes: float, n: int) -> float:
    """Bytes one card sends in a ring all-reduce of `buffer_bytes`: 2(n-1)/n * B."""
    return 2 * (n - 1) / n * buffer_bytes


def all_gather_bytes(buffer_bytes: float, n: int) -> float:
    """Bytes one card sends in a ring all-gather (or reduce-scatter) of the whole buffer."""
    return (n - 1) / n * buffer_bytes


def group_strides(setup: Setup) -> dict[str, int]:
    """Rank order: tp fastest, then cp, then pp, then dp (replicas outermost, across nodes),
    the layout seed 000 draws: TP pairs on NVLink, stages across the node, DP across nodes."""
    return {
        "tp": 1,
        "cp": setup.tp,
        "pp": setup.tp * setup.cp,
        "dp": setup.tp * setup.cp * setup.pp,
    }


def rank_coordinates(rank: int, tp: int, cp: int, pp: int) -> dict[str, int]:
    """A card's place in each group, in the rank order of `group_strides`."""
    return {"tp": rank % tp, "cp": rank // tp % cp, "pp": rank // (tp * cp) % pp, "dp": rank // (tp * cp * pp)}


def group_size(setup: Setup, group: str) -> int:
    return {"dp": setup.dp, "tp": setup.tp, "pp": setup.pp, "cp": setup.cp}[group]


@lru_cache(maxsize=4096)
def group_crosses_nodes(stride: int, size: int, cards: int, cards_per_node: int) -> bool:
    """True when any group of `size` cards `stride` ranks apart spans two nodes.

    A group starts at every rank whose coordinate in it is 0 and covers ranks r0 .. r0 +
    (size-1) * stride; it crosses when its first and last ranks sit on different nodes. So
    tp 3 on nodes of 8 crosses (ranks 6, 7, 8), though 3 cards fit in a node."""
    if size == 1:
        return False
    span = stride * (size - 1)
    if span >= cards_per_node:
        return True
    if cards_per_node % (stride * size) == 0:
        return False  # the groups tile each node exactly
    ranks = np.arange(cards, dtype=np.int64)
    starts = ranks[(ranks // stride) % size == 0]
    return bool(np.any(starts // cards_per_node != (starts + span) // cards_per_node))


def group_link(setup: Setup, group: str) -> Link:
    """The slowest link a group crosses: the card's (NVLink, Infinity Fabric) in a node, the inter-node one across."""
    crosses = group_crosses_nodes(
        group_strides(setup)[group], group_size(setup, group), setup.cards, setup.cards_per_node
    )
    return setup.inter_node if crosses else LINKS[setup.card.nvlink]


def shard_group_crosses_nodes(tp: int, cp: int, pp: int, dp: int, cards: int, cards_per_node: int) -> bool:
    """Whether the cards that share weights (cp ranks x dp replicas) span nodes: either group
    does, or together they reach past a node (their ranks run from r to r + tp(c-1) + tp c p (d-1))."""
    span = tp * (cp - 1) + tp * cp * pp * (dp - 1)
    return (
        span >= cards_per_node
        or group_crosses_nodes(tp, cp, cards, cards_per_node)
        or group_crosses_nodes(tp * cp * pp, dp, cards, cards_per_node)
    )


def shard_group_link(setup: Setup) -> Link:
    """The slowest link the dp x cp cards that share weights cross (the dp row's link)."""
    crosses = shard_group_crosses_nodes(setup.tp, setup.cp, setup.pp, setup.dp, setup.cards, setup.cards_per_node)
    return setup.inter_node if crosses else LINKS[setup.card.nvlink]


def dp_collectives(setup: Setup, weight_bytes: float, gradient_bytes: float) -> list[Collective]:
    """Gradient (and, under ZeRO-3, weight) traffic over the cards that share weights: the
    data-parallel replicas and, within each, its context-parallel ranks (`Setup.shard_group`),
    for a card whose unsharded weights and gradients are given."""
    d = setup.shard_group
    if d == 1:
        return []
    link = shard_group_link(setup)
    if setup.zero >= 3:
        m = setup.micro_batches
        gather = all_gather_bytes(weight_bytes, d)
        scatter = all_gather_bytes(gradient_bytes, d)
        return [
            Collective("dp", "all-gather", 2 * m, d, weight_bytes, gather, d - 1, link, setup.cards_per_node),
            Collective("dp", "reduce-scatter", m, d, gradient_bytes, scatter, d - 1, link, setup.cards_per_node),
        ]
    # DP, ZeRO-1 and ZeRO-2 all-reduce (or reduce-scatter + all-gather) the gradients once.
    return [
        Collective(
            "dp",
            "all-reduce",
            1,
            d,
            gradient_bytes,
            all_reduce_bytes(gradient_bytes, d),
            2 * (d - 1),
            link,
            setup.cards_per_node,
        )
    ]


def activation_buffer_bytes(setup: Setup, element_bytes: int) -> float:
    """One micro-batch's b*s*h activation tensor on one context-parallel rank."""
    return setup.micro_batch_size * setup.seq_len / setup.cp * setup.shape.hidden * element_bytes


def tp_exchanges_per_layer(checkpointing: bool) -> dict[str, int]:
    """Tensor-parallel all-reduces in one layer for one micro-batch (Narayanan et al. 2021):
    two forward (attention, MLP) and two backward; full recomputation runs the forward again."""
    forward, backward = 2, 2
    recomputed = forward if checkpointing else 0
    return {"forward": forward, "backward": backward + recomputed, "total": forward + backward + recomputed}


def tp_collectives(setup: Setup, layers: int, element_bytes: int, ends: int = 0) -> list[Collective]:
    """Four all-reduces of the activation buffer per layer per micro-batch (six when the forward
    is recomputed), plus `ends` outside the layers (embedding, output head)."""
    t = setup.tp
    if t == 1:
        return []
    per_layer = tp_exchanges_per_layer(setup.checkpointing)["total"]
    count = (per_layer * layers + ends) * setup.micro_batches
    buffer = activation_buffer_bytes(setup, element_bytes)
    return [
        Collective(
            "tp",
            "all-reduce",
            count,
            t,
            buffer,
            all_reduce_bytes(buffer, t),
            2 * (t - 1),
            group_link(setup, "tp"),
            setup.cards_per_node,
        )
    ]


def pp_collectives(setup: Setup, element_bytes: int) -> list[Collective]:
    """A middle stage sends one activation forward and one gradient backward per micro-batch,
    v times under the interleaved schedule (each of its v chunks hands on; Narayanan et al. 2021,
    2.2.2); with TP (and sequence parallelism) each TP rank sends its 1/t share."""
    if setup.pp == 1:
        return []
    buffer = activation_buffer_bytes(setup, element_bytes) / setup.tp
    return [
        Collective(
            "pp",
            "send/recv",
            2 * setup.micro_batches * setup.virtual_stages,
            setup.pp,
            buffer,
            buffer,
            1,
            group_link(setup, "pp"),
            setup.cards_per_node,
        )
    ]


def cp_collectives(setup: Setup, layers: int, element_bytes: int) -> list[Collective]:
    """Ring attention (Liu et al. 2023), as `dtfilm validate` runs it: K and V blocks
    (b*(s/c)*h_kv each, split over TP) hop c-1 times per layer forward and c-1 times again
    backward (a rank keeps only its own block); their gradients travel with them and take one
    last hop home, c hops (ring-flash-attention's backward does the same)."""
    c = setup.cp
    if c == 1:
        return []
    kv_block = (setup.micro_batch_size * setup.seq_len / c * setup.shape.kv_hidden * element_bytes) / setup.tp
    buffer = 2 * kv_block  # K and V
    passes = layers * setup.micro_batches
    link = group_link(setup, "cp")
    return [
        Collective("cp", "ring send/recv", 2 * passes, c, buffer, (c - 1) * buffer, c - 1, link, setup.cards_per_node),
        Collective("cp", "gradient ring", passes, c, buffer, c * buffer, c, link, setup.cards_per_node),
    ]
