"""What runs on each rank: build the model under one strategy, train two steps with Adam on
gloo (CPU), and measure the second: the bytes of state the rank holds and every collective
PyTorch issued, as the profiler sees gloo's own operations (DDP's reducer included)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

from dtfilm.cost.pipeline import stage_layers
from dtfilm.validate.model import Shape, Stage, TinyGPT, batch, loss_of

STEPS = 3  # the first builds the optimizer state, the second DDP's final buckets; the third is measured
PP_MICRO_BATCHES = 4


def _local(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.to_local() if hasattr(tensor, "to_local") else tensor


def _bytes(tensor: torch.Tensor) -> int:
    local = _local(tensor)
    return local.numel() * local.element_size()


def state_bytes(model: torch.nn.Module, optimizer: Any) -> dict[str, int]:
    """Parameters, gradients and Adam's state (m, v, and its step counters) on this rank."""
    inner = getattr(optimizer, "optim", optimizer)  # ZeroRedundancyOptimizer wraps Adam
    params = list(model.parameters())
    state = {"weights": sum(_bytes(p) for p in params), "gradients": 0, "adam_m": 0, "adam_v": 0, "steps": 0}
    state["gradients"] = sum(_bytes(p.grad) for p in params if p.grad is not None)
    for entry in inner.state.values():
        state["adam_m"] += _bytes(entry["exp_avg"])
        state["adam_v"] += _bytes(entry["exp_avg_sq"])
        state["steps"] += _bytes(entry["step"])
    return state


def collectives(prof: profile) -> list[dict[str, Any]]:
    """Every gloo operation in order: its kind and the elements and bytes of its first input."""
    issued = []
    for event in prof.events():
        if not event.name.startswith("gloo:"):
            continue
        shape = event.input_shapes[0] if event.input_shapes else []
        elements = 1
        for size in shape:
            elements *= size
        issued.append({"kind": event.name[len("gloo:") :], "elements": elements, "bytes": elements * 4})
    return issued


# Each strategy's builder returns the module to measure, its optimizer, and a function that runs
# one step's forward and backward (the optimizer's step is the same for all, in run_rank).


def _ddp(model: torch.nn.Module, zero: bool, plant: bool) -> tuple[torch.nn.Module, Any, Any]:
    # (here: torch.distributed's parts, each loaded by the strategy that runs)
    from torch.distributed.optim import ZeroRedundancyOptimizer
    from torch.nn.parallel import DistributedDataParallel

    wrapped = DistributedDataParallel(model)
    if zero:
        optimizer = ZeroRedundancyOptimizer(wrapped.parameters(), optimizer_class=torch.optim.Adam, lr=1e-3)
    else:
        optimizer = torch.optim.Adam(wrapped.parameters(), lr=1e-3)
    extra = torch.ones(1)

    def backward(tokens: torch.Tensor, targets: torch.Tensor) -> None:
        loss_of(wrapped(tokens), targets).backward()
        if plant:  # the test's planted extra collective: the measurement must count it
            dist.all_reduce(extra)

    return wrapped, optimizer, backward


def _fsdp(model: TinyGPT) -> tuple[torch.nn.Module, Any, Any]:
    # (here: torch.distributed's parts, each loaded by the strategy that runs)
    from torch.distributed.fsdp import fully_shard

    # One FSDP unit per block, the embedding and the output; the root keeps no parameters.
    for unit in (model.embedding, *model.blocks, model.output):
        fully_shard(unit, reshard_after_forward=True)
    fully_shard(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def backward(tokens: torch.Tensor, targets: torch.Tensor) -> None:
        loss_of(model(tokens), targets).backward()

    return model, optimizer, backward


def _tp(model: TinyGPT, ranks: int) -> tuple[torch.nn.Module, Any, Any]:
    # (here: torch.distributed's parts, each loaded by the strategy that runs)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (
        ColwiseParallel,
        RowwiseParallel,
        loss_parallel,
        parallelize_module,
    )

    mesh = init_device_mesh("cpu", (ranks,))
    plan: dict[str, Any] = {
        # as Megatron-LM: the embedding split by vocabulary rows (its output all-reduced), the
        # head by vocabulary columns, its logits left split for a parallel cross-entropy
        "embedding": RowwiseParallel(input_layouts=Replicate(), output_layouts=Replicate()),
        "output.head": ColwiseParallel(output_layouts=Shard(-1), use_local_output=False),
    }
    for i in range(len(model.blocks)):
        plan[f"blocks.{i}.qkv"] = ColwiseParallel()
        plan[f"blocks.{i}.out"] = RowwiseParallel()
        plan[f"blocks.{i}.gate_up"] = ColwiseParallel()
        plan[f"blocks.{i}.down"] = RowwiseParallel()
    parallelize_module(model, mesh, plan)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def backward(tokens: torch.Tensor, targets: torch.Tensor) -> None:
        with loss_parallel():
            loss_of(model(tokens), targets).backward()

    return model, optimizer, backward


def _pp(model: TinyGPT, shape: Shape, rank: int, ranks: int) -> tuple[torch.nn.Module, Any, Any]:
    # (here: torch.distributed's parts, each loaded by the strategy that runs)
    from torch.distributed.pipelining import PipelineStage, ScheduleGPipe

    counts = stage_layers(shape.layers, ranks)
    start = sum(counts[:rank])
    stage_module = Stage(model, rank == 0, rank == ranks - 1, start, start + counts[rank])
    stage = PipelineStage(stage_module, rank, ranks, torch.device("cpu"))
    schedule = ScheduleGPipe(stage, n_microbatches=PP_MICRO_BATCHES, loss_fn=loss_of)
    optimizer = torch.optim.Adam(stage_module.parameters(), lr=1e-3)

    def backward(tokens: torch.Tensor, targets: torch.Tensor) -> None:
        if rank == 0:
            schedule.step(tokens)
        elif rank == ranks - 1:
            schedule.step(target=targets, losses=[])
        else:
            schedule.step()

    return stage_module, optimizer, backward


def _cp(model: TinyGPT, rank: int, ranks: int, checks: dict[str, float]) -> tuple[torch.nn.Module, Any, Any]:
    """Context parallelism: each rank takes its chunk of every sequence, attention runs as ring
    attention, and the gradients (the ranks hold the same weights) are all-reduced once a step
    as one flat buffer. Each step also checks the result against one card: the ranks' mean
    loss and their reduced gradients against the same model on whole sequences."""
    # (here: torch.distributed's parts, each loaded by the strategy that runs)
    import copy

    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    params = list(model.parameters())

    def backward(tokens: torch.Tensor, targets: torch.Tensor) -> None:
        reference = copy.deepcopy(model)
        one_card = loss_of(reference(tokens), targets)
        one_card.backward()
        chunk = tokens.shape[1] // ranks
        mine = slice(rank * chunk, (rank + 1) * chunk)
        loss = loss_of(model(tokens[:, mine], (rank, ranks)), targets[:, mine]) / ranks
        loss.backward()
        flat = torch.cat([p.grad.reshape(-1) for p in params])
        dist.all_reduce(flat)  # the gradients of the cards that share the weights
        offset = 0
        for p in params:
            p.grad.copy_(flat[offset : offset + p.numel()].view_as(p.grad))
            offset += p.numel()
        # the check needs no exchange: the report sums the ranks' shares of the loss
        checks["loss"], checks["one_card_loss"] = float(loss), float(one_card)
        checks["gradient_gap"] = max(
            float((p.grad - r.grad).abs().max()) for p, r in zip(params, reference.parameters(), strict=True)
        )

    return model, optimizer, backward


def _ddp_buckets(module: torch.nn.Module) -> list[int]:
    """The byte sizes of DDP's gradient buckets, as DDP itself logs them (empty without DDP)."""
    if not hasattr(module, "_get_ddp_logging_data"):
        return []
    sizes = str(module._get_ddp_logging_data().get("rebuilt_bucket_sizes", ""))
    return [int(size) for size in sizes.split(",") if size.strip()]


def run_rank(rank: int, strategies: tuple[str, ...], ranks: int, port: int, out_dir: str, plant: bool) -> None:
    """One rank of every strategy asked for, one after another in one process group
    (torch.multiprocessing spawns this once a rank: a process and PyTorch's import, about a
    second and a half of CPU each, are paid once, not once a strategy)."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=ranks)
    try:
        for strategy in strategies:
            _run_strategy(rank, strategy, ranks, out_dir, plant)
            dist.barrier()  # every rank done with one strategy before any starts the next
    finally:
        dist.destroy_process_group()


def _run_strategy(rank: int, strategy: str, ranks: int, out_dir: str, plant: bool) -> None:
    """One rank of one strategy: its model built from the same seed, STEPS steps, the last profiled."""
    shape = Shape()
    checks: dict[str, float] = {}
    torch.manual_seed(0)  # every rank starts from the same weights
    model = TinyGPT(shape)
    if strategy in ("ddp", "zero1"):
        module, optimizer, backward = _ddp(model, strategy == "zero1", plant)
        data_rank = rank
    elif strategy == "fsdp":
        module, optimizer, backward = _fsdp(model)
        data_rank = rank
    elif strategy == "tp":
        module, optimizer, backward = _tp(model, ranks)
        data_rank = 0  # tensor-parallel ranks see the same batch
    elif strategy == "pp":
        module, optimizer, backward = _pp(model, shape, rank, ranks)
        data_rank = 0
    elif strategy == "ep":
        # (here: the expert-parallel model, loaded by the strategy that runs it)
        from dtfilm.validate.experts import ep_builder

        module, optimizer, backward = ep_builder(shape, rank, ranks, checks)
        data_rank = rank  # the EP ranks are data-parallel replicas: each its own batch
    elif strategy == "cp":
        module, optimizer, backward = _cp(model, rank, ranks, checks)
        data_rank = 0  # context-parallel ranks split the same sequences
    else:
        raise ValueError(strategy)
    micro_batches = PP_MICRO_BATCHES if strategy == "pp" else 1

    def step(tokens: torch.Tensor, targets: torch.Tensor) -> None:
        backward(tokens, targets)
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)

    for i in range(STEPS):
        tokens, targets = batch(shape, micro_batches, seed=1000 * i + data_rank)
        if i == STEPS - 1:
            with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
                step(tokens, targets)
        else:
            step(tokens, targets)
    result = {
        "rank": rank,
        "state": state_bytes(module, optimizer),
        "collectives": collectives(prof),
        # what the rank was built to hold and do, read from the model and from DDP's own plan
        "parameter_tensors": len(list(module.parameters())),
        "largest_tensor_elements": max(_local(p).numel() for p in module.parameters()),
        "ddp_buckets": _ddp_buckets(module),
        "checks": checks,
    }
    Path(out_dir, f"{strategy}-rank{rank}.json").write_text(json.dumps(result))
