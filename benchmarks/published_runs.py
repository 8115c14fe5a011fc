"""Print the published-runs table, fit set and test set: each run's settings, reported and
predicted MFU (on the cost model's 6P basis), published and predicted step, whether it fits, and
the planner's throughput against the published plan's; each set's mean and worst step error; and
how MFU falls at a fixed batch as the cards grow, published against predicted.

    python benchmarks/published_runs.py [--markdown] [--overlap none|framework]

`--overlap` needs the cost model's `overlap` input (issue 46); without the flag the table uses
`framework` where that input exists, and the model's built-in where it does not.
"""

from __future__ import annotations

import argparse
import sys
import time

from dtfilm.cost.published import (
    SCALING_TOLERANCE_POINTS,
    STEP_TOLERANCE,
    TABLE_OVERLAP,
    TEST_MEAN_TARGET,
    check_run,
    overlap_layer,
)
from dtfilm.cost.published_runs import RUN_SETS, load_runs
from dtfilm.cost.published_table import (
    SCALING_HEADER,
    TABLE_HEADER,
    scaling_row,
    scaling_steps,
    set_errors,
    set_summary,
    table_row,
)
from dtfilm.errors import DtfilmError

SET_TITLES = {
    "fit": "Fit set: the runs the fitted constants were fitted on (published.FITTED_ON)",
    "test": "Test set: held out, nothing fitted on them",
    "moe": "Not fitted: mixture-of-experts runs with their published layout, nothing fitted on them",
}


def table(header: tuple[str, ...], rows: list[tuple[str, ...]], markdown: bool) -> None:
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    for row in rows:
        print("  ".join(x.ljust(w) for x, w in zip(row, widths, strict=True)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="Markdown tables, as the README has them")
    parser.add_argument("--overlap", help="the cost model's overlap input: none or framework")
    args = parser.parse_args()
    overlap = args.overlap if args.overlap is not None else TABLE_OVERLAP
    try:
        overlap_layer(overlap)  # a bad value, or a model without the input, is one line
    except DtfilmError as error:
        print(f"published_runs.py: {error}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    checks = [check_run(run, overlap) for run in load_runs().values()]
    print(f"overlap: {overlap or 'not given (the cost model charges every byte on the critical path)'}")
    sets = set_errors(checks)
    for errors in sets:
        print(f"\n{SET_TITLES[errors.name]}\n")
        table(TABLE_HEADER, [table_row(c) for c in errors.checks], args.markdown)
        print(f"\n{set_summary(errors)}")
    steps = scaling_steps(checks)
    print("\nMFU at a fixed batch as the cards grow (6P basis; falls in points, and as a share of the first)\n")
    table(SCALING_HEADER, [scaling_row(s) for s in steps], args.markdown)

    everyone = sum(len(e.checks) for e in sets)
    within = sum(e.within for e in sets)
    test = next((e for e in sets if e.name == "test"), None)
    scaled = sum(abs(s.miss) <= SCALING_TOLERANCE_POINTS for s in steps)
    print(
        f"\ntargets: step within {100 * STEP_TOLERANCE:.0f}% on {within} of {everyone} runs;"
        + (f" test-set mean {100 * test.mean:.1f}% (target under {100 * TEST_MEAN_TARGET:.0f}%);" if test else "")
        + f" MFU's fall within {SCALING_TOLERANCE_POINTS:g} points on {scaled} of {len(steps)} scaling steps"
    )
    print(
        f"* not given by the paper: the model's fastest choice that fits. {everyone} runs"
        f" ({', '.join(f'{e.name} {len(e.checks)}' for e in sets)}; sets {', '.join(RUN_SETS)})"
        f" checked in {time.perf_counter() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
