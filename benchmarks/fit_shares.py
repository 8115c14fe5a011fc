"""Fit the cost model's fitted constants for one `overlap` mode on the fit set of the published runs.

    python benchmarks/fit_shares.py [--overlap framework]

The constants: efficiency.SUSTAINED_SHARE[mode][flash_attention] (True: the Llama 3 runs; False:
the 2021-22 runs with unfused attention) and efficiency.LAYER_OVERHEAD_SECONDS[mode], on the runs
published.FITTED_ON names, the `set: fit` runs, and on no other: no `set: test` run is priced
here, so nothing about them can steer the fit.

Objective, in order: the fewest fit runs whose predicted step is more than STEP_TOLERANCE (15%)
off the published step (the issue's per-run target), then the smallest mean absolute step error
over the 17 fit runs, equal weights (the error the benchmark reports per set, and the test-set
target's measure), then the smallest worst error. Search: every overhead on OVERHEAD_GRID_SECONDS and,
for each, every share on SHARE_GRID; the two shares apply to disjoint runs, so for each overhead
each share is chosen on its own runs. Each candidate prices the published configuration as the
table does (published.published_step: the run's stated settings, the rest the fastest that fits).
Prints the fitted values and the fit set's errors under them; efficiency.py holds the result.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from dtfilm.cost import efficiency
from dtfilm.cost.overlap import OVERLAP_MODES
from dtfilm.cost.published import FITTED_ON, STEP_TOLERANCE, PublishedRun, load_runs, published_step

SHARE_GRID = np.round(np.arange(0.50, 1.0001, 0.01), 2)
# as the literal efficiency.py will hold (100e-6, not 100 * 1e-6, which is another double)
OVERHEAD_GRID_SECONDS = [float(f"{us}e-6") for us in range(0, 201, 10)]
SHARE_KEY = "efficiency.SUSTAINED_SHARE[{}][flash_attention={}]"


def errors(runs: list[PublishedRun], overlap: str, flash: bool, share: float, overhead: float) -> np.ndarray:
    """The runs' step errors, (predicted - published) / published, with these constants."""
    shares, overheads = efficiency.SUSTAINED_SHARE[overlap], efficiency.LAYER_OVERHEAD_SECONDS
    kept = shares[flash], overheads[overlap]
    shares[flash], overheads[overlap] = float(share), float(overhead)
    try:
        steps = [published_step(run, overlap) for run in runs]
    finally:  # the module's own values again, whatever happens
        shares[flash], overheads[overlap] = kept
    return np.array([predicted / published - 1 for predicted, published in steps])


def _score(err: np.ndarray) -> tuple[int, float, float]:
    """Runs outside the tolerance, summed absolute error (the mean times the fixed count), worst."""
    off = np.abs(err)
    return int(np.sum(off > STEP_TOLERANCE)), float(off.sum()), float(off.max())


def fit(fit_runs: dict[bool, list[PublishedRun]], overlap: str) -> tuple[float, dict[bool, float], np.ndarray]:
    """The overhead and the shares that score best (_score) on the fit set."""
    best: tuple[tuple[int, float, float], float, dict[bool, float], np.ndarray] | None = None
    for overhead in OVERHEAD_GRID_SECONDS:
        shares, found = {}, []
        for flash, runs in fit_runs.items():
            scored = [(errors(runs, overlap, flash, share, overhead), share) for share in SHARE_GRID]
            err, share = min(scored, key=lambda x: _score(x[0]))
            shares[flash] = float(share)
            found.append(err)
        every = np.concatenate(found)
        key = _score(every)
        if best is None or key < best[0]:
            best = (key, float(overhead), shares, every)
    assert best is not None
    return best[1], best[2], best[3]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--overlap", default="framework", choices=OVERLAP_MODES)
    args = parser.parse_args()
    runs = load_runs()
    fit_runs = {flash: [runs[name] for name in FITTED_ON[SHARE_KEY.format(args.overlap, flash)]] for flash in (True, False)}
    assert all(run.run_set == "fit" for group in fit_runs.values() for run in group), "a test run in a fit"
    started = time.perf_counter()
    overhead, shares, every = fit(fit_runs, args.overlap)
    names = [run.name for flash in fit_runs for run in fit_runs[flash]]
    print(
        f"overlap: {args.overlap}; fit set: {len(names)} runs; objective: fewest runs off by over"
        f" {100 * STEP_TOLERANCE:.0f}%, then mean absolute step error, then worst"
    )
    print(f"SUSTAINED_SHARE[{args.overlap!r}] = {{True: {shares[True]:.2f}, False: {shares[False]:.2f}}}")
    print(f"LAYER_OVERHEAD_SECONDS[{args.overlap!r}] = {round(overhead * 1e6)}e-6")
    for name, error in zip(names, every, strict=True):
        print(f"  {name:24s} {100 * error:+6.1f}%")
    worst = int(np.argmax(np.abs(every)))
    print(
        f"fit set: mean {100 * np.mean(np.abs(every)):.1f}%, worst {100 * every[worst]:+.1f}% ({names[worst]}),"
        f" {int(np.sum(np.abs(every) <= STEP_TOLERANCE))} of {len(every)} within {100 * STEP_TOLERANCE:.0f}%"
        f" ({time.perf_counter() - started:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
