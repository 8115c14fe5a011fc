"""Bytes each card puts on the wire per optimizer step, per parallel group, and their time.

Ring collectives (NCCL tests, PERFORMANCE.md): all-reduce moves 2(n-1)/n of the buffer per
card in 2(n-1) steps; all-gather and reduce-scatter (n-1)/n in n-1 steps.
DP: one all-reduce of the gradients per step. ZeRO-3/FSDP: all-gather forward and backward,
reduce-scatter the gradients, per micro-batch (ZeRO section 7). TP: 4 all-reduces of the
activation buffer per layer per micro-batch, 6 with recomputation (Narayanan et al. 2021).
CP: ring attention passes K and V blocks c-1 times per layer forward and again backward, and
their gradients c times (Liu et al. 2023; measured by `dtfilm validate`). PP: one activation
forward and one gradient backward per micro-batch.
EP: each MoE layer's all-to-all dispatches a card's tokens, k copies each, to the experts' cards
and another combines them back, forward, and the two again backward for their gradients
(GShard, section 2.2; Megatron-Core MoE's all-to-all dispatcher), again when the forward is
recomputed; (ep-1)/ep of the buffer leaves the card.
Time: each call priced by `dtfilm.cost.network` under the `network` input: rings and trees on
the node's fabric and its NICs as NCCL runs them (`nccl`), or the seeds' whiteboard, latency *
steps + bytes / bandwidth on the slowest link the group crosses (`single-link`); no overlap here.
Under `nccl` FSDP gathers and reduce-scatters one unit (layer) a call, as FSDP issues them, each
call with its latency; under `single-link` the whole model a call, as the seeds count it.
The calls of a step are counted and priced once, on arrays, by `dtfilm.cost.model` (dp_calls,
model_calls); here are the rules they use, and `Collective`, one row of the estimate's breakdown.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

import numpy as np

from dtfilm.cost import network
from dtfilm.cost.hardware import Link
from dtfilm.cost.results import CallRow, as_json
from dtfilm.cost.setup import Setup

# a number, or an array of one per plan (dtfilm.cost.model's rows): what it is given, it returns
PerPlan = TypeVar("PerPlan", float, np.ndarray)

GROUPS = ("dp", "tp", "pp", "cp", "ep")


@dataclass(frozen=True)
class Collective:
    """One kind of collective a card joins during a step, `count` calls, each priced by
    `dtfilm.cost.network` (seconds, latency, bytes on the fabric and on the NIC, per call): the
    estimate's row of dtfilm.cost.calls.Calls, as `comm.breakdown` shows it."""

    group: str
    collective: str
    count: int
    group_size: int
    buffer_bytes: float
    bytes_each: float
    steps_each: int
    link: Link  # the slowest link the group crosses
    cards_per_node: int
    price: network.CallPrice
    cards_on_each_node: int = 0  # of the group, on each node it spans (0: not placed)
    nodes_spanned: int = 1

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
        return self.count * self.price.seconds

    @property
    def algorithm(self) -> str:
        """How NCCL runs it: ring, tree or point-to-point (p2p)."""
        if self.collective not in network.RING_COLLECTIVES:
            return "p2p"
        return "tree" if self.price.tree else "ring"

    def row(self) -> CallRow:
        """The row as the contract shows it: calls a step, how NCCL runs each, where the group
        sits, the bytes a card puts on its fabric link and on its NIC a step, the latency seconds."""
        return CallRow(
            group=self.group,
            collective=self.collective,
            count=self.count,
            group_size=self.group_size,
            buffer_bytes=self.buffer_bytes,
            bytes_each=self.bytes_each,
            steps_each=self.steps_each,
            ring_steps_per_phase=self.group_size - 1,
            total_bytes=self.bytes,
            link=self.link.name,
            seconds=self.seconds,
            calls=self.count,
            algorithm=self.algorithm,
            cards_on_each_node=self.cards_on_each_node,
            nodes_spanned=self.nodes_spanned,
            fabric_bytes=self.count * float(self.price.fabric_bytes),
            nic_bytes=self.count * float(self.price.nic_bytes),
            latency_seconds=self.count * float(self.price.latency_seconds),
            seconds_each=float(self.price.seconds),
        )

    def as_json(self) -> dict[str, object]:
        return as_json(self.row())


def all_reduce_bytes(buffer_bytes: PerPlan, n: PerPlan) -> PerPlan:
    """Bytes one card sends in a ring all-reduce of `buffer_bytes`: 2(n-1)/n * B."""
    return 2 * (n - 1) / n * buffer_bytes


def all_gather_bytes(buffer_bytes: PerPlan, n: PerPlan) -> PerPlan:
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


def shard_group_crosses_nodes(tp: int, cp: int, pp: int, dp: int, cards: int, cards_per_node: int) -> bool:
    """Whether the cards that share weights (cp ranks x dp replicas) span nodes: either group
    does, or together they reach past a node (their ranks run from r to r + tp(c-1) + tp c p (d-1))."""
    span = tp * (cp - 1) + tp * cp * pp * (dp - 1)
    return (
        span >= cards_per_node
        or group_crosses_nodes(tp, cp, cards, cards_per_node)
        or group_crosses_nodes(tp * cp * pp, dp, cards, cards_per_node)
    )


def fsdp_calls(network_name: str, micro_batches: PerPlan, units: PerPlan) -> tuple[PerPlan, PerPlan | int]:
    """FSDP's calls a step and the units one call moves: under `nccl` one unit a call, as FSDP
    issues them (Zhao et al. 2023, section 3.3): 2 m U gathers and m U reduce-scatters of a unit
    each, U the card's FSDP units; under `single-link` the seeds' 2m and m calls of the whole model.
    A stage's units are its layers and the modules at its ends (`fsdp_units`)."""
    if network_name == "single-link":
        return micro_batches, 1
    return micro_batches * units, units


def fsdp_units(layers: int, end_modules: int) -> int:
    """FSDP's units on a card: every transformer block is one, and so are the embedding and the
    output head (with its final norm) on the stages that hold them: L + 2 on a pipeline of one.
    torchtitan's apply_fsdp (torchtitan/models/llama3/infra/parallelize.py) calls fully_shard on
    tok_embeddings, on each transformer block and on [norm, output], then on the root, which keeps
    no parameters of its own. PyTorch's fully_shard documentation: each call makes one communication
    group, whose parameters are all-gathered in one collective (before its forward, and again before
    its backward when resharded after the forward) and whose gradients are reduce-scattered in one.
    (torchtitan keeps [norm, output] unsharded after the forward, saving that unit's backward
    gather; not modelled: every unit is gathered twice.)"""
    return layers + end_modules


def activation_buffer_bytes(setup: Setup, element_bytes: int) -> float:
    """One micro-batch's b*s*h activation tensor on one context-parallel rank."""
    return setup.micro_batch_size * setup.seq_len / setup.cp * setup.shape.hidden * element_bytes


def tp_exchanges_per_layer(checkpointing: bool) -> dict[str, int]:
    """Tensor-parallel all-reduces in one layer for one micro-batch (Narayanan et al. 2021):
    two forward (attention, MLP) and two backward; full recomputation runs the forward again."""
    forward, backward = 2, 2
    recomputed = forward if checkpointing else 0
    return {"forward": forward, "backward": backward + recomputed, "total": forward + backward + recomputed}
