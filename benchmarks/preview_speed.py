"""`dtfilm preview` speed: from a save that changes one shot's caption to the new frame served,
measured on a copy of the project's storyboards (nothing of the project's own is touched).

    .venv/bin/python benchmarks/preview_speed.py                      # dp:ring, silent
    .venv/bin/python benchmarks/preview_speed.py --shot dp:memory --runs 7
    .venv/bin/python benchmarks/preview_speed.py --voice joe          # timed by the spoken narration

Each run saves the storyboard with the shot's caption changed (a word put before it), polls
/status.json every POLL_S until a new generation names a frame, and fetches that frame: the wall
time from the save to the frame's bytes, and the preview process's CPU (user + system) over it.
A page polls every 0.25 s, so a browser shows the frame up to 0.25 s later than measured here.
Prints figures; asserts nothing. Target (issue 59): under 3 s for a caption on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POLL_S = 0.02
WORDS = ("Look", "See", "Here", "Now", "Then", "So", "Mark")  # (words: typed digits are refused in captions)


def cpu_seconds(pid: int) -> float:
    """The process's user + system CPU seconds so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def recaption(storyboard: Path, beat: str, word: str) -> None:
    """Put `word` before the caption of the shot `beat` (its first line), and save."""
    lines = storyboard.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if re.match(rf"\s+beat: {re.escape(beat)}\s*$", line))
    shot_start = max(i for i in range(at + 1) if lines[i].lstrip().startswith("- kind:"))
    caption = next(i for i in range(shot_start, len(lines)) if re.match(r"\s+caption: ", lines[i]))
    lines[caption] = re.sub(
        r'caption: (")?(?:(?:Look|See|Here|Now|Then|So|Mark): )?', rf"caption: \1{word}: ", lines[caption], count=1
    )
    storyboard.write_text("".join(lines))


def status(url: str) -> dict:
    return json.loads(urllib.request.urlopen(url + "status.json").read())


def wait_for(url: str, after: int, timeout_s: float = 120.0) -> dict:
    """The status once its generation passes `after` and nothing is drawing."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        now = status(url)
        if now["generation"] > after and not now["drawing"]:
            return now
        time.sleep(POLL_S)
    raise SystemExit(f"no new frame within {timeout_s:.0f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shot", default="dp:ring", help="CHAPTER:SHOT whose caption changes")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--voice", default="none", help="the narrator (default none; joe times shots by its speech)")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose dtfilm runs")
    args = parser.parse_args()
    chapter, beat = args.shot.split(":", 1)
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        shutil.copytree(ROOT / "storyboard", project / "storyboard")
        if args.voice != "none" and (ROOT / ".dtfilm-cache" / "voice").is_dir():  # the narration spoken once
            shutil.copytree(ROOT / ".dtfilm-cache" / "voice", project / ".dtfilm-cache" / "voice")
        storyboard = project / "storyboard" / f"{chapter}.yaml"
        env = {**os.environ, "PYTHONPATH": str(args.code)}
        command = [sys.executable, "-m", "dtfilm", "preview", args.shot, "--port", "0", "--voice", args.voice]
        server = subprocess.Popen(command, cwd=project, env=env, stdout=subprocess.PIPE, text=True)
        try:
            match = re.search(r"http://127\.0\.0\.1:\d+/", server.stdout.readline())
            assert match, "the preview printed no address"
            url = match.group(0)
            started = time.perf_counter()
            first = wait_for(url, 0)
            print(f"{args.shot}: first frame {time.perf_counter() - started:.2f} s wall (Manim imported, a dry run)")
            walls, cpus, drawn = [], [], []
            generation = first["generation"]
            for run in range(args.runs):
                cpu_before = cpu_seconds(server.pid)
                saved = time.perf_counter()
                recaption(storyboard, beat, WORDS[run % len(WORDS)])
                now = wait_for(url, generation)
                if now["error"]:
                    raise SystemExit(now["error"])
                frame = urllib.request.urlopen(url + now["frame"].lstrip("/")).read()
                walls.append(time.perf_counter() - saved)
                cpus.append(cpu_seconds(server.pid) - cpu_before)
                drawn.append(now["draw_seconds"])
                generation = now["generation"]
                assert frame.startswith(b"\x89PNG")
                time.sleep(0.5)  # (a save apart from the last)
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(
        f"{args.shot}, a caption saved -> its frame served: wall {statistics.median(walls):.2f} s median"
        f" ({', '.join(f'{w:.2f}' for w in walls)}); the preview's CPU {statistics.median(cpus):.2f} s median"
        f" ({', '.join(f'{c:.2f}' for c in cpus)}); drawing alone {statistics.median(drawn):.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
