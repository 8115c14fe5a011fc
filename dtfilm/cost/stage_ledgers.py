"""One card's memory ledger of each pipeline stage, for every plan at once: the training state
ZeRO shards, the activations and the complete ledger's other terms (dtfilm.cost.ledger), as a
(plans x stages) `CardLedger` that dtfilm.cost.model reduces to the cards it keeps."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from dtfilm.cost import ledger as terms
from dtfilm.cost import memory, pipeline
from dtfilm.cost.layouts import SCHEDULE_NAMES, Layouts
from dtfilm.cost.models import moe_layers, param_count
from dtfilm.cost.setup import Setup


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
    cards that share weights (ZeRO, sections 3.1 and 5; memory.gradients_sharded); of them the
    `routed` experts' over the cards that hold the same experts (dp x cp / ep: Megatron-Core's
    expert data-parallel group)."""
    if routed is None:
        return _sharded_state(setup, plans, params, plans.shard_group)
    shared = _sharded_state(setup, plans, params - routed, plans.shard_group)
    experts = _sharded_state(setup, plans, routed, plans.expert_data_parallel)
    return {name: shared[name] + experts[name] for name in shared}


def _sharded_state(setup: Setup, plans: Layouts, params: np.ndarray, group: np.ndarray) -> dict[str, np.ndarray]:
    """Training state bytes of `params` ZeRO-sharded over `group` cards (memory.gradients_sharded:
    ZeRO-2's gradients only at one micro-batch a step)."""
    per = memory.BYTES_PER_PARAM[setup.precision]
    shards = group[:, None]
    zero = plans.zero[:, None]
    optimizer_share = np.where(zero >= 1, 1 / shards, 1.0)
    gradient_share = np.where(memory.gradients_sharded(zero, plans.micro_batches[:, None]), 1 / shards, 1.0)
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
