"""The cost model's one body: every quantity that depends on the plan, written once, on numpy
arrays with one entry per plan.

The planner calls `evaluate` on the grid of every plan; the estimate calls it on one row
(`Layouts.of(setup)`) and reads that row. The two are the same code, so they cannot disagree.
Sums run in the order the estimate's contract figures were first computed in, so that a figure
moves only when a formula does (tests/test_model.py names the golden values).

Per plan, `evaluate` builds a ledger (dtfilm.cost.stage_ledgers) and a stage time for every
pipeline stage (a plans x stages matrix for each pipeline depth), then keeps three cards of the
pipeline: the fullest (its memory is the plan's), the one with the most state and activations (its
traffic is the step's, priced by dtfilm.cost.calls) and the busiest (its compute sets the pace).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from dtfilm.cost import efficiency, memory, overlap, pipeline
from dtfilm.cost.calls import Calls, Placement, dp_calls, model_calls, placement
from dtfilm.cost.comm import GROUPS, tp_exchanges_per_layer
from dtfilm.cost.layouts import Layouts
from dtfilm.cost.models import busiest_expert_load, head_matmul_params, layer_params, param_count
from dtfilm.cost.setup import Setup
from dtfilm.cost.stage_ledgers import CardLedger, stage_ledgers


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
