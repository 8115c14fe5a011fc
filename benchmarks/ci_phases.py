"""Where CI's time goes: `./dev.sh test`'s phases before pytest (the system and install checks,
ruff), then pytest with every test's duration and CPU time (user + sys, its children included:
benchmarks/ci_cpu.py), summed by file and by phase (setup, where the shared renders and dry
runs are made; call; teardown), slowest first. CPU is the figure to compare on a shared
machine: load stretches wall time, not the work.

    .venv/bin/python benchmarks/ci_phases.py                        # the whole suite, as CI runs it
    .venv/bin/python benchmarks/ci_phases.py -n 0 tests/test_check.py   # some files, one process
    .venv/bin/python benchmarks/ci_phases.py --save after.json ...  # keep each test's CPU time
    .venv/bin/python benchmarks/ci_phases.py --against before.json ...  # and print them beside
    .venv/bin/python benchmarks/ci_phases.py --recorded             # issue 55's before and after

Prints figures; asserts nothing. Target (issue 55): CI under 15 minutes on a quiet 2-core machine.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
# dev.sh's checks before the tests, as it runs them on a machine where everything is there
BEFORE_TESTS = {
    "system checks (pkg-config, fc-list, python probes)": [
        "bash",
        "-c",
        "pkg-config --exists cairo; pkg-config --exists pangocairo; fc-list | grep -q Inter; "
        "fc-list | grep -q 'DejaVu Sans'; python3 -c 'import ensurepip, venv'; "
        "command -v chromium npm openssl >/dev/null",
    ],
    "ruff check": [str(VENV_BIN / "ruff"), "check", "-q", "."],
    "ruff format --check": [str(VENV_BIN / "ruff"), "format", "--check", "-q", "."],
}
# Issue 55 (item 3), measured on the shared 2-core machine, one process a piece, CPU seconds
# (user + sys, children included) by benchmarks/ci_cpu.py: before, then after this work. Load
# made one figure vary up to 3x between runs (fsdp's corner: 18.2 s in one, 4.7 and 5.7 in two
# others), so the befores and afters are of runs side by side where given.
RECORDED = {
    "suite, fresh clone (`.ci/run`, the lead's runs)": "938-966 s wall; pytest 14.5 min on 2 workers",
    "suite CPU (the lead's `time` of CI)": "user 18.3-23.2 min + sys 2.0-2.3 min",
    "dry runs of a chapter at one config": "4-39 s each (pp at pp 16: 39 s); 24 shared ones, 13 corners, 14 samples",
    "check dp in a copy of the storyboard, cold": "20.1 s CPU; 6.7 s with the voice's sentences there (13 s speaking)",
    "a shared dry run whose sentences were not yet spoken": "cp-default 26.1 s; dp, ledger, pp, tp 5.9-7.6 s",
    "test_catalog adds_cards (check dp at its cards)": "before 20.4 s; after 10.9, 11.7 and 12.4 s (seed_caches)",
    "test_paced_highlights 3d + pp": "before 2 dry runs of their own (16.5 + 5.8 s); after read the shared ones",
    "test_pictures pp_says + fsdp_draws": "before 2 dry runs of their own; after pp 0.05 s (shared), fsdp shared",
    "test_why_marks": "before 1 dry run of why of its own (~5.5 s); after why's shared one",
    "dp-default group (test_render, test_embed, test_docs_sites), one process": "88 s CPU, 250 s wall",
    "top durations, dp-default group (wall, loaded)": "dp render 90 s setup; still 22 s; one shot 18 s; gif+webm 17 s",
    "top CPU, other pieces": "docs_site[adding-a-chapter] 36.6 s; kind gallery 34 s; explore rebuild 21.8 s",
}
DURATION = re.compile(r"^([\d.]+)s (setup|call|teardown)\s+(\S+?)(?:::(\S+))?$")


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, capture_output=True)
    return time.perf_counter() - started


def cpu_by_test(log: Path) -> dict[str, float]:
    """Each test's CPU seconds (its phases summed) from benchmarks/ci_cpu.py's log."""
    cpu: dict[str, float] = collections.defaultdict(float)
    if log.is_file():
        for line in log.read_text().splitlines():
            seconds, _, nodeid = line.split(" ", 2)
            cpu[nodeid] += float(seconds)
    return cpu


def print_cpu(log: Path, top: int, against: dict[str, float] | None) -> dict[str, float]:
    by_test = cpu_by_test(log)
    by_phase: dict[str, float] = collections.defaultdict(float)
    for line in log.read_text().splitlines() if log.is_file() else []:
        seconds, phase, _ = line.split(" ", 2)
        by_phase[phase] += float(seconds)
    print(f"pytest CPU: {sum(by_test.values()):.0f} s in all (every worker, children included)")
    for phase, seconds in sorted(by_phase.items(), key=lambda item: -item[1]):
        print(f"  {phase}: {seconds:.0f} s")
    by_file: dict[str, float] = collections.defaultdict(float)
    for nodeid, seconds in by_test.items():
        by_file[nodeid.split("::")[0]] += seconds
    before_file: dict[str, float] = collections.defaultdict(float)
    for nodeid, seconds in (against or {}).items():
        before_file[nodeid.split("::")[0]] += seconds
    if against is not None:
        print(
            f"  before: {sum(against.values()):.0f} s (the same tests: {sum(against.get(t, 0) for t in by_test):.0f} s)"
        )
    print("CPU by file" + (" (before -> now)" if against is not None else "") + ":")
    for path, seconds in sorted(by_file.items(), key=lambda item: -item[1])[:top]:
        was = f"{before_file.get(path, 0):7.1f} -> " if against is not None else ""
        print(f"  {was}{seconds:7.1f} s  {path}")
    print("CPU, costliest tests:")
    for nodeid, seconds in sorted(by_test.items(), key=lambda item: -item[1])[:top]:
        was = f"{against.get(nodeid, 0):7.1f} -> " if against is not None else ""
        print(f"  {was}{seconds:7.1f} s  {nodeid}")
    return by_test


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tests", nargs="*", help="test files (default: the whole suite)")
    parser.add_argument("-n", default="auto", help="pytest-xdist workers, as dev.sh (auto)")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--save", type=Path, help="write each test's CPU seconds here (JSON)")
    parser.add_argument("--against", type=Path, help="a --save of an earlier run, printed beside")
    parser.add_argument("--recorded", action="store_true", help="print issue 55's figures, before and after")
    args = parser.parse_args()
    if args.recorded:
        for what, figure in RECORDED.items():
            print(f"{what}: {figure}")
        return 0
    for name, command in BEFORE_TESTS.items():
        print(f"{name}: {timed(command):.2f} s")
    log = Path(tempfile.mkdtemp(prefix="ci-cpu-")) / "cpu.log"
    command = [sys.executable, "-m", "pytest", "-q", "-n", args.n, "--dist", "loadgroup", "--durations=0",
               "-p", "no:cacheprovider", "-p", "benchmarks.ci_cpu", *args.tests]  # fmt: skip
    env = dict(
        os.environ,
        DTFILM_CPU_LOG=str(log),
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    by_file: dict[str, float] = collections.defaultdict(float)
    by_phase: dict[str, float] = collections.defaultdict(float)
    tests: list[tuple[float, str]] = []
    for line in done.stdout.splitlines():
        found = DURATION.match(line.strip())
        if found is None:
            continue
        seconds, phase, path, test = float(found[1]), found[2], found[3], found[4] or ""
        by_file[path] += seconds
        by_phase[phase] += seconds
        tests.append((seconds, f"{phase} {path}::{test}"))
    print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-2000:])
    print(f"pytest: {wall:.0f} s wall; test time {sum(by_phase.values()):.0f} s in all (over every worker)")
    for phase, seconds in sorted(by_phase.items(), key=lambda item: -item[1]):
        print(f"  {phase}: {seconds:.0f} s")
    print("by file:")
    for path, seconds in sorted(by_file.items(), key=lambda item: -item[1])[: args.top]:
        print(f"  {seconds:7.1f} s  {path}")
    print("slowest:")
    for seconds, name in sorted(tests, reverse=True)[: args.top]:
        print(f"  {seconds:7.1f} s  {name}")
    against = json.loads(args.against.read_text()) if args.against else None
    by_test = print_cpu(log, args.top, against)
    if args.save:
        args.save.write_text(json.dumps(by_test, indent=0, sort_keys=True))
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
