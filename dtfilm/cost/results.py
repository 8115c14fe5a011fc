"""The estimate's results as typed, frozen records whose field names carry their units, and the
contract's JSON object generated from them (`as_json`).

A field named with its unit (`total_bytes`, `step_seconds`) keeps the contract's key (`total`) in
its metadata, so `estimate --json`, docs/contract.md and every template path (`{memory.total}`,
which `dtfilm.paths.lookup` reads from that object) stay as they were: the JSON, and so the paths,
are these types written out, in their fields' order.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from functools import cache
from typing import Any, TypeVar, dataclass_transform

_Record = TypeVar("_Record")


def key(name: str) -> Any:
    """A field whose contract key is `name` (the field's own name carries the unit)."""
    return field(metadata={"key": name})


@dataclass_transform(frozen_default=True, field_specifiers=(field, key))
def record(cls: type[_Record]) -> type[_Record]:
    """A frozen, slotted dataclass whose fields may be `key(...)`: declared as a dataclass transform
    naming `key` as a field specifier, so a type checker reads `key(...)` as a field without a
    default (as it is at run time), not as a default value."""
    return dataclass(frozen=True, slots=True)(cls)


def as_json(value: Any) -> Any:
    """The contract's JSON of a result: records as objects keyed by their fields' contract
    keys, in field order; mappings and sequences element by element; numbers as they are."""
    if value is None or isinstance(value, (str, int, float)):  # most of a result: its leaves first
        return value
    if isinstance(value, dict):
        return {name: as_json(item) for name, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_json(item) for item in value]
    if is_dataclass(value) and not isinstance(value, type):
        return {key: as_json(getattr(value, name)) for name, key in _keys(type(value))}
    return value


@cache
def _keys(record: type) -> tuple[tuple[str, str], ...]:
    """A record's (field, contract key) pairs, in field order."""
    return tuple((f.name, f.metadata.get("key", f.name)) for f in fields(record))


def paths(record: type, prefix: str = "") -> list[str]:
    """The template paths a record's type defines (its nested records' too): `memory.total`.
    Mappings and lists are named as groups (their keys depend on the setup)."""
    out = []
    for f in fields(record):
        path = f"{prefix}{f.metadata.get('key', f.name)}"
        kind = f.type if isinstance(f.type, type) else _RECORDS.get(str(f.type))
        out.extend(paths(kind, f"{path}.") if kind is not None and is_dataclass(kind) else [path])
    return out


@record
class ModelFacts:
    """The model's shape as resolved (a catalog entry's defaults named in `defaulted`)."""

    name: str
    label: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    architecture_params: int
    mlp: str
    tied_embeddings: bool
    defaulted: list[str]
    experts: int  # routed experts per MoE layer; 0 for a dense model
    top_k: int
    expert_ffn: int
    shared_ffn: int
    dense_layers: int
    capacity_factor: float  # 0: dropless routing
    attention: str  # "mha" (the film's, with GQA) or "mla" (priced by its parameters only)
    architecture_active_params: int


@record
class ClusterFacts:
    """The cards and their links, bandwidths each way per card, and what the step times them with."""

    gpu: str
    gpu_label: str
    cards: int
    cards_per_node: int
    nodes: int
    capacity_bytes: float = key("capacity")
    intra_node_link: str
    intra_node_link_label: str
    intra_node_fabric: str
    inter_node_link: str
    inter_node_link_label: str
    inter_node_shared: bool
    intra_node_bytes_per_second: float = key("intra_node_bandwidth")
    inter_node_bytes_per_second: float = key("inter_node_bandwidth")
    peak_flops_per_second: float = key("peak_flops")
    peak_precision: str
    memory_bytes_per_second: float = key("memory_bandwidth")
    matmul_efficiency_share: float = key("matmul_efficiency")
    attention_efficiency_share: float = key("attention_efficiency")
    power_watts: Any


@record
class PlanFacts:
    """The plan as resolved; `shard_group` the dp x cp cards that share weights."""

    dp: int
    tp: int
    pp: int
    cp: int
    zero: int
    schedule: str
    virtual_stages: int
    shard_group: int
    sequence_parallel: bool
    recompute: str
    flash_attention: bool
    stage_layers: list[int]
    ep: int
    expert_data_parallel: int
    routing_imbalance: float


@record
class BytesPerParamFacts:
    weights: float
    gradients: float
    master_weights: float
    adam_m: float
    adam_v: float
    optimizer: float
    total: float


@record
class StateFacts:
    """The whole model's training state, unsharded, and the whole cards it takes to hold it."""

    total_bytes: float = key("total")
    cards_to_hold: float
    cards_needed: int
    # with an fp8 recipe's copies beside the fp8 weights (dtfilm.cost.ledger: 3 bytes a parameter
    # under fp8, none otherwise): what an fp8 run holds, against the bf16 state it is weighed with
    with_fp8_copies_bytes: float = key("with_fp8_copies")


@record
class ReserveParts:
    cuda_context_bytes: float = key("cuda_context")
    nccl_buffers_bytes: float = key("nccl_buffers")
    nccl_communicators: int


@record
class Memory:
    """The fullest card's ledger (every part in bytes), against its capacity, with FSDP's
    gathered layer beside it and every stage's parts."""

    weights_bytes: float = key("weights")
    gradients_bytes: float = key("gradients")
    master_weights_bytes: float = key("master_weights")
    adam_m_bytes: float = key("adam_m")
    adam_v_bytes: float = key("adam_v")
    activations_bytes: float = key("activations")
    buffers_bytes: float = key("buffers")
    recompute_working_set_bytes: float = key("recompute_working_set")
    logits_bytes: float = key("logits")
    fp8_weight_copies_bytes: float = key("fp8_weight_copies")
    reserve_bytes: float = key("reserve")
    reserve_parts: ReserveParts
    fp8_weight_copy_bytes_per_param: int
    logits_fp32_copies: int
    static_bytes: float = key("static")
    total_bytes: float = key("total")
    capacity_bytes: float = key("capacity")
    fits: bool
    over_capacity_ratio: float = key("over_capacity")
    headroom_bytes: float = key("headroom")
    fit_margin_bytes: float = key("fit_margin")
    params_on_card: float
    layers: int
    micro_batches_in_flight: float
    card: dict[str, int]
    gathered_layer_bytes: float = key("gathered_layer")
    layer_weights_bytes: float = key("layer_weights")
    peak_with_gathered_bytes: float = key("peak_with_gathered")
    stages: list[dict[str, float]]
    activation_bytes_per_token_per_hidden: float
    activations_per_layer_bytes: float = key("activations_per_layer")


@record
class LinkFacts:
    label: str
    bytes_per_second: float = key("bandwidth")
    per_card_bytes_per_second: float = key("per_card_bandwidth")
    latency_seconds: float = key("latency")
    shared_by_node: bool


@record
class CallRow:
    """One kind of collective in a step: its calls, as NCCL runs them, where the group sits, and
    the bytes a card puts on its fabric link and its NIC (comm.Collective, written out)."""

    group: str
    collective: str
    count: int
    group_size: int
    buffer_bytes: float
    bytes_each: float
    steps_each: int
    ring_steps_per_phase: int
    total_bytes: float = key("bytes")
    link: str
    seconds: float
    calls: int
    algorithm: str
    cards_on_each_node: int
    nodes_spanned: int
    fabric_bytes: float
    nic_bytes: float
    latency_seconds: float
    seconds_each: float


@record
class GroupTraffic:
    seconds: float
    exposed_seconds: float
    total_bytes: float = key("bytes")


@record
class Comm:
    """The traffic card's step on the wire: bytes and seconds by group, what the step waits for
    under `inputs.overlap`, and every kind of call."""

    dp_bytes: float = key("dp")
    tp_bytes: float = key("tp")
    pp_bytes: float = key("pp")
    cp_bytes: float = key("cp")
    ep_bytes: float = key("ep")
    total_bytes: float = key("total")
    # of those, what the card puts on its own NIC (the rest stays on its node's fabric): NCCL
    # runs a ring over every NIC of the node, so a group across nodes crosses on each card's
    # own link with 1/g of the ring's bytes (dtfilm.cost.network)
    nic_bytes: float
    seconds: float
    seconds_by_group: dict[str, float]
    exposed_seconds_by_group: dict[str, float]
    hidden_seconds_by_group: dict[str, float]
    exposed_seconds: float
    hidden_seconds: float
    groups: dict[str, GroupTraffic]
    links: dict[str, str]
    link_labels: dict[str, str]
    gradient_buffer_bytes: float = key("gradient_buffer")
    dp_allreduce_limit_bytes: float = key("dp_allreduce_limit")
    dp_allreduce_limit_factor: int
    breakdown: list[CallRow]
    collectives: dict[str, CallRow]
    tp_exchanges: dict[str, int]
    fsdp_vs_dp_ratio: float = key("fsdp_vs_dp")


@record
class DpBuckets:
    count: int
    under_backward: bool
    bucket_bytes: int
    bucket_seconds: float
    timeline: list[dict[str, float]]


@record
class FsdpUnits:
    units: int
    prefetched: bool
    gather_seconds: float
    reduce_scatter_seconds: float
    unit_forward_seconds: float
    unit_backward_seconds: float
    hidden: bool
    hides_at_micro_batch_size: int
    hides_at_seq_len: int
    timeline: list[dict[str, float]]


@record
class Overlap:
    """What a timeline of one card's step draws (dtfilm.cost.overlap), whatever the mode."""

    mode: str
    slowdown_share: float
    forward_seconds: float
    backward_seconds: float
    dp_buckets: DpBuckets
    fsdp_units: FsdpUnits


@record
class Pipeline:
    bubble_fraction: float
    bubble_overhead: float
    idle_slots: int
    row_slots: int


@record
class StageSeconds:
    """The busiest stage's card, one micro-batch forward and backward, by term."""

    matmul_seconds: float = key("matmul")
    attention_seconds: float = key("attention")
    memory_seconds: float = key("memory")
    overhead_seconds: float = key("overhead")
    total_seconds: float = key("total")
    stage: int


@record
class Compute:
    """The step: its compute, bubble and traffic, the FLOPs behind it, and MFU."""

    tokens_per_step: int
    flops_per_token_per_param: int
    forward_passes: int
    recompute_overhead: float
    flops_per_step: float
    compute_seconds: float
    bubble_seconds: float
    comm_seconds: float
    exposed_comm_seconds: float
    overlap_slowdown_seconds: float
    overlap_slowdown_share: float
    step_seconds: float
    stage_seconds: StageSeconds
    cp_contiguous_imbalance: float
    attention_seconds_per_step: float
    attention_seconds_per_step_contiguous: float
    compute_efficiency: float
    hardware_flops_per_step: float
    predicted_mfu: float
    tokens_per_second_per_card: float
    training_flops: float
    training_seconds: float
    training_steps: float
    training_seconds_from_steps: float
    training_seconds_one_card: float


@record
class Estimate:
    """Every output of the cost model for one setup (the contract's object, less its inputs,
    training and warnings, which `estimate.estimate` adds around it)."""

    params: float
    params_active: float  # what a token multiplies by: `params` for a dense model
    model: ModelFacts
    cluster: ClusterFacts
    plan: PlanFacts
    formats: dict[str, str]
    bytes_per_param: BytesPerParamFacts
    state: StateFacts
    memory: Memory
    links: dict[str, LinkFacts]
    comm: Comm
    overlap: Overlap
    pipeline: Pipeline
    compute: Compute


# the records by name, for `paths` (field types are strings under `from __future__ import annotations`)
_RECORDS: dict[str, type] = {
    record.__name__: record
    for record in (
        ModelFacts, ClusterFacts, PlanFacts, BytesPerParamFacts, StateFacts, ReserveParts, Memory, LinkFacts,
        CallRow, GroupTraffic, Comm, DpBuckets, FsdpUnits, Overlap, Pipeline, StageSeconds, Compute, Estimate,
    )
}  # fmt: skip
