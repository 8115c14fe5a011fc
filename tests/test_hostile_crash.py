"""Crash safety (issue 42, findings 3, 4, 5 and 9's stale shot clip): a render killed alone leaves
no drawing process and no lock behind; nothing reused from renders/ is trusted for existing
alone; a render that fails half way leaves a film that `dtfilm status` describes truthfully."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import av
import pytest

from dtfilm.render.lock import render_lock
from tests.conftest import ROOT, run_dtfilm
from tests.test_regeneration import CHAPTER, write_project

pytestmark = [pytest.mark.render, pytest.mark.xdist_group("hostile-crash")]


def status_line(root: Path, chapter: str, *flags: str) -> str:
    done = run_dtfilm("status", *flags, cwd=root)
    assert done.returncode == 0, done.stderr
    return next(line for line in done.stdout.splitlines() if line.startswith(f"{chapter} "))


def decoded_frames(path: Path) -> int:
    with av.open(str(path)) as movie:
        return sum(1 for _ in movie.decode(video=0))


def write_chapters(root: Path) -> None:
    """test_regeneration's two one-shot chapters, their title cards told apart by their words too."""
    write_project(root)
    beta = root / "storyboard" / "beta.yaml"
    beta.write_text(beta.read_text().replace("per card", "for each card"))


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two one-shot chapters and their film, rendered once; each test leaves them fresh."""
    root = tmp_path_factory.mktemp("crash")
    write_chapters(root)
    done = run_dtfilm("render", "--jobs", "1", cwd=root)
    assert done.returncode == 0, done.stderr
    return root


def test_a_truncated_cached_clip_is_drawn_again_not_joined(project: Path):
    # finding 4's probe: truncate a shot's clip in the cache, delete the chapter, render
    renders = project / "renders"
    shot = json.loads((renders / "manifest.json").read_text())["chapters"]["alpha"]["shots"][0]
    clip = renders / shot["cache"]
    frames = decoded_frames(renders / "alpha.mp4")
    with open(clip, "r+b") as handle:
        handle.truncate(clip.stat().st_size // 2)
    (renders / "alpha.mp4").unlink()
    done = run_dtfilm("render", "alpha", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "drew 1 of 1 shots" in done.stdout  # (it joined the broken clip: drew 0 of 1)
    assert decoded_frames(renders / "alpha.mp4") == frames
    assert status_line(project, "alpha") == "alpha      fresh"


def test_a_truncated_chapter_is_stale_and_a_render_repairs_it(project: Path):
    renders = project / "renders"
    movie = renders / "alpha.mp4"
    frames = decoded_frames(movie)
    with open(movie, "r+b") as handle:
        handle.truncate(movie.stat().st_size // 2)
    assert status_line(project, "alpha") == "alpha      stale: alpha.mp4 changed since it was rendered"
    done = run_dtfilm("render", "alpha", cwd=project)
    assert done.returncode == 0, done.stderr
    assert decoded_frames(movie) == frames
    assert status_line(project, "alpha") == "alpha      fresh"


def test_a_render_failing_mid_join_leaves_a_film_status_describes_truthfully(project: Path):
    # finding 5's probe: a changed caption's render fails after alpha.mp4 is replaced (its shot
    # clips cannot be written: a file stands where their folder goes, as a full disk would
    # refuse them), and the storyboard is put back; alpha.mp4 is then the edited chapter's
    renders, storyboard = project / "renders", project / "storyboard" / "alpha.yaml"
    shots, aside = renders / "shots" / "alpha", renders / "shots-alpha-aside"
    before = (renders / "alpha.mp4").read_bytes()
    storyboard.write_text(storyboard.read_text().replace("per card", "on each card"))
    shots.rename(aside)
    shots.write_text("not a folder")
    try:
        failed = run_dtfilm("render", "alpha", cwd=project)
    finally:
        shots.unlink()
        aside.rename(shots)
        storyboard.write_text(CHAPTER.format(id="alpha", title="Alpha", zero=0))
    assert failed.returncode != 0
    assert (renders / "alpha.mp4").read_bytes() != before  # the edited chapter was written
    assert status_line(project, "alpha") == "alpha      stale: alpha.mp4 changed since it was rendered"
    done = run_dtfilm("render", "alpha", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "drew 0 of 1 shots" in done.stdout  # the shot as the storyboard says, from the cache
    assert status_line(project, "alpha") == "alpha      fresh"


def test_status_verify_checks_every_digest(project: Path):
    renders = project / "renders"
    poster = renders / "beta.png"
    data, times = poster.read_bytes(), poster.stat()
    tampered = bytearray(data)
    tampered[len(data) // 2] ^= 0xFF
    poster.write_bytes(bytes(tampered))
    os.utime(poster, ns=(times.st_atime_ns, times.st_mtime_ns))  # the same size and time
    try:
        assert status_line(project, "beta") == "beta       fresh"  # (sizes and times alone: quick)
        assert status_line(project, "beta", "--verify") == "beta       stale: beta.png changed since it was rendered"
    finally:
        poster.write_bytes(data)
        os.utime(poster, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert status_line(project, "beta", "--verify") == "beta       fresh"


def video_packets(path: Path) -> list[bytes]:
    with av.open(str(path)) as movie:
        return [bytes(p) for p in movie.demux(video=0) if p.dts is not None]


def test_a_shot_clip_is_made_again_when_its_cached_clip_is_drawn_again(project: Path):
    # finding 9: renders/shots/<chapter>/NN-<beat>.mp4 was kept when the cached clip it is made
    # from was drawn again under the same key (a forced render: its bytes differ). Here the
    # redraw is alpha's clip replaced by another picture of the same length, and its entry
    # written again, as a render writes them.
    from dtfilm.render.shot_cache import entry_path, parse_entry, write_entry

    renders = project / "renders"
    shots = {
        c: json.loads((renders / "manifest.json").read_text())["chapters"][c]["shots"][0] for c in ("alpha", "beta")
    }
    clip = renders / shots["alpha"]["cache"]
    shutil.copyfile(renders / shots["beta"]["cache"], clip)
    write_entry(renders, parse_entry(entry_path(renders, shots["alpha"]["key"]).read_text()))
    (renders / "alpha.mp4").unlink()
    done = run_dtfilm("render", "alpha", cwd=project)
    assert done.returncode == 0, done.stderr
    assert video_packets(renders / "alpha.mp4") == video_packets(clip)
    assert video_packets(renders / shots["alpha"]["clip"]) == video_packets(clip)  # (it kept alpha's old picture)


def test_a_renamed_chapter_draws_its_title_again(project: Path):
    # found with the probes above: a chapter's title is drawn (its title card, every shot's
    # header) but was not in its shots' probes, so a renamed chapter was joined from its old
    # title card, and of two chapters whose title cards said the same, one showed the other's title
    storyboard = project / "storyboard" / "alpha.yaml"
    storyboard.write_text(storyboard.read_text().replace("title: Alpha", "title: Alpha renamed"))
    try:
        done = run_dtfilm("render", "alpha", cwd=project)
    finally:
        storyboard.write_text(CHAPTER.format(id="alpha", title="Alpha", zero=0))
    assert done.returncode == 0, done.stderr
    assert "drew 1 of 1 shots" in done.stdout  # (drew 0 of 1: the old title card)


def test_the_lock_as_a_folder_is_a_one_line_error(tmp_path: Path):
    write_project(tmp_path)
    (tmp_path / "renders" / ".dtfilm.lock").mkdir(parents=True)
    done = run_dtfilm("render", "alpha", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr, done.stderr
    assert "renders/.dtfilm.lock" in done.stderr and "folder" in done.stderr


# A process that takes the render lock, forks a child that lives on with everything the fork
# copied (as a render's drawing processes did), and is then killed alone, as the OOM killer kills
HOLDER_KILLED = """
import os, signal, sys, time
from pathlib import Path
from dtfilm.render.chapters import render_lock
with render_lock(Path(sys.argv[1])):
    child = os.fork()
    if child == 0:
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 1), os.dup2(null, 2)  # (the test reads the parent's output to its end)
        time.sleep(60)
        os._exit(0)
    print(child, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_lock_whose_holder_died_is_taken_over(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    renders = tmp_path / "renders"
    done = subprocess.run([sys.executable, "-c", HOLDER_KILLED, str(renders)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    child = int(done.stdout)
    try:
        with render_lock(renders):  # (refused for as long as the child lived, naming the dead pid)
            pass
    finally:
        os.kill(child, signal.SIGKILL)
    assert "taken over from the render that held it (pid " in capsys.readouterr().err


def _children(pid: int) -> set[int]:
    """The processes whose parent is `pid`, from /proc."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def _running(pid: int) -> bool:
    """Alive and not a zombie (one waiting to be reaped has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
def test_a_render_killed_alone_leaves_no_drawing_process_and_no_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    # finding 3's probe: kill -9 of the main process only, mid-render, with two drawing processes
    write_project(tmp_path)
    for chapter in ("alpha", "beta"):  # shots long enough to be still drawing when it is killed
        path = tmp_path / "storyboard" / f"{chapter}.yaml"
        path.write_text(path.read_text().replace("duration: 1", "duration: 30"))
    render = subprocess.Popen([sys.executable, "-m", "dtfilm", "render", "--jobs", "2"], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    helpers: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while len(helpers) < 3 and time.monotonic() < deadline:  # the progress queue's manager and two drawing
            helpers = _children(render.pid)
            time.sleep(0.05)
        time.sleep(1.0)  # drawing
        assert render.poll() is None and len(helpers) >= 3, "the render ended before it could be killed"
        render.send_signal(signal.SIGKILL)
        render.wait()
        deadline = time.monotonic() + 5
        while any(_running(pid) for pid in helpers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [pid for pid in helpers if _running(pid)], "drawing processes outlived their render"
        with render_lock(tmp_path / "renders"):  # the next render is not refused
            pass
        assert f"(pid {render.pid}), which ended without releasing it" in capsys.readouterr().err
    finally:
        for pid in helpers | {render.pid}:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
    leftovers = [p.name for p in (tmp_path / "renders" / ".dtfilm-tmp").iterdir()]
    assert not leftovers, leftovers  # the killed run's temporary files, swept under the lock
    shutil.rmtree(tmp_path / "renders")
