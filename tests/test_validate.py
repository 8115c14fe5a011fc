"""`dtfilm validate`: the cost model against PyTorch distributed on CPU ranks (issue 11)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_dtfilm
from tests.sampling import sampled

# the `validate` extra (./dev.sh installs it): imported by the tests that ask, not by every test
# worker as it collects (3 s of CPU each)
pytestmark = [
    pytest.mark.xdist_group("validate"),
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the validate extra (torch) is not installed"),
]


def cuda_cards() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def rows_of(report: dict) -> dict[tuple[str, str], dict]:
    return {(r["strategy"], r["quantity"]): r for r in report["rows"]}


# every strategy on spawned gloo ranks, about 35 s on 2 ranks and 50 s on 4 with CI's two cores:
# CI runs one rank count, drawn (DTFILM_SAMPLE=all: both); each holds the same assertions, and
# the overlap, expert and planted checks below run on 2 ranks every time
@pytest.mark.parametrize("ranks", sampled([pytest.param(2, id="2"), pytest.param(4, id="4")], 1, "validate ranks"))
def test_every_row_agrees_or_is_explained(ranks: int, tmp_path: Path):
    # the overlap check has its own test (below), on 2 ranks only
    done = run_dtfilm(
        "validate", "--ranks", str(ranks), "--strategies", "ddp,zero1,fsdp,tp,pp,cp", "--json", "--out", str(tmp_path)
    )
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
    # FSDP per unit, as the cost model issues it (issue 57): 2L gathers and L reduce-scatters of a
    # block, the forward's L first, each reduce-scatter after its gather, and the embedding's and
    # the output's units besides (L + 2, as fully_shard wraps them); the model's even share of the
    # weights a unit is named against a block's exact size
    for quantity, count in (("all-gathers of a layer (forward and backward)", 2 * layers),
                            ("reduce-scatters of a layer", layers),
                            ("layer all-gathers first, the forward's (L)", layers),
                            ("backward: each layer's reduce-scatter after its gather", layers)):  # fmt: skip
        assert rows[("fsdp", quantity)]["verdict"] == "agrees" and rows[("fsdp", quantity)]["measured"] == count
    assert rows[("fsdp", "all-gathers of the embedding and the output")]["measured"] == 4
    assert rows[("fsdp", "reduce-scatters of the embedding and the output")]["measured"] == 2
    block_bytes = 4 * (4 * 256 * 256 + 3 * 256 * 512 + 2 * 256)  # Wq Wk Wv Wo, gate up down, two norms
    assert rows[("fsdp", "all-gather message, one layer (gathered bytes)")]["measured"] == block_bytes
    assert rows[("fsdp", "reduce-scatter message, one layer")]["measured"] == block_bytes
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
    code = (
        "import sys, dtfilm.cli, dtfilm.render.chapters, dtfilm.render.embed, dtfilm.publish.slides; "
        "assert 'torch' not in sys.modules"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_bad_validate_flags():
    done = run_dtfilm("validate", "--strategies", "ddp,magic")
    assert done.returncode == 2 and "'magic' is not a strategy; valid: ddp, zero1, fsdp, tp, pp" in done.stderr
    assert "Traceback" not in done.stderr
    done = run_dtfilm("validate", "--ranks", "1")
    assert done.returncode == 2 and "--ranks" in done.stderr


def test_the_report_shows_in_the_gallery_and_status(tmp_path: Path):
    from dtfilm.render.embed import gallery_html

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
    (tmp_path / ".dtfilm-renders").touch()  # (as `dtfilm validate --out` marks it)
    done = run_dtfilm("status", "--out", str(tmp_path))
    assert "validate" in done.stdout and "1 rows on 2 ranks, every row agrees or is explained" in done.stdout


def test_validate_without_torch_says_so_in_one_line(tmp_path: Path):
    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.modules['torch'] = None  # as if not installed\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    command = [sys.executable, "-m", "dtfilm", "validate", "--strategies", "overlap", "--ranks", "2"]
    done = subprocess.run([*command, "--out", str(tmp_path / "out")], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    needs = "dtfilm validate needs PyTorch: pip install 'dtfilm[validate]' (torch 2.13.0, a CPU build)"
    assert done.stderr.strip().splitlines() == [f"dtfilm: error: validate: {needs}"]
    assert not (tmp_path / "out").exists()


class _Spawned(Exception):
    """Raised where validate would spawn ranks: what the test asks is only what it spawns."""


@pytest.mark.parametrize(
    ("strategies", "together"), [([], []), (["overlap"], []), (["overlap", "ddp", "tp"], [["ddp", "tp"]])]
)
def test_only_strategies_besides_overlap_are_measured_together(monkeypatch, strategies: list, together: list):
    from dtfilm.validate import run

    spawned: list[list[str]] = []

    def measure_together(names: list[str], ranks: int) -> dict:
        spawned.append(names)
        raise _Spawned

    def measure(strategy: str, ranks: int) -> list:
        raise _Spawned

    monkeypatch.setattr(run, "measure_together", measure_together)
    monkeypatch.setattr(run, "measure", measure)
    try:
        run.validate(2, strategies)
    except _Spawned:
        pass
    assert spawned == together  # never a set of ranks spawned for no strategy


def test_gpu_needs_a_card():
    if cuda_cards():
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


def test_ddp_buckets_reduce_while_the_backward_computes(tmp_path: Path):
    """DDP at bucket_cap_mb 2.5 on 2 gloo ranks: as many buckets as the cost model counts, each
    all-reduce issued as its bucket fills, in order, all but the last before the backward's last
    gradient op, and running beside the backward."""
    from dtfilm.validate.run import table

    done = run_dtfilm("validate", "--ranks", "2", "--strategies", "overlap", "--json", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert [r for r in report["rows"] if r["verdict"] != "agrees"] == []
    rows = rows_of(report)
    buckets = rows[("overlap", "gradient buckets at bucket_cap_mb 2.5")]
    assert buckets["measured"] == buckets["model"] == 5
    assert rows[("overlap", "bucket all-reduces issued in the backward pass")]["measured"] == 5
    assert rows[("overlap", "issued in the order the buckets fill")]["measured"] == 5
    assert rows[("overlap", "issued before the last gradient op ends")]["measured"] == 4
    figures = report["overlap"]
    issued = [b["issued_ms"] for b in figures["buckets"]]
    assert issued == sorted(issued) and issued[0] < figures["backward_ms"] <= issued[-1]
    assert 0 < figures["beside_ms"] <= figures["busy_ms"]  # gloo ran some of it beside the backward
    assert sum(b["bucket_bytes"] for b in figures["buckets"]) == 4 * 3_148_032  # every gradient, once
    text = table(report)
    assert "overlap (gloo, rank 0, DDP bucket_cap_mb 2.5): the backward computes" in text
    assert "  bucket 5:   2,099,200 B, issued at" in text


def _overlap_rank(issued_ms: list[float], compute_end_ms: float, order: tuple[int, ...] = (0, 1, 2, 3, 4)) -> dict:
    sizes = [2_622_464, 2_623_488, 2_623_488, 2_623_488, 2_099_200]
    return {
        "rank": 0,
        "bucket_cap_mb": 2.5,
        "ddp_buckets": sizes,
        "compute_end_ms": compute_end_ms,
        "run_compute_end_ms": compute_end_ms,
        "issued": [{"bucket": b, "issued_ms": t} for b, t in zip(order, issued_ms, strict=True)],
        "all_reduces": [{"start_ms": t, "end_ms": t + 5, "bytes": b} for t, b in zip(issued_ms, sizes, strict=True)],
    }


def test_all_reduces_after_the_backward_differ():
    """A DDP that waited for the whole backward (no overlap), or issued its buckets out of order,
    makes the rows differ; the figures beside the cost model's, for a timeline worked by hand."""
    from dtfilm.validate.compare import ask_cost_model, cost_inputs, overlap_figures, overlap_rows
    from dtfilm.validate.model import Shape

    cost, _ = ask_cost_model(cost_inputs("overlap", 2, Shape(), 1))
    assert cost["overlap"]["mode"] == "framework" and cost["overlap"]["dp_buckets"]["count"] == 1  # 12 MB < 25 MiB
    overlapped = rows_of_list(overlap_rows("overlap", cost, [_overlap_rank([10, 30, 50, 70, 101], 100)]))
    waited = rows_of_list(overlap_rows("overlap", cost, [_overlap_rank([101, 106, 111, 116, 121], 100)]))
    key = ("overlap", "issued before the last gradient op ends")
    assert overlapped[key].verdict == "agrees" and waited[key].verdict == "DIFFERS"
    shuffled = rows_of_list(overlap_rows("overlap", cost, [_overlap_rank([10, 30, 50, 70, 101], 100, (1, 0, 2, 3, 4))]))
    order = ("overlap", "issued in the order the buckets fill")
    assert overlapped[order].verdict == "agrees" and shuffled[order].verdict == "DIFFERS"
    two = [_overlap_rank([10, 30, 50, 70, 101], 100), {**_overlap_rank([10, 30, 50, 101, 106], 100), "rank": 1}]
    assert rows_of_list(overlap_rows("overlap", cost, two))[key].verdict == "DIFFERS"  # the ranks disagree
    figures = overlap_figures(cost, [_overlap_rank([10, 30, 50, 70, 101], 100)])
    # five 5 ms all-reduces, four under the backward; the model's last of 25 ms in 5 buckets: 5 ms
    assert figures["busy_ms"] == 25 and figures["beside_ms"] == 20 and figures["after_ms"] == 6
    assert figures["ran_before_end"] == 4 and figures["model_after_ms"] == pytest.approx(5.0)
    assert [b["model_due_ms"] for b in figures["buckets"]] == pytest.approx([20, 40, 60, 80, 100])


class _Event:
    def __init__(self, name: str, start_us: float, end_us: float, cuda: bool = False) -> None:
        from torch.autograd import DeviceType
        from torch.autograd.profiler_util import Interval

        self.name, self.time_range = name, Interval(start_us, end_us)
        self.device_type = DeviceType.CUDA if cuda else DeviceType.CPU
        self.input_shapes: list = []


def test_nccl_timeline_from_the_kernels():
    """--gpu's overlap check reads NCCL's kernels: the backward computes until the last other
    kernel that starts before the last all-reduce (DDP copies the buckets back after it)."""
    from dtfilm.validate.overlap import timeline

    events = [
        _Event("autograd::engine::evaluate_function: MmBackward0", 500, 900),
        _Event("dtfilm:bucket 0", 950, 960),
        _Event("autograd::engine::evaluate_function: EmbeddingBackward0", 1000, 1400),
        _Event("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 1400, 1600),
        _Event("dtfilm:bucket 1", 1500, 1510),
        _Event("sm90_xmma_gemm", 1000, 3000, cuda=True),
        _Event("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 2500, 3500, cuda=True),
        _Event("elementwise_kernel", 3000, 6000, cuda=True),
        _Event("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 6100, 7000, cuda=True),
        _Event("CatArrayBatchedCopy", 7100, 7200, cuda=True),  # the reduced bucket copied back
    ]
    found = timeline(events, gpu=True)
    assert found["compute_end_ms"] == 0.9 and found["run_compute_end_ms"] == 5.5
    assert [(b["bucket"], b["issued_ms"]) for b in found["issued"]] == [(0, 0.45), (1, 1.0)]
    assert [(a["start_ms"], a["end_ms"]) for a in found["all_reduces"]] == [(2.0, 3.0), (5.6, 6.5)]


def test_nccl_overlap_skips_without_two_cards():
    if cuda_cards() >= 2:
        pytest.skip("two CUDA cards are here: test_nccl_overlap runs the check")
    from dtfilm.validate.model import Shape
    from dtfilm.validate.run import _nccl_overlap

    skipped = _nccl_overlap(2, Shape())
    assert skipped["skipped"].startswith("overlap on NCCL: skipped, it needs 2 CUDA cards and torch sees")
    assert "\n" not in skipped["skipped"] and skipped["rows"] == []


def test_nccl_overlap():
    if cuda_cards() < 2:
        pytest.skip("the NCCL overlap check needs 2 CUDA cards")
    from dtfilm.validate.model import Shape
    from dtfilm.validate.run import _nccl_overlap

    report = _nccl_overlap(2, Shape())
    rows = rows_of_list(report["rows"])
    assert [r.verdict for r in report["rows"]] == ["agrees"] * 4
    assert rows[("nccl", "issued before the last gradient op ends")].measured == 4
    assert report["ran_before_end"] >= 1 and report["beside_ms"] > 0  # NCCL's kernels beside the backward's


def test_the_all_to_all_agrees_on_cpu_ranks(tmp_path: Path):
    """Expert parallelism (issue 60): 8 experts over 2 ranks, top-2 balanced routing; the state
    each rank holds, the all-to-alls a step (dispatch and combine, forward and backward, a layer),
    each one's buffer and the bytes a rank sends to the other, as the cost model prices them."""
    done = run_dtfilm("validate", "--ranks", "2", "--strategies", "ep", "--json", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert [r for r in report["rows"] if r["verdict"] == "DIFFERS"] == []
    rows = rows_of(report)
    model = report["model"]
    layers, tokens, hidden = model["layers"], model["seq_len"] * model["micro_batch_size"], model["hidden"]
    for part in ("weights", "gradients", "adam_m", "adam_v"):
        assert rows[("ep", f"{part} per rank")]["verdict"] == "agrees"
    calls = rows[("ep", "all-to-alls: dispatch and combine, forward and backward, a layer")]
    assert calls["verdict"] == "agrees" and calls["measured"] == 4 * layers
    buffer = tokens * 2 * hidden * 4  # k = 2 copies of each token, fp32
    assert rows[("ep", "all-to-all buffer (tokens x k x hidden)")]["measured"] == buffer
    sent = rows[("ep", "all-to-all bytes a rank sends to the others")]
    assert sent["verdict"] == "agrees" and sent["measured"] == 4 * layers * buffer / 2
