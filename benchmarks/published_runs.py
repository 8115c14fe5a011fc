"""Print the published-runs table: each run's settings, reported and predicted MFU (on the cost
model's 6P basis), whether it fits, and the planner's throughput against the published plan's.

    python benchmarks/published_runs.py [--markdown]
"""

from __future__ import annotations

import sys
import time

from dtfilm.cost.published import check_run, load_runs


def plan_text(row: dict) -> str:
    return f"{row['dp']}x{row['tp']}x{row['pp']}x{row['cp']}"


def main() -> None:
    markdown = "--markdown" in sys.argv
    started = time.perf_counter()
    header = (
        "run", "dp x tp x pp x cp", "b", "v", "recompute", "zero", "per card GB", "fits",
        "reported MFU", "predicted", "error", "planner's pick", "pick", "same techniques", "same",
    )  # fmt: skip
    rows = []
    for run in load_runs().values():
        c = check_run(run)
        p = c.published

        def filled(key: str, p: dict = p, run=run) -> str:
            return f"{p[key]}*" if key in run.not_given else str(p[key])

        rows.append((
            run.name, plan_text(p), filled("micro_batch_size"), filled("virtual_stages"), filled("recompute"),
            str(p["zero"]), f"{c.estimate['memory']['total'] / 1e9:.1f}", "yes" if c.fits else "NO",
            f"{100 * c.reported_mfu:.1f}%", f"{100 * c.predicted_mfu:.1f}%", f"{100 * c.mfu_error:+.0f}%",
            plan_text(c.pick), f"{100 * (c.planner_speedup - 1):+.0f}%",
            plan_text(c.same_techniques), f"{100 * (c.same_techniques_speedup - 1):+.0f}%",
        ))  # fmt: skip
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
        print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
        for row in rows:
            print("  ".join(x.ljust(w) for x, w in zip(row, widths, strict=True)))
    print(f"\n* not given by the paper: the model's fastest choice that fits. {len(rows)} runs checked in"
          f" {time.perf_counter() - started:.1f} s")  # fmt: skip


if __name__ == "__main__":
    main()
