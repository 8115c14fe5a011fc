"""Where CI's time goes: `./dev.sh test`'s phases before pytest (the system and install checks,
ruff), then pytest with every test's duration, summed by file and by phase (setup, where the
shared renders and dry runs are made; call; teardown), slowest first.

    .venv/bin/python benchmarks/ci_phases.py                        # the whole suite, as CI runs it
    .venv/bin/python benchmarks/ci_phases.py tests/test_check.py    # some files (-n 0 for one process)

Prints figures; asserts nothing. Target (issue 55): CI under 15 minutes on a quiet 2-core machine.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
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
DURATION = re.compile(r"^([\d.]+)s (setup|call|teardown)\s+(\S+?)(?:::(\S+))?$")


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, capture_output=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tests", nargs="*", help="test files (default: the whole suite)")
    parser.add_argument("-n", default="auto", help="pytest-xdist workers, as dev.sh (auto)")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    for name, command in BEFORE_TESTS.items():
        print(f"{name}: {timed(command):.2f} s")
    command = [sys.executable, "-m", "pytest", "-q", "-n", args.n, "--dist", "loadgroup", "--durations=0",
               "-p", "no:cacheprovider", *args.tests]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
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
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
