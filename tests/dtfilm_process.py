"""`dtfilm ARGS` in a process of its own, forked from one that has already imported dtfilm and
Manim (issue 55: CI's time is mostly CPU, and much of it was interpreters starting).

The suite runs `dtfilm` as a user does some hundreds of times. Each new interpreter spent 0.5 s
of CPU importing dtfilm's command line, and about 1 s more where the command draws (Manim).
Here one server process per test worker imports them once and waits; each command is a child
forked from it: a process of its own, started from that clean state (never from an earlier
command's), in the test's working folder, with the test's environment at the time of the call,
its standard input empty and its output in files, ending through dtfilm's own entry point
(`dtfilm.cli.run`: main, then out). Its exit status is the process's, as `subprocess.run` gives it.

What a child does not repeat is the interpreter's start and the imports, which every test that
starts `python -m dtfilm` itself still goes through (the docs pages' commands, the kind gallery,
the hostile-input probes, the wheel). `DTFILM_TEST_FRESH=1` runs every command in a new
interpreter instead; a server that cannot start, or that stops, is replaced by new
interpreters for the rest of the run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.estimate_process import LineServer

FRESH_VARIABLE = "DTFILM_TEST_FRESH"

SERVE = """
import json, os, sys, traceback
import dtfilm.cli
import dtfilm.scene  # Manim, the shots and the visuals: what a drawing command imports first

def child(job):
    os.chdir(job["cwd"])
    os.environ.clear()
    os.environ.update(job["env"])
    streams = ((0, os.devnull, os.O_RDONLY), (1, job["stdout"], os.O_WRONLY), (2, job["stderr"], os.O_WRONLY))
    for fd, path, flags in streams:
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = open(os.devnull)
    sys.argv = ["dtfilm", *job["args"]]
    try:
        dtfilm.cli.run()  # (it leaves by os._exit with main's status)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        traceback.print_exc()
        code = 1
    else:
        code = 0
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

for line in sys.stdin:
    job = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            child(job)
        finally:
            os._exit(1)
    sys.stdout.write(json.dumps({"pid": pid}) + "\\n")
    sys.stdout.flush()
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(json.dumps({"status": os.waitstatus_to_exitcode(status)}) + "\\n")
    sys.stdout.flush()
"""


class ForkServer:
    """One test worker's server: runs the commands it is sent, one at a time."""

    def __init__(self, root: Path) -> None:
        self._folder = Path(tempfile.mkdtemp(prefix="dtfilm-forks-"))
        self._server = LineServer(SERVE, root, stderr=(self._folder / "server.log").open("w"))
        self._count = 0

    def alive(self) -> bool:
        return self._server.alive()

    def run(self, args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
        """`dtfilm ARGS` in `cwd`, as subprocess.run with capture_output and `timeout` gives it;
        OSError where the server has stopped."""
        with self._server.lock:
            self._count += 1
            out, err = self._folder / f"{self._count}.out", self._folder / f"{self._count}.err"
            out.touch()
            err.touch()
            self._server.send(
                {"args": args, "cwd": str(cwd), "env": dict(os.environ), "stdout": str(out), "stderr": str(err)}
            )
            started = self._server.answer(60)
            if not started:
                raise OSError("the fork server did not answer")
            pid = json.loads(started)["pid"]
            ended = self._server.answer(timeout)
            timed_out = ended is None
            if timed_out:  # as subprocess.run: the child killed, then TimeoutExpired
                os.kill(pid, signal.SIGKILL)
                ended = self._server.answer(60)
            if not ended:
                raise OSError("the fork server stopped")
            status = json.loads(ended)["status"]
            stdout, stderr = out.read_text(errors="replace"), err.read_text(errors="replace")
            out.unlink()
            err.unlink()
        command = [sys.executable, "-m", "dtfilm", *args]
        if timed_out:
            raise subprocess.TimeoutExpired(command, timeout, stdout, stderr)
        return subprocess.CompletedProcess(command, status, stdout, stderr)

    def close(self) -> None:
        self._server.close()
