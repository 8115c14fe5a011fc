"""Card and link catalogs (vendor datasheets; see ../shared/REFERENCES.md, "Hardware")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType


@dataclass(frozen=True)
class Link:
    """An interconnect, as one card sees it: bandwidth each way and a latency per ring step."""

    name: str
    label: str
    bytes_per_second_each_way: float
    latency_seconds: float
    # Ethernet is quoted per node and shared by the node's cards; NVLink and IB are per card.
    shared_by_node: bool = False
    between_nodes: bool = False  # a link between nodes (else inside a node, between its cards)
    source: str = ""
    # The family the words name it by ("the NVLink domain of a node"): "" is its label.
    fabric: str = ""

    @property
    def fabric_name(self) -> str:
        return self.fabric or self.label

    def per_card_bytes_per_second(self, cards_per_node: int) -> float:
        if self.shared_by_node:
            return self.bytes_per_second_each_way / cards_per_node
        return self.bytes_per_second_each_way


# Latencies per step are an assumption (order of magnitude of NCCL's per-hop latency), named here.
# The built-in links, read-only: a film's own join them in its Catalog (dtfilm.cost.catalog), not here.
_LINKS: dict[str, Link] = {
    # NVLink 3 (A100 datasheet): 600 GB/s per GPU both ways = 300 GB/s each way.
    "nvlink3": Link("nvlink3", "NVLink 3", 300e9, 3e-6, fabric="NVLink"),
    # NVLink 4 (H100/H200 datasheet): 900 GB/s per GPU both ways = 450 GB/s each way.
    "nvlink4": Link("nvlink4", "NVLink 4", 450e9, 3e-6, fabric="NVLink"),
    # NVLink on the H800 (NVIDIA H800 SXM datasheet): 400 GB/s per GPU both ways = 200 GB/s each
    # way, the export variant DeepSeek-V3 was trained on (DeepSeek-V3 report, section 3.1: NVLink
    # 160 GB/s achieved, and 50 GB/s of InfiniBand per card).
    "nvlink-h800": Link(
        "nvlink-h800",
        "NVLink (H800)",
        200e9,
        3e-6,
        source="NVIDIA H800 Tensor Core GPU datasheet (SXM)",
        fabric="NVLink",
    ),
    # NVLink 5 (HGX B200 datasheet): 1.8 TB/s per GPU both ways = 900 GB/s each way.
    "nvlink5": Link("nvlink5", "NVLink 5", 900e9, 3e-6, source="NVIDIA HGX B200 datasheet", fabric="NVLink"),
    # AMD Infinity Fabric (MI300X datasheet): 7 links of 128 GB/s both ways to the other 7 GPUs of
    # a fully connected node, 896 GB/s in all = 448 GB/s each way, when a collective uses them all.
    "infinity-fabric": Link(
        "infinity-fabric",
        "Infinity Fabric",
        448e9,
        3e-6,
        source="AMD Instinct MI300X datasheet",
        fabric="Infinity Fabric",
    ),
    # InfiniBand NDR: 400 Gb/s = 50 GB/s each way per port, one port per GPU.
    "infiniband-ndr": Link("infiniband-ndr", "InfiniBand NDR", 50e9, 8e-6, between_nodes=True),
    # InfiniBand HDR (what A100 clusters run): 200 Gb/s = 25 GB/s each way per port.
    "infiniband-hdr": Link(
        "infiniband-hdr", "InfiniBand HDR", 25e9, 8e-6, between_nodes=True, source="NVIDIA ConnectX-6 HDR"
    ),
    # RoCE at 400 Gb/s per GPU: Meta's Llama 3 405B cluster ("The Llama 3 Herd of Models", section 3.3.1).
    "roce-400g": Link(
        "roce-400g", "RoCE 400G", 50e9, 8e-6, between_nodes=True, source="Llama 3 Herd of Models, section 3.3.1"
    ),
    # Omni-Path, four 100 Gb/s links per node shared by its 8 GPUs: BLOOM's Jean Zay (BLOOM paper, 3.4.1).
    "omnipath-4x100g": Link(
        "omnipath-4x100g",
        "Omni-Path 4x100G",
        50e9,
        10e-6,
        shared_by_node=True,
        between_nodes=True,
        source="BLOOM (BigScience 2022), section 3.4.1",
    ),
    # Ethernet: 100 to 400 Gb/s per node (seed 001's bandwidth table), shared by the node's cards.
    "ethernet-400g": Link("ethernet-400g", "Ethernet 400G", 50e9, 30e-6, shared_by_node=True, between_nodes=True),
    "ethernet-100g": Link("ethernet-100g", "Ethernet 100G", 12.5e9, 30e-6, shared_by_node=True, between_nodes=True),
}
LINKS: Mapping[str, Link] = MappingProxyType(_LINKS)
del _LINKS  # (only the read-only view is left)


# The built-in links between nodes (a film's catalog may add more: Catalog.inter_node_links).
INTER_NODE_LINKS = tuple(name for name, link in LINKS.items() if link.between_nodes)


# Defaults for a card whose catalog entry leaves them out: the median matmul efficiency of the
# MAMF table below, and the H100's balance of 295 FLOP per byte of HBM.
DEFAULT_MATMUL_EFFICIENCY = 0.8
DEFAULT_FLOPS_PER_HBM_BYTE = 989e12 / 3.35e12
# FlashAttention-2 reaches about 35% of an H100's peak (Shah et al. 2024, FlashAttention-3, section 1):
# attention's core runs at that share where a card names none.
DEFAULT_ATTENTION_EFFICIENCY = 0.35


@dataclass(frozen=True)
class Card:
    """A GPU: marketed memory in decimal bytes, dense peak FLOP/s per precision, its NVLink, and
    what it achieves: HBM bandwidth (bytes/s), the share of peak its best matmuls reach per
    precision, and the share its attention kernels reach."""

    name: str
    label: str
    memory_bytes: float
    peak_flops: dict[str, float]
    nvlink: str  # the link between the cards of a node (NVLink, Infinity Fabric)
    source: str = ""
    memory_bandwidth: float = 0.0  # bytes/s; 0: DEFAULT_FLOPS_PER_HBM_BYTE of the bf16 peak
    matmul_efficiency: dict[str, float] | None = None  # per precision; missing: DEFAULT_MATMUL_EFFICIENCY
    attention_efficiency: float = DEFAULT_ATTENTION_EFFICIENCY
    # The board's power limit (TDP), watts; 0: not given. Reported (`cluster.power_watts`), not
    # used by the step model: the peaks are the datasheet's at this limit.
    power_watts: float = 0.0

    def compute_precision(self, precision: str) -> str:
        """The precision its matmuls run in when training asks for `precision`: bf16 where it
        has no tensor cores for that one (an A100 keeps fp8 weights but multiplies in bf16)."""
        return precision if precision in self.peak_flops else "bf16"

    def peak_for(self, precision: str) -> tuple[float, str | None]:
        """Peak FLOP/s for a precision, and a warning where the card lacks that precision."""
        run_as = self.compute_precision(precision)
        if run_as == precision:
            return self.peak_flops[precision], None
        return self.peak_flops[run_as], (
            f"{self.name} has no {precision} tensor cores: compute is timed at its {run_as} peak"
        )

    def matmul_share(self, precision: str) -> float:
        """The share of peak this card's best matmuls reach (at the precision it runs them in)."""
        shares = self.matmul_efficiency or {}
        run_as = self.compute_precision(precision)
        return shares.get(run_as, shares.get("bf16", DEFAULT_MATMUL_EFFICIENCY))

    @property
    def hbm_bytes_per_second(self) -> float:
        return self.memory_bandwidth or self.peak_flops["bf16"] / DEFAULT_FLOPS_PER_HBM_BYTE


# Dense (no sparsity) tensor-core peaks from the datasheets; fp32 training runs on TF32 cores.
# HBM bandwidth from the datasheets. Matmul efficiency: Maximum Achievable Matmul FLOPS over the
# datasheet peak, measured per card (Bekman, "Machine Learning Engineering", compute/accelerator,
# "Maximum Achievable Matmul FLOPS comparison table"): A100 SXM 86.9% bf16; H100 SXM 80.3% bf16,
# 70.9% fp8 (the table: "H200 is the same" in bf16, 73.4% fp8); B200 77.6% bf16, 76.3% fp8; MI300X
# 51.4% bf16. Attention: FlashAttention-2 reaches 50-73% of an A100's peak (Dao 2023, abstract;
# 0.6 taken for forward and backward), about 35% of an H100's (Shah et al. 2024).
# Power: the datasheets' maximum thermal design power of the SXM/OAM boards (A100 SXM 400 W,
# H100 SXM and H200 SXM up to 700 W, HGX B200 1,000 W, MI300X 750 W).
_H100 = Card(
    "h100-sxm-80gb",
    "H100 SXM 80GB",
    80e9,
    {"bf16": 989e12, "fp32": 494.5e12, "fp8": 1979e12},
    "nvlink4",
    "NVIDIA H100 Tensor Core GPU datasheet (SXM)",
    memory_bandwidth=3.35e12,
    matmul_efficiency={"bf16": 0.803, "fp8": 0.709},
    power_watts=700,
)

# The built-in cards, read-only: a film's own join them in its Catalog (dtfilm.cost.catalog).
_CARDS: dict[str, Card] = {
    "a100-80gb": Card(
        "a100-80gb",
        "A100 80GB",
        80e9,
        {"bf16": 312e12, "fp32": 156e12},
        "nvlink3",
        "NVIDIA A100 Tensor Core GPU datasheet (SXM 80GB)",
        memory_bandwidth=2.039e12,
        matmul_efficiency={"bf16": 0.869},
        attention_efficiency=0.6,
        power_watts=400,
    ),
    "h100-sxm-80gb": _H100,
    # H800 SXM: the H100's compute and memory with NVLink cut to 400 GB/s both ways (NVIDIA H800
    # Tensor Core GPU datasheet); DeepSeek-V3's card (DeepSeek-V3 report, section 3.1).
    "h800-sxm-80gb": replace(
        _H100,
        name="h800-sxm-80gb",
        label="H800 SXM 80GB",
        nvlink="nvlink-h800",
        source="NVIDIA H800 Tensor Core GPU datasheet (SXM)",
    ),
    # H200: the H100's compute with 141 GB of HBM3e at 4.8 TB/s (REFERENCES.md; H200 datasheet).
    "h200-141gb": Card(
        "h200-141gb",
        "H200 141GB",
        141e9,
        {"bf16": 989e12, "fp32": 494.5e12, "fp8": 1979e12},
        "nvlink4",
        "NVIDIA H200 Tensor Core GPU datasheet (SXM)",
        memory_bandwidth=4.8e12,
        matmul_efficiency={"bf16": 0.803, "fp8": 0.734},
        power_watts=700,
    ),
    # HGX B200 at 1,000 W: 180 GB (1,440 GB for 8 GPUs), dense BF16 2.25 PFLOP/s, FP8 4.5,
    # TF32 1.1 (the datasheet's sparse figures halved); HBM3e at 8 TB/s.
    "b200-180gb": Card(
        "b200-180gb",
        "B200 180GB",
        180e9,
        {"bf16": 2250e12, "fp32": 1100e12, "fp8": 4500e12},
        "nvlink5",
        "NVIDIA HGX B200 datasheet",
        memory_bandwidth=8e12,
        matmul_efficiency={"bf16": 0.776, "fp8": 0.763},
        power_watts=1000,
    ),
    # MI300X: 192 GB HBM3 at 5.3 TB/s, dense BF16 1,307.4 TFLOP/s, FP8 2,614.9, TF32 653.7.
    "mi300x-192gb": Card(
        "mi300x-192gb",
        "MI300X 192GB",
        192e9,
        {"bf16": 1307.4e12, "fp32": 653.7e12, "fp8": 2614.9e12},
        "infinity-fabric",
        "AMD Instinct MI300X datasheet",
        memory_bandwidth=5.3e12,
        matmul_efficiency={"bf16": 0.514},
        power_watts=750,
    ),
}
CARDS: Mapping[str, Card] = MappingProxyType(_CARDS)
del _CARDS  # (only the read-only view is left)
BUILTIN_CARDS = frozenset(CARDS)
BUILTIN_LINKS = frozenset(LINKS)
