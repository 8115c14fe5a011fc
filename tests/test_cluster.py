"""Rendering on a cluster (issue 19): stale shots as tasks on a real Dask scheduler and workers on
127.0.0.1, each worker with its own working directory, HOME, temporary and local directories,
so that they share no files with the client or with each other."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from dtfilm.render.cluster import CLUSTER_VARIABLE, cluster_address
from dtfilm.render.cluster_worker import version_mismatch
from tests.conftest import ROOT, run_dtfilm
from tests.test_shot_cache import grey_frames, write_project

# the `cluster` extra (./dev.sh installs it), imported where a test starts a cluster: not by
# every test worker as it collects
pytestmark = [
    pytest.mark.render,
    pytest.mark.xdist_group("cluster"),
    pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="the cluster extra is not installed"),
]

DASK = str(Path(sys.executable).parent / "dask")
TASK_FOLDER = "dtfilm-task-*"  # what a worker draws a task in (dtfilm.render.cluster_worker.draw_remotely)


@dataclass
class Worker:
    name: str
    home: Path
    process: subprocess.Popen

    def busy(self) -> bool:
        """Whether it is drawing a task now."""
        return any((self.home / "tmp").glob(TASK_FOLDER))

    def kill(self) -> None:
        """The whole process group: the nanny and its worker, so that it does not come back."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)


@dataclass
class LocalCluster:
    address: str
    scheduler: subprocess.Popen
    workers: list[Worker]


def _started(command: list[str], cwd: Path, log: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        command, cwd=cwd, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True
    )


def start_worker(
    folder: Path, address: str, name: str, code: Path | None = None, tls: list[str] | None = None
) -> Worker:
    """A `dask worker` (one thread) with its own HOME and temporary folder."""
    home = folder / name
    (home / "tmp").mkdir(parents=True)
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(home / "tmp")}
    if code is not None:
        env["PYTHONPATH"] = str(code)
    command = [DASK, "worker", address, "--nthreads", "1", "--name", name, "--no-dashboard"]
    command += ["--local-directory", str(home / "local"), *(tls or [])]
    return Worker(name, home, _started(command, home, folder / f"{name}.log", env))


def _scheduler_address(file: Path, seconds: float) -> str:
    """The address in the scheduler's file, once Dask has written it whole: the file exists
    before its JSON is in it (one CI run read it empty)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return json.loads(file.read_text())["address"]
        except (OSError, ValueError, KeyError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@contextlib.contextmanager
def dask_cluster(
    folder: Path, workers: int, code: Path | None = None, tls: list[str] | None = None
) -> Iterator[LocalCluster]:
    """A `dask scheduler` and `dask worker` processes (one thread each) on 127.0.0.1. `code`: a
    folder the workers import dtfilm from instead of this checkout; `tls`: the flags that make
    every connection TLS."""
    from distributed import Client, Security

    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "scheduler.json"
    secure = ["--protocol", "tls", *tls] if tls else []
    scheduler = _started(
        [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(file)]
        + secure,
        folder,
        folder / "scheduler.log",
    )
    started: list[Worker] = []
    try:
        address = _scheduler_address(file, seconds=60)
        for i in range(workers):
            started.append(start_worker(folder, address, f"w{i + 1}", code, tls))
        security = (
            Security(**dict(zip(("tls_ca_file", "tls_client_cert", "tls_client_key"), tls[1::2], strict=True)))
            if tls
            else None
        )
        with Client(address, timeout="30s", security=security) as client:
            if workers:
                client.wait_for_workers(workers, timeout=90)
        yield LocalCluster(address, scheduler, started)
    finally:
        for process in [scheduler, *(w.process for w in started)]:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


def spoken_project(root: Path) -> Path:
    """The shot cache tests' four-shot chapter, narrated: its audio travels with the tasks."""
    root.mkdir(parents=True, exist_ok=True)
    write_project(root)
    film = root / "storyboard" / "film.yaml"
    film.write_text(film.read_text().replace("voice: none", "voice: joe"))
    return root


# `python -m dtfilm` that Ctrl-C (SIGINT) stops as in a terminal, even where the tests run as a
# background job, whose processes start with SIGINT ignored (Python then never raises
# KeyboardInterrupt, and the render runs to its end)
DTFILM_HEARING_CTRL_C = (
    "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "runpy.run_module('dtfilm', run_name='__main__')"
)


def render_process(root: Path, *flags: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", DTFILM_HEARING_CTRL_C, "render", *flags],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def first_busy(workers: list[Worker], render: subprocess.Popen, seconds: float = 120) -> Worker:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for worker in workers:
            if worker.busy():
                return worker
        assert render.poll() is None, render.communicate()
        time.sleep(0.02)
    raise AssertionError("no worker started a task")


def cache_is_whole(out: Path) -> None:
    """Every clip in the cache has its entry, and no temporary file is left."""
    cache = out / "cache"
    assert not list(cache.glob(".*.tmp*")), "a temporary file was left"
    assert not list((out / ".dtfilm-tmp").glob("*")), "a temporary file was left"
    for clip in cache.glob("*.mp4"):
        assert clip.with_suffix(".json").is_file(), clip.name


@pytest.fixture(scope="module")
def local_render(tmp_path_factory) -> Path:
    """The film rendered here, one scene at a time: what the cluster's film must equal."""
    root = spoken_project(tmp_path_factory.mktemp("here"))
    done = run_dtfilm("render", "--cluster", "none", "--jobs", "1", cwd=root)
    assert done.returncode == 0, done.stderr
    return root / "renders"


def test_a_film_rendered_on_two_workers_survives_losing_one(tmp_path, local_render):
    root = spoken_project(tmp_path / "project")
    with dask_cluster(tmp_path / "cluster", workers=2) as cluster:
        render = render_process(root, "--cluster", cluster.address)
        victim = first_busy(cluster.workers, render)
        victim.kill()  # mid-shot: its task goes to the other worker
        out, err = render.communicate(timeout=300)
        assert render.returncode == 0, err
        survivor = next(w for w in cluster.workers if w is not victim)
        assert survivor.process.poll() is None and victim.process.poll() is not None
    assert "2 Dask worker threads" in out and "drew 4 of 4 shots" in out
    renders = root / "renders"
    for name in ("alpha.mp4", "film.mp4"):
        ours, theirs = grey_frames(renders / name), grey_frames(local_render / name)
        assert len(ours) == len(theirs) > 100
        assert all(np.array_equal(a, b) for a, b in zip(ours, theirs, strict=True)), name
    cache_is_whole(renders)
    entry = json.loads((renders / "manifest.json").read_text())["chapters"]["alpha"]
    assert entry["tasks"] == 2 and entry["join_seconds"] > 0  # (what benchmarks/cluster_speed.py reads)
    # no worker's files are the client's: they drew in their own temporary folders
    assert not list(root.glob(TASK_FOLDER)) and (root / ".dtfilm-cache" / "voice").is_dir()


def test_a_lost_scheduler_ends_the_render_in_one_line_and_keeps_earlier_renders(tmp_path):
    root = spoken_project(tmp_path / "project")
    with dask_cluster(tmp_path / "cluster", workers=1) as cluster:
        first = run_dtfilm("render", "--cluster", cluster.address, cwd=root)
        assert first.returncode == 0, first.stderr
        before = {p.name: p.read_bytes() for p in (root / "renders").glob("*.*") if p.is_file()}
        render = render_process(root, "--cluster", cluster.address, "--force")
        first_busy(cluster.workers, render)
        os.killpg(cluster.scheduler.pid, signal.SIGKILL)
        out, err = render.communicate(timeout=120)
    assert render.returncode == 2, out + err
    assert err.strip().splitlines() == [
        f"dtfilm: error: the Dask scheduler at {cluster.address} went away mid-render; earlier renders are intact"
    ]
    after = {p.name: p.read_bytes() for p in (root / "renders").glob("*.*") if p.is_file()}
    assert after == before
    cache_is_whole(root / "renders")


def test_ctrl_c_cancels_the_clusters_tasks(tmp_path):
    from distributed import Client

    root = spoken_project(tmp_path / "project")
    with dask_cluster(tmp_path / "cluster", workers=1) as cluster:
        render = render_process(root, "--cluster", cluster.address)
        worker = first_busy(cluster.workers, render)
        render.send_signal(signal.SIGINT)
        out, err = render.communicate(timeout=60)
        assert render.returncode == 130, out + err
        assert "interrupted" in err and "Traceback" not in err
        with Client(cluster.address, timeout="30s") as client:
            deadline = time.monotonic() + 30
            while client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) and (
                time.monotonic() < deadline
            ):
                time.sleep(0.2)
            assert client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) == 0
        assert worker.process.poll() is None  # the worker lives on, ready for the next render
    assert not (root / "renders" / "alpha.mp4").exists()


def test_a_worker_running_other_code_is_named_before_any_task(tmp_path):
    code = tmp_path / "code"
    shutil.copytree(ROOT / "dtfilm", code / "dtfilm", ignore=shutil.ignore_patterns("__pycache__"))
    with (code / "dtfilm" / "render" / "cluster.py").open("a") as module:
        module.write("# a worker one edit behind\n")
    root = spoken_project(tmp_path / "project")
    with dask_cluster(tmp_path / "cluster", workers=1, code=code) as cluster:
        done = run_dtfilm("render", "--cluster", cluster.address, cwd=root)
        worker = cluster.workers[0]
        assert not list((worker.home / "tmp").glob(TASK_FOLDER))
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("dtfilm: error: --cluster: worker w1 (tcp://127.0.0.1:") and "differs in dtfilm code" in line
    assert not (root / "renders" / "alpha.mp4").exists()


def test_a_scheduler_with_no_workers_yet_is_waited_for(tmp_path):
    """An adaptive cluster starts with no workers and scales up when work arrives: the render
    says it waits, submits its first task, and draws once a worker joins."""
    root = spoken_project(tmp_path / "project")
    with dask_cluster(tmp_path / "cluster", workers=0) as cluster:
        render = render_process(root, "--cluster", cluster.address, "--cluster-wait", "300")
        assert render.stderr is not None
        waiting = render.stderr.readline()
        assert f"the Dask scheduler at {cluster.address} has no workers yet; waiting up to 300 s" in waiting
        worker = start_worker(tmp_path / "cluster", cluster.address, "late")
        try:
            out, err = render.communicate(timeout=300)
        finally:
            worker.kill()
    assert render.returncode == 0, out + err
    assert (root / "renders" / "alpha.mp4").is_file()


def test_no_worker_in_time_is_a_one_line_error(tmp_path):
    write_project(tmp_path)
    with dask_cluster(tmp_path / "cluster", workers=0) as cluster:
        started = time.monotonic()
        done = run_dtfilm("render", "--cluster", cluster.address, "--cluster-wait", "2", cwd=tmp_path)
        waited = time.monotonic() - started
    assert done.returncode == 2
    waiting, error = done.stderr.strip().splitlines()
    assert "waiting up to 2 s" in waiting
    assert error.startswith(
        f"dtfilm: error: --cluster: no worker joined the Dask scheduler at {cluster.address} in 2 s"
    )
    assert waited < 60
    assert not (tmp_path / "renders" / "alpha.mp4").exists()


def test_no_scheduler_is_a_one_line_error(tmp_path):
    write_project(tmp_path)
    done = run_dtfilm("render", "--cluster", "tcp://127.0.0.1:9", cwd=tmp_path)
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("dtfilm: error: --cluster: no Dask scheduler answers at tcp://127.0.0.1:9 (")
    assert not (tmp_path / "renders" / "alpha.mp4").exists()


def test_the_scheduler_is_named_by_the_flag_then_the_environment_then_film_yaml(monkeypatch):
    monkeypatch.delenv(CLUSTER_VARIABLE, raising=False)
    assert cluster_address(None, "") is None
    assert cluster_address(None, "tcp://film:1") == "tcp://film:1"
    monkeypatch.setenv(CLUSTER_VARIABLE, "tcp://env:2")
    assert cluster_address(None, "tcp://film:1") == "tcp://env:2"
    assert cluster_address("tls://flag:3", "tcp://film:1") == "tls://flag:3"
    assert cluster_address("none", "tcp://film:1") is None  # --cluster none: here


def test_a_bad_scheduler_in_film_yaml_names_its_line(tmp_path):
    write_project(tmp_path)
    film = tmp_path / "storyboard" / "film.yaml"
    film.write_text(film.read_text() + "scheduler: http://example.org\n")
    done = run_dtfilm("render", cwd=tmp_path)
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert "film.yaml:7" in line and "scheduler" in line and "tcp://HOST:PORT" in line


def test_a_version_difference_names_the_worker_and_what_differs():
    here = {"dtfilm code": "abc", "Manim": "0.22.0", "fonts": "f1"}
    same = {"tcp://10.0.0.1:1": dict(here), "tcp://10.0.0.2:1": dict(here)}
    assert version_mismatch(here, same, {}) is None
    other = {**same, "tcp://10.0.0.2:1": {**here, "Manim": "0.21.0"}}
    assert version_mismatch(here, other, {"tcp://10.0.0.2:1": "gpu-7"}) == (
        "worker gpu-7 (tcp://10.0.0.2:1) differs in Manim: '0.21.0' there, '0.22.0' here"
    )


def _manifest(shots: dict[str, list[float]], join: float = 1.0, overhead: float = 0.5) -> dict:
    """A render's manifest with these chapters' shots' drawing times (each shot 10 s of film)."""
    chapters = {}
    for chapter, times in shots.items():
        chapters[chapter] = {
            "duration": 10.0 * len(times),
            "quality": "final",
            "join_seconds": join,
            "tasks": 1,
            "task_seconds": sum(times) + overhead,
            "shots": [
                {"beat": f"s{i}", "start": 10.0 * i, "end": 10.0 * (i + 1), "render_seconds": t}
                for i, t in enumerate(times)
            ],
        }
    return {"chapters": chapters, "film": {"join_seconds": 2.0}}


def test_the_cluster_prediction_is_the_render_schedule_worked_by_hand():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from cluster_speed import STARTUP_SECONDS, measured, predicted

    m = measured(_manifest({"a": [30.0, 10.0], "b": [20.0]}))
    assert m.task_overhead_seconds == 0.5
    # one worker: every shot and each chapter's overhead, a's join while b draws, then b's and the film's
    wall, critical = predicted(m, 1)
    assert wall == pytest.approx(STARTUP_SECONDS + 40.5 + 20.5 + 1 + 2)
    assert critical == pytest.approx(STARTUP_SECONDS + 40.5 + 1 + 2)
    # two workers: a (40.5 s) on one, b (20.5 s) on the other; b joins while a draws
    wall, critical = predicted(m, 2)
    assert wall == pytest.approx(STARTUP_SECONDS + 40.5 + 1 + 2) == critical
    # four: a is cut into its two shots (30.5 s and 10.5 s), so the longest task is 30.5 s
    wall, critical = predicted(m, 4)
    assert wall == pytest.approx(STARTUP_SECONDS + 30.5 + 1 + 2) == critical
    # more workers than shots: nothing left to cut, nothing faster
    assert predicted(m, 32) == predicted(m, 4)


def test_tls_addresses_work_with_dasks_own_security_settings(tmp_path):
    """A scheduler and worker that speak only TLS; dtfilm's client takes Dask's TLS settings from
    the environment, as any Dask client does."""
    pem = tmp_path / "tls"
    pem.mkdir()
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1"]
        + ["-keyout", str(pem / "key.pem"), "-out", str(pem / "cert.pem")],
        check=True,
        capture_output=True,
    )
    cert, key = str(pem / "cert.pem"), str(pem / "key.pem")
    root = tmp_path / "project"
    root.mkdir()
    write_project(root)
    tls = ["--tls-ca-file", cert, "--tls-cert", cert, "--tls-key", key]
    with dask_cluster(tmp_path / "cluster", workers=1, tls=tls) as cluster:
        assert cluster.address.startswith("tls://127.0.0.1:")
        env = {
            **os.environ,
            "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": cert,
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": cert,
            "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": key,
        }
        done = subprocess.run(
            [sys.executable, "-m", "dtfilm", "render", "--cluster", cluster.address],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        plain = run_dtfilm("render", "--force", "--cluster", cluster.address, cwd=root)  # no certificate: refused
    assert done.returncode == 0, done.stderr
    assert "drew 4 of 4 shots" in done.stdout
    assert plain.returncode == 2, plain.stderr
    [line] = plain.stderr.strip().splitlines()
    assert "speaks TLS, and Dask has no TLS settings for a client" in line
