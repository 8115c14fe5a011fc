"""The cost model's one body: every quantity that depends on the plan, written once, on numpy
arrays with one entry per plan.

The planner calls `evaluate` on the grid of every plan; the estimate calls it on one row
(`Layouts.of(setup)`) and reads that row. The two are the same code, so they cannot disagree.
Sums run in the order the estimate's contract figures were first computed in, so that a figure
moves only when a formula does (tests/test_model.py names the golden values).

Per plan, `evaluate` builds a ledger and a stage time for every pipeline stage (a plans x stages
matrix for each pipeline depth), then keeps three cards of the pipeline: the fullest (its memory
is the plan's), the one with the most state and activations (its traffic is the step's) and the
busiest (its compute sets the pace).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from dtfilm.cost import efficiency, memory, network, overlap, pipeline
from dtfilm.cost import ledger as terms
from dtfilm.cost.comm import (
    GROUPS,
    all_gather_bytes,
    all_reduce_bytes,
    fsdp_calls,
    fsdp_units,
    group_crosses_nodes,
    shard_group_crosses_nodes,
    tp_exchanges_per_layer,
)
from dtfilm.cost.models import (
    ModelShape,
    busiest_expert_load,
    head_matmul_params,
    layer_params,
    moe_layers,
    param_count,
)
from dtfilm.cost.setup import Setup

SCHEDULE_NAMES = pipeline.SCHEDULES  # index 0: 1f1b, 1: gpipe
FULL = memory.RECOMPUTE_MODES.index("full")
LAYOUT_FIELDS = (
    "dp", "tp", "pp", "cp", "zero", "micro_batches", "micro_batch_size", "recompute", "schedule", "virtual_stages",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Layouts:
    """Plans as parallel int arrays, one entry per plan: the degrees, the batch split, and
    `recompute` and `schedule` as indices into memory.RECOMPUTE_MODES and pipeline.SCHEDULES."""

    dp: np.ndarray
    tp: np.ndarray
    pp: np.ndarray
    cp: np.ndarray
    zero: np.ndarray
    micro_batches: np.ndarray
    micro_batch_size: np.ndarray
    recompute: np.ndarray
    schedule: np.ndarray
    virtual_stages: np.ndarray
    ep: np.ndarray  # expert parallelism: the routed experts split over ep of the dp replicas

    @classmethod
    def of(cls, setup: Setup) -> Layouts:
        """The one plan a Setup names, as a one-row Layouts (the estimate's call)."""
        values = {name: getattr(setup, name) for name in (*LAYOUT_FIELDS, "ep")}
        values["recompute"] = memory.RECOMPUTE_MODES.index(setup.recompute)
        values["schedule"] = SCHEDULE_NAMES.index(setup.schedule)
        return cls(**{name: np.array([value], dtype=np.int64) for name, value in values.items()})

    def take(self, rows: np.ndarray) -> Layouts:
        return Layouts(*(getattr(self, f.name)[rows] for f in fields(self)))

    @property
    def count(self) -> int:
        return int(self.dp.size)

    @property
    def shard_group(self) -> np.ndarray:
        """The dp x cp cards that share weights (Setup.shard_group)."""
        return self.dp * self.cp

    @property
    def expert_data_parallel(self) -> np.ndarray:
        """The cards holding the same experts, over which ZeRO shards their state (Setup's)."""
        return self.shard_group // self.ep

    @property
    def full_recompute(self) -> np.ndarray:
        return self.recompute == FULL


@dataclass(frozen=True, slots=True)
class CardLedger:
    """One card's memory by part, in bytes, with what it holds: arrays of one shape, (plans) or
    (plans x stages). `total_bytes` is the contract's `memory.total`."""

    weights_bytes: Any
    gradients_bytes: Any
    master_weights_bytes: Any
    adam_m_bytes: Any
    adam_v_bytes: Any
    activations_bytes: Any
    recompute_working_set_bytes: Any
    logits_bytes: Any
    fp8_weight_copies_bytes: Any
    reserve_bytes: Any
    params_on_card: Any
    routed_params_on_card: Any  # of them, the routed experts' (sharded over EP; 0 when dense)
    layers: Any
    moe_layers: Any  # of them, the MoE layers
    micro_batches_in_flight: Any
    end_modules: Any  # the embedding (first stage) and the output head (last) it holds

    def part_bytes(self, part: str) -> Any:
        """A part by its contract name (memory.MEMORY_PARTS, ledger.LEDGER_EXTRA_PARTS)."""
        return self.buffers_bytes if part == "buffers" else getattr(self, f"{part}_bytes")

    @property
    def buffers_bytes(self) -> Any:
        """The complete ledger's terms beyond state and activations, drawn as one part."""
        return sum(self.part_bytes(p) for p in terms.LEDGER_EXTRA_PARTS)

    @property
    def state_bytes(self) -> Any:
        return sum(self.part_bytes(p) for p in memory.STATE_PARTS)

    @property
    def kept_bytes(self) -> Any:
        """State and kept activations: the traffic's card is the one with most of them (the rule
        before the complete ledger: the logits can fill the last stage without changing its sends)."""
        return sum(self.part_bytes(p) for p in (*memory.STATE_PARTS, "activations"))

    @property
    def total_bytes(self) -> Any:
        return sum(self.part_bytes(p) for p in memory.MEMORY_PARTS)

    def pick(self, stage: np.ndarray) -> CardLedger:
        """The card of stage `stage[i]` of each plan i, from a (plans x stages) ledger."""
        rows = np.arange(stage.size)
        return CardLedger(*(getattr(self, f.name)[rows, stage] for f in fields(self)))


def activation_bytes_per_layer(setup: Setup, plans: Layouts) -> np.ndarray:
    """Activation bytes one layer keeps for one micro-batch on one card (memory.activation_factor:
    Korthikanti et al. 2022, Table 2), split over TP (by its rule) and CP."""
    shape = setup.shape
    factor = memory.activation_factor(
        plans.recompute, shape.heads, setup.seq_len, shape.hidden, setup.flash_attention, plans.tp,
        setup.sequence_parallel, shape.kv_heads,
    )  # fmt: skip
    whole = factor * setup.seq_len * plans.micro_batch_size * shape.hidden
    return whole * memory.ACTIVATION_BYTES_SCALE[setup.precision] / plans.cp


def _state_parts(
    setup: Setup, plans: Layouts, params: np.ndarray, routed: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Training state bytes on a card holding `params` (plans x stages), ZeRO-sharded over the
    cards that share weights (memory.state_bytes' rule: ZeRO, sections 3.1 and 5); of them the
    `routed` experts' over the cards that hold the same experts (dp x cp / ep: Megatron-Core's
    expert data-parallel group)."""
    if routed is None:
        return _sharded_state(setup, plans, params, plans.shard_group)
    shared = _sharded_state(setup, plans, params - routed, plans.shard_group)
    experts = _sharded_state(setup, plans, routed, plans.expert_data_parallel)
    return {name: shared[name] + experts[name] for name in shared}


def _sharded_state(setup: Setup, plans: Layouts, params: np.ndarray, group: np.ndarray) -> dict[str, np.ndarray]:
    """Training state bytes of `params` ZeRO-sharded over `group` cards."""
    per = memory.BYTES_PER_PARAM[setup.precision]
    shards = group[:, None]
    zero = plans.zero[:, None]
    optimizer_share = np.where(zero >= 1, 1 / shards, 1.0)
    gradient_share = np.where(zero >= 2, 1 / shards, 1.0)
    weight_share = np.where(zero >= 3, 1 / shards, 1.0)
    return {
        "weights_bytes": params * per.weights * weight_share,
        "gradients_bytes": params * per.gradients * gradient_share,
        "master_weights_bytes": params * per.master_weights * optimizer_share,
        "adam_m_bytes": params * per.adam_m * optimizer_share,
        "adam_v_bytes": params * per.adam_v * optimizer_share,
        "fp8_weight_copies_bytes": terms.fp8_weight_copies(params, setup.precision, weight_share),
    }


def stage_ledgers(setup: Setup, plans: Layouts, pp: int) -> CardLedger:
    """The ledger of one card of each pipeline stage (dp, tp, cp ranks are alike), (plans x pp),
    for plans of pipeline depth `pp`. A storyboard's `params` rescales every piece of the
    architecture alike; TP splits the matrices and replicates the norms."""
    shape = setup.shape
    stage = np.arange(pp)
    arch = np.array(pipeline.stage_architecture_params(shape, pp), dtype=float)
    norms = np.array(pipeline.stage_norm_params(shape, pp), dtype=float)
    layers = np.array(pipeline.stage_layers(shape.layers, pp), dtype=np.int64)
    tp, cp, b = plans.tp[:, None], plans.cp[:, None], plans.micro_batch_size[:, None]
    params = setup.params * ((arch - norms)[None, :] / tp + norms[None, :]) / param_count(shape)
    routed = None
    if shape.moe:  # the routed experts split over TP (expert TP = TP) and EP
        routed_arch = np.array(pipeline.stage_routed_params(shape, pp), dtype=float)[None, :]
        ep = plans.ep[:, None]
        routed = setup.params * routed_arch / (tp * ep) / param_count(shape)
        params = params - setup.params * routed_arch / tp / param_count(shape) + routed
    in_flight = pipeline.micro_batches_in_flight(
        stage[None, :], pp, plans.micro_batches[:, None], plans.schedule[:, None], plans.virtual_stages[:, None]
    )
    in_flight = np.broadcast_to(in_flight, params.shape)
    gpipe = plans.schedule[:, None] == SCHEDULE_NAMES.index("gpipe")
    logits_in_flight = terms.logits_micro_batches(in_flight, gpipe)
    head = stage[None, :] == pp - 1  # the stage with the output head and the loss
    logits = terms.logits_bytes(b, setup.seq_len, shape.vocab, tp, cp, logits_in_flight)
    working_set = terms.recompute_working_set(
        plans.full_recompute, shape.heads, setup.seq_len, shape.hidden, setup.precision, plans.micro_batch_size,
        plans.tp, plans.cp, setup.flash_attention, setup.sequence_parallel, shape.kv_heads,
    )  # fmt: skip
    reserve = terms.reserve_bytes(setup.card.name, plans.shard_group, plans.tp, plans.pp, plans.cp)
    wide = np.zeros(params.shape)  # broadcasts a per-plan term to every stage
    return CardLedger(
        **_state_parts(setup, plans, params, routed),
        activations_bytes=layers[None, :] * activation_bytes_per_layer(setup, plans)[:, None] * in_flight,
        recompute_working_set_bytes=wide + working_set[:, None],
        logits_bytes=np.where(head, logits, 0.0),
        reserve_bytes=wide + reserve[:, None],
        params_on_card=params,
        routed_params_on_card=np.zeros(params.shape) if routed is None else routed,
        layers=np.broadcast_to(layers[None, :], params.shape),
        moe_layers=np.broadcast_to(
            np.array([moe_layers(shape, f, n) for f, n in pipeline.stage_spans(shape.layers, pp)])[None, :],
            params.shape,
        ),
        micro_batches_in_flight=in_flight,
        end_modules=np.broadcast_to(
            np.array([pipeline.end_modules(i, pp) for i in range(pp)], dtype=np.int64)[None, :], params.shape
        ),
    )


def stage_times(setup: Setup, plans: Layouts, pp: int, seq_len: np.ndarray | None = None) -> efficiency.StageTime:
    """One micro-batch forward and backward on one card of each stage, (plans x pp), for plans
    of pipeline depth `pp` (dtfilm.cost.efficiency: matmuls, attention, memory-bound, fixed);
    `seq_len`: each plan's sequence length, where they are not all the setup's (one search's
    candidates at once)."""
    shape = setup.shape
    tokens_per_sequence = setup.seq_len if seq_len is None else seq_len[:, None]
    scale = setup.params / param_count(shape)
    stage = np.arange(pp)
    layers = np.array(pipeline.stage_layers(shape.layers, pp), dtype=np.int64)
    per_layer: Any = layer_params(shape) * scale
    if shape.moe:  # each stage's active parameters a layer, the busiest expert's load on its card
        balanced = np.array(pipeline.stage_active_layer_params(shape, pp), dtype=float)[None, :]
        load = busiest_expert_load(shape, setup.routing_imbalance)
        loaded = np.array(pipeline.stage_active_layer_params(shape, pp, load), dtype=float)
        stage_params = np.where(plans.ep[:, None] > 1, loaded[None, :], balanced)
        per_layer = stage_params / np.maximum(layers, 1)[None, :] * scale
    times = efficiency.stage_time(
        setup.card,
        setup.precision,
        layers=layers[None, :],
        tokens=plans.micro_batch_size[:, None] * tokens_per_sequence / plans.cp[:, None],
        seq_len=tokens_per_sequence,
        hidden=shape.hidden,
        tp=plans.tp[:, None],
        layer_params=per_layer,
        head_params=np.where(stage == pp - 1, head_matmul_params(shape) * scale, 0.0)[None, :],
        recompute=plans.recompute[:, None],
        heads=shape.heads,
        cp=plans.cp[:, None],
        flash=setup.flash_attention,
        sequence_parallel=setup.sequence_parallel,
        overlap=setup.overlap,
        fp8_attention=setup.fp8_attention,
    )
    shape2 = (plans.count, pp)
    return efficiency.StageTime(*(np.broadcast_to(getattr(times, f.name), shape2) for f in fields(times)))


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


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Every plan's memory, traffic and time (one entry per plan; `layouts` says which plan).

    `fullest` is the card with the most memory (the plan's `memory.total`), `traffic_card` the
    one with the most state and activations (whose calls the step counts), `busy` the busiest
    stage's card's one micro-batch (whose compute sets the pace); `calls` every kind of
    collective in the contract's order, inactive ones reading 0."""

    layouts: Layouts
    placement: Placement
    fullest: CardLedger
    fullest_stage: np.ndarray
    traffic_card: CardLedger
    traffic_stage: np.ndarray
    busy: efficiency.StageTime
    busiest_stage: np.ndarray
    calls: tuple[Calls, ...]
    comm_bytes_by_group: dict[str, np.ndarray | int]  # 0: a group without calls (a dense model's ep)
    comm_seconds_by_group: dict[str, np.ndarray | int]
    exposed_seconds_by_group: dict[str, np.ndarray]
    comm_seconds: np.ndarray
    compute_seconds: np.ndarray
    bubble_overhead: np.ndarray
    bubble_seconds: np.ndarray
    step_seconds: np.ndarray
    tokens_per_step: np.ndarray

    @property
    def memory_total_bytes(self) -> np.ndarray:
        return self.fullest.total_bytes

    @property
    def comm_total_bytes(self) -> np.ndarray:
        return np.asarray(sum(self.comm_bytes_by_group.values()))  # an array: some group has calls

    @property
    def exposed_seconds(self) -> np.ndarray:
        """The traffic the step waits for (all of it under overlap none)."""
        exposed = self.exposed_seconds_by_group
        return exposed["dp"] + exposed["tp"] + exposed["pp"] + exposed["cp"] + exposed["ep"]

    def call(self, name: str) -> Calls:
        return next(c for c in self.calls if c.name == name)


def _per_stage_cards(setup: Setup, plans: Layouts) -> dict[str, Any]:
    """For each plan, its fullest, traffic and busiest stage's cards: the (plans x stages)
    matrices of each pipeline depth reduced to one card each, gathered into per-plan arrays."""
    n = plans.count
    parts: dict[str, list[tuple[np.ndarray, Any]]] = {"fullest": [], "traffic": [], "busy": []}
    stages = {name: np.zeros(n, dtype=np.int64) for name in parts}
    for depth in np.unique(plans.pp):
        rows = np.nonzero(plans.pp == depth)[0]
        subset = plans.take(rows)
        ledgers = stage_ledgers(setup, subset, int(depth))
        times = stage_times(setup, subset, int(depth))
        # the first stage of the most (as max() takes the first), so ties fall as they always have
        chosen = {
            "fullest": np.argmax(ledgers.total_bytes, axis=1),
            "traffic": np.argmax(ledgers.kept_bytes, axis=1),
            "busy": np.argmax(times.seconds, axis=1),
        }
        for name, stage in chosen.items():
            stages[name][rows] = stage
            source = times if name == "busy" else ledgers
            picked = {f.name: getattr(source, f.name)[np.arange(rows.size), stage] for f in fields(source)}
            parts[name].append((rows, picked))
    out: dict[str, Any] = {}
    for name, kind in (("fullest", CardLedger), ("traffic", CardLedger), ("busy", efficiency.StageTime)):
        out[name] = kind(**{f.name: _gathered(n, parts[name], f.name) for f in fields(kind)})
        out[f"{name}_stage"] = stages[name]
    return out


def _gathered(n: int, pieces: list[tuple[np.ndarray, dict[str, np.ndarray]]], key: str) -> np.ndarray:
    """One per-plan array from each pipeline depth's rows and values."""
    dtype = np.result_type(*(values[key] for _, values in pieces))
    out = np.zeros(n, dtype=dtype)
    for rows, values in pieces:
        out[rows] = values[key]
    return out


def _exposed(
    setup: Setup, plans: Layouts, where: Placement, busy: efficiency.StageTime, card: CardLedger, calls: Any
) -> dict[str, Any]:
    """Each group's exposed seconds under `setup.overlap` (dtfilm.cost.overlap), the traffic card's
    calls beside one micro-batch of the busiest stage's compute."""
    seconds = {c.name: c.seconds for c in calls}
    by_group = {g: sum(c.seconds for c in calls if c.group == g) for g in GROUPS}
    exchanges = tp_exchanges_per_layer(False)["forward"]
    per_layer = np.where(
        plans.full_recompute, tp_exchanges_per_layer(True)["total"], tp_exchanges_per_layer(False)["total"]
    )
    per = memory.BYTES_PER_PARAM[setup.precision]
    return overlap.exposed_by_group(
        setup.overlap,
        dp_seconds=by_group["dp"],
        dp_gather_seconds=seconds["dp_all_gather"],
        dp_scatter_seconds=seconds["dp_reduce_scatter"],
        zero=plans.zero,
        gradient_bytes=card.params_on_card * per.gradients,
        layers=card.layers,
        micro_batches=plans.micro_batches,
        micro_batch_seconds=busy.seconds,
        matmul_seconds=busy.matmul,
        attention_seconds=busy.attention,
        full_recompute=plans.full_recompute,
        tp_seconds=by_group["tp"],
        tp=plans.tp,
        tp_forward_share=exchanges / per_layer,
        sequence_parallel=setup.sequence_parallel,
        tp_overlap=setup.tp_overlap,
        dp_overlap=setup.dp_overlap,
        pp_overlap=setup.pp_overlap,
        pp_seconds=by_group["pp"],
        pp=plans.pp,
        virtual_stages=plans.virtual_stages,
        cp_ring_seconds=seconds["cp_ring_send_recv"],
        cp_gradient_seconds=seconds["cp_gradient_ring"],
        cp=plans.cp,
        tp_crosses_nodes=where.crosses_nodes["tp"],
    )


def evaluate(setup: Setup, plans: Layouts) -> Evaluation:
    """Memory, traffic and time of every plan in `plans` (the model's model/cluster/inputs from
    `setup`; its plan fields are ignored: `plans` gives the plans)."""
    cards = _per_stage_cards(setup, plans)
    where = placement(setup, plans)
    calls = (*dp_calls(setup, plans, where, cards["traffic"]), *model_calls(setup, plans, where, cards["traffic"]))
    # a group without calls (a dense model's ep) adds up to 0
    bytes_by_group: dict[str, np.ndarray | int] = {g: sum(c.total_bytes for c in calls if c.group == g) for g in GROUPS}
    seconds_by_group: dict[str, np.ndarray | int] = {g: sum(c.seconds for c in calls if c.group == g) for g in GROUPS}
    comm_seconds = np.asarray(sum(seconds_by_group.values()))  # an array: some group has calls
    busy = cards["busy"]
    exposed = _exposed(setup, plans, where, busy, cards["traffic"], calls)
    # the all-to-all waits in full: each MoE layer's experts need its dispatch, the next layer its
    # combine (DeepSeek-V3's DualPipe hides it under another micro-batch: not modelled)
    exposed = {**exposed, "ep": seconds_by_group["ep"]}
    exposed = {g: np.broadcast_to(exposed[g], (plans.count,)) for g in GROUPS}
    compute_seconds = plans.micro_batches * busy.seconds
    overhead = pipeline.bubble_overhead(plans.pp, plans.micro_batches, plans.virtual_stages)
    step, bubble = overlap.step_seconds(setup.overlap, compute_seconds, overhead, comm_seconds, exposed)
    return Evaluation(
        layouts=plans,
        placement=where,
        fullest=cards["fullest"],
        fullest_stage=cards["fullest_stage"],
        traffic_card=cards["traffic"],
        traffic_stage=cards["traffic_stage"],
        busy=busy,
        busiest_stage=cards["busy_stage"],
        calls=calls,
        comm_bytes_by_group=bytes_by_group,
        comm_seconds_by_group=seconds_by_group,
        exposed_seconds_by_group=exposed,
        comm_seconds=comm_seconds,
        compute_seconds=compute_seconds,
        bubble_overhead=overhead,
        bubble_seconds=bubble,
        step_seconds=step,
        tokens_per_step=plans.dp * plans.micro_batches * plans.micro_batch_size * setup.seq_len,
    )
