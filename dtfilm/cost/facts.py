"""The estimate's sections that restate the setup (model, cluster, plan, formats, bytes a
parameter, the whole state, the links): functions of the Setup alone, as typed records."""

from __future__ import annotations

import math

from dtfilm.cost import ledger, memory, pipeline
from dtfilm.cost.models import active_param_count, param_count
from dtfilm.cost.results import (
    BytesPerParamFacts,
    ClusterFacts,
    LinkFacts,
    ModelFacts,
    PlanFacts,
    StateFacts,
)
from dtfilm.cost.setup import Setup


def model_facts(setup: Setup) -> ModelFacts:
    shape = setup.shape
    return ModelFacts(
        name=setup.model,
        label=shape.label,
        layers=shape.layers,
        hidden=shape.hidden,
        heads=shape.heads,
        kv_heads=shape.kv_heads,
        ffn=shape.ffn,
        vocab=shape.vocab,
        architecture_params=param_count(shape),
        mlp=shape.mlp,
        tied_embeddings=shape.tied_embeddings,
        # what a catalog entry left to its default (mlp swiglu, tied_embeddings false)
        defaulted=list(shape.defaulted),
        experts=shape.experts,
        top_k=shape.top_k,
        expert_ffn=shape.expert_ffn,
        shared_ffn=shape.shared_ffn,
        dense_layers=shape.dense_layers,
        capacity_factor=shape.capacity_factor,
        attention="mla" if shape.latent is not None else "mha",
        architecture_active_params=active_param_count(shape),
    )


def cluster_facts(setup: Setup) -> ClusterFacts:
    """The cards, their links (each way, per card: Ethernet's node bandwidth shared by the node's
    cards), and what the step model times the card with (dtfilm.cost.efficiency)."""
    intra = setup.intra_node  # the node's link between its cards
    peak, _ = setup.card.peak_for(setup.precision)
    return ClusterFacts(
        gpu=setup.card.name,
        gpu_label=setup.card.label,
        cards=setup.cards,
        cards_per_node=setup.cards_per_node,
        nodes=setup.nodes,
        capacity_bytes=setup.card.memory_bytes,
        intra_node_link=intra.name,
        intra_node_link_label=intra.label,
        # the family the words name the node's fabric by: "NVLink" for NVLink 3, 4 and 5
        intra_node_fabric=intra.fabric_name,
        inter_node_link=setup.inter_node.name,
        inter_node_link_label=setup.inter_node.label,
        # the node's cards share the inter-node link's bandwidth (Ethernet, Omni-Path)
        inter_node_shared=setup.inter_node.shared_by_node,
        intra_node_bytes_per_second=intra.per_card_bytes_per_second(setup.cards_per_node),
        inter_node_bytes_per_second=setup.inter_node.per_card_bytes_per_second(setup.cards_per_node),
        peak_flops_per_second=peak,
        # the precision that peak is at: bf16 where the card lacks the one asked for
        peak_precision=setup.card.compute_precision(setup.precision),
        memory_bytes_per_second=setup.card.hbm_bytes_per_second,
        matmul_efficiency_share=setup.card.matmul_share(setup.precision),
        attention_efficiency_share=setup.card.attention_efficiency,
        power_watts=setup.card.power_watts,
    )


def plan_facts(setup: Setup) -> PlanFacts:
    return PlanFacts(
        dp=setup.dp,
        tp=setup.tp,
        pp=setup.pp,
        cp=setup.cp,
        zero=setup.zero,
        schedule=setup.schedule,
        virtual_stages=setup.virtual_stages,
        # Cards that share weights (dp x cp): gradients reduce and ZeRO shards over them.
        shard_group=setup.shard_group,
        sequence_parallel=setup.sequence_parallel,
        recompute=setup.recompute,
        flash_attention=setup.flash_attention,
        stage_layers=pipeline.stage_layers(setup.shape.layers, setup.pp),
        ep=setup.ep,
        # Cards that hold the same experts (dp x cp / ep): the experts' gradients reduce and
        # their state shards over them (Megatron-Core's expert data-parallel group).
        expert_data_parallel=setup.expert_data_parallel,
        routing_imbalance=setup.routing_imbalance,
    )


def formats(setup: Setup) -> dict[str, str]:
    """The number format each state part is kept in ("" where the part is absent)."""
    return {**memory.PART_FORMATS[setup.precision], "activations": memory.ACTIVATION_FORMAT[setup.precision]}


def bytes_per_param(setup: Setup) -> BytesPerParamFacts:
    per = memory.BYTES_PER_PARAM[setup.precision]
    return BytesPerParamFacts(
        weights=per.weights,
        gradients=per.gradients,
        master_weights=per.master_weights,
        adam_m=per.adam_m,
        adam_v=per.adam_v,
        optimizer=per.master_weights + per.adam_m + per.adam_v,
        total=per.total,
    )


def state_facts(setup: Setup) -> StateFacts:
    """The whole model's training state, unsharded (16 bytes a parameter in bf16), and the whole
    cards it takes just to hold it (no activations, nothing spare)."""
    per = memory.BYTES_PER_PARAM[setup.precision]
    cards_to_hold = setup.params * per.total / setup.card.memory_bytes
    return StateFacts(
        total_bytes=setup.params * per.total,
        cards_to_hold=cards_to_hold,
        cards_needed=math.ceil(cards_to_hold - 1e-9),
        with_fp8_copies_bytes=setup.params * (per.total + ledger.FP8_RECIPE_EXTRA_BYTES_PER_PARAM[setup.precision]),
    )


def link_facts(setup: Setup) -> dict[str, LinkFacts]:
    """The links this card can use, as one card sees them: its node's link and every link
    between nodes, widest first, bandwidth each way (Ethernet's shared by the node)."""
    cards_per_node = setup.cards_per_node
    usable = [setup.intra_node, *(link for link in setup.catalog.links.values() if link.between_nodes)]
    return {
        link.name: LinkFacts(
            label=link.label,
            bytes_per_second=link.bytes_per_second_each_way,
            per_card_bytes_per_second=link.per_card_bytes_per_second(cards_per_node),
            latency_seconds=link.latency_seconds,
            shared_by_node=link.shared_by_node,
        )
        for link in sorted(usable, key=lambda link: -link.per_card_bytes_per_second(cards_per_node))
    }
