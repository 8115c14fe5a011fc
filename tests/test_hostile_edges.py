"""Hostile edges (issue 56, findings 3 to 5): the cluster option against a loopback listener
that misbehaves, a full disk, and the envelope's and the flags' edges, each one line with exit
status 2, never a traceback or a hang. Each test names the probe it covers."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dtfilm.errors import DtfilmError
from dtfilm.render import cluster
from dtfilm.render.cluster_bounds import MAX_FRAME_BYTES
from dtfilm.render.schedule import ShotJob
from dtfilm.voice.engine import VoiceSpec
from tests.test_hostile_input import refused_by_parser

pytest.importorskip("distributed")


@contextlib.contextmanager
def listener(greeting: bytes = b"") -> Iterator[str]:
    """A TCP listener on 127.0.0.1 (loopback only) that accepts, sends `greeting`, and then never
    answers; closed, with every connection it took, on leaving. Yields its tcp:// address."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    taken: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            taken.append(conn)
            with contextlib.suppress(OSError):
                conn.sendall(greeting)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        for conn in taken:
            conn.close()
        server.close()


def connecting(address: str, tmp_path: Path, seconds: float = 15) -> DtfilmError:
    """The one-line error `render --cluster ADDRESS --cluster-wait 1` stops with, connecting;
    waited for in a thread for at most `seconds` (a hang fails the test, not the run)."""
    job = ShotJob(tmp_path, {}, "preview", tmp_path / "renders", None, VoiceSpec("none"))
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            with cluster.connect(address, job, VoiceSpec("none"), wait_seconds=1):
                pass
        except BaseException as error:
            outcome.append(error)
        else:
            outcome.append(None)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"connecting to {address} still waits after {seconds} s"
    assert isinstance(outcome[0], DtfilmError), outcome
    return outcome[0]


# --- finding 3: the cluster --------------------------------------------------------------------


def test_a_listener_that_never_answers_is_one_line_in_bounded_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Probe: a listener that accepts and never answers held `render --cluster ... --cluster-wait
    5` (and the render's lock) for more than 200 s: the connect timeout did not cover Dask's
    handshake. The bound here is 2 s (HANDSHAKE_SECONDS, 20 s in use)."""
    monkeypatch.setattr(cluster, "HANDSHAKE_SECONDS", 2, raising=False)
    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 1)
    with listener() as address:
        started = time.monotonic()
        error = connecting(address, tmp_path)
        took = time.monotonic() - started
    assert took < 10, took
    assert error.line().startswith(f"--cluster: the Dask scheduler at {address} did not answer the handshake in 2 s")


def test_a_frame_length_of_2_to_the_62_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Probe: a frame length of 2^62 was an "Unable to allocate 4.00 EiB" traceback."""
    monkeypatch.setattr(cluster, "HANDSHAKE_SECONDS", 5, raising=False)
    with listener(struct.pack("Q", 2**62)) as address:
        error = connecting(address, tmp_path)
    assert "sent a message too large to read" in error.line(), error.line()
    assert f"{2**62:,} bytes; at most {MAX_FRAME_BYTES:,}" in error.line()


@pytest.mark.parametrize(
    "address",
    ["tcp://127.0.0.1:1\n", "tcp://127.0.0.1:99999999999", "tcp://127.0.0.1:0", "127.0.0.1:65536", "none\n"],
    ids=["trailing newline", "port 99999999999", "port 0", "port 65536", "none and a newline"],
)
def test_a_scheduler_address_is_parsed_strictly(
    address: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    """Probes: DTFILM_CLUSTER=$'tcp://127.0.0.1:1\\n' passed the address check (`$` matches before
    a trailing newline); port 99999999999 was accepted. The flag, the environment and film.yaml
    share the check."""
    assert "is not a Dask scheduler's address; valid:" in refused_by_parser(capsys, "render", "--cluster", address)
    monkeypatch.setenv(cluster.CLUSTER_VARIABLE, address)
    with pytest.raises(DtfilmError, match=r"\$DTFILM_CLUSTER: .* is not a Dask scheduler's address; valid: .*65535"):
        cluster.cluster_address(None, "")
    assert cluster.is_scheduler_address("tcp://127.0.0.1:65535") and cluster.is_scheduler_address("none")
