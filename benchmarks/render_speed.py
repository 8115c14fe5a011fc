"""Render speed and regeneration, measured on a copy of the project (renders/ is untouched).

    .venv/bin/python benchmarks/render_speed.py            # preview figures
    .venv/bin/python benchmarks/render_speed.py --final    # also final quality (slow: minutes)

Prints figures; asserts nothing. Targets (issue 9): nothing changed checked in under 1 s; one
number changed re-renders one chapter; final within 1.3x of the encode-only floor; preview at
least 8x faster than real time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import av

ROOT = Path(__file__).resolve().parent.parent


def dtfilm(*args: str, cwd: Path) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "dtfilm", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr)
    return time.perf_counter() - started, done.stdout


def encode_floor(movie: Path) -> tuple[float, int]:
    """Seconds to encode the movie's frames again with the same encoder settings as Manim's
    (libx264, yuv420p, crf 23), measured as decode+encode minus decode alone."""

    def run(encode: bool) -> tuple[float, int]:
        started, frames = time.perf_counter(), 0
        with av.open(str(movie)) as inp, tempfile.TemporaryDirectory() as tmp:
            stream = inp.streams.video[0]
            out = av.open(os.path.join(tmp, "floor.mp4"), "w") if encode else None
            target = None
            if out is not None:
                target = out.add_stream("libx264", rate=stream.average_rate, options={"crf": "23"})
                target.width, target.height, target.pix_fmt = stream.width, stream.height, "yuv420p"
            for frame in inp.decode(stream):
                frames += 1
                if target is not None:
                    out.mux(target.encode(frame))
            if out is not None:
                out.mux(target.encode())
                out.close()
        return time.perf_counter() - started, frames

    decode_only, frames = run(False)
    both, _ = run(True)
    return both - decode_only, frames


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--final", action="store_true", help="also render at final quality")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        shutil.copytree(ROOT / "storyboard", project / "storyboard")
        if (ROOT / ".dtfilm-cache").is_dir():  # the audio cache warm, as after any earlier render
            shutil.copytree(ROOT / ".dtfilm-cache", project / ".dtfilm-cache")
        cores = os.cpu_count() or 1
        wall, _ = dtfilm("render", "--jobs", str(cores), cwd=project)
        manifest = json.loads((project / "renders" / "manifest.json").read_text())
        film_seconds = sum(c["duration"] for c in manifest["chapters"].values())
        print(f"film: {len(manifest['chapters'])} chapters, {film_seconds:.1f} s")
        print(f"preview render (854x480 15 fps, {cores} processes): {wall:.1f} s wall,"
              f" {film_seconds / wall:.2f}x real time")  # fmt: skip
        noop, _ = dtfilm("render", cwd=project)
        print(f"rebuild with nothing changed: {noop:.2f} s wall (the whole process)")
        chapter = project / "storyboard" / "dp.yaml"
        chapter.write_text(re.sub(r"values: \[2, 4, 8, 16\]", "values: [2, 4, 8, 32]", chapter.read_text()))
        one, out = dtfilm("render", cwd=project)
        rendered = [line.split(":")[0] for line in out.splitlines() if "s of film in" in line]
        print(f"one number changed in dp: {one:.1f} s wall, re-rendered {rendered}, film joined again")
        chapter.write_text(chapter.read_text().replace("The ring averages", "The ring sums and averages", 1))
        caption, out = dtfilm("render", "dp", cwd=project)
        forced, _ = dtfilm("render", "dp", "--force", cwd=project)
        print(f"one caption changed in dp: {caption:.1f} s wall; a forced render of dp {forced:.1f} s"
              f" ({100 * caption / forced:.0f}% of it: the chapter is the unit of work today)")  # fmt: skip
        if args.final:
            final, _ = dtfilm("render", "dp", "--quality", "final", "--jobs", "1", cwd=project)
            floor, frames = encode_floor(project / "renders" / "dp.mp4")
            print(f"final render of dp (1920x1080 60 fps, {frames} frames): {final:.1f} s wall;"
                  f" encode-only floor {floor:.1f} s; ratio {final / floor:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
