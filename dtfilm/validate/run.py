"""`dtfilm validate`: run each strategy on N CPU processes, compare with the cost model, report."""

from __future__ import annotations

import json
import math
import socket
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dtfilm.errors import DtfilmError, Where
from dtfilm.system.report_schema import REPORT
from dtfilm.validate import STRATEGIES

if TYPE_CHECKING:  # both import torch, which validate() asks for first
    from dtfilm.validate.model import Shape
    from dtfilm.validate.rows import Row

__all__ = ["REPORT", "measure", "measure_together", "parse_strategies", "table", "validate"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def measure(strategy: str, ranks: int, plant: bool = False, gpu: bool = False) -> list[dict[str, Any]]:
    """Every rank's measurement of one strategy (spawned processes, gloo on CPU; NCCL on one
    CUDA card a rank for the overlap check with `gpu`). `plant` issues one extra all-reduce in
    the DDP step, for the test that the measurement sees it."""
    if strategy != "overlap":
        return measure_together([strategy], ranks, plant)[strategy]
    # (here: PyTorch, the validate extra)
    import torch.multiprocessing as mp

    from dtfilm.validate.overlap import run_overlap_rank

    with tempfile.TemporaryDirectory(prefix="dtfilm-validate-") as out:
        mp.start_processes(run_overlap_rank, args=(ranks, _free_port(), out, gpu), nprocs=ranks, start_method="spawn")
        return [json.loads(path.read_text()) for path in sorted(Path(out).glob("rank*.json"))]


def measure_together(strategies: list[str], ranks: int, plant: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Every rank's measurement of each strategy, by strategy, from one set of spawned processes
    that run the strategies one after another (each from the same seed, with a barrier between:
    what one measures is its own step's, profiled alone)."""
    # (here: PyTorch, the validate extra)
    import torch.multiprocessing as mp

    from dtfilm.validate.ranks import run_rank

    with tempfile.TemporaryDirectory(prefix="dtfilm-validate-") as out:
        args = (tuple(strategies), ranks, _free_port(), out, plant)
        mp.start_processes(run_rank, args=args, nprocs=ranks, start_method="spawn")
        return {
            s: [json.loads(path.read_text()) for path in sorted(Path(out).glob(f"{s}-rank*.json"))] for s in strategies
        }


def validate(ranks: int, strategies: list[str], gpu: bool = False) -> dict[str, Any]:
    """Measure and compare every strategy asked for; the report as data."""
    try:
        # (here: PyTorch, the validate extra)
        import torch
    except ImportError:
        raise DtfilmError(
            "dtfilm validate needs PyTorch: pip install 'dtfilm[validate]' (torch 2.13.0, a CPU build)",
            Where(flag="validate"),
        ) from None
    # (here: PyTorch, the validate extra)
    from dtfilm.validate.compare import ask_cost_model, cost_inputs, overlap_figures, rows_for
    from dtfilm.validate.model import Shape
    from dtfilm.validate.ranks import PP_MICRO_BATCHES

    if gpu and not torch.cuda.is_available():
        raise DtfilmError("--gpu needs a CUDA card, and torch sees none", Where(flag="--gpu"))

    shape = Shape()
    started = time.perf_counter()
    rows: list[Row] = []
    figures = None
    spawned_together = [s for s in strategies if s != "overlap"]  # overlap spawns its own ranks
    together = measure_together(spawned_together, ranks) if spawned_together else {}
    for strategy in strategies:
        measured = together[strategy] if strategy in together else measure(strategy, ranks)
        rows += rows_for(strategy, measured, ranks, shape, PP_MICRO_BATCHES)
        if strategy == "overlap":
            figures = overlap_figures(ask_cost_model(cost_inputs("overlap", ranks, shape, 1))[0], measured)
    nccl = _nccl_overlap(ranks, shape) if gpu else None
    if nccl:
        rows += nccl.pop("rows")
    return {
        "ranks": ranks,
        "torch": torch.__version__,
        "backend": "gloo (CPU)",
        "precision": "fp32",
        "model": {**shape.__dict__, "pp_micro_batches": PP_MICRO_BATCHES},
        "strategies": strategies,
        "seconds": round(time.perf_counter() - started, 1),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "rows": [row.as_json() for row in rows],
        "all_agree": all(row.verdict != "DIFFERS" for row in rows),
        "overlap": figures,
        "gpu": _gpu_rows() if gpu else None,
        "gpu_overlap": nccl,
    }


def _nccl_overlap(ranks: int, shape: Shape) -> dict[str, Any]:
    """The overlap check again on NCCL, one CUDA card a rank (NCCL refuses two ranks on one
    card): its rows and figures, or the one line that says why it did not run."""
    # (here: PyTorch, the validate extra)
    import torch

    from dtfilm.validate.compare import ask_cost_model, cost_inputs, overlap_figures, overlap_rows

    cards = torch.cuda.device_count()
    if cards < 2:
        return {"skipped": f"overlap on NCCL: skipped, it needs 2 CUDA cards and torch sees {cards}", "rows": []}
    world = min(ranks, cards)
    measured = measure("overlap", world, gpu=True)
    cost, _ = ask_cost_model(cost_inputs("overlap", world, shape, 1))
    return {"ranks": world, "rows": overlap_rows("nccl", cost, measured), **overlap_figures(cost, measured)}


def _gpu_rows() -> list[dict[str, Any]]:
    # (here: PyTorch, the validate extra)
    from dtfilm.validate.gpu import gpu_report

    return gpu_report()


def _shown(value: float, unit: str) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "(ranks differ)"
    if unit == "value":  # a loss, a gradient difference: their digits matter
        return f"{value:.6g}"
    return f"{value:,.0f} B" if unit == "B" else f"{value:,.0f}"


def table(report: dict[str, Any]) -> str:
    """The report as a table: quantity, strategy, cost model, measured, ratio, verdict."""
    lines = [
        f"dtfilm validate: {report['ranks']} ranks, {report['backend']}, torch {report['torch']},"
        f" {report['precision']}, {report['seconds']} s",
        f"{'strategy':<7} {'quantity':<52} {'cost model':>16} {'measured':>16} {'ratio':>7}  verdict",
    ]
    notes: list[str] = []
    for row in report["rows"]:
        mark = ""
        if row["verdict"] == "explained":
            notes.append(row["note"])
            mark = f" [{len(notes)}]"
        ratio = "-" if row["ratio"] in (float("inf"),) else f"{row['ratio']:.4f}"
        lines.append(
            f"{row['strategy']:<7} {row['quantity']:<52} {_shown(row['model'], row['unit']):>16}"
            f" {_shown(row['measured'], row['unit']):>16} {ratio:>7}  {row['verdict']}{mark}"
        )
    lines += [f"[{i}] {note}" for i, note in enumerate(notes, 1)]
    lines.append("every row agrees or is explained" if report["all_agree"] else "SOME ROWS DIFFER")
    if report.get("overlap"):
        lines += overlap_lines("gloo", report["overlap"])
    nccl = report.get("gpu_overlap")
    if nccl:
        lines += [nccl["skipped"]] if "skipped" in nccl else overlap_lines("NCCL", nccl)
    if report.get("gpu"):
        # (here: PyTorch, the validate extra)
        from dtfilm.validate.gpu import gpu_table

        lines.append(gpu_table(report["gpu"]))
    return "\n".join(lines)


def overlap_lines(backend: str, figures: dict[str, Any]) -> list[str]:
    """The overlap check's timeline: when DDP issued each bucket's all-reduce and when it ran,
    against when the cost model has the bucket due."""
    buckets = figures["buckets"]
    lines = [
        f"overlap ({backend}, rank {figures['rank']}, DDP bucket_cap_mb {figures['bucket_cap_mb']:g}): the backward"
        f" computes {figures['backward_ms']:.1f} ms; {figures['ran_before_end']} of {len(buckets)} all-reduces"
        f" start running before it ends",
        f"  they run {figures['busy_ms']:.1f} ms, {figures['beside_ms']:.1f} ms of it beside the backward; the last"
        f" ends {figures['after_ms']:.1f} ms after it (the cost model, for that backward and all-reduce time in"
        f" {figures['model_buckets']} buckets: {figures['model_after_ms']:.1f} ms)",
    ]
    for bucket in buckets:
        lines.append(
            f"  bucket {bucket['bucket'] + 1}: {bucket['bucket_bytes']:>11,} B, issued at {bucket['issued_ms']:6.1f} ms"
            f" (the cost model: due at {bucket['model_due_ms']:6.1f}), runs {bucket['start_ms']:6.1f}"
            f" -> {bucket['end_ms']:6.1f} ms"
        )
    return lines


def parse_strategies(text: str) -> list[str]:
    chosen = [s.strip() for s in text.split(",") if s.strip()]
    for name in chosen:
        if name not in STRATEGIES:
            raise DtfilmError(f"{name!r} is not a strategy; valid: {', '.join(STRATEGIES)}", Where(flag="--strategies"))
    return chosen
