"""`dtfilm validate`: the cost model against PyTorch distributed on CPU ranks (issue 11)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_dtfilm

torch = pytest.importorskip("torch")  # the `validate` extra; ./dev.sh installs it
pytestmark = pytest.mark.xdist_group("validate")


def rows_of(report: dict) -> dict[tuple[str, str], dict]:
    return {(r["strategy"], r["quantity"]): r for r in report["rows"]}


@pytest.mark.parametrize("ranks", [2, 4])
def test_every_row_agrees_or_is_explained(ranks: int, tmp_path: Path):
    done = run_dtfilm("validate", "--ranks", str(ranks), "--json", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report == json.loads((tmp_path / "validation.json").read_text())
    assert report["strategies"] == ["ddp", "zero1", "fsdp", "tp", "pp", "cp"]
    assert [r for r in report["rows"] if r["verdict"] == "DIFFERS"] == []
    rows = rows_of(report)
    # state bytes exactly, with no explanation needed
    for strategy in ("ddp", "fsdp"):
        for part in ("weights", "gradients", "adam_m", "adam_v"):
            assert rows[(strategy, f"{part} per rank")]["verdict"] == "agrees"
    assert rows[("tp", "weights per rank")]["verdict"] == "agrees"  # the norms replicated, as learned
    for stage in range(ranks):
        assert rows[("pp", f"weights, stage {stage}")]["verdict"] == "agrees"
    assert rows[("zero1", "Adam m + v, all ranks together")]["verdict"] == "agrees"
    # collective counts exactly
    layers = report["model"]["layers"]
    assert rows[("tp", "all-reduces of b·s·h (4 a layer, + embedding, + head)")]["measured"] == 4 * layers + 2
    assert rows[("fsdp", "all-gathers (forward and backward)")]["measured"] == 2 * (layers + 2)
    assert rows[("fsdp", "reduce-scatters")]["measured"] == layers + 2
    assert rows[("pp", "sends, all stages (boundaries × 2m)")]["verdict"] == "agrees"
    # ring attention: K/V blocks c-1 hops a layer forward and again backward, their gradients c
    ring = rows[("cp", "ring sends: K/V c-1 hops forward and backward, gradients c")]
    assert ring["verdict"] == "agrees" and ring["measured"] == layers * (2 * (ranks - 1) + ranks)
    assert rows[("cp", "ring bytes sent")]["verdict"] == "agrees"
    assert rows[("cp", "gradient all-reduces over the dp x cp cards")]["measured"] == 1
    # the ranks together compute what one card computes
    assert rows[("cp", "loss, the ranks' shares against one card")]["verdict"] == "agrees"
    assert rows[("cp", "largest gradient difference from one card")]["measured"] < 1e-5
    # traffic within 1%
    for key in (("ddp", "all-reduce payload"), ("fsdp", "all-gather payload (gathered weights)")):
        assert rows[key]["ratio"] == pytest.approx(1.0, abs=0.01)


def test_a_planted_all_reduce_is_counted():
    from dtfilm.validate.compare import rows_for
    from dtfilm.validate.model import Shape
    from dtfilm.validate.run import measure

    clean = rows_of_list(rows_for("ddp", measure("ddp", 2), 2, Shape(), 1))
    planted = rows_of_list(rows_for("ddp", measure("ddp", 2, plant=True), 2, Shape(), 1))
    count = ("ddp", "all-reduce count")
    assert planted[count].measured == clean[count].measured + 1
    assert clean[count].verdict == "explained"
    assert planted[count].verdict == "DIFFERS"


def rows_of_list(rows: list) -> dict:
    return {(r.strategy, r.quantity): r for r in rows}


def test_rendering_never_imports_torch():
    code = "import sys, dtfilm.cli, dtfilm.render, dtfilm.embed, dtfilm.slides; assert 'torch' not in sys.modules"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_bad_validate_flags():
    done = run_dtfilm("validate", "--strategies", "ddp,magic")
    assert done.returncode == 2 and "'magic' is not a strategy; valid: ddp, zero1, fsdp, tp, pp" in done.stderr
    assert "Traceback" not in done.stderr
    done = run_dtfilm("validate", "--ranks", "1")
    assert done.returncode == 2 and "--ranks" in done.stderr


def test_the_report_shows_in_the_gallery_and_status(tmp_path: Path):
    from dtfilm.embed import gallery_html

    report = {
        "ranks": 2,
        "backend": "gloo (CPU)",
        "torch": "2.13.0",
        "measured_at": "2026-11-30T00:00:00",
        "all_agree": True,
        "rows": [
            {
                "strategy": "ddp",
                "quantity": "weights per rank",
                "model": 8.0,
                "measured": 8.0,
                "verdict": "agrees",
                "note": "",
            }
        ],
    }
    page = gallery_html("Film", "", "", [], report)
    assert '<section id="validation">' in page and "<td>weights per rank</td>" in page
    (tmp_path / "validation.json").write_text(json.dumps(report))
    done = run_dtfilm("status", "--out", str(tmp_path))
    assert "validate" in done.stdout and "1 rows on 2 ranks, every row agrees or is explained" in done.stdout


def test_gpu_needs_a_card():
    if torch.cuda.is_available():
        pytest.skip("a CUDA card is here: the device check runs --gpu for real")
    done = run_dtfilm("validate", "--gpu", "--strategies", "ddp", "--ranks", "2")
    assert done.returncode == 2 and "--gpu needs a CUDA card" in done.stderr


def test_gpu_table_names_the_gap():
    from dtfilm.validate.gpu import gpu_table

    row = {
        "checkpointing": False,
        "card": "NVIDIA H200",
        "params": 953223168.0,
        "cost_static": 15.25e9,
        "cost_activations": 4.5e9,
        "cost_total": 19.75e9,
        "peak_allocated": 21.0e9,
        "peak_reserved": 22.0e9,
        "device_used": 22.6e9,
        "gap_allocated": 1.25e9,
        "gap_reserve": 1.0e9,
        "gap_context": 0.6e9,
    }
    text = gpu_table([row])
    assert "cost model 19.75 (state 15.25 + activations 4.50)" in text and "context and workspaces 0.60" in text
