"""`dtfilm validate --gpu`: the peak memory of one bf16 mixed-precision training step with Adam
of a model near 1B parameters on one CUDA card, with and without activation checkpointing,
beside the cost model's ledger for the same model, card and batch.

PyTorch's autocast keeps fp32 weights and gradients (4 + 4 bytes) where the cost model's
whiteboard ledger has bf16 weights and gradients plus an fp32 master copy (2 + 2 + 4): both are
16 bytes a parameter. The gap to the measured peak is named: bf16 copies of the weights that
autocast caches during the step, the CUDA context (device memory used beyond what PyTorch
reserved), the allocator's reserve beyond what is allocated, and cuBLAS workspaces.
"""

from __future__ import annotations

from typing import Any

import torch

from dtfilm.validate.compare import ask_cost_model
from dtfilm.validate.model import Shape, TinyGPT, batch, loss_of

CARDS = {"H100": "h100-sxm-80gb", "H200": "h200-141gb", "A100": "a100-80gb"}


def card_name() -> str:
    name = torch.cuda.get_device_name(0)
    return next((card for key, card in CARDS.items() if key in name), "h100-sxm-80gb")


def peak_step(shape: Shape, checkpointing: bool) -> dict[str, float]:
    """Bytes at the peak of the second training step (the first creates Adam's state)."""
    torch.cuda.empty_cache()
    model = TinyGPT(shape, checkpointing).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for i in range(2):
        if i == 1:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        tokens, targets = (t.cuda() for t in batch(shape, 1, seed=i))
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_of(model(tokens), targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    result = {
        "peak_allocated": float(torch.cuda.max_memory_allocated()),
        "peak_reserved": float(torch.cuda.max_memory_reserved()),
        "device_used": float(total - free),
        "params": float(sum(p.numel() for p in model.parameters())),
    }
    del model, optimizer
    torch.cuda.empty_cache()
    return result


def gpu_report() -> list[dict[str, Any]]:
    shape = Shape.near_one_billion()
    rows = []
    for checkpointing in (False, True):
        measured = peak_step(shape, checkpointing)
        inputs = {
            **shape.cost_inputs(),
            "precision": "bf16",
            "cards": 1,
            "cards_per_node": 1,
            "micro_batches": 1,
            "gpu": card_name(),
            "checkpointing": checkpointing,
        }
        cost, _ = ask_cost_model(inputs)
        memory = cost["memory"]
        rows.append(
            {
                "checkpointing": checkpointing,
                "card": torch.cuda.get_device_name(0),
                "params": measured["params"],
                "cost_static": memory["static"],
                "cost_activations": memory["activations"],
                "cost_total": memory["total"],
                **measured,
                "gap_allocated": measured["peak_allocated"] - memory["total"],
                "gap_reserve": measured["peak_reserved"] - measured["peak_allocated"],
                "gap_context": measured["device_used"] - measured["peak_reserved"],
            }
        )
    return rows


def gpu_table(rows: list[dict[str, Any]]) -> str:
    lines = ["one card, bf16 autocast + Adam, near 1B parameters: cost model vs measured peak (GB)"]
    for row in rows:
        gb = {k: v / 1e9 for k, v in row.items() if isinstance(v, float)}
        lines.append(
            f"  checkpointing {'on ' if row['checkpointing'] else 'off'}: cost model {gb['cost_total']:.2f}"
            f" (state {gb['cost_static']:.2f} + activations {gb['cost_activations']:.2f});"
            f" peak allocated {gb['peak_allocated']:.2f}, reserved {gb['peak_reserved']:.2f},"
            f" device used {gb['device_used']:.2f} (context and workspaces {gb['gap_context']:.2f})"
        )
    return "\n".join(lines)
