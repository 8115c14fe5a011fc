"""`dtfilm estimate CHAPTER FLAGS --json`, answered by one process of its own per test worker.

The numbers-on-screen check compares every number a scene shows with `dtfilm estimate --json`
run apart from the scene: in another process, through the command's own entry point
(dtfilm.cli.main), so nothing the scene's process computed or cached can agree with itself.
A process a call cost 1.0-1.4 s of CPU, most of it Python and the cost model starting, and the
check asks for 20-40 (chapter, flags) sets a chapter (issue 55). One process, started once per
worker, answers them all: it reads one JSON list of arguments a line, runs `main` on it with
its output captured, and writes back one JSON line (exit status, stdout, stderr).
`test_estimate_process` holds its answer to a fresh `dtfilm estimate` process's.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

SERVE = """
import contextlib, io, json, sys, traceback
from dtfilm.cli import main
for line in sys.stdin:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(json.loads(line))
        except SystemExit as stop:
            status = stop.code if isinstance(stop.code, int) else 2
        except Exception:  # a traceback, as a process of its own would print it; the next command still runs
            traceback.print_exc()
            status = 1
    sys.stdout.write(json.dumps({"status": status, "stdout": out.getvalue(), "stderr": err.getvalue()}) + "\\n")
    sys.stdout.flush()
"""

ANSWER_SECONDS = 120  # one estimate; a process that says nothing for this long is stuck


class LineServer:
    """A Python process running `code` that answers each JSON line it is sent with JSON lines
    (this module's estimates, tests.dtfilm_process's forks). One reader thread takes its
    answers as they come, so an answer late past one wait is not taken by the next."""

    def __init__(self, code: str, cwd: Path, stderr: Any = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        self.lock = threading.Lock()  # held from a question to its last answer
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put("")  # the process stopped

    def send(self, question: Any) -> None:
        """One JSON line to the process; OSError where it has stopped."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(question) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError) as gone:
            raise OSError("the process stopped") from gone

    def answer(self, seconds: float) -> str | None:
        """Its next line: "" once it has stopped; None when none comes within `seconds`."""
        try:
            return self._lines.get(timeout=seconds)
        except queue.Empty:
            return None

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        """No more questions (its input closed); killed if it lingers."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


class EstimateProcess:
    """A `dtfilm` process that runs the commands it is sent, one at a time, in `cwd`."""

    def __init__(self, cwd: Path) -> None:
        self._server = LineServer(SERVE, cwd)

    def run(self, *argv: str) -> tuple[int, str, str]:
        """`dtfilm ARGV`'s exit status, stdout and stderr."""
        with self._server.lock:
            try:
                self._server.send(list(argv))
                answer = self._server.answer(ANSWER_SECONDS)
            except OSError:
                answer = ""
        if not answer:
            raise RuntimeError(f"the estimate process stopped (exit status {self._server.process.poll()}) on {argv}")
        sent = json.loads(answer)
        return sent["status"], sent["stdout"], sent["stderr"]

    def close(self) -> None:
        self._server.close()


def estimate_flags(overrides: tuple[tuple[str, object], ...]) -> list[str]:
    """The command-line flags of a storyboard's overrides: --name value, --name / --no-name."""
    flags: list[str] = []
    for name, value in overrides:
        flag = "--" + name.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif value is False:
            flags.append("--no-" + flag[2:])
        else:
            flags += [flag, str(value)]
    return flags
