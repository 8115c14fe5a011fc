"""One call of a collective, priced on the cluster's topology as NCCL runs it by default.

Every function takes numpy arrays (dtfilm.cost.model: one entry per plan, an estimate one row) or
scalars (Python ints, floats and bools: the tests' hand-worked calls) and returns the same kind.

The topology. A node has k cards on its fabric (NVLink, Infinity Fabric) and, per the link
catalog, a NIC for every card (InfiniBand, RoCE: rail-optimised, as DGX/HGX H100 and A100 are built)
or one NIC shared by the node's cards (Ethernet, Omni-Path: `Link.shared_by_node`). A group of n
cards of which g sit on each of N nodes (n = g N) crosses the network when N > 1.

The rule (`network: nccl`, the default):
- Which algorithm. NCCL runs all-gather and reduce-scatter as rings (NCCL's src/graph/tuning.cc
  enables only Ring, PAT, NVLS and CollNet for them; PAT needs one rank a node and NVLS/CollNet
  need NVLink SHARP or SHARP switches, which the catalog does not describe). For all-reduce NCCL
  prices Ring and Tree by its tuning model (latency + bytes / bandwidth per algorithm and message
  size) and runs the faster (src/enqueue.cc, topoGetAlgoInfo); we price both and keep the faster.
- The ring. NCCL builds one ring a channel through every rank, each channel leaving the node by a
  different NIC (NCCL's documentation: NCCL_CROSS_NIC, NCCL_MIN_NCHANNELS; REFERENCES.md, "The
  network as NCCL uses it"). A card sends the ring's bytes R (all-reduce 2(n-1)/n B, all-gather and
  reduce-scatter (n-1)/n B: nccl-tests doc/PERFORMANCE.md's bus bandwidth factors); in 1 channel of
  every g its next hop leaves the node on its own NIC, in the others it stays on the fabric. So
  each NIC carries R/g and each card's fabric link R(g-1)/g (R when N = 1). The chunks pipeline
  through both, so the ring moves at its slowest hop: time = latency + max(fabric bytes / fabric
  bandwidth, NIC bytes / NIC bandwidth). A shared NIC gives each card 1/k of the node's bandwidth
  (the k/g groups of the node run at once, each with g shares).
- Its latency, as NCCL's tuning model counts it (tuning.cc: `nInterSteps`): a ring all-reduce has
  2(n-1) steps, 2(N-1) of them between nodes; all-gather and reduce-scatter n-1, N-1 between nodes.
  A step between nodes costs the NIC's latency, the others the fabric's (the link catalog's
  latencies per step).
- The tree (all-reduce only): NCCL's intra-node chain and inter-node double binary tree, latency
  2((g-1) fabric + floor(log2 N) NIC) (tuning.cc, NCCL_ALGO_TREE), its bandwidth NCCL's: the tree's
  algorithm bandwidth is half its bus bandwidth, and the bus bandwidth 0.92 of the ring's
  (tuning.cc, "busBw * .92"), so its transfer is the ring's x n/(n-1) / 0.92.
- Point-to-point (pipeline sends, ring attention's hops) moves in lock step with the slowest hop of
  the group: one card's link of the slowest tier, as the whiteboard has it.

`network: single-link` is the seeds' whiteboard: every byte of a call on one card's link of the
slowest tier the group crosses, `latency x steps + bytes / bandwidth`, kept to reproduce the
numbers of before 2026-12-04 to the last digit.

Not modelled: NVLink SHARP (NVLS) and CollNet, NCCL's protocols (LL, LL128, Simple) and its base
latency a call, PAT (all-gather with one rank a node, from NCCL 2.23).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dtfilm.cost.hardware import Link

NETWORKS = ("nccl", "single-link")
RING_COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter")
# NCCL src/graph/tuning.cc: "if (a == NCCL_ALGO_TREE && coll == ncclFuncAllReduce) busBw = std::min(busBw * .92, ...)"
TREE_BUS_SHARE = 0.92


@dataclass(frozen=True)
class CallPrice:
    """One call: its seconds, the part of them that is latency, the bytes a card puts on its
    fabric link and on its NIC, and whether NCCL's tree beat the ring (all-reduce only)."""

    seconds: Any
    latency_seconds: Any
    fabric_bytes: Any
    nic_bytes: Any
    tree: Any


def _is_array(*values: Any) -> bool:
    return any(isinstance(v, np.ndarray) for v in values)


def _where(condition: Any, yes: Any, no: Any) -> Any:
    if _is_array(condition, yes, no):
        return np.where(condition, yes, no)
    return yes if condition else no


def _maximum(a: Any, b: Any) -> Any:
    return np.maximum(a, b) if _is_array(a, b) else max(a, b)


def _minimum(a: Any, b: Any) -> Any:
    return np.minimum(a, b) if _is_array(a, b) else min(a, b)


def _floor_log2(n: Any) -> Any:
    """NCCL's log2i: the floor of log2 n, for n >= 1."""
    if _is_array(n):
        return np.floor(np.log2(np.maximum(n, 1))).astype(np.int64)
    return int(n).bit_length() - 1


def members_per_node(stride: Any, size: Any, cards_per_node: int) -> Any:
    """How many of a group's `size` cards, `stride` ranks apart, share a node of `cards_per_node`."""
    return _minimum(size, _maximum(1, cards_per_node // stride))


def shard_members_per_node(tp: Any, cp: Any, pp: Any, dp: Any, cards_per_node: int) -> Any:
    """How many of the dp x cp cards that share weights (`comm.shard_group_crosses_nodes`' group)
    share a node: cp ranks tp apart, times replicas tp*cp*pp apart."""
    return members_per_node(tp, cp, cards_per_node) * members_per_node(tp * cp * pp, dp, cards_per_node)


def single_link_call(
    bytes_each: Any, steps: Any, crosses: Any, fabric: Link, nic: Link, cards_per_node: int
) -> CallPrice:
    """The whiteboard: every byte on one card's link of the slowest tier the group crosses."""
    bandwidth = _where(
        crosses, nic.per_card_bytes_per_second(cards_per_node), fabric.per_card_bytes_per_second(cards_per_node)
    )
    step_latency = _where(crosses, nic.latency_seconds, fabric.latency_seconds)
    latency = step_latency * steps
    return CallPrice(
        seconds=latency + bytes_each / bandwidth,
        latency_seconds=latency,
        fabric_bytes=_where(crosses, 0.0, bytes_each),
        nic_bytes=_where(crosses, bytes_each, 0.0),
        tree=_where(crosses, False, False),
    )


def ring_call(
    collective: str,
    bytes_each: Any,
    steps: Any,
    size: Any,
    per_node: Any,
    crosses: Any,
    fabric: Link,
    nic: Link,
    cards_per_node: int,
) -> CallPrice:
    """A ring (or, for all-reduce, the faster of ring and tree) over `size` cards, `per_node` of
    them on each node it spans, as the module's docstring states; `bytes_each` is what a card
    sends in the ring (the bus-bandwidth factor times the buffer), `steps` the ring's steps."""
    nodes = _where(crosses, _maximum(2, -(-size // per_node)), 1)
    g = _where(crosses, -(-size // nodes), size)  # cards of the group on each node
    nic_bytes = _where(crosses, bytes_each / g, 0.0)
    fabric_bytes = _where(crosses, bytes_each * (g - 1) / g, bytes_each)
    all_reduce = collective == "all-reduce"
    inter_steps = _where(crosses, (2 if all_reduce else 1) * (nodes - 1), 0)
    latency = (steps - inter_steps) * fabric.latency_seconds + inter_steps * nic.latency_seconds
    transfer = _maximum(
        fabric_bytes / fabric.per_card_bytes_per_second(cards_per_node),
        nic_bytes / nic.per_card_bytes_per_second(cards_per_node),
    )
    seconds = latency + transfer
    if not all_reduce:
        return CallPrice(seconds, latency, fabric_bytes, nic_bytes, _where(crosses, False, False))
    tree_latency = 2 * ((g - 1) * fabric.latency_seconds + _floor_log2(nodes) * nic.latency_seconds)
    tree_scale = size / _maximum(size - 1, 1) / TREE_BUS_SHARE  # 2B at 0.92 of the bus bandwidth, against 2(n-1)/n B
    tree = (tree_latency + transfer * tree_scale < seconds) & (size > 1)
    return CallPrice(
        seconds=_where(tree, tree_latency + transfer * tree_scale, seconds),
        latency_seconds=_where(tree, tree_latency, latency),
        fabric_bytes=_where(tree, fabric_bytes * tree_scale * TREE_BUS_SHARE, fabric_bytes),
        nic_bytes=_where(tree, nic_bytes * tree_scale * TREE_BUS_SHARE, nic_bytes),
        tree=tree,
    )


def all_to_all_call(
    bytes_each: Any, size: Any, per_node: Any, crosses: Any, fabric: Link, nic: Link, cards_per_node: int
) -> CallPrice:
    """An all-to-all over `size` cards, `per_node` of them on each node, as NCCL runs it: a send
    to and a receive from every peer at once (ncclSend/ncclRecv in one group), so the card's
    `bytes_each` (what leaves it, (n-1)/n of its buffer) splits by where its peers are: to the
    per_node - 1 on its node over the fabric, to the rest over its NIC; one latency of each tier
    it uses, the two tiers' transfers side by side (DeepSeek-V3 report, section 3.2.2: the
    all-to-all's IB and NVLink traffic run at once)."""
    peers = _maximum(size - 1, 1)
    local = _where(crosses, _minimum(per_node, size), size)
    fabric_bytes = bytes_each * (local - 1) / peers
    nic_bytes = bytes_each - fabric_bytes
    latency = fabric.latency_seconds + _where(crosses, nic.latency_seconds, 0.0)
    transfer = _maximum(
        fabric_bytes / fabric.per_card_bytes_per_second(cards_per_node),
        nic_bytes / nic.per_card_bytes_per_second(cards_per_node),
    )
    return CallPrice(latency + transfer, latency, fabric_bytes, nic_bytes, _where(crosses, False, False))


def price_call(
    network: str,
    collective: str,
    bytes_each: Any,
    steps: Any,
    size: Any,
    per_node: Any,
    crosses: Any,
    fabric: Link,
    nic: Link,
    cards_per_node: int,
) -> CallPrice:
    """One call of `collective` under `network`: rings and trees as NCCL runs them under `nccl`
    (point-to-point as the whiteboard), every call on one card's link under `single-link`."""
    if network == "nccl" and collective == "all-to-all":
        return all_to_all_call(bytes_each, size, per_node, crosses, fabric, nic, cards_per_node)
    if network == "nccl" and collective in RING_COLLECTIVES:
        return ring_call(collective, bytes_each, steps, size, per_node, crosses, fabric, nic, cards_per_node)
    return single_link_call(bytes_each, steps, crosses, fabric, nic, cards_per_node)
