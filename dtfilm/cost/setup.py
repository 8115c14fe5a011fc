"""The resolved inputs of one estimate: model, cluster, plan and training, already validated."""

from __future__ import annotations

from dataclasses import dataclass, field

from dtfilm.cost.catalog import BUILTIN_CATALOG, Catalog
from dtfilm.cost.hardware import Card, Link
from dtfilm.cost.models import ModelShape, active_param_count, param_count


@dataclass(frozen=True)
class Setup:
    """Everything the cost model needs; built by `dtfilm.cost.setup_checks.build_setup`."""

    model: str
    shape: ModelShape
    params: float
    card: Card
    cards: int
    cards_per_node: int
    inter_node: Link
    dp: int
    tp: int
    pp: int
    cp: int
    zero: int
    schedule: str
    virtual_stages: int
    sequence_parallel: bool
    precision: str
    seq_len: int
    micro_batch_size: int
    micro_batches: int
    recompute: str  # none, selective or full (memory.RECOMPUTE_MODES)
    flash_attention: bool
    mfu: float
    tokens: float
    network: str = "nccl"  # network.NETWORKS: collectives as NCCL runs them, or the seeds' single link
    overlap: str = "none"  # overlap.OVERLAP_MODES: the whiteboard (none) or what frameworks hide
    tp_overlap: str = "gemm"  # overlap.TP_OVERLAP_MODES: how TP's collectives hide under `framework`
    dp_overlap: str = "buckets"  # overlap.DP_OVERLAP_MODES: whether DP's all-reduce hides under `framework`
    pp_overlap: str = "interleaved"  # overlap.PP_OVERLAP_MODES: whether send/receive hides under `framework`
    fp8_attention: bool = False  # under fp8, attention's core in fp8 too (else bf16, as fp8 recipes run it)
    ep: int = 1  # expert parallelism: the routed experts split over ep of the dp replicas
    routing_imbalance: float = 1.0  # the busiest expert's routed tokens over the mean
    # the catalog its names were resolved in: the card's own link, and the links it may use
    catalog: Catalog = field(default=BUILTIN_CATALOG, repr=False)

    @property
    def intra_node(self) -> Link:
        """The link between a node's cards: the card's, in the setup's catalog."""
        return self.catalog.links[self.card.nvlink]

    @property
    def shard_group(self) -> int:
        """Cards that hold the same weights: the data-parallel replicas times the context-parallel
        ranks. Gradients reduce over them and ZeRO shards over them (Megatron-LM's data-parallel
        group with context parallelism)."""
        return self.dp * self.cp

    @property
    def params_active(self) -> float:
        """Parameters a token multiplies by (k routed experts of E), rescaled as `params` is;
        `params` itself for a dense model."""
        if not self.shape.moe:
            return self.params
        return self.params * active_param_count(self.shape) / param_count(self.shape)

    @property
    def expert_data_parallel(self) -> int:
        """Cards holding the same experts: the shard group over EP (Megatron-Core's expert
        data-parallel group); ZeRO shards the experts' state over it."""
        return self.shard_group // self.ep

    @property
    def checkpointing(self) -> bool:
        """Gradient checkpointing: full recomputation of every layer's forward."""
        return self.recompute == "full"

    @property
    def nodes(self) -> int:
        return -(-self.cards // self.cards_per_node)
