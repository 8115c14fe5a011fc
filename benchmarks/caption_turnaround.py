"""A caption's turnaround (issue 55): how long `dtfilm render dp` takes, the whole process, after
one shot's caption changed (dp's second shot, `memory`), after nothing changed, and from cold.
Measured on a copy of the project (renders/ and the caches are untouched):

    .venv/bin/python benchmarks/caption_turnaround.py                 # the film rendered cold first
    .venv/bin/python benchmarks/caption_turnaround.py --from renders  # start from a copy of these renders
    .venv/bin/python benchmarks/caption_turnaround.py --chapter-only  # dp alone (the film not joined)

Prints wall and CPU seconds (user + system, the process and the children it waited for: the
drawing processes); on a loaded machine the CPU is the figure. Asserts nothing. Target: a caption
back within 1.5 s, the whole process, on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CAPTION = "of training state on every card"  # in dp's memory shot


def timed(*args: str, cwd: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds of `dtfilm ARGS`, and what it printed."""
    before = os.times()
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "dtfilm", *args], cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = os.times()
    if done.returncode:
        raise SystemExit(done.stderr)
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu, done.stdout


def what(out: str) -> str:
    """What the render said it did, in short."""
    drew = re.findall(r"drew (\d+ of \d+ shots)", out)
    film = "film joined" if "chapters joined" in out else "film not joined"
    return f"{', '.join(drew) or 'nothing drawn'}; {film}"


def line(case: str, runs: list[tuple[float, float, str]]) -> str:
    walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
    each = " ".join(f"{w:.2f}/{c:.2f}" for w, c in zip(walls, cpus, strict=True))
    return (
        f"{case}: {statistics.median(walls):.2f} s wall, {statistics.median(cpus):.2f} s CPU"
        f" (medians; wall/CPU of each: {each}; {what(runs[-1][2])})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="start", type=Path, help="a renders folder of the whole film to start from")
    parser.add_argument("--runs", type=int, default=3, help="runs of each case (the medians are printed)")
    parser.add_argument(
        "--chapter-only",
        action="store_true",
        help="render dp alone from cold, not the whole film (minutes less on a small machine; the film is not joined)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        shutil.copytree(ROOT / "storyboard", project / "storyboard")
        cache = ROOT / ".dtfilm-cache"
        for part in ("voice", "typeset"):  # the audio warm, as after any earlier render
            if (cache / part).is_dir():
                shutil.copytree(cache / part, project / ".dtfilm-cache" / part)
        if args.start is not None:
            shutil.copytree(args.start, project / "renders", symlinks=True)
            timed("render", cwd=project)  # (made fresh for this checkout's code, if it is not)
        elif args.chapter_only:
            print(line("dp alone from cold", [timed("render", "dp", cwd=project)]))
        else:
            print(line("the whole film from cold", [timed("render", cwd=project)]))
        print(line("nothing changed", [timed("render", "dp", cwd=project) for _ in range(args.runs)]))
        chapter = project / "storyboard" / "dp.yaml"
        text = chapter.read_text()
        runs = []
        for run in range(args.runs):  # each a caption not drawn before
            chapter.write_text(text.replace(CAPTION, f"{CAPTION} ({run + 1})", 1))
            runs.append(timed("render", "dp", cwd=project))
        print(line("one caption changed (dp: memory)", runs))
        chapter.write_text(text)
        print(line("changed back (its shot in the cache)", [timed("render", "dp", cwd=project)]))


if __name__ == "__main__":
    main()
