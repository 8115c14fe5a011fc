"""How long `dtfilm page` takes, and how big the page is: cold (no picture cached), warm
(nothing changed), and after one number changes (the pipeline schedule: only the pipelines'
pictures are redrawn). Builds in a temporary copy of the project's storyboard, without the film.

    .venv/bin/python benchmarks/page_speed.py            # the default page (3 models x 3 cards)
    .venv/bin/python benchmarks/page_speed.py --small    # one model, one card

Prints figures; asserts nothing (speed targets live here, not in timed tests).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build(project: Path, extra: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "dtfilm", "page", "--no-film", *extra],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - started, done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", action="store_true", help="one model and one card type")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    extra = ["--jobs", str(args.jobs)]
    if args.small:
        extra += ["--models", "llama-7b", "--gpus", "h100-sxm-80gb"]
    with tempfile.TemporaryDirectory(prefix="dtfilm-page-bench-") as temp:
        project = Path(temp)
        shutil.copytree(ROOT / "storyboard", project / "storyboard")
        film = project / "storyboard" / "film.yaml"
        print(f"{'build':<28}{'wall s':>8}{'states':>8}{'pictures':>10}{'drawn':>7}{'MB':>7}")
        for name in ("cold", "warm (nothing changed)", "schedule 1f1b -> gpipe"):
            if name.startswith("schedule"):
                film.write_text(film.read_text().replace("schedule: 1f1b", "schedule: gpipe"))
            seconds, line = build(project, extra)
            states, pictures, drawn, size = re.search(
                r"(\d+) states, (\d+) pictures \((\d+) drawn\), ([\d.]+) MB", line
            ).groups()
            print(f"{name:<28}{seconds:>8.1f}{states:>8}{pictures:>10}{drawn:>7}{size:>7}")
        stills = project / "renders" / "explore" / "stills"
        sizes = [p.stat().st_size for p in stills.iterdir()]
        print(f"stills: {len(sizes)}, {sum(sizes) / len(sizes) / 1e3:.1f} KB each on average")
        print(f"states.js: {(project / 'renders' / 'explore' / 'states.js').stat().st_size / 1e3:.0f} KB")


if __name__ == "__main__":
    main()
