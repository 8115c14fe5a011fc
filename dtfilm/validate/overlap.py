"""DDP's bucketed all-reduce beside the backward pass, from the profiler's timestamps (gloo on CPU
ranks, NCCL with --gpu): when DDP issues each bucket's all-reduce, and when it runs, against when
the backward computes its last gradient; what dtfilm.cost.overlap's `framework` model of DDP
assumes (buckets go as they fill, the last one exposed)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile, record_function

from dtfilm.validate.model import Shape, TinyGPT, batch, loss_of

# DDP's bucket cap for the check, in MiB. At the 25 MiB default the small model's 12 MB of
# gradients make one bucket (two with DDP's 1 MiB first bucket) and nothing could overlap. At
# 2.5 MiB each bucket holds one transformer block's gradients: DDP closes a bucket at the first
# tensor edge at or past the cap, so the count is the cost model's ceil(gradients / cap) only where
# the tensors fill the cap evenly (at 2 MiB DDP makes the same 5 buckets, the rule 7).
BUCKET_CAP_MB = 2.5
STEPS = 3  # the first builds DDP's buckets in the order the gradients arrive, the second uses them
GRADIENT_OP = "autograd::engine::evaluate_function: "
ACCUMULATE = "AccumulateGrad"  # the node that adds a gradient into .grad, where DDP's hooks fire
ISSUED = "dtfilm:bucket "  # the profiler's mark of the moment DDP hands bucket i to its all-reduce


def issue_marked(state, bucket):  # type: ignore[no-untyped-def]
    """DDP's comm hook: PyTorch's own allreduce_hook (what DDP's built-in all-reduce does: divide
    by the world size, all-reduce), called where DDP calls the built-in one, as the bucket fills.
    The mark is when DDP issued it; gloo's own event starts when a gloo worker runs it, which on
    a busy CPU can be later. (No annotations: DDP compares them with dist.GradBucket and
    Future[Tensor], and under `from __future__ import annotations` they are strings.)"""
    # (here: torch.distributed's parts, loaded by the check that runs)
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

    with record_function(f"{ISSUED}{bucket.index()}"):
        return allreduce_hook(state, bucket)


def _ms(microseconds: float, origin: float) -> float:
    return (microseconds - origin) / 1000


def _elements(event: Any) -> int:
    shape = event.input_shapes[0] if event.input_shapes else []
    elements = 1
    for size in shape:
        elements *= size
    return elements


def timeline(events: list[Any], gpu: bool) -> dict[str, Any]:
    """The backward pass and DDP's all-reduces from a profile of `loss.backward()`, in ms from
    the backward's first gradient op. `compute_end_ms`: the last op that computes a gradient ends
    (not AccumulateGrad, which only adds one into .grad and fires DDP's hook); `issued`: when DDP
    issued each bucket; `all_reduces`: when each ran, by gloo's events on CPU, by NCCL's kernels
    on CUDA cards (against `run_compute_end_ms`: the last other kernel that starts before the
    last all-reduce, since DDP copies the reduced buckets back after it)."""
    ops = [e for e in events if e.name.startswith(GRADIENT_OP)]
    origin = min(e.time_range.start for e in ops)
    compute_end = _ms(max(e.time_range.end for e in ops if ACCUMULATE not in e.name), origin)
    marks = sorted((e for e in events if e.name.startswith(ISSUED)), key=lambda e: e.time_range.start)
    result: dict[str, Any] = {
        "compute_end_ms": compute_end,
        "issued": [{"bucket": int(e.name[len(ISSUED) :]), "issued_ms": _ms(e.time_range.start, origin)} for e in marks],
    }
    if not gpu:
        runs = sorted((e for e in events if e.name == "gloo:all_reduce"), key=lambda e: e.time_range.start)
        spans = [(e.time_range.start, e.time_range.end, _elements(e) * 4) for e in runs]
        return {**result, "run_compute_end_ms": compute_end, "all_reduces": _spans(spans, origin)}
    kernels = sorted(
        (e for e in events if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA),
        key=lambda e: e.time_range.start,
    )
    nccl = [e for e in kernels if "nccl" in e.name.lower()]
    if not nccl:  # a profiler without CUPTI sees no kernels: the rows on issuance still stand
        return {**result, "run_compute_end_ms": compute_end, "all_reduces": []}
    last = nccl[-1].time_range.start
    computing = [e.time_range.end for e in kernels if "nccl" not in e.name.lower() and e.time_range.start < last]
    return {
        **result,
        "run_compute_end_ms": _ms(max(computing), origin),
        "all_reduces": _spans([(e.time_range.start, e.time_range.end, 0) for e in nccl], origin),  # no sizes
    }


def _spans(spans: list[tuple[float, float, int]], origin: float) -> list[dict[str, float]]:
    return [{"start_ms": _ms(a, origin), "end_ms": _ms(b, origin), "bytes": size} for a, b, size in spans]


def run_overlap_rank(rank: int, ranks: int, port: int, out_dir: str, gpu: bool) -> None:
    """One rank: DDP at BUCKET_CAP_MB, three steps, the third's backward profiled."""
    # (here: torch.distributed's parts, loaded by the check that runs)
    from torch.nn.parallel import DistributedDataParallel

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    device = torch.device("cuda", rank) if gpu else torch.device("cpu")
    if gpu:
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if gpu else "gloo", rank=rank, world_size=ranks)
    try:
        shape = Shape()
        torch.manual_seed(0)  # every rank starts from the same weights
        model = DistributedDataParallel(
            TinyGPT(shape).to(device), bucket_cap_mb=BUCKET_CAP_MB, device_ids=[rank] if gpu else None
        )
        model.register_comm_hook(None, issue_marked)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA] if gpu else [ProfilerActivity.CPU]
        for i in range(STEPS):
            tokens, targets = (t.to(device) for t in batch(shape, 1, seed=1000 * i + rank))
            loss = loss_of(model(tokens), targets)
            if i == STEPS - 1:
                with profile(activities=activities, record_shapes=True) as prof:
                    loss.backward()
                    if gpu:
                        torch.cuda.synchronize()
            else:
                loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=False)
        sizes = str(model._get_ddp_logging_data().get("rebuilt_bucket_sizes", ""))
        result = {
            "rank": rank,
            "ddp_buckets": [int(size) for size in sizes.split(",") if size.strip()],
            "bucket_cap_mb": BUCKET_CAP_MB,
            **timeline(list(prof.events()), gpu),
        }
        Path(out_dir, f"rank{rank}.json").write_text(json.dumps(result))
    finally:
        dist.destroy_process_group()
