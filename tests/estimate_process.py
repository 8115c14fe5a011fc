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
import subprocess
import sys
import threading
from pathlib import Path

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


class EstimateProcess:
    """A `dtfilm` process that runs the commands it is sent, one at a time, in `cwd`."""

    def __init__(self, cwd: Path) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-c", SERVE], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self._lock = threading.Lock()

    def run(self, *argv: str) -> tuple[int, str, str]:
        """`dtfilm ARGV`'s exit status, stdout and stderr."""
        assert self._process.stdin is not None and self._process.stdout is not None
        with self._lock:
            self._process.stdin.write(json.dumps(list(argv)) + "\n")
            self._process.stdin.flush()
            answer = _read_line(self._process.stdout, ANSWER_SECONDS)
        if not answer:
            raise RuntimeError(f"the estimate process stopped (exit status {self._process.poll()}) on {argv}")
        sent = json.loads(answer)
        return sent["status"], sent["stdout"], sent["stderr"]

    def close(self) -> None:
        stop_server(self._process)


def stop_server(process: subprocess.Popen[str]) -> None:
    """A server of commands told there are no more (its input closed), killed if it lingers."""
    if process.stdin is not None:
        process.stdin.close()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def _read_line(stream, seconds: float) -> str:
    """One line from `stream`, or "" when none comes within `seconds`."""
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    return got[0] if got else ""


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
