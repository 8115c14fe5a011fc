"""Card and link catalogs (vendor datasheets; see ../shared/REFERENCES.md, "Hardware")."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Link:
    """An interconnect, as one card sees it: bandwidth each way and a latency per ring step."""

    name: str
    label: str
    bytes_per_second_each_way: float
    latency_seconds: float
    # Ethernet is quoted per node and shared by the node's cards; NVLink and IB are per card.
    shared_by_node: bool = False

    def per_card_bytes_per_second(self, cards_per_node: int) -> float:
        if self.shared_by_node:
            return self.bytes_per_second_each_way / cards_per_node
        return self.bytes_per_second_each_way


# Latencies per step are an assumption (order of magnitude of NCCL's per-hop latency), named here.
LINKS: dict[str, Link] = {
    # NVLink 3 (A100 datasheet): 600 GB/s per GPU both ways = 300 GB/s each way.
    "nvlink3": Link("nvlink3", "NVLink 3", 300e9, 3e-6),
    # NVLink 4 (H100/H200 datasheet): 900 GB/s per GPU both ways = 450 GB/s each way.
    "nvlink4": Link("nvlink4", "NVLink 4", 450e9, 3e-6),
    # InfiniBand NDR: 400 Gb/s = 50 GB/s each way per port, one port per GPU.
    "infiniband-ndr": Link("infiniband-ndr", "InfiniBand NDR", 50e9, 8e-6),
    # Ethernet: 100 to 400 Gb/s per node (seed 001's bandwidth table), shared by the node's cards.
    "ethernet-400g": Link("ethernet-400g", "Ethernet 400G", 50e9, 30e-6, shared_by_node=True),
    "ethernet-100g": Link("ethernet-100g", "Ethernet 100G", 12.5e9, 30e-6, shared_by_node=True),
}
INTER_NODE_LINKS = ("infiniband-ndr", "ethernet-400g", "ethernet-100g")


@dataclass(frozen=True)
class Card:
    """A GPU: marketed memory in decimal bytes, dense peak FLOP/s per precision, its NVLink."""

    name: str
    label: str
    memory_bytes: float
    peak_flops: dict[str, float]
    nvlink: str

    def peak_for(self, precision: str) -> tuple[float, str | None]:
        """Peak FLOP/s for a precision, and a warning where the card lacks that precision."""
        if precision in self.peak_flops:
            return self.peak_flops[precision], None
        return self.peak_flops["bf16"], (
            f"{self.name} has no {precision} tensor cores: compute is timed at its bf16 peak"
        )


# Dense (no sparsity) tensor-core peaks from the datasheets; fp32 training runs on TF32 cores.
CARDS: dict[str, Card] = {
    "a100-80gb": Card("a100-80gb", "A100 80GB", 80e9, {"bf16": 312e12, "fp32": 156e12}, "nvlink3"),
    "h100-sxm-80gb": Card(
        "h100-sxm-80gb",
        "H100 SXM 80GB",
        80e9,
        {"bf16": 989e12, "fp32": 494.5e12, "fp8": 1979e12},
        "nvlink4",
    ),
    # H200: the H100's compute with 141 GB of HBM3e (REFERENCES.md).
    "h200-141gb": Card(
        "h200-141gb",
        "H200 141GB",
        141e9,
        {"bf16": 989e12, "fp32": 494.5e12, "fp8": 1979e12},
        "nvlink4",
    ),
}
