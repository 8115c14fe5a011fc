"""The published runs' table (benchmarks/published_runs.py): each set's step errors, MFU's fall as
the cards grow, and the table's rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dtfilm.cost.published import STEP_TOLERANCE, RunCheck
from dtfilm.cost.published_runs import RUN_SETS


@dataclass(frozen=True)
class SetErrors:
    """One set's step errors: how far the predicted step is from the published one."""

    name: str
    checks: tuple[RunCheck, ...]

    @property
    def errors(self) -> np.ndarray:
        return np.array([c.step_error for c in self.checks])

    @property
    def mean(self) -> float:
        """Mean absolute error."""
        return float(np.mean(np.abs(self.errors)))

    @property
    def worst(self) -> RunCheck:
        return self.checks[int(np.argmax(np.abs(self.errors)))]

    @property
    def within(self) -> int:
        """Runs within STEP_TOLERANCE."""
        return int(np.sum(np.abs(self.errors) <= STEP_TOLERANCE))


def set_errors(checks: list[RunCheck]) -> list[SetErrors]:
    """The fit set's and the test set's errors, in RUN_SETS order (a set with no run left out)."""
    out = []
    for name in RUN_SETS:
        members = tuple(c for c in checks if c.run.run_set == name)
        if members:
            out.append(SetErrors(name, members))
    return out


@dataclass(frozen=True)
class ScalingStep:
    """One model at a fixed batch on fewer and on more cards: how much MFU (6P basis) it loses,
    published and predicted, in points."""

    base: RunCheck
    scaled: RunCheck

    @property
    def cards_ratio(self) -> float:
        return self.scaled.run.settings["cards"] / self.base.run.settings["cards"]

    @property
    def published_fall(self) -> float:
        return 100 * (self.base.reported_mfu - self.scaled.reported_mfu)

    @property
    def predicted_fall(self) -> float:
        return 100 * (self.base.predicted_mfu - self.scaled.predicted_mfu)

    @property
    def published_fall_share(self) -> float:
        """The fall as a share of the smaller run's MFU."""
        return 1 - self.scaled.reported_mfu / self.base.reported_mfu

    @property
    def predicted_fall_share(self) -> float:
        return 1 - self.scaled.predicted_mfu / self.base.predicted_mfu

    @property
    def miss(self) -> float:
        """Predicted fall minus published fall, in points."""
        return self.predicted_fall - self.published_fall


def scaling_steps(checks: list[RunCheck]) -> list[ScalingStep]:
    """Runs of one model, cluster, sequence, batch and techniques on more than one card count:
    the fewest cards against each larger count (strong scaling, as Narayanan et al. 2021, Table 2)."""
    series: dict[tuple[Any, ...], list[RunCheck]] = {}
    for c in checks:
        same = tuple(sorted((k, str(v)) for k, v in c.run.settings.items() if k not in ("cards", "dp")))
        series.setdefault((*same, c.run.global_batch), []).append(c)
    out = []
    for members in series.values():
        members.sort(key=lambda c: c.run.settings["cards"])
        base = members[0]
        out += [ScalingStep(base, c) for c in members[1:] if c.run.settings["cards"] > base.run.settings["cards"]]
    return out


TABLE_HEADER = (
    "run", "dp x tp x pp x cp", "b", "v", "recompute", "zero", "per card GB", "fits", "reported MFU", "predicted",
    "published step", "predicted step", "step error", "planner's pick", "pick", "same techniques", "same",
)  # fmt: skip


def _plan_text(row: dict[str, Any]) -> str:
    return f"{row['dp']}x{row['tp']}x{row['pp']}x{row['cp']}"


def table_row(c: RunCheck) -> tuple[str, ...]:
    """A run's row of the published-runs table (README), TABLE_HEADER's columns; * marks a
    setting the paper leaves out, filled with the model's fastest choice that fits."""
    p, run = c.published, c.run
    assert p is not None and c.estimate is not None and c.pick is not None and c.same_techniques is not None

    def filled(key: str) -> str:
        return f"{p[key]}*" if key in run.not_given else str(p[key])

    return (
        run.name, _plan_text(p), filled("micro_batch_size"), filled("virtual_stages"), filled("recompute"),
        str(p["zero"]), f"{c.estimate['memory']['total'] / 1e9:.1f}", "yes" if c.fits else "NO",
        f"{100 * c.reported_mfu:.1f}%", f"{100 * c.predicted_mfu:.1f}%",
        f"{c.reported_step_seconds:.3g} s", f"{c.predicted_step_seconds:.3g} s", f"{100 * c.step_error:+.0f}%",
        _plan_text(c.pick), f"{100 * (c.planner_speedup - 1):+.0f}%",
        _plan_text(c.same_techniques), f"{100 * (c.same_techniques_speedup - 1):+.0f}%",
    )  # fmt: skip


def set_summary(errors: SetErrors) -> str:
    """One line: a set's mean and worst step error, and how many runs are within the tolerance."""
    worst = errors.worst
    return (
        f"{errors.name} set, {len(errors.checks)} runs: mean step error {100 * errors.mean:.1f}%,"
        f" worst {100 * worst.step_error:+.1f}% ({worst.run.name}),"
        f" {errors.within} of {len(errors.checks)} within {100 * STEP_TOLERANCE:.0f}%"
    )


SCALING_HEADER = (
    "runs", "cards", "published MFU", "predicted MFU", "published fall", "predicted fall", "miss",
)  # fmt: skip


def scaling_row(step: ScalingStep) -> tuple[str, ...]:
    """A scaling step's row: MFU on the 6P basis, falls in points (and as a share of the first)."""
    b, s = step.base, step.scaled
    return (
        f"{b.run.name} -> {s.run.name}",
        f"{b.run.settings['cards']:,} -> {s.run.settings['cards']:,} ({step.cards_ratio:.3g}x)",
        f"{100 * b.reported_mfu:.1f}% -> {100 * s.reported_mfu:.1f}%",
        f"{100 * b.predicted_mfu:.1f}% -> {100 * s.predicted_mfu:.1f}%",
        f"{step.published_fall:.1f} pt ({100 * step.published_fall_share:.0f}%)",
        f"{step.predicted_fall:.1f} pt ({100 * step.predicted_fall_share:.0f}%)",
        f"{step.miss:+.1f} pt",
    )
