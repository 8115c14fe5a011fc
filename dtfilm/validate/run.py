"""`dtfilm validate`: run each strategy on N CPU processes, compare with the cost model, report."""

from __future__ import annotations

import json
import math
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

from dtfilm.errors import DtfilmError, Where
from dtfilm.validate import STRATEGIES
from dtfilm.validate.compare import Row, rows_for
from dtfilm.validate.model import Shape

REPORT = "validation.json"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def measure(strategy: str, ranks: int, plant: bool = False) -> list[dict[str, Any]]:
    """Every rank's measurement of one strategy (spawned processes, gloo on CPU). `plant`
    issues one extra all-reduce in the DDP step, for the test that the measurement sees it."""
    import torch.multiprocessing as mp

    from dtfilm.validate.ranks import run_rank

    with tempfile.TemporaryDirectory(prefix="dtfilm-validate-") as out:
        mp.start_processes(
            run_rank, args=(strategy, ranks, _free_port(), out, plant), nprocs=ranks, start_method="spawn"
        )
        return [json.loads(path.read_text()) for path in sorted(Path(out).glob("rank*.json"))]


def validate(ranks: int, strategies: list[str], gpu: bool = False) -> dict[str, Any]:
    """Measure and compare every strategy asked for; the report as data."""
    try:
        import torch
    except ImportError:
        raise DtfilmError(
            "dtfilm validate needs PyTorch: pip install 'dtfilm[validate]' (torch 2.13.0, a CPU build)",
            Where(flag="validate"),
        ) from None
    from dtfilm.validate.ranks import PP_MICRO_BATCHES

    if gpu and not torch.cuda.is_available():
        raise DtfilmError("--gpu needs a CUDA card, and torch sees none", Where(flag="--gpu"))

    shape = Shape()
    started = time.perf_counter()
    rows: list[Row] = []
    for strategy in strategies:
        rows += rows_for(strategy, measure(strategy, ranks), ranks, shape, PP_MICRO_BATCHES)
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
        "gpu": _gpu_rows() if gpu else None,
    }


def _gpu_rows() -> list[dict[str, Any]]:
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
    if report.get("gpu"):
        from dtfilm.validate.gpu import gpu_table

        lines.append(gpu_table(report["gpu"]))
    return "\n".join(lines)


def parse_strategies(text: str) -> list[str]:
    chosen = [s.strip() for s in text.split(",") if s.strip()]
    for name in chosen:
        if name not in STRATEGIES:
            raise DtfilmError(f"{name!r} is not a strategy; valid: {', '.join(STRATEGIES)}", Where(flag="--strategies"))
    return chosen
