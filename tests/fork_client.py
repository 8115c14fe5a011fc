"""`dtfilm ARGS` from a shell, forked from the test worker's server (tests.dtfilm_process).

The docs pages' commands run in bash, as a reader pastes them, with `dtfilm` on the PATH a shim
that runs this file (`python -S`: no site packages, about 20 ms). It hands the server, on the
socket that $DTFILM_TEST_FORK_SOCKET names, its arguments, working folder, environment and its
own standard input, output and error (the descriptors themselves), and leaves with the forked
command's exit status. The command writes where this process would: a pipe, a file, a terminal.
Where no server answers it runs `python -m dtfilm` in its place, as the shim did before (issue 55:
each new interpreter spent 0.5-1.5 s of CPU importing dtfilm and Manim; a page runs dozens).
"""

from __future__ import annotations

import json
import os
import socket
import sys

SOCKET_VARIABLE = "DTFILM_TEST_FORK_SOCKET"


def forked_status(path: str, args: list[str]) -> int | None:
    """The exit status of `dtfilm ARGS` forked by the server at `path`; None where it does not
    take the command (no server there), so that the caller runs it itself."""
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(path)
    except OSError:
        return None
    with conn:
        job = json.dumps({"args": args, "cwd": os.getcwd(), "env": dict(os.environ)}) + "\n"
        socket.send_fds(conn, [job.encode()], [0, 1, 2])
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = conn.recv(4096)
            if not chunk:
                print("dtfilm (tests): the fork server stopped during the command", file=sys.stderr)
                return 1
            answer += chunk
    status = json.loads(answer)["status"]
    return status if status >= 0 else 128 - status  # (killed by a signal: as a shell reports it)


def main() -> None:
    path = os.environ.get(SOCKET_VARIABLE)
    status = forked_status(path, sys.argv[1:]) if path else None
    if status is None:
        os.execv(sys.executable, [sys.executable, "-m", "dtfilm", *sys.argv[1:]])
    sys.exit(status)


if __name__ == "__main__":
    main()
