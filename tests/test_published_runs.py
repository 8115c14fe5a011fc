"""The cost model and planner against published training runs (dtfilm/data/published_runs.yaml).

One row per run: its settings, the reported MFU (converted to the model's 6P basis), the
predicted MFU, the published and predicted step, whether it fits, and the planner's throughput
against the published one's. `python benchmarks/published_runs.py` prints the same tables, fit
set and test set, which the README shows and the tests here hold to the model's numbers.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from dtfilm.cost import efficiency
from dtfilm.cost.inputs import SPECS, builtin_layer, parse_value, resolve
from dtfilm.cost.overlap import OVERLAP_MODES
from dtfilm.cost.planner import evaluate
from dtfilm.cost.published import (
    FITTED_ON,
    STEP_TOLERANCE,
    TABLE_OVERLAP,
    RunCheck,
    _base_setup,
    check_run,
    flops_per_token,
    published_step,
    reported_mfu,
)
from dtfilm.cost.published_runs import load_runs, runs_named
from dtfilm.cost.published_table import (
    SCALING_HEADER,
    TABLE_HEADER,
    scaling_row,
    scaling_steps,
    set_errors,
    set_summary,
    table_row,
)
from dtfilm.cost.setup_checks import build_setup
from dtfilm.errors import DtfilmError, Where

RUNS = load_runs()
MFU_TOLERANCE = 0.15  # relative, the bound
PLANNER_TOLERANCE = 0.10


@cache
def checked(name: str) -> RunCheck:
    # Under the table's overlap (`framework`, what the frameworks hide), which has its own
    # sustained shares fitted on the fit set (benchmarks/fit_shares.py); `none` keeps the
    # whiteboard's, held to the last digit by tests/test_overlap.py.
    return check_run(RUNS[name], overlap=TABLE_OVERLAP)


@pytest.mark.xdist_group("published")
@pytest.mark.parametrize("name", list(RUNS))
def test_each_published_run_against_the_model(name):
    check = checked(name)
    run = check.run
    # the published configuration, with every setting the paper gives
    for key in ("dp", "tp", "pp", "cp", "zero", "micro_batch_size", "recompute", "schedule", "virtual_stages"):
        if key in run.settings:
            assert check.published[key] == run.settings[key], key
    assert check.published["tokens_per_step"] == run.global_batch * run.settings["seq_len"]
    # it fits, and a run of the fit set has its predicted MFU within 15% of the reported one, or
    # names the mechanism the model lacks (the held-out runs' errors are what the benchmark
    # measures, not a bound the tests enforce); once the fit set's settings are the authors'
    # (Megatron-LM's sc21 scripts), no one unfused share holds MT-NLG on DeepSpeed and Megatron-LM's
    # runs both (benchmarks/fit_shares.py)
    assert check.fits, f"{name}: {check.estimate['memory']['total'] / 1e9:.1f} GB does not fit"
    assert run.run_set == "test" or run.error_reason or abs(check.mfu_error) <= MFU_TOLERANCE, (
        f"{name}: predicted {check.predicted_mfu:.3f} against reported {check.reported_mfu:.3f}"
    )
    # its predicted step is within 15% of the published one, or the data names the mechanism the
    # model lacks (and only there: a stale reason fails here too)
    if run.error_reason:
        assert abs(check.step_error) > STEP_TOLERANCE, f"{name}: {check.step_error:+.2f}; drop its error_reason"
        assert re.search(r"\b(19|20)\d\d\b", run.error_reason), f"{name}: error_reason cites no source"
    else:
        assert abs(check.step_error) <= STEP_TOLERANCE, f"{name}: step {check.step_error:+.2f}; no error_reason"
    # the published step is the reported time, or the reported throughput's time for the run's tokens
    if run.iteration_seconds is not None:
        assert check.reported_step_seconds == pytest.approx(run.iteration_seconds)
    # what the fit prices for a run (its stated layout alone) is the table's number to the last digit
    assert published_step(run, check.overlap) == (check.predicted_step_seconds, check.reported_step_seconds)
    # the planner searched a superset of the published plans: never slower than them
    assert check.planner_speedup >= 1 - 1e-9
    # with the run's own techniques it finds a plan within 10% of the published one's throughput,
    # or the data says why the model and practice disagree (and the gap stays bounded); the free
    # pick's further gains are the techniques the run lacked (README, "Published runs")
    speedup = check.same_techniques_speedup
    if run.run_set == "moe":  # not fitted: the gap is what the table measures (the all-to-all exposed)
        assert run.disagreement and speedup > 1 + PLANNER_TOLERANCE
    elif run.disagreement:
        assert 1 + PLANNER_TOLERANCE < speedup < 1.5, f"{name}: {speedup:.2f}x; drop or update its disagreement"
    else:
        assert speedup <= 1 + PLANNER_TOLERANCE, f"{name}: {check.same_techniques} is {speedup:.2f}x"


def test_the_fit_set_is_what_the_constants_were_fitted_on():
    """Every fitted constant names its runs; they are the fit set, and nothing names a test run."""
    fitted = {name for names in FITTED_ON.values() for name in names}
    # the shares are fitted once under each overlap mode, and each names its runs
    assert set(efficiency.SUSTAINED_SHARE) == set(OVERLAP_MODES)
    for mode in OVERLAP_MODES:
        for flash in (True, False):
            assert FITTED_ON[f"efficiency.SUSTAINED_SHARE[{mode}][flash_attention={flash}]"]
    assert fitted == {name for name, run in RUNS.items() if run.run_set == "fit"}
    test = [run for run in RUNS.values() if run.run_set == "test"]
    assert len(test) >= 8 and all(run.source for run in test)


def test_the_framework_shares_are_the_fits_optimum():
    """benchmarks/fit_shares.py's objective on the fit set is no better a step (0.01) either side
    of each committed `framework` share: a share changed by hand, not refitted, fails here."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    try:
        import fit_shares
    finally:
        sys.path.pop(0)
    for flash in (True, False):
        runs = [RUNS[name] for name in FITTED_ON[fit_shares.SHARE_KEY.format("framework", flash)]]
        share = efficiency.SUSTAINED_SHARE["framework"][flash]
        score = {
            step: fit_shares._score(
                fit_shares.errors(runs, "framework", flash, round(share + step, 2), efficiency.LAYER_OVERHEAD_SECONDS)
            )
            for step in (-0.01, 0.0, 0.01)
        }
        assert score[0.0] <= min(score[-0.01], score[0.01]), (flash, score)
        assert efficiency.SUSTAINED_SHARE["framework"][flash] == share  # the fit put the module's value back


def _tables(text: str) -> list[list[tuple[str, ...]]]:
    """Every Markdown table of a text, as rows of cells (the header row first)."""
    tables, rows = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            if not line.startswith("|---"):
                rows.append(tuple(cell.strip() for cell in line.strip().strip("|").split("|")))
        elif rows:
            tables.append(rows)
            rows = []
    return tables


def _published_runs_page() -> str:
    """The published-runs page of the docs site (the README links to it)."""
    return (Path(__file__).resolve().parent.parent / "docs" / "published-runs.md").read_text(encoding="utf-8")


@pytest.mark.xdist_group("published")
def test_the_table_shows_both_sets_with_the_models_numbers():
    """The documented tables are the benchmark's output: every row (fit set, then test set) is
    the model's own, each set's summary line is said under its table, and so are the scaling
    figures."""
    page = _published_runs_page()
    tables = _tables(page)
    runs = [t for t in tables if t[0] == TABLE_HEADER]
    checks = [checked(name) for name in RUNS]
    sets = set_errors(checks)
    assert [e.name for e in sets] == ["fit", "test", "moe"]
    assert len(runs) == 3, "the page shows the fit set, the test set and the MoE runs, each in its table"
    for shown, errors in zip(runs, sets, strict=True):
        assert shown[1:] == [table_row(c) for c in errors.checks], f"{errors.name}: rerun the benchmark"
        assert set_summary(errors) in page
    scaling = [t for t in tables if t[0] == SCALING_HEADER]
    assert len(scaling) == 1 and scaling[0][1:] == [scaling_row(s) for s in scaling_steps(checks)]
    assert "megatron-175b-384 -> megatron-175b-1536" in page  # 4x at a fixed batch


def test_a_held_out_run_off_by_more_than_15_percent_says_why(tmp_path):
    """No shipped held-out run is off by more than 15% since Korthikanti et al.'s virtual stages
    are stated (section 6), so a runs file of its own: Korthikanti's 530B run with full
    recomputation, timed 30% faster than it ran, with the reason the data would give."""
    from dtfilm.cost.report import compare_table

    run = RUNS["korthikanti-530b-full"]
    assert run.run_set == "test" and abs(checked(run.name).step_error) <= STEP_TOLERANCE
    settings = {k: v for k, v in run.settings.items() if k != "virtual_stages"}
    body = ", ".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in settings.items())
    mine = tmp_path / "runs.yaml"
    mine.write_text(
        f"runs:\n  fast:\n    label: x\n    source: y\n    reported: {{iteration_seconds: 34.3}}\n"
        f"    settings: {{{body}, global_batch: {run.global_batch}}}\n    not_given: [virtual_stages]\n"
        "    error_reason: a kernel the model does not know (Someone et al. 2024)\n"
    )
    (fast,) = runs_named(str(mine)).values()
    check = check_run(fast)
    assert check.run.run_set == "test" and check.step_error > STEP_TOLERANCE
    text = compare_table(check)
    assert "34.3 s per iteration" in text and "test set" in text
    assert "2 (not given)" in text  # the virtual stages the file leaves out, filled
    assert f"why the predicted step is off: {check.run.error_reason}" in text


@pytest.mark.xdist_group("published")
def test_korthikanti_175b_and_530b_interleave_three_stages_as_the_paper_says():
    """Korthikanti et al. 2022, section 6: "We use the interleaving schedule with three
    interleaving stages (m = 3) for the 175B and 530B models". Stated, not filled: the 530B run
    with full recomputation then comes within 15% (its filled 2 stages left it at +16%)."""
    for name in ("korthikanti-175b-full", "korthikanti-175b-sp", "korthikanti-530b-full", "korthikanti-530b-sp"):
        check = checked(name)
        assert check.run.settings["virtual_stages"] == 3 and "virtual_stages" not in check.run.not_given
        assert check.published["virtual_stages"] == 3 and check.estimate["plan"]["virtual_stages"] == 3
    assert 0 < checked("korthikanti-530b-full").step_error <= STEP_TOLERANCE


@pytest.mark.xdist_group("published")
def test_nemotron_runs_are_priced_with_nvidias_own_config():
    """Nemotron-4 340B: the settings its report leaves out are NVIDIA's training config for the
    run (NeMo-Framework-Launcher nemotron_340b.yaml at 7c842fcd): 8 virtual stages and one
    sequence a micro-batch, stated rather than filled; no userbuffers, so TP hides only the
    backward's reduce-scatters (`tp_overlap: backward`), and batched p2p without overlap, so every
    pipeline hop waits (`pp_overlap: blocking`). Priced so, each stage of the batch ramp comes
    within 10% of its reported iteration time (it was 14-15% fast with the frameworks' defaults)."""
    for name in ("nemotron4-340b-1536", "nemotron4-340b-3072", "nemotron4-340b-6144"):
        check = checked(name)
        run = check.run
        assert run.settings["tp_overlap"] == "backward" and run.settings["pp_overlap"] == "blocking"
        assert (check.published["virtual_stages"], check.published["micro_batch_size"]) == (8, 1)
        assert not {"virtual_stages", "micro_batch_size", "recompute"} & set(run.not_given)
        comm = check.estimate["comm"]
        assert comm["exposed_seconds_by_group"]["pp"] == comm["seconds_by_group"]["pp"] > 0
        # the forward's TP collectives wait: more than half of TP's traffic is exposed
        assert comm["exposed_seconds_by_group"]["tp"] > 0.5 * comm["seconds_by_group"]["tp"]
        assert abs(check.step_error) < 0.10, f"{name}: {check.step_error:+.3f}"
        assert not run.error_reason


@pytest.mark.xdist_group("published")
def test_llama3_at_8k_trains_without_activation_checkpointing_as_the_paper_says():
    """Llama 3 Herd of Models, section 3.3.2: "we could pre-train Llama 3 on sequences of 8K
    tokens without activation checkpointing". Stated as `recompute: none`, the published plan says
    so; with FlashAttention, whose kernel recomputes the scores in its backward, that is the plan the
    planner calls `selective`, priced to the same step and memory, and not shown as a change."""
    for name in ("llama3-405b-8k-8192", "llama3-405b-8k-16384"):
        run = RUNS[name]
        assert run.settings["recompute"] == "none" and "recompute" not in run.not_given
        check = checked(name)
        assert check.fits and check.published["recompute"] == "none"
        assert check.estimate["plan"]["recompute"] == "none"
        # the planner's picks are FlashAttention plans too: the same plan is no change of technique
        assert check.pick["recompute"] == check.same_techniques["recompute"] == "none"
        assert not [r for r in check.reasons if r.startswith("recompute")], check.reasons
        as_selective = replace(run, settings={**run.settings, "recompute": "selective"})
        assert published_step(run) == published_step(as_selective)


def test_the_largest_run_is_laid_out_as_practice_lays_it_out():
    """Llama 3 405B on 16,384 H100s at 8K: the planner keeps tensor parallelism inside the node,
    stages of many layers, no more than cp 2, and comes within 10% of Meta's layout."""
    check = checked("llama3-405b-8k-16384")
    pick = check.pick
    assert pick["tp"] == 8 and pick["pp"] >= 8 and pick["cp"] <= 2
    assert 126 / pick["pp"] >= 7  # no 2-layer stages
    assert check.planner_speedup <= 1 + PLANNER_TOLERANCE
    # Meta's own plan: fits only because FSDP keeps optimizer state and gradients sharded
    assert check.published["zero"] == 2 and check.fits
    # the 6.3 s or so that 41% MFU implies, and the step the model predicts for it
    assert check.estimate["compute"]["step_seconds"] == pytest.approx(6.2, rel=0.1)


def test_long_context_is_split_by_context_parallelism():
    check = checked("llama3-405b-128k-16384")
    # at 128K tokens the planner splits each sequence, tensor parallel inside the node, as Meta did
    # (cp 16, tp 8). On NCCL's network (issue 57) it splits it 8 ways and keeps 2 stages (dp 128 x
    # tp 8 x pp 2 x cp 8, 7% faster by the model; on the single link it was cp 16, pp 1); with
    # Meta's techniques (ZeRO-2) it comes within 10% of Meta's layout
    # (test_each_published_run_against_the_model). With the complete ledger that plan holds 79.9 GB,
    # too tight to pick (the planner wants fit_margin to spare); the pick with room splits the
    # sequence 8 ways with tp 16 over two nodes' 16 NICs, and Meta's shape, tp 8 inside the node
    # (dp 128 x tp 8 x pp 2 x cp 8), is within 1% of it: the model finds them tied.
    assert check.pick["cp"] >= 8 and check.pick["tp"] >= 8
    setup = replace(_base_setup(RUNS["llama3-405b-128k-16384"], TABLE_OVERLAP), sequence_parallel=True)
    plans = evaluate(setup, RUNS["llama3-405b-128k-16384"].global_batch)
    in_node = plans.roomy & (plans.tp == 8) & (plans.cp >= 8)
    per_token = plans.step_seconds / plans.tokens_per_step
    assert per_token[in_node].min() <= 1.01 * check.pick["step_seconds"] / check.pick["tokens_per_step"]
    assert (
        check.estimate["compute"]["stage_seconds"]["attention"] > check.estimate["compute"]["stage_seconds"]["matmul"]
    )


def _setup(**flags):
    layer = {k: parse_value(k, v, "flag", Where(flag=f"--{k}")) for k, v in flags.items()}
    return build_setup(resolve([builtin_layer(), layer]))[0]


def test_reported_figures_convert_by_hand():
    # Narayanan et al. 2021, Table 1, 1T: 163 TFLOP/s with F = 96 B s l h^2 (1 + s/6h + V/16lh).
    run = RUNS["megatron-gpt-1t"]
    setup = _setup(**{k: v for k, v in run.settings.items() if k != "dp"})
    per_token = 96 * 128 * 25600**2 * (1 + 2048 / (6 * 25600) + 51200 / (16 * 128 * 25600))
    assert flops_per_token(run, setup) == pytest.approx(per_token)
    assert reported_mfu(run, setup) == pytest.approx(163e12 / per_token * 6 * setup.params / 312e12)
    assert reported_mfu(run, setup) == pytest.approx(0.387, abs=0.002)
    # MT-NLG: 60.1 s per iteration of 1920 x 2048 tokens on 2,240 GPUs is the paper's 126 TFLOP/s.
    mt = RUNS["mt-nlg-530b-2240"]
    mt_setup = _setup(**{k: v for k, v in mt.settings.items() if k != "dp"})
    assert 1920 * 2048 * flops_per_token(mt, mt_setup) / 60.1 / 2240 == pytest.approx(126e12, rel=0.005)
    # Llama 3 (PaLM's count, 6N + 12 L h s): 41% MFU at 8K is 37% on the 6P basis.
    llama = RUNS["llama3-405b-8k-16384"]
    llama_setup = _setup(**{k: v for k, v in llama.settings.items() if k != "dp"})
    assert reported_mfu(llama, llama_setup) == pytest.approx(
        0.41 * 6 * llama_setup.params / (6 * llama_setup.params + 12 * 126 * 16384 * 8192), rel=0.02
    )


def test_a_bad_runs_file_is_one_line(tmp_path):
    bad = tmp_path / "runs.yaml"
    bad.write_text(
        "runs:\n  mine:\n    label: x\n    source: y\n    settings: {model: llama-7b, global_batch: 8, tp: zero}\n"
    )
    with pytest.raises(DtfilmError) as error:
        runs_named(str(bad))
    assert "runs.yaml:5" in str(error.value) and "tp" in str(error.value)
    with pytest.raises(DtfilmError, match="valid: all, a runs file"):
        runs_named("llama-9000")


@pytest.mark.parametrize(
    ("entry", "line", "says"),
    [
        ("    set: train\n", 4, "'train'; valid: fit, test"),
        ("    reported: {iteration_seconds: -3}\n", 4, "-3; valid: a number of seconds above 0"),
        ("    reported: {iteration_seconds: 3, tflops_per_card: 100}\n", 4, "not both"),
        ("    reported: {iteration_seconds: 3, mfu: 41}\n", 4, "41; valid: a fraction"),
        ("    reported: {tflops_per_card: 100}\n", 4, "missing 'flops_counted'"),
        ("    error_reason: [a, b]\n", 4, "error_reason is list; valid: text"),
    ],
)
def test_a_bad_run_entry_is_one_line_naming_its_line(tmp_path, entry, line, says):
    good = "    reported: {iteration_seconds: 3}\n" if "reported" not in entry else ""
    bad = tmp_path / "runs.yaml"
    bad.write_text(
        "runs:\n  mine:\n    label: x\n"
        + entry
        + good
        + "    source: y\n    settings: {model: llama-7b, global_batch: 8, cards: 8}\n"
    )
    with pytest.raises(DtfilmError) as error:
        runs_named(str(bad))
    message = str(error.value)
    assert f"runs.yaml:{line}" in message and says in message and "\n" not in message


def test_a_run_file_without_sets_is_held_out_and_its_time_is_its_step(tmp_path):
    mine = tmp_path / "runs.yaml"
    mine.write_text(
        "runs:\n  mine:\n    label: x\n    source: y\n    reported: {iteration_seconds: 2.5}\n"
        "    settings: {model: llama-7b, global_batch: 64, cards: 8, seq_len: 2048, tp: 1, pp: 1, dp: 8}\n"
    )
    (run,) = runs_named(str(mine)).values()
    assert run.run_set == "test" and run.iteration_seconds == 2.5
    check = check_run(run)
    assert check.reported_step_seconds == 2.5
    assert check.step_error == pytest.approx(check.predicted_step_seconds / 2.5 - 1)
    # the reported MFU follows from the time: 64 x 2048 tokens in 2.5 s on 8 cards, at 6P each
    setup = _setup(**{k: v for k, v in run.settings.items() if k != "dp"})
    peak, _ = setup.card.peak_for(setup.precision)
    assert check.reported_mfu == pytest.approx(64 * 2048 / 2.5 / 8 * 6 * setup.params / peak)
    assert check.as_json()["set"] == "test" and check.as_json()["reported_step_seconds"] == 2.5


def test_the_benchmark_takes_the_overlap_or_says_why_not():
    """`--overlap` reaches the cost model's input where it has one; a bad value (or a model without
    the input) is one line and exit 2, before any run is checked."""
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "published_runs.py"
    done = subprocess.run(
        [sys.executable, str(script), "--overlap", "sometimes"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "--overlap" in done.stderr
    assert done.stdout == ""
    run = RUNS["korthikanti-22b-sp"]
    if "overlap" in SPECS:  # issue 46's input: the table uses what the frameworks do
        assert TABLE_OVERLAP == "framework"
        # and the model's own default is the frameworks' overlap too (issue 57)
        assert check_run(run, "framework").predicted_step_seconds == check_run(run, None).predicted_step_seconds
    else:
        assert TABLE_OVERLAP is None and checked(run.name).overlap is None


def test_plan_compare_from_the_command_line():
    from tests.conftest import run_dtfilm

    done = run_dtfilm("plan", "--compare", "megatron-gpt-1t")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Megatron GPT 1T, 3,072 A100s" in out and "Narayanan et al. 2021, Table 1" in out
    assert "dp 6 x tp 8 x pp 64 x cp 1" in out  # the published plan
    assert "(not given)" not in out  # its micro-batch size and virtual stages: the authors' sc21 script
    assert "recompute full -> selective: recomputation trades compute for activation memory" in out
    assert "step: published 103\xa0s, predicted" in out and "fit set" in out  # units kept to their number
    bad = run_dtfilm("plan", "--compare", "gpt-5")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "no published run 'gpt-5'; valid: all, a runs file" in bad.stderr
    mixed = run_dtfilm("plan", "--compare", "bloom-176b", "--cards", "8")
    assert mixed.returncode == 2 and "takes a run or a runs file alone" in mixed.stderr


def test_deepspeeds_unpriced_mechanisms_are_far_smaller_than_mt_nlgs_gap():
    """MT-NLG on 3,360 cards keeps its `error_reason` because no DeepSpeed mechanism of 2021 the
    model lacks is the size of its 7.1 s gap (benchmarks/deepspeed_candidates.py). By hand, the
    blocking send/receive (microsoft/DeepSpeed pipe/engine.py and schedule.py at e2fdd254e: four
    transfers of a TP rank's 1/8 share per micro-batch, two more than the model charges, and three
    NVLink all-gathers to rebuild the tensors) over the m + p - 1 = 160 + 34 = 194 slots: a share is
    2048 x 20480 x 2 / 8 = 10,485,760 bytes at 25 GB/s + 8 us = 427.43 us; an all-gather of the
    83,886,080-byte tensor sends 7/8 of it at 300 GB/s + 7 x 3 us = 265.67 us; 194 x (2 x 427.43 +
    3 x 265.67) us = 0.3205 s. The tied embedding's all-reduce between 2 ranks sends its 50,272 x
    20,480 / 8 x 2 = 257,392,640 bytes once (the model's vocabulary): 10.296 ms + 2 x 8 us."""
    from benchmarks.deepspeed_candidates import candidates, priced_setup

    run = RUNS["mt-nlg-530b-3360"]
    sizes = candidates(priced_setup(run))
    assert sizes["p2p: 2 more blocking transfers + 3 all-gathers a micro-batch"] == pytest.approx(0.3205, abs=1e-4)
    assert sizes["tied embedding gradient all-reduce"] == pytest.approx(0.010312, abs=1e-6)
    predicted, published = published_step(run)
    gap = published - predicted
    # the worst case adds every positive candidate, the whole-gradient p2p in place of the partitioned
    worst = sum(s for what, s in sizes.items() if s > 0 and not what.startswith("p2p: "))
    assert gap > 7.0 and worst < 1.8 < gap / 3
    assert "benchmarks/deepspeed_candidates.py" in run.error_reason
