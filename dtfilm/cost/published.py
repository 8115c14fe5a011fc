"""Published training runs (dtfilm/data/published_runs.yaml) against the cost model and planner.

For each run: the published configuration's estimate (memory, predicted MFU), the reported MFU
converted to the cost model's 6P basis, and the planner's own pick for the same model, cards and
global batch, with each difference said in the decision tree's words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dtfilm.cost import memory
from dtfilm.cost.estimate import estimate_setup
from dtfilm.cost.inputs import BUILTIN, SPECS, Value, builtin_layer, parse_value, resolve
from dtfilm.cost.planner import (
    SCHEDULE_NAMES,
    VIRTUAL_STAGE_CHOICES,
    Degrees,
    Plans,
    evaluate,
    factorisations,
    fastest,
    ranked,
    setup_for,
)
from dtfilm.cost.published_runs import PublishedRun
from dtfilm.cost.setup import Setup
from dtfilm.cost.setup_checks import build_setup
from dtfilm.errors import DtfilmError, Where

# Plan settings a run may fix; the rest of a plan the planner fills.
PLAN_KEYS = ("dp", "tp", "pp", "cp", "ep", "zero", "micro_batch_size", "recompute", "schedule", "virtual_stages")


# The techniques a run had (as against how it cut the cards): the planner's "same techniques"
# pick keeps those the run states and chooses the degrees and batch split itself.
# (Its kernels, FlashAttention and sequence parallelism, are the run's inputs and stay as stated.)
TECHNIQUE_KEYS = ("zero", "recompute", "schedule", "virtual_stages")


# The targets, reported by benchmarks/published_runs.py: every predicted step within 15% of
# the published one, the test set's mean error under 7%, MFU's fall at a fixed batch as the cards
# grow within 5 points of the published fall.
STEP_TOLERANCE = 0.15


TEST_MEAN_TARGET = 0.07


SCALING_TOLERANCE_POINTS = 5.0


# The overlap the table and `plan --compare` use: what the frameworks do, once the cost model has
# an `overlap` input (issue 46); before that, nothing is passed and the model charges every byte.
TABLE_OVERLAP: str | None = "framework" if "overlap" in SPECS else None


_LLAMA3 = ("llama3-405b-8k-8192", "llama3-405b-8k-16384", "llama3-405b-128k-16384")


_UNFUSED = (
    "bloom-176b",
    *(f"megatron-gpt-{size}" for size in ("1.7b", "3.6b", "7.5b", "18b", "39b", "76b", "146b", "310b", "530b", "1t")),
    "mt-nlg-530b-2240",
    "mt-nlg-530b-2800",
    "mt-nlg-530b-3360",
)


# Every constant of the cost model fitted to published runs, with the runs it was fitted on: the
# fit set is exactly their union (tests/test_published_runs.py). Every other constant cites its
# source where it is defined.
FITTED_ON: dict[str, tuple[str, ...]] = {
    # `none`: each share the value that makes the largest error of its group smallest (commits
    # 0162d83, b4784ef)
    "efficiency.SUSTAINED_SHARE[none][flash_attention=True]": _LLAMA3,
    "efficiency.SUSTAINED_SHARE[none][flash_attention=False]": _UNFUSED,
    # `framework`: by benchmarks/fit_shares.py (its docstring says the objective)
    "efficiency.SUSTAINED_SHARE[framework][flash_attention=True]": _LLAMA3,
    "efficiency.SUSTAINED_SHARE[framework][flash_attention=False]": _UNFUSED,
    # no source: set together with `none`'s shares on the same 17 runs (commit 0162d83), so counted
    # as fitted; one value for both modes (efficiency.py says why)
    "efficiency.LAYER_OVERHEAD_SECONDS": _LLAMA3 + _UNFUSED,
}


def flops_per_token(run: PublishedRun, setup: Setup) -> float:
    """FLOPs per token as the run's paper counts them (its TFLOP/s divide by this)."""
    shape, s = setup.shape, setup.seq_len
    if run.flops_counted == "megatron":
        # Narayanan et al. 2021, eq. 3: 96 B s l h^2 (1 + s/6h + V/16lh) per iteration of B*s tokens.
        layers, h, v = shape.layers, shape.hidden, shape.vocab
        return 96 * layers * h * h * (1 + s / (6 * h) + v / (16 * layers * h))
    # PaLM (Chowdhery et al. 2022, appendix B): 6N + 12 L h s, attention counted unmasked.
    return 6 * setup.params_active + 12 * shape.layers * shape.hidden * s


def reported_tokens_per_second(run: PublishedRun, setup: Setup) -> float:
    """Tokens per second per card that the reported iteration time or TFLOP/s imply."""
    if run.iteration_seconds is not None:
        return run.global_batch * setup.seq_len / run.iteration_seconds / setup.cards
    assert run.reported_tflops is not None  # the loader requires one of the two
    return run.reported_tflops * 1e12 / flops_per_token(run, setup)


def reported_mfu(run: PublishedRun, setup: Setup) -> float:
    """The reported throughput as MFU on the cost model's basis: 6P per token over the peak (P
    the active parameters: a MoE model's k routed experts of E)."""
    peak, _ = setup.card.peak_for(setup.precision)
    return reported_tokens_per_second(run, setup) * 6 * setup.params_active / peak  # active: a MoE token


def overlap_layer(overlap: str | None) -> dict[str, Value]:
    """The `--overlap` flag as an input layer: empty for None (the run's own, or the built-in)."""
    if overlap is None:
        return {}
    if "overlap" not in SPECS:
        raise DtfilmError("this cost model has no overlap input; leave --overlap out", Where(flag="--overlap"))
    return {"overlap": parse_value("overlap", overlap, "flag", Where(flag="--overlap"))}


def _base_setup(run: PublishedRun, overlap: str | None = None) -> Setup:
    layer = {k: parse_value(k, v, "storyboard", run.where) for k, v in run.settings.items() if k != "dp"}
    if "overlap" not in run.settings:  # a run that states its overlap keeps it
        layer |= overlap_layer(overlap)
    values: dict[str, Value] = resolve([builtin_layer(), layer])
    setup, _ = build_setup(values)
    return setup


def _virtual_stage_choices(run: PublishedRun) -> tuple[int, ...]:
    """The planner's interleaving depths, and the run's own where it states one they lack."""
    stated = run.settings.get("virtual_stages")
    return tuple(sorted({*VIRTUAL_STAGE_CHOICES, stated})) if isinstance(stated, int) else VIRTUAL_STAGE_CHOICES


def _flash(run: PublishedRun) -> bool:
    return bool(run.settings.get("flash_attention", BUILTIN["flash_attention"]))


def _planned_recompute(run: PublishedRun) -> str:
    """The planner's name for the run's recomputation. With FlashAttention, `none` is the
    planner's `selective` (it keeps the one of two identical plans): the kernel recomputes the
    attention scores in its backward, all that selective recomputation recomputes."""
    stated = str(run.settings["recompute"])
    return "selective" if stated == "none" and _flash(run) else stated


def _as_stated(row: dict[str, Any] | None, run: PublishedRun) -> dict[str, Any] | None:
    """A planner row under the run's own name for its recomputation where it is the same plan,
    priced the same (see `_planned_recompute`): the published plan says what the paper says, and
    a pick of that plan is not shown as a change of technique."""
    if row is None or "recompute" not in run.settings or row["recompute"] != _planned_recompute(run):
        return row
    return {**row, "recompute": run.settings["recompute"]}


def _matches(plans: Plans, run: PublishedRun, keys: tuple[str, ...] = PLAN_KEYS) -> np.ndarray:
    """Plans with every one of `keys` that the run states."""
    return _stated(plans.degree, run, keys)


def _stated(degree: Degrees, run: PublishedRun, keys: tuple[str, ...] = PLAN_KEYS) -> np.ndarray:
    """Of plans given by their degrees (`degree(name)`), those with every one of `keys` that the
    run states."""
    keep = np.ones(degree("dp").size, dtype=bool)
    for key in keys:
        if key not in run.settings:
            continue
        wanted = run.settings[key]
        if key == "recompute":
            wanted = memory.RECOMPUTE_MODES.index(_planned_recompute(run))
        elif key == "schedule":
            wanted = SCHEDULE_NAMES.index(wanted)
        keep &= degree(key) == wanted
    return keep


@dataclass(frozen=True)
class RunCheck:
    """A run beside the cost model: its configuration (filled where the paper is silent), the
    estimate of it, the reported MFU on the model's basis, and the planner's pick."""

    run: PublishedRun
    published: dict[str, Any] | None  # the planner row of the published configuration
    estimate: dict[str, Any] | None
    reported_mfu: float
    pick: dict[str, Any] | None
    pick_estimate: dict[str, Any] | None
    same_techniques: dict[str, Any] | None  # the planner's pick with the run's techniques
    same_techniques_estimate: dict[str, Any] | None
    reasons: list[str]
    reported_step_seconds: float = float("nan")  # the published step: its time, or its tokens at its throughput
    overlap: str | None = None  # the overlap input it was estimated under (None: the model's default)

    @property
    def predicted_step_seconds(self) -> float:
        return float(self.estimate["compute"]["step_seconds"]) if self.estimate else float("nan")

    @property
    def step_error(self) -> float:
        """(predicted - published) / published step: positive where the model is pessimistic."""
        return self.predicted_step_seconds / self.reported_step_seconds - 1

    @property
    def fits(self) -> bool:
        return self.estimate is not None and bool(self.estimate["memory"]["fits"])

    @property
    def predicted_mfu(self) -> float:
        return float(self.estimate["compute"]["predicted_mfu"]) if self.estimate else float("nan")

    @property
    def mfu_error(self) -> float:
        """(predicted - reported) / reported."""
        return self.predicted_mfu / self.reported_mfu - 1

    def as_json(self) -> dict[str, Any]:
        return {
            "run": self.run.name,
            "label": self.run.label,
            "source": self.run.source,
            "settings": {**self.run.settings, "global_batch": self.run.global_batch},
            "not_given": list(self.run.not_given),
            "published": self.published,
            "fits": self.fits,
            "reported_tflops_per_card": self.run.reported_tflops,
            "reported_mfu_as_stated": self.run.reported_mfu,
            "reported_mfu": self.reported_mfu,
            "predicted_mfu": self.predicted_mfu,
            "mfu_error": self.mfu_error,
            "set": self.run.run_set,
            "overlap": self.overlap,
            "reported_step_seconds": self.reported_step_seconds,
            "predicted_step_seconds": self.predicted_step_seconds,
            "step_error": self.step_error,
            "error_reason": self.run.error_reason,
            "pick": self.pick,
            "planner_speedup": self.planner_speedup,
            "same_techniques": self.same_techniques,
            "same_techniques_speedup": self.same_techniques_speedup,
            "differences": self.reasons,
            "disagreement": self.run.disagreement,
        }

    @property
    def planner_speedup(self) -> float:
        """The planner's pick's tokens per second over the published configuration's (model's)."""
        return self._speedup(self.pick_estimate)

    @property
    def same_techniques_speedup(self) -> float:
        """The same for the planner's pick among plans with the run's own techniques."""
        return self._speedup(self.same_techniques_estimate)

    def _speedup(self, other: dict[str, Any] | None) -> float:
        if not self.estimate or not other:
            return float("nan")
        tokens = "tokens_per_second_per_card"
        return other["compute"][tokens] / self.estimate["compute"][tokens]


def _fastest(plans: Plans, mask: np.ndarray) -> dict[str, Any] | None:
    best = fastest(plans, mask)
    return plans.row(best) if best is not None else None


def check_run(run: PublishedRun, overlap: str | None = TABLE_OVERLAP) -> RunCheck:
    """Estimate a run's configuration and let the planner choose for its model, cards and batch,
    under `overlap` (None: the model's built-in)."""
    setup = _base_setup(run, overlap)
    # The planner's sweep on the run's own kernels is the whole one only where the planner runs on
    # them (modern == setup); else the published plan and the same techniques' pick are among the
    # plans with the run's techniques, priced alone as in the sweep (a tenth of its time).
    modern = replace(setup, sequence_parallel=BUILTIN["sequence_parallel"])
    plans = evaluate(
        setup,
        run.global_batch,
        virtual_stages=_virtual_stage_choices(run),
        where=None if modern == setup else lambda degree: _stated(degree, run, TECHNIQUE_KEYS),
    )
    published = _fastest(plans, _matches(plans, run) & plans.fits)
    if published is None:  # nothing fits: report the published plan as it is, with its memory
        published = _fastest(plans, _matches(plans, run))
    published = _as_stated(published, run)
    estimate = estimate_setup(setup_for(setup, published)) if published else None
    # The planner for this model, cluster, sequence and batch with every plan technique dtfilm
    # knows (sequence parallelism included), on the run's own attention kernels: FlashAttention
    # is a change of software stack, and the sustained share that comes with it, not a plan.
    modern_plans = plans if modern == setup else evaluate(modern, run.global_batch)
    order = ranked(modern_plans)
    pick = _as_stated(modern_plans.row(int(order[0])), run) if order.size else None  # `dtfilm plan`'s pick
    pick_estimate = estimate_setup(setup_for(modern, pick)) if pick else None
    same = _as_stated(_fastest(plans, _matches(plans, run, TECHNIQUE_KEYS) & plans.fits), run)
    same_estimate = estimate_setup(setup_for(setup, same)) if same else None
    return RunCheck(
        run=run,
        published=published,
        estimate=estimate,
        reported_mfu=reported_mfu(run, setup),
        pick=pick,
        pick_estimate=pick_estimate,
        same_techniques=same,
        same_techniques_estimate=same_estimate,
        reasons=(_kernels(setup, modern) + differences((published, pick), estimate, pick_estimate))
        if published and pick and estimate and pick_estimate  # an estimate is made only of a plan found
        else [],
        reported_step_seconds=run.global_batch * setup.seq_len / (reported_tokens_per_second(run, setup) * setup.cards),
        overlap=overlap,
    )


def published_step(run: PublishedRun, overlap: str | None = TABLE_OVERLAP) -> tuple[float, float]:
    """The published configuration's predicted step and the published step (seconds), as
    check_run has them, without the planner's own pick: only the run's stated (dp, tp, pp, cp)
    are priced, so a fit (benchmarks/fit_shares.py) can call it for every candidate constant."""
    setup = _base_setup(run, overlap)
    stated = [
        layout
        for layout in factorisations(setup)
        if all(
            run.settings.get(key, value) == value for key, value in zip(("dp", "tp", "pp", "cp"), layout, strict=True)
        )
    ]
    plans = evaluate(setup, run.global_batch, stated, _virtual_stage_choices(run))
    published = _as_stated(
        _fastest(plans, _matches(plans, run) & plans.fits) or _fastest(plans, _matches(plans, run)), run
    )
    predicted = estimate_setup(setup_for(setup, published))["compute"]["step_seconds"] if published else float("nan")
    reported = run.global_batch * setup.seq_len / (reported_tokens_per_second(run, setup) * setup.cards)
    return float(predicted), reported


def _kernels(setup: Setup, modern: Setup) -> list[str]:
    """What the planner's pick gains from kernels the run did not have."""
    out = []
    if setup.sequence_parallel != modern.sequence_parallel:
        out.append(
            "sequence_parallel false -> true: sequence parallelism (Korthikanti et al. 2022) splits the norms'"
            " and dropouts' activations over the tensor-parallel group too"
        )
    return out


def _fmt_seconds(x: float) -> str:
    return f"{x:.3g} s"


def differences(
    rows: tuple[dict[str, Any], dict[str, Any]], published: dict[str, Any], pick: dict[str, Any]
) -> list[str]:
    """Each way the planner's pick differs from the published plan, in the decision tree's words,
    with the figure the model weighs for it (`rows`: the two planner rows; then their estimates)."""

    def changed(key: str) -> tuple[Any, Any] | None:
        a, b = rows[0][key], rows[1][key]
        return (a, b) if a != b else None

    def by_group(numbers: dict[str, Any], group: str) -> str:
        return _fmt_seconds(numbers["comm"]["seconds_by_group"][group])

    bubble = (
        f"{100 * published['pipeline']['bubble_fraction']:.0f}% -> {100 * pick['pipeline']['bubble_fraction']:.0f}%"
    )
    per_card = f"{published['memory']['total'] / 1e9:.1f} GB -> {pick['memory']['total'] / 1e9:.1f} GB"
    compute = (
        f"{_fmt_seconds(published['compute']['compute_seconds'])} -> {_fmt_seconds(pick['compute']['compute_seconds'])}"
    )
    why: dict[str, Callable[[], str]] = {
        "tp": lambda: (
            "tensor parallel splits every layer's matrices inside a node; its traffic"
            f" {by_group(published, 'tp')} -> {by_group(pick, 'tp')} a step"
        ),
        "pp": lambda: f"pipeline stages split the layers; the bubble {bubble} of the timeline",
        "cp": lambda: (
            "context parallel splits each sequence (it pays off for long ones); ring traffic"
            f" {by_group(published, 'cp')} -> {by_group(pick, 'cp')}"
        ),
        "dp": lambda: (
            "data-parallel replicas split the batch; their traffic"
            f" {by_group(published, 'dp')} -> {by_group(pick, 'dp')}"
        ),
        "zero": lambda: f"ZeRO shards the training state over the replicas; the busiest card holds {per_card}",
        "micro_batches": lambda: f"micro-batches per replica set the bubble: {bubble}",
        "micro_batch_size": lambda: f"sequences per micro-batch: compute {compute}, the busiest card {per_card}",
        "virtual_stages": lambda: f"interleaving divides the bubble by the virtual stages: {bubble}",
        "recompute": lambda: (
            f"recomputation trades compute for activation memory: compute {compute}, the busiest card {per_card}"
        ),
        "schedule": lambda: f"the pipeline schedule: the busiest card {per_card}",
    }
    out = []
    for key, reason in why.items():
        if (pair := changed(key)) is not None:
            out.append(f"{key} {pair[0]} -> {pair[1]}: {reason()}")
    return out
