"""Fit the cost model's sustained shares for one `overlap` mode on the fit set of the published runs.

    python benchmarks/fit_shares.py [--overlap framework]

The constants: efficiency.SUSTAINED_SHARE[mode][flash_attention] (True: the Llama 3 runs; False:
the 2021-22 runs with unfused attention), on the runs published.FITTED_ON names, the `set: fit`
runs, and on no other: no `set: test` run is priced here, so nothing about them can steer the fit.

Objective, in order: the fewest fit runs whose predicted step is more than STEP_TOLERANCE (15%)
off the published step (the issue's per-run target) or whose predicted MFU is more than 15% off
the reported one (what the tests hold a fit run to), then the smallest mean absolute step error
over the 17 fit runs, equal weights (the error the benchmark reports per set, and the test-set
target's measure), then the smallest worst error. Search: every share on SHARE_GRID; the two
shares apply to disjoint runs, so each is chosen on its own runs. Each candidate prices the
published configuration as the table does (published.published_step: the run's stated settings,
the rest the fastest that fits).

efficiency.LAYER_OVERHEAD_SECONDS stays as set with `none`'s shares: the script also fits the
shares at each overhead of OVERHEAD_PROFILE_SECONDS and prints the fit set's mean there, which
shows the fit set cannot pin it down under `framework`. Prints the fitted shares and the fit
set's errors under them; efficiency.py holds the result.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from dtfilm.cost import efficiency
from dtfilm.cost.overlap import OVERLAP_MODES
from dtfilm.cost.published import FITTED_ON, STEP_TOLERANCE, published_step
from dtfilm.cost.published_runs import PublishedRun, load_runs

SHARE_GRID = np.round(np.arange(0.50, 1.0001, 0.01), 2)
OVERHEAD_PROFILE_SECONDS = (0.0, 20e-6, 40e-6, 80e-6)
# tests/test_published_runs.py also holds a fit run's predicted MFU within 15% of the reported one:
# a step 13.0% short is an MFU 15% high, so "off" is a step more than 15% long or 13.0% short
MFU_TOLERANCE = 0.15
SHARE_KEY = "efficiency.SUSTAINED_SHARE[{}][flash_attention={}]"


def errors(runs: list[PublishedRun], overlap: str, flash: bool, share: float, overhead: float) -> np.ndarray:
    """The runs' step errors, (predicted - published) / published, with these constants."""
    shares = efficiency.SUSTAINED_SHARE[overlap]
    kept = shares[flash], efficiency.LAYER_OVERHEAD_SECONDS
    shares[flash], efficiency.LAYER_OVERHEAD_SECONDS = float(share), overhead
    try:
        steps = [published_step(run, overlap) for run in runs]
    finally:  # the module's own values again, whatever happens
        shares[flash], efficiency.LAYER_OVERHEAD_SECONDS = kept
    return np.array([predicted / published - 1 for predicted, published in steps])


def _score(err: np.ndarray) -> tuple[int, float, float]:
    """Runs outside the tolerances, summed absolute error (the mean times the fixed count), worst."""
    off = np.abs(err)
    outside = (err > STEP_TOLERANCE) | (err < 1 / (1 + MFU_TOLERANCE) - 1)
    return int(np.sum(outside)), float(off.sum()), float(off.max())


def fit(
    fit_runs: dict[bool, list[PublishedRun]], overlap: str, overhead: float
) -> tuple[dict[bool, float], np.ndarray]:
    """The shares that score best (_score) on the fit set at this overhead, and the errors there."""
    shares, found = {}, []
    for flash, runs in fit_runs.items():
        scored = [(errors(runs, overlap, flash, share, overhead), share) for share in SHARE_GRID]
        err, share = min(scored, key=lambda x: _score(x[0]))
        shares[flash] = float(share)
        found.append(err)
    return shares, np.concatenate(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--overlap", default="framework", choices=OVERLAP_MODES)
    args = parser.parse_args()
    runs = load_runs()
    fit_runs = {
        flash: [runs[name] for name in FITTED_ON[SHARE_KEY.format(args.overlap, flash)]] for flash in (True, False)
    }
    assert all(run.run_set == "fit" for group in fit_runs.values() for run in group), "a test run in a fit"
    started = time.perf_counter()
    overhead = efficiency.LAYER_OVERHEAD_SECONDS
    shares, every = fit(fit_runs, args.overlap, overhead)
    names = [run.name for flash in fit_runs for run in fit_runs[flash]]
    print(
        f"overlap: {args.overlap}; fit set: {len(names)} runs; objective: fewest runs off by over"
        f" {100 * STEP_TOLERANCE:.0f}% (step) or {100 * MFU_TOLERANCE:.0f}% (MFU),"
        " then mean absolute step error, then worst"
    )
    print(f"SUSTAINED_SHARE[{args.overlap!r}] = {{True: {shares[True]:.2f}, False: {shares[False]:.2f}}}")
    print(f"at LAYER_OVERHEAD_SECONDS = {overhead * 1e6:g} us (not refitted)")
    for name, error in zip(names, every, strict=True):
        print(f"  {name:24s} {100 * error:+6.1f}%")
    worst = int(np.argmax(np.abs(every)))
    print(
        f"fit set: mean {100 * np.mean(np.abs(every)):.1f}%, worst {100 * every[worst]:+.1f}% ({names[worst]}),"
        f" {int(np.sum(np.abs(every) <= STEP_TOLERANCE))} of {len(every)} within {100 * STEP_TOLERANCE:.0f}%"
    )
    print("the overhead's profile (shares refitted at each):")
    for other in OVERHEAD_PROFILE_SECONDS:
        other_shares, other_errors = fit(fit_runs, args.overlap, other)
        print(
            f"  {other * 1e6:3g} us: shares {other_shares[True]:.2f}, {other_shares[False]:.2f};"
            f" mean {100 * np.mean(np.abs(other_errors)):.2f}%, worst {100 * np.max(np.abs(other_errors)):.1f}%"
        )
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
