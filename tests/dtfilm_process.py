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
starts `python -m dtfilm` itself still goes through (the kind gallery, the hostile-input probes,
the wheel). A shell's `dtfilm` (the docs pages' commands, run by bash) asks the same server on a
Unix socket (tests/fork_client.py), handing it its own standard streams. `DTFILM_TEST_FRESH=1`
runs every command in a new interpreter instead; a server that cannot start, or that stops, is
replaced by new interpreters for the rest of the run.
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
from tests.fork_client import SOCKET_VARIABLE

FRESH_VARIABLE = "DTFILM_TEST_FRESH"

SERVE = """
import contextlib, json, os, selectors, socket, sys, traceback
import dtfilm.cli
import dtfilm.scene  # Manim, the shots and the visuals: what a drawing command imports first

def run_command(args):
    sys.argv = ["dtfilm", *args]
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

def enter(job):
    os.chdir(job["cwd"])
    os.environ.clear()
    os.environ.update(job["env"])

def child(job):
    enter(job)
    streams = ((0, os.devnull, os.O_RDONLY), (1, job["stdout"], os.O_WRONLY), (2, job["stderr"], os.O_WRONLY))
    for fd, path, flags in streams:
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = open(os.devnull)
    run_command(job["args"])

def shell_child(job, fds):
    enter(job)
    for fd, given in enumerate(fds):  # the client's own standard input, output and error
        os.dup2(given, fd)
        os.close(given)
    sys.stdin = open(0, closefd=False)
    run_command(job["args"])

def serve_pipe(job):
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

def serve_socket(conn):
    fds = []
    with conn:
        try:
            data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
            while not data.endswith(b"\\n"):
                more = conn.recv(1 << 16)
                if not more:
                    raise ValueError("the client left")
                data += more
            job = json.loads(data)
            if len(fds) != 3:
                raise ValueError("three streams")
        except (OSError, ValueError):
            for fd in fds:
                os.close(fd)
            return
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                shell_child(job, fds)
            finally:
                os._exit(1)
        for fd in fds:
            os.close(fd)
        _, status = os.waitpid(pid, 0)
        with contextlib.suppress(OSError):
            conn.sendall((json.dumps({"status": os.waitstatus_to_exitcode(status)}) + "\\n").encode())

listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind("@SOCKET@")
listener.listen(8)
ready = selectors.DefaultSelector()
ready.register(sys.stdin, selectors.EVENT_READ, "pipe")
ready.register(listener, selectors.EVENT_READ, "socket")
while True:
    for key, _ in ready.select():
        if key.data == "pipe":
            line = sys.stdin.readline()
            if not line:
                sys.exit(0)
            serve_pipe(json.loads(line))
        else:
            serve_socket(listener.accept()[0])
"""
CLIENT = Path(__file__).resolve().parent / "fork_client.py"  # a shell's `dtfilm`, asking on the socket


class ForkServer:
    """One test worker's server: runs the commands it is sent, one at a time."""

    def __init__(self, root: Path) -> None:
        self._folder = Path(tempfile.mkdtemp(prefix="dtfilm-forks-"))
        self.socket = self._folder / "socket"  # (a short path: a socket's is at most 107 bytes)
        code = SERVE.replace("@SOCKET@", str(self.socket))
        self._server = LineServer(code, root, stderr=(self._folder / "server.log").open("w"))
        self._count = 0

    def shell(self) -> tuple[str, dict[str, str]]:
        """A shell's `dtfilm`: the command line (its arguments follow it) running it forked from
        this server when it answers on its socket, else in a new interpreter
        (tests/fork_client.py), and the environment variable that names the socket."""
        return f"{sys.executable} -S {CLIENT}", {SOCKET_VARIABLE: str(self.socket)}

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
