"""The cost model asked the same questions as the measurement, row by row.

Each row is one quantity of one strategy: the cost model's value, PyTorch's measured value, and
their verdict. "agrees": equal (state and counts exactly, traffic within 1%). "explained": the
difference is a known, named behaviour of PyTorch whose size is computed, not tolerated (a DDP
bucket, Adam's step counters, gloo's missing reduce-scatter ...); measured must equal the cost
model plus that amount exactly. Anything else "DIFFERS".
"""

from __future__ import annotations

from typing import Any

from dtfilm.cost import builtin_layer, estimate, overlap, parse_value, resolve
from dtfilm.cost.estimate import card_ledgers
from dtfilm.cost.setup_checks import build_setup
from dtfilm.errors import Where
from dtfilm.validate.data_rows import ddp_rows, fsdp_rows, zero1_rows
from dtfilm.validate.model import Shape
from dtfilm.validate.model_rows import cp_rows, ep_rows, pp_rows, tp_rows
from dtfilm.validate.rows import EXPERTS, TOP_K, Row, same_value


def cost_inputs(strategy: str, ranks: int, shape: Shape, pp_micro_batches: int) -> dict[str, Any]:
    """The cost model's inputs for the run: same shape, fp32, Adam, one node of `ranks` cards."""
    plan = {
        "ddp": {"zero": 0},
        "zero1": {"zero": 1},
        "fsdp": {"zero": 3},
        "tp": {"tp": ranks},
        "pp": {"pp": ranks, "schedule": "gpipe"},
        "cp": {"cp": ranks},
        "ep": {"ep": ranks, "experts": EXPERTS, "top_k": TOP_K, "expert_ffn": shape.ffn},
        "overlap": {"zero": 0, "overlap": "framework"},
    }[strategy]
    micro_batches = pp_micro_batches if strategy == "pp" else 1
    return {
        **shape.cost_inputs(),
        "precision": "fp32",
        "cards": ranks,
        "cards_per_node": ranks,
        "micro_batches": micro_batches,
        **plan,
    }


def ask_cost_model(inputs: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, float]]]:
    layer = {k: parse_value(k, v, "flag", Where(flag=f"--{k}")) for k, v in inputs.items()}
    values = resolve([builtin_layer(), layer])
    setup, _ = build_setup(values)
    return estimate(values), card_ledgers(setup)


def rows_for(strategy: str, ranks: list[dict[str, Any]], n: int, shape: Shape, pp_micro_batches: int) -> list[Row]:
    cost, ledgers = ask_cost_model(cost_inputs(strategy, n, shape, pp_micro_batches))
    ranks = sorted(ranks, key=lambda r: r["rank"])
    if strategy == "ddp":
        return ddp_rows(cost, ranks, n)
    if strategy == "zero1":
        return zero1_rows(cost, ranks, n)
    if strategy == "fsdp":
        return fsdp_rows(cost, ranks, n, shape)
    if strategy == "tp":
        return tp_rows(cost, ranks, n, shape)
    if strategy == "cp":
        return cp_rows(cost, ranks, n)
    if strategy == "ep":
        return ep_rows(cost, ranks, n, shape)
    if strategy == "overlap":
        return overlap_rows("overlap", cost, ranks)
    return pp_rows(cost, ledgers, ranks, n)


def model_buckets(cost: dict[str, Any], cap_mb: float) -> tuple[int, float]:
    """The cost model's bucket count at the run's cap, and the gradient bytes that give it at the
    model's own bucket size: overlap.dp_buckets is ceil(gradient bytes / bucket_bytes) at the
    estimate's bucket_bytes (DDP's 25 MiB default), asked at `cap_mb` by scaling the gradients by
    bucket_bytes / cap."""
    scaled = cost["comm"]["gradient_buffer"] * cost["overlap"]["dp_buckets"]["bucket_bytes"] / (cap_mb * 2**20)
    return int(overlap.dp_buckets(scaled)), scaled


def overlap_rows(label: str, cost: dict[str, Any], ranks: list[dict[str, Any]]) -> list[Row]:
    """DDP's buckets against the cost model's `framework` overlap: as many buckets as the model
    counts, each all-reduce issued as its bucket fills, in order, all but the last before the
    backward pass computes its last gradient."""
    cap = ranks[0]["bucket_cap_mb"]
    k, _ = model_buckets(cost, cap)
    issued = [r["issued"] for r in ranks]
    return [
        Row(label, f"gradient buckets at bucket_cap_mb {cap:g}", k, same_value([len(r["ddp_buckets"]) for r in ranks]),
            "count"),
        Row(label, "bucket all-reduces issued in the backward pass", k, same_value([len(i) for i in issued]), "count"),
        Row(label, "issued in the order the buckets fill", k,
            same_value([sum(b["bucket"] == n for n, b in enumerate(i)) for i in issued]), "count"),
        Row(label, "issued before the last gradient op ends", k - 1,
            same_value([sum(b["issued_ms"] < r["compute_end_ms"] for b in r["issued"]) for r in ranks]), "count"),
    ]  # fmt: skip


def overlap_figures(cost: dict[str, Any], ranks: list[dict[str, Any]]) -> dict[str, Any]:
    """Rank 0's timeline in ms beside the cost model's for the same figures: the buckets due as the
    backward computes (bucket i at i/k of it) and the exposed part, max(T/k, T - B (k-1)/k) for the
    all-reduces' busy time T and the backward's B (dtfilm.cost.overlap), both measured."""
    rank = min(ranks, key=lambda r: r["rank"])
    backward = rank["run_compute_end_ms"]
    spans = sorted((a["start_ms"], a["end_ms"]) for a in rank["all_reduces"])
    busy = beside = 0.0
    reach = float("-inf")
    for start, end in spans:  # the union of the spans (a bucket queues while the one before runs)
        start = max(start, reach)
        if end > start:
            busy += end - start
            beside += max(0.0, min(end, backward) - min(start, backward))
            reach = end
    k, scaled = model_buckets(cost, rank["bucket_cap_mb"])
    due = overlap.dp_bucket_timeline(busy, scaled, backward)
    runs = rank["all_reduces"]
    sizes = rank["ddp_buckets"]
    return {
        "rank": rank["rank"],
        "bucket_cap_mb": rank["bucket_cap_mb"],
        "backward_ms": backward,
        "busy_ms": busy,
        "beside_ms": beside,
        "after_ms": max(0.0, max((end for _, end in spans), default=backward) - backward),
        "ran_before_end": sum(start < backward for start, _ in spans),
        "model_after_ms": float(overlap.dp_bucketed_exposed(busy, scaled, backward)),
        "model_buckets": k,
        "buckets": [
            {
                "bucket": mark["bucket"],
                "bucket_bytes": sizes[mark["bucket"]] if mark["bucket"] < len(sizes) else 0,
                "issued_ms": mark["issued_ms"],
                # gloo's workers and NCCL's stream run them in the order issued
                "start_ms": runs[i]["start_ms"] if i < len(runs) else float("nan"),
                "end_ms": runs[i]["end_ms"] if i < len(runs) else float("nan"),
                "model_due_ms": due[i]["ready"] if i < len(due) else float("nan"),
            }
            for i, mark in enumerate(rank["issued"])
        ],
    }
