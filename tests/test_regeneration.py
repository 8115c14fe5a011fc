"""Regeneration: only what changed is rendered; interrupted or concurrent runs break nothing;
the film is joined with chapter markers; watch mode follows saves; status needs no manim."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

import av
import pytest

from dtfilm.render.lock import render_lock
from tests.conftest import ROOT, run_dtfilm

pytestmark = [pytest.mark.render, pytest.mark.xdist_group("regeneration")]

FILM = """\
title: Test film
defaults:
  model: {preset: llama-7b, params: 7e9}
  training: {seq_len: 4096}
chapters: [alpha, beta]
"""
CHAPTER = """\
id: {id}
title: {title}
plan: {{zero: {zero}}}
shots:
  - kind: title
    subtitle: "{{memory.total:GB}} per card"
    duration: 1
"""


def write_project(root: Path, alpha_zero: int = 0) -> None:
    (root / "storyboard").mkdir(exist_ok=True)
    (root / "storyboard" / "film.yaml").write_text(FILM)
    (root / "storyboard" / "alpha.yaml").write_text(CHAPTER.format(id="alpha", title="Alpha", zero=alpha_zero))
    (root / "storyboard" / "beta.yaml").write_text(CHAPTER.format(id="beta", title="Beta", zero=0))


def mtimes(root: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (root / "renders").glob("*.mp4")}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("film")
    write_project(root)
    done = run_dtfilm("render", "--jobs", "2", cwd=root)
    assert done.returncode == 0, done.stderr
    return root


def test_first_render_writes_chapters_film_and_manifest(project: Path):
    renders = project / "renders"
    manifest = json.loads((renders / "manifest.json").read_text())
    assert set(manifest["chapters"]) == {"alpha", "beta"}
    assert manifest["chapters"]["alpha"]["parts"]["quality"] == "preview"
    with av.open(str(renders / "film.mp4")) as film:
        chapters = film.chapters()
    assert [c["metadata"]["title"] for c in chapters] == ["Alpha", "Beta"]
    vtt = (renders / "film.chapters.vtt").read_text()
    assert vtt.startswith("WEBVTT") and vtt.count(" --> ") == 2


def test_nothing_changed_renders_nothing(project: Path):
    before = mtimes(project)
    done = run_dtfilm("render", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "alpha: fresh" in done.stdout and "beta: fresh" in done.stdout
    assert mtimes(project) == before  # neither a chapter nor the film was written again


def test_status_says_fresh_and_imports_no_manim(project: Path):
    code = (
        "import sys; from dtfilm.cli import main; main(['status']); "
        "assert 'manim' not in sys.modules, 'status imported manim'"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "alpha      fresh" in done.stdout and "film       fresh" in done.stdout


def test_one_changed_number_renders_one_chapter(project: Path):
    before = mtimes(project)
    write_project(project, alpha_zero=3)
    status = run_dtfilm("status", cwd=project)
    assert "alpha      stale: inputs changed: zero 0 → 3" in status.stdout
    assert "beta       fresh" in status.stdout
    done = run_dtfilm("render", cwd=project)
    assert done.returncode == 0, done.stderr
    after = mtimes(project)
    assert after["alpha.mp4"] != before["alpha.mp4"]
    assert after["beta.mp4"] == before["beta.mp4"]
    assert after["film.mp4"] != before["film.mp4"]  # joined again


def test_changed_film_default_renders_every_chapter_that_inherits_it(project: Path):
    before = mtimes(project)
    film = project / "storyboard" / "film.yaml"
    film.write_text(FILM.replace("seq_len: 4096", "seq_len: 2048"))
    try:
        done = run_dtfilm("render", cwd=project)
        assert done.returncode == 0, done.stderr
        after = mtimes(project)
        assert after["alpha.mp4"] != before["alpha.mp4"] and after["beta.mp4"] != before["beta.mp4"]
    finally:
        film.write_text(FILM)


def test_what_a_chapter_draws_from_the_film_is_in_its_key(project: Path):
    # Issue 15: the film's title shows on every title card with no subtitle of its own, so a new
    # film title makes every chapter stale; a chapter's own title is its storyboard's.
    film = project / "storyboard" / "film.yaml"
    film.write_text(FILM.replace("title: Test film", "title: Another film"))
    try:
        lines = run_dtfilm("status", cwd=project).stdout.splitlines()
        for chapter in ("alpha", "beta"):
            line = next(line for line in lines if line.startswith(chapter))
            # (issue 59: which of the film's texts changed, not "its numbers changed")
            assert "stale" in line and line.endswith("the film's title changed: 'Test film' → 'Another film'")
    finally:
        film.write_text(FILM)
    assert "the film's title" not in run_dtfilm("status", cwd=project).stdout


def test_the_key_does_not_change_with_the_working_folder(project: Path):
    # A docs build runs from another folder; where an input was written is shown relative to
    # the working folder, and must not make a fresh clip look stale.
    assert run_dtfilm("status", cwd=project).stdout == run_dtfilm("status", cwd=project / "storyboard").stdout


def test_killed_render_leaves_earlier_outputs(project: Path):
    run_dtfilm("render", cwd=project)  # everything fresh again
    renders = project / "renders"
    before = {p.name: p.read_bytes() for p in renders.iterdir() if p.is_file() and not p.name.startswith(".")}
    scratch = Path(tempfile.mkdtemp(prefix="dtk", dir="/tmp"))  # short: sockets live here
    proc = subprocess.Popen([sys.executable, "-m", "dtfilm", "render", "--force", "--jobs", "1"], cwd=project,
                            env={**os.environ, "TMPDIR": str(scratch)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    deadline = time.time() + 60
    drawing = renders / ".dtfilm-tmp"  # (Manim's files, in the scratch folder a later render sweeps)
    while not list(drawing.glob("*dtfilm-*/videos/**/partial_movie_files/**/*.mp4")) and time.time() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the render ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGKILL)  # mid-render: frames are being encoded
    proc.wait()
    after = {p.name: p.read_bytes() for p in renders.iterdir() if p.is_file() and not p.name.startswith(".")}
    assert after == before  # every output and the manifest exactly as they were
    done = run_dtfilm("status", cwd=project)
    shutil.rmtree(scratch, ignore_errors=True)
    assert "stale" not in done.stdout


def test_two_renders_at_once_are_refused(project: Path):
    with render_lock(project / "renders"):
        done = run_dtfilm("render", "--force", cwd=project)
    assert done.returncode == 2
    assert "another dtfilm render is writing here" in done.stderr


def test_watch_renders_again_when_a_storyboard_is_saved(tmp_path: Path):
    write_project(tmp_path)
    code = (
        "from dtfilm.render.job import RenderRequest; from dtfilm.render.watch import watch;"
        " watch(['alpha'], RenderRequest(), max_rounds=2, jobs=2)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    manifest = tmp_path / "renders" / "manifest.json"
    deadline = time.time() + 120
    while not manifest.exists() and time.time() < deadline:
        time.sleep(0.5)
    first = json.loads(manifest.read_text())["chapters"]["alpha"]["key"]
    time.sleep(1.0)
    write_project(tmp_path, alpha_zero=2)  # a save
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0
    second = json.loads(manifest.read_text())["chapters"]["alpha"]["key"]
    assert second != first
    assert out.count("round") >= 2


def _pid_after(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def test_watch_keeps_its_drawing_processes_from_one_render_to_the_next():
    # kept, a render's shots go to the processes the last render started (Manim loaded); a
    # render that failed leaves none kept; closed, they are gone
    from dtfilm.render.workers import kept_workers, local_executor

    def pids(executor: object) -> set[int]:  # every worker's: two tasks at once, each busy a while
        return {f.result() for f in [executor.submit(_pid_after, 0.5) for _ in range(2)]}

    with kept_workers(2):
        with local_executor(2) as (first, _):  # started as watching began
            started = pids(first)
        with local_executor(2) as (again, _):
            assert again is first and pids(again) <= started
        with pytest.raises(ValueError), local_executor(2):
            raise ValueError("a render failed")
        with local_executor(2) as (fresh, _):
            assert fresh is not first and not pids(fresh) & started
    assert len(started) == 2 and os.getpid() not in started
    with pytest.raises(RuntimeError):  # shut down once watching stops
        fresh.submit(int)
    with local_executor(2) as (alone, _):  # not kept: a pool of its own, shut down after
        pass
    with pytest.raises(RuntimeError):
        alone.submit(int)


# A render's processes as a terminal's Ctrl-C finds them, which it reaches all of: two drawing
# processes given SHOTS long shots, a minute of animations a tenth of a second long each (1: one
# process waits for its next shot; 3: one shot waits its turn), kept as --watch keeps them or not
CTRL_C_AMONG_WORKERS = """
import contextlib, multiprocessing, os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from dtfilm.system.quiet_workers import stop_if_interrupted
from dtfilm.render.workers import kept_workers, local_executor

def shot():
    for _ in range(600):
        stop_if_interrupted()  # as a scene does before each animation
        time.sleep(0.1)

started = time.monotonic()
try:
    with kept_workers(2) if sys.argv[2] == "kept" else contextlib.nullcontext():
        with local_executor(2) as (pool, _):
            drawing = [pool.submit(shot) for _ in range(int(sys.argv[1]))]
            time.sleep(0.5)
            os.killpg(0, signal.SIGINT)
            time.sleep(60)
except KeyboardInterrupt:
    print(f"interrupted after {time.monotonic() - started:.1f} s")
print(f"{len(multiprocessing.active_children())} processes left")
"""


@pytest.mark.parametrize(("shots", "kept"), [(1, "kept"), (3, "kept"), (3, "not kept")])
def test_ctrl_c_stops_the_drawing_processes_at_once_and_quietly(shots: int, kept: str):
    done = subprocess.run([sys.executable, "-c", CTRL_C_AMONG_WORKERS, str(shots), kept], cwd=ROOT,
                          capture_output=True, text=True, timeout=200, start_new_session=True)  # fmt: skip
    interrupted, left = done.stdout.splitlines()
    assert interrupted.startswith("interrupted after"), done.stdout + done.stderr
    assert float(interrupted.split()[2]) < 30  # neither the shot drawing nor one queued waited for
    assert left == "0 processes left"  # (--watch left both running after Ctrl-C)
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr, done.stderr


def test_progress_display_on_a_terminal_only(tmp_path: Path):
    write_project(tmp_path)
    quiet = run_dtfilm("render", "alpha", "--jobs", "1", cwd=tmp_path)
    assert quiet.returncode == 0 and "s of film\n" not in quiet.stderr and "━" not in quiet.stderr
    shutil.rmtree(tmp_path / "renders")
    leader, follower = pty.openpty()
    # a real terminal has a size; tqdm draws nothing on a 0-column one
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "dtfilm", "render", "alpha", "--jobs", "1"], cwd=tmp_path,
                            stdin=follower, stdout=follower, stderr=follower)  # fmt: skip
    os.close(follower)
    seen = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    proc.wait(timeout=60)
    os.close(leader)
    assert proc.returncode == 0
    assert b"alpha" in seen and b"s of film" in seen  # the film's progress display, on a terminal


def test_named_chapters_join_the_film_or_say_it_is_stale(tmp_path: Path):
    # issue 17: `dtfilm render alpha` joins film.mp4 again when every other chapter is fresh,
    # and otherwise says plainly that the film is stale and what it waits for
    write_project(tmp_path)
    assert run_dtfilm("render", "--jobs", "2", cwd=tmp_path).returncode == 0
    film = tmp_path / "renders" / "film.mp4"
    before = film.stat().st_mtime_ns
    write_project(tmp_path, alpha_zero=3)
    done = run_dtfilm("render", "alpha", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "film.mp4: 2 chapters joined" in done.stdout and film.stat().st_mtime_ns != before
    joined = film.stat().st_mtime_ns
    write_project(tmp_path)  # alpha back to zero 0, and beta changed
    (tmp_path / "storyboard" / "beta.yaml").write_text(CHAPTER.format(id="beta", title="Beta", zero=3))
    done = run_dtfilm("render", "alpha", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "film.mp4: stale until beta is rendered too (dtfilm render)" in done.stdout
    assert film.stat().st_mtime_ns == joined
    # issue 55: alpha fresh now, so no chapter the film or the gallery shows changed: neither is
    # looked at (the other chapters are not loaded) nor written
    gallery = tmp_path / "renders" / "index.html"
    shown = gallery.stat().st_mtime_ns
    again = run_dtfilm("render", "alpha", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout == "alpha: fresh\n"
    assert film.stat().st_mtime_ns == joined and gallery.stat().st_mtime_ns == shown


def test_a_chapter_rendered_with_flags_another_cannot_take_says_the_film_is_stale(tmp_path: Path):
    # `dtfilm render alpha --cards 6`: alpha (data parallel) takes six cards, beta (four
    # pipeline stages) does not; alpha renders, and the film is said to be stale, not an error
    write_project(tmp_path)
    beta = tmp_path / "storyboard" / "beta.yaml"
    beta.write_text(beta.read_text().replace("plan: {zero: 0}", "plan: {zero: 0, pp: 4}"))
    done = run_dtfilm("render", "alpha", "--cards", "6", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "renders/alpha.mp4: " in done.stdout and (tmp_path / "renders" / "alpha.mp4").is_file()
    stale = next(line for line in done.stdout.splitlines() if line.startswith("renders/film.mp4: "))
    assert "stale; the film's other chapters do not take these flags (--cards: 6 cards" in stale, stale
    assert not (tmp_path / "renders" / "film.mp4").exists()
