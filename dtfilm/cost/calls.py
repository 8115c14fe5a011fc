"""The collectives a card joins in a step, for every plan at once: where each plan's groups sit
(`placement`), and each kind of call priced under the setup's network (`Calls`: the data-parallel
group's, `dp_calls`; tensor, pipeline and context parallelism's, `model_calls`; the experts'
all-to-alls, `expert_calls`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dtfilm.cost import memory, network, pipeline
from dtfilm.cost.comm import (
    all_gather_bytes,
    all_reduce_bytes,
    fsdp_calls,
    fsdp_units,
    group_crosses_nodes,
    shard_group_crosses_nodes,
    tp_exchanges_per_layer,
)
from dtfilm.cost.layouts import Layouts
from dtfilm.cost.models import ModelShape, moe_layers
from dtfilm.cost.setup import Setup
from dtfilm.cost.stage_ledgers import CardLedger


@dataclass(frozen=True, slots=True)
class Calls:
    """One kind of collective a card joins in a step, per plan: `count` calls, each priced by
    dtfilm.cost.network; `active` where the plan runs it at all (else every figure reads 0)."""

    group: str
    collective: str
    active: np.ndarray
    count: np.ndarray
    group_size: np.ndarray
    buffer_bytes: np.ndarray
    bytes_each: np.ndarray
    steps_each: np.ndarray
    crosses_nodes: np.ndarray
    cards_per_node_in_group: np.ndarray  # of the group, on one node (network.members_per_node)
    price: network.CallPrice

    @property
    def name(self) -> str:
        """The row's name: group and collective, as in `comm.collectives.tp_all_reduce`."""
        slug = "".join(ch if ch.isalnum() else "_" for ch in self.collective)
        return f"{self.group}_{slug}"

    @property
    def total_bytes(self) -> np.ndarray:
        return np.where(self.active, self.count * self.bytes_each, 0.0)

    @property
    def seconds(self) -> np.ndarray:
        return np.where(self.active, self.count * self.price.seconds, 0.0)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where each plan's groups sit: whether they cross nodes and how many of their cards share
    a node, by group name (dp: the dp x cp cards that share weights)."""

    crosses_nodes: dict[str, np.ndarray]
    cards_per_node_in_group: dict[str, np.ndarray]


def _crossing(setup: Setup, size: np.ndarray, stride: np.ndarray) -> np.ndarray:
    """Whether each plan's group of `size` cards `stride` ranks apart spans two nodes."""
    # Each (stride, size) pair as one integer: np.unique of rows sorts them as records, 8x slower
    base = int(size.max(initial=0)) + 1
    unique, inverse = np.unique(stride.astype(np.int64) * base + size, return_inverse=True)
    crossing = np.array(
        [group_crosses_nodes(int(k) // base, int(k) % base, setup.cards, setup.cards_per_node) for k in unique],
        dtype=bool,
    )
    return crossing[inverse.reshape(-1)]


def _unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(rows, axis=0, return_inverse=True), faster: each row of small non-negative ints
    as one integer, its entries digits in base (largest + 1), where that fits in 63 bits (np.unique
    of rows sorts them as records, several times slower)."""
    base = int(rows.max(initial=0)) + 1
    width = rows.shape[1]
    if base**width >= 2**63:
        unique, inverse = np.unique(rows, axis=0, return_inverse=True)
        return unique, inverse.reshape(-1)
    keys = np.zeros(rows.shape[0], dtype=np.int64)
    for column in range(width):
        keys = keys * base + rows[:, column]
    unique_keys, inverse = np.unique(keys, return_inverse=True)
    digits = [(unique_keys // base ** (width - 1 - column)) % base for column in range(width)]
    return np.stack(digits, axis=1), inverse.reshape(-1)


def placement(setup: Setup, plans: Layouts) -> Placement:
    """Rank order tp fastest, then cp, pp, dp (comm.group_strides), for every plan."""
    k = setup.cards_per_node
    tp, cp, pp, dp = plans.tp, plans.cp, plans.pp, plans.dp
    strides = {"tp": np.ones_like(tp), "cp": tp, "pp": tp * cp}
    sizes = {"tp": tp, "pp": pp, "cp": cp}
    if setup.shape.moe:  # ep: consecutive data-parallel replicas, tp*cp*pp ranks apart (EP divides dp)
        strides["ep"], sizes["ep"] = tp * cp * pp, plans.ep
    crosses = {name: _crossing(setup, sizes[name], strides[name]) for name in sizes}
    per_node = {name: network.members_per_node(strides[name], sizes[name], k) for name in sizes}
    if not setup.shape.moe:  # a dense model has no EP group: one card, on one node
        crosses["ep"], per_node["ep"] = np.zeros(tp.shape, dtype=bool), np.ones_like(tp)
    unique, inverse = _unique_rows(np.stack([tp, cp, pp, dp], axis=1))
    shared = [shard_group_crosses_nodes(int(t), int(c), int(p), int(d), setup.cards, k) for t, c, p, d in unique]
    crosses["dp"] = np.array(shared, dtype=bool)[inverse.reshape(-1)]
    per_node["dp"] = network.shard_members_per_node(tp, cp, pp, dp, k)
    return Placement(crosses, per_node)


def _calls(
    setup: Setup, where: Placement, group: str, collective: str, active: Any, count: Any, size: Any,
    buffer_bytes: Any, bytes_each: Any, steps: Any,
) -> Calls:  # fmt: skip
    """A Calls row priced under the setup's network on each plan's placement of `group`."""
    crosses, per_node = where.crosses_nodes[group], where.cards_per_node_in_group[group]
    price = network.price_call(
        setup.network, collective, bytes_each, steps, size, per_node, crosses, setup.intra_node,
        setup.inter_node, setup.cards_per_node,
    )  # fmt: skip
    n = np.shape(active)
    as_array: Callable[[Any], np.ndarray] = lambda value: np.broadcast_to(value, n)  # noqa: E731
    return Calls(
        group, collective, as_array(active), as_array(count), as_array(size), as_array(buffer_bytes),
        as_array(bytes_each), as_array(steps), crosses, as_array(per_node), price,
    )  # fmt: skip


def dp_calls(setup: Setup, plans: Layouts, where: Placement, card: CardLedger) -> tuple[Calls, ...]:
    """Gradient (and, under ZeRO-3, weight) traffic over the cards that share weights, for the
    traffic card's unsharded weights and gradients: one all-reduce under ZeRO 0-2; under ZeRO-3
    all-gathers forward and backward and reduce-scatters, per micro-batch (comm.fsdp_calls)."""
    per = memory.BYTES_PER_PARAM[setup.precision]
    d = plans.shard_group
    weight_bytes, gradient_bytes = card.params_on_card * per.weights, card.params_on_card * per.gradients
    fsdp = (d > 1) & (plans.zero >= 3)
    units = np.maximum(fsdp_units(card.layers, card.end_modules), 1)
    calls, split = fsdp_calls(setup.network, plans.micro_batches, units)
    weights, gradients = weight_bytes / split, gradient_bytes / split
    gather, scatter = all_gather_bytes(weights, d), all_gather_bytes(gradients, d)
    reduce = all_reduce_bytes(gradient_bytes, d)
    return (
        _calls(setup, where, "dp", "all-reduce", (d > 1) & ~fsdp, 1, d, gradient_bytes, reduce, 2 * (d - 1)),
        _calls(setup, where, "dp", "all-gather", fsdp, 2 * calls, d, weights, gather, d - 1),
        _calls(setup, where, "dp", "reduce-scatter", fsdp, calls, d, gradients, scatter, d - 1),
    )


def model_calls(setup: Setup, plans: Layouts, where: Placement, card: CardLedger) -> tuple[Calls, ...]:
    """TP's all-reduces of the activation buffer (4 a layer a micro-batch, 6 recomputed, plus the
    ends'), PP's sends (2 a micro-batch, v times interleaved), ring attention's K/V hops and their
    gradients' (comm's docstring has the sources)."""
    element = memory.ACTIVATION_ELEMENT_BYTES[setup.precision]
    tp, pp, c, m = plans.tp, plans.pp, plans.cp, plans.micro_batches
    buffer = plans.micro_batch_size * setup.seq_len / c * setup.shape.hidden * element
    per_layer = np.where(
        plans.full_recompute, tp_exchanges_per_layer(True)["total"], tp_exchanges_per_layer(False)["total"]
    )
    tp_count = (per_layer * card.layers + card.end_modules) * m  # one at each module at the ends
    kv_block = (plans.micro_batch_size * setup.seq_len / c * setup.shape.kv_hidden * element) / tp
    passes = card.layers * m
    cp_buffer = 2 * kv_block  # K and V
    return (
        _calls(
            setup, where, "tp", "all-reduce", tp > 1, tp_count, tp, buffer, all_reduce_bytes(buffer, tp), 2 * (tp - 1)
        ),
        _calls(setup, where, "pp", "send/recv", pp > 1, 2 * m * plans.virtual_stages, pp, buffer / tp, buffer / tp, 1),
        _calls(setup, where, "cp", "ring send/recv", c > 1, 2 * passes, c, cp_buffer, (c - 1) * cp_buffer, c - 1),
        _calls(setup, where, "cp", "gradient ring", c > 1, passes, c, cp_buffer, c * cp_buffer, c),
        *expert_calls(setup, plans, where, card),
    )  # fmt: skip


def most_moe_layers(shape: ModelShape, pp: np.ndarray) -> np.ndarray:
    """The most MoE layers any stage of each plan's pipeline holds: the all-to-all is counted on
    that stage's card, whichever card the other traffic is counted on (a pipeline of DeepSeek-V3
    whose first stage holds its three dense layers and no MoE layer still waits for the others')."""
    depths, inverse = np.unique(pp, return_inverse=True)
    most = [max(moe_layers(shape, first, n) for first, n in pipeline.stage_spans(shape.layers, int(d))) for d in depths]
    return np.array(most, dtype=np.int64)[inverse.reshape(-1)]


def expert_calls(setup: Setup, plans: Layouts, where: Placement, card: CardLedger) -> tuple[Calls, ...]:
    """EP's all-to-alls, for a MoE model only (a dense model's calls are as they were): the
    dispatch and the combine of each MoE layer, forward and backward (4 a layer a micro-batch, 6
    when the forward is recomputed), each of the micro-batch's b*s/c tokens k times, h wide, on
    the stage with the most MoE layers (`most_moe_layers`)."""
    shape = setup.shape
    if not shape.moe:
        return ()
    element = memory.ACTIVATION_ELEMENT_BYTES[setup.precision]
    ep = plans.ep
    buffer = plans.micro_batch_size * setup.seq_len / plans.cp * shape.top_k * shape.hidden * element
    per_layer = np.where(plans.full_recompute, 6, 4)
    count = per_layer * most_moe_layers(shape, plans.pp) * plans.micro_batches
    leaving = buffer * (ep - 1) / ep
    return (_calls(setup, where, "ep", "all-to-all", ep > 1, count, ep, buffer, leaving, 1),)
