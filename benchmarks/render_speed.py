"""Render speed and regeneration, measured on a copy of the project (renders/ is untouched).

    .venv/bin/python benchmarks/render_speed.py            # preview figures
    .venv/bin/python benchmarks/render_speed.py --final    # also the whole film at final (long)

Prints figures; asserts nothing. Targets (issue 17, this 2-core machine): one changed caption
drawn again and its chapter joined in under 10 s, and under 35% of a forced render of the
chapter (measured from the command line, and under --watch, which keeps its drawing processes;
both to the chapter joined, as the target says, and to the process's or round's end, the film
joined after it);
the whole film from cold at preview (audio cache warm) at least 8x faster than real time; the
whole film at final in less than its running time (the moonshot).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import av

ROOT = Path(__file__).resolve().parent.parent
FORCED_RUNS = 2  # forced renders of dp, the caption target's measure
CAPTION_RUNS = 3  # new captions of the ring's shot, one after another


def dtfilm(*args: str, cwd: Path) -> tuple[float, str]:
    wall, out, _ = timed_dtfilm(*args, cwd=cwd)
    return wall, out


def timed_dtfilm(*args: str, cwd: Path) -> tuple[float, str, float | None]:
    """The whole process's wall time, what it printed, and when it printed that its first
    chapter was joined (None if none was): the caption target's measure is the shot drawn and
    the chapter joined; the film is joined after that."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "dtfilm", *args], cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    lines, joined = [], None
    assert process.stdout is not None
    for line in process.stdout:
        lines.append(line)
        if joined is None and re.match(r"\S*renders/(?!film)\S+\.mp4: ", line):
            joined = time.perf_counter() - started
    err = process.stderr.read() if process.stderr else ""
    if process.wait():
        raise SystemExit(err)
    return time.perf_counter() - started, "".join(lines), joined


def encode_floor(movie: Path, quality: str) -> tuple[float, int]:
    """Seconds to encode the movie's frames again with the settings dtfilm has Manim encode
    each shot of `quality` with (dtfilm.system.quality.encoder_settings), measured as decode+encode
    minus decode."""
    from dtfilm.system.quality import encoder_settings

    def run(encode: bool) -> tuple[float, int]:
        started, frames = time.perf_counter(), 0
        with av.open(str(movie)) as inp, tempfile.TemporaryDirectory() as tmp:
            stream = inp.streams.video[0]
            out = av.open(os.path.join(tmp, "floor.mp4"), "w") if encode else None
            target = None
            if out is not None:
                options = encoder_settings(quality)["video_encoder_options"]
                target = out.add_stream("libx264", rate=stream.average_rate, options=dict(options))
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


def drew(out: str) -> list[str]:
    """Each rendered chapter's line: which chapter, and how many of its shots were drawn."""
    found = re.findall(r"renders/(\S+)\.mp4: .*?drew (\d+ of \d+ shots(?:: [^)]*)?)\)", out)
    return [f"{chapter} ({shots})" for chapter, shots in found]


def watched_captions(project: Path, chapter: Path, old: str, news: list[str]) -> list[tuple[float, float]]:
    """Seconds from saving each new caption to `dtfilm render dp --watch` saying the chapter is
    joined, and saying its round is done (the film joined too), its drawing processes kept from
    one save to the next; the caption is put back after."""
    watching = subprocess.Popen(
        [sys.executable, "-m", "dtfilm", "render", "dp", "--watch"],
        cwd=project,
        stdout=subprocess.PIPE,
        text=True,
        # stopped as Ctrl-C stops it, even where this runs in the background (which ignores Ctrl-C)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )

    def round_done(number: int, saved: float = 0.0) -> tuple[float, float]:
        joined = None
        for line in watching.stdout:
            if joined is None and line.startswith("renders/dp.mp4: "):
                joined = time.perf_counter() - saved
            if f"(round {number} done)" in line:
                done = time.perf_counter() - saved
                return joined or done, done
        raise SystemExit("dtfilm render --watch stopped")

    round_done(1)
    walls, first = [], old
    for number, new in enumerate(news, 2):
        saved = time.perf_counter()
        chapter.write_text(chapter.read_text().replace(old, new, 1))
        walls.append(round_done(number, saved))
        old = new
    chapter.write_text(chapter.read_text().replace(old, first, 1))
    round_done(len(news) + 2)
    watching.send_signal(signal.SIGINT)
    watching.wait(timeout=60)
    return walls


def cold_film(project: Path, quality: str, cores: int) -> None:
    wall, _ = dtfilm("render", "--jobs", str(cores), "--quality", quality, cwd=project)
    manifest = json.loads((project / "renders" / "manifest.json").read_text())
    film_seconds = sum(c["duration"] for c in manifest["chapters"].values())
    floor, frames = encode_floor(project / "renders" / "film.mp4", quality)
    print(
        f"whole film from cold at {quality} ({cores} processes): {len(manifest['chapters'])} chapters,"
        f" {film_seconds:.1f} s of film in {wall:.1f} s wall: {film_seconds / wall:.2f}x real time;"
        f" encode-only floor {floor:.1f} s for {frames} frames, {wall / floor:.2f}x the floor"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--final", action="store_true", help="also the whole film at final quality")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        shutil.copytree(ROOT / "storyboard", project / "storyboard")
        voice = ROOT / ".dtfilm-cache" / "voice"
        if voice.is_dir():  # the audio cache warm, as after any earlier render; typeset text cold
            shutil.copytree(voice, project / ".dtfilm-cache" / "voice")
        cores = os.cpu_count() or 1
        cold_film(project, "preview", cores)
        noop, _ = dtfilm("render", cwd=project)
        print(f"nothing changed: {noop:.2f} s wall (the whole process)")
        # This machine's timings swing by a third from run to run: each case is run more than
        # once, and the median is the figure
        forced_runs = [timed_dtfilm("render", "dp", "--force", cwd=project) for _ in range(FORCED_RUNS)]
        forced = statistics.median(run[0] for run in forced_runs)
        forced_joined = statistics.median(run[2] or run[0] for run in forced_runs)
        print(
            f"forced render of dp: {forced:.1f} s wall, its chapter joined at {forced_joined:.1f} s"
            f" (medians of {FORCED_RUNS})"
        )
        chapter = project / "storyboard" / "dp.yaml"
        # the ring's caption (the target's case: dp's costliest shot), then a short shot's
        cases = {
            "the ring's caption": ("The ring averages", [f"The ring ({n}) averages" for n in range(CAPTION_RUNS)]),
            "a short shot's caption (copies)": ("Every card holds all", ["Each card holds all"]),
        }
        for case, (old, news) in cases.items():
            walls, joins = [], []
            for new in news:  # each a caption not drawn before
                chapter.write_text(chapter.read_text().replace(old, new, 1))
                wall, out, joined = timed_dtfilm("render", "dp", cwd=project)
                walls.append(wall)
                joins.append(joined or wall)
                old = new
            chapter.write_text(chapter.read_text().replace(old, cases[case][0], 1))
            back, _ = dtfilm("render", "dp", cwd=project)
            wall, runs = statistics.median(walls), " ".join(f"{w:.1f}" for w in walls)
            joined, join_runs = statistics.median(joins), " ".join(f"{j:.1f}" for j in joins)
            print(
                f"one caption changed in dp, {case}: {wall:.1f} s wall (median of {runs}),"
                f" {drew(out)}; {100 * wall / forced:.0f}% of a forced render of dp; the chapter joined at"
                f" {joined:.1f} s ({join_runs}), {100 * joined / forced_joined:.0f}% of the forced render's;"
                f" changed back: {back:.1f} s"
            )
        news = [f"The ring (watched {n}) averages" for n in range(CAPTION_RUNS)]
        rounds = watched_captions(project, chapter, "The ring averages", news)
        joined, wall = (statistics.median(r[i] for r in rounds) for i in (0, 1))
        runs = " ".join(f"{j:.1f}/{w:.1f}" for j, w in rounds)
        print(
            f"one caption changed in dp, the ring's, under dtfilm render dp --watch: from the save, the chapter"
            f" joined at {joined:.1f} s, {100 * joined / forced_joined:.0f}% of the forced render's; the round"
            f" done (the film joined too) at {wall:.1f} s, {100 * wall / forced:.0f}% of a forced render of dp"
            f" (medians of {runs})"
        )
        chapter.write_text(re.sub(r"values: \[2, 4, 8, 16\]", "values: [2, 4, 8, 32]", chapter.read_text()))
        one, out = dtfilm("render", cwd=project)
        print(f"one number changed in dp (a sweep's last value): {one:.1f} s wall, {drew(out)}, film joined again")
        film = project / "storyboard" / "film.yaml"
        film.write_text(film.read_text().replace("seq_len: 4096", "seq_len: 8192", 1))
        every, out = dtfilm("render", "--jobs", str(cores), cwd=project)
        print(f"one number every chapter shows (seq_len 4096 -> 8192): {every:.1f} s wall, {drew(out)}")
        if args.final:
            cold_film(project, "final", cores)


if __name__ == "__main__":
    main()
