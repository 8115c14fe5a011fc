"""Hostile edges (issue 56, findings 3 to 5): the cluster option against a loopback listener
that misbehaves, a full disk, and the envelope's and the flags' edges, each one line with exit
status 2, never a traceback or a hang. Each test names the probe it covers."""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import json
import os
import shutil
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dtfilm.cli import renders as render_commands
from dtfilm.errors import DtfilmError
from dtfilm.render import cluster, schedule, workers
from dtfilm.render.cluster_bounds import MAX_FRAME_BYTES
from dtfilm.render.job import RenderJob
from dtfilm.system import pickled
from dtfilm.system.quiet_workers import QuietPool
from dtfilm.voice.engine import VOICE_VARIABLE, VoiceSpec
from dtfilm.voice.speech import integer_words
from tests.conftest import ROOT
from tests.test_hostile_input import GOOD_CHAPTER, dtfilm, one_line_error, refused_by_parser

needs_dask = pytest.mark.skipif(not importlib.util.find_spec("distributed"), reason="needs the cluster extra")
SECOND_SHOT = """\
  - kind: memory_bars
    beat: again
    caption: "Still {memory.total:GB}"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The film's storyboard folder, with a dp chapter of two shots."""
    shutil.copytree(ROOT / "storyboard", tmp_path / "storyboard")
    (tmp_path / "storyboard" / "dp.yaml").write_text(GOOD_CHAPTER + SECOND_SHOT)
    return tmp_path


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
    job = RenderJob(tmp_path, {}, "preview", tmp_path / "renders", None, VoiceSpec("none"))
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


@needs_dask
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


@needs_dask
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


# --- finding 4: a full disk --------------------------------------------------------------------


def _encoder_finds_the_disk_full(segment: str) -> None:
    """What Manim's video encoder raised in a drawing process when the disk filled."""
    try:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), segment)
    except OSError as error:
        raise RuntimeError(f"Failed to finish video segment {segment} (libx264): {error}") from error


def test_a_full_disk_in_a_drawing_process_is_one_line_naming_the_folder(project: Path, monkeypatch: pytest.MonkeyPatch):
    """Probe: renders on a 30 MB tmpfs gave a worker traceback (`RuntimeError: Failed to finish
    video segment ... [Errno 28]`), exit 1. ENOSPC injected where the segment is written, in a
    real drawing process: its error crosses to the command without its cause."""
    segment = project / "renders" / "cache" / "partial" / "ring.mp4"

    def status_that_draws(_args: object) -> int:
        with QuietPool(1) as pool:
            return pool.submit(_encoder_finds_the_disk_full, str(segment)).result()

    monkeypatch.setattr(render_commands, "cmd_status", status_that_draws)
    one_line_error(
        dtfilm("status", cwd=project),
        f"dtfilm: error: {segment.parent}: No space left on device; valid: a folder you can write, with room",
    )


# --- finding 5: the envelope's and the flags' edges ---------------------------------------------


def test_a_shape_past_1e14_parameters_is_refused(project: Path):
    """Probe: `check dp --layers 1024 --hidden 262144 --heads 1024 --ffn 1048576 --vocab 4194304
    --cards 131072` is 992T parameters, past the 1e14 a given count may have: 5 layout errors."""
    shape = ["--layers", "1024", "--hidden", "262144", "--heads", "1024", "--ffn", "1048576", "--vocab", "4194304"]
    one_line_error(
        dtfilm("check", "dp", *shape, "--cards", "131072", cwd=project),
        "--layers: this shape has 9.92e+14 parameters, past the supported 1e14; valid: a smaller shape",
    )


@pytest.mark.parametrize("mfu", ["1e-9", "1e-20"])
def test_an_mfu_too_small_to_show_is_refused(project: Path, mfu: str):
    """Probes: `check why --mfu 1e-9` gave 5 errors (the checker disagreed with its own "1e-07%");
    `--mfu 1e-20` an IndexError in voice/speech.py."""
    one_line_error(
        dtfilm("claims", "dp", "--mfu", mfu, cwd=project),
        f"--mfu: {float(mfu):g} is outside the supported range of model FLOPs utilisation: 0.0001 to 1",
    )


def test_a_count_past_a_thousand_trillion_is_said():
    """Probe: the IndexError in voice/speech.py: a count of trillions of a thousand or more."""
    assert integer_words(13_457_024_148 * 10**12) == (
        "thirteen billion, four hundred and fifty-seven million, twenty-four thousand, one hundred and forty-eight"
        " trillion"
    )


def test_jobs_are_capped_by_the_shots_to_draw(project: Path, monkeypatch: pytest.MonkeyPatch):
    """Probe: `--jobs 1024` on one stale shot forked 1,025 processes (4.2 GB, 22.8 s, against
    5.9 s with 2). The chapter here has two shots of under 6 s of film, too short to cut into
    windows (MIN_WINDOW_SECONDS): two processes at most."""
    asked: list[int] = []

    @contextlib.contextmanager
    def no_pool(jobs: int) -> Iterator[None]:
        asked.append(jobs)
        raise DtfilmError("stopped before any process started")
        yield

    monkeypatch.setattr(schedule, "local_executor", no_pool)
    one_line_error(dtfilm("render", "dp", "--jobs", "1024", "--voice", "none", cwd=project), "stopped before")
    assert asked == [2]


LONG = "x" * 300


@pytest.mark.parametrize(
    "argv",
    [
        ["init", LONG],
        ["check", LONG],
        ["render", "dp", "--out", LONG],
        ["status", "--out", LONG],
        ["serve", "--out", LONG],
        ["sheet", LONG],
        ["pacing", LONG],
    ],
    ids=["init", "check", "render --out", "status --out", "serve --out", "sheet", "pacing"],
)
def test_a_name_past_255_bytes_is_one_line(project: Path, argv: list[str]):
    """Probe: a path component over 255 bytes was an ENAMETOOLONG traceback in 9 places (`sheet -o`
    meets it only once the chapter is rendered; it goes through the same line)."""
    err = one_line_error(dtfilm(*argv, cwd=project))
    assert "File name too long" in err or "is neither a chapter id" in err, err
    assert len(err) < 400, err


@pytest.mark.parametrize(
    ("chapter", "expected"),
    [(LONG, "chapters[1]: 'xxxx"), ("dp\n", "chapters[1]: 'dp\\n' is not a chapter id")],
    ids=["300 characters", "trailing newline"],
)
def test_a_chapter_id_is_checked_to_its_end(project: Path, chapter: str, expected: str):
    """Probes: a 300-character chapter id (ENAMETOOLONG), `chapters: ["memory\\n"]` (passed the id
    check: `$` matches before a trailing newline)."""
    film = project / "storyboard" / "film.yaml"
    film.write_text(film.read_text().replace("chapters: [why,", f"chapters: [why, {json.dumps(chapter)},"))
    with contextlib.suppress(OSError):  # (a file by that name, where one can be: the id must still be refused)
        shutil.copy(project / "storyboard" / "dp.yaml", project / "storyboard" / f"{chapter}.yaml")
    one_line_error(dtfilm("check", "dp", cwd=project), "film.yaml:", expected, "at most 64")


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
def test_pacing_min_still_is_a_length(capsys: pytest.CaptureFixture[str], value: str):
    """Probe: `pacing --min-still nan|inf|-1` was accepted."""
    err = refused_by_parser(capsys, "pacing", "dp", "--min-still", value)
    assert "is not a length of a still; valid: seconds above 0" in err


def test_serve_refuses_an_empty_host(capsys: pytest.CaptureFixture[str]):
    """Probe: `serve --host ""` bound every interface."""
    assert "'' names no address; valid: a host name or address" in refused_by_parser(capsys, "serve", "--host", "")


def _key_in_a_worker(seconds: float) -> bool:
    time.sleep(seconds)  # (long enough that both workers take a task)
    return pickled.signing_key() is None


def test_the_key_warning_is_printed_once_by_a_render_and_its_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
):
    """Probe: key warnings were printed twice: each drawing process read the key, and warned,
    for itself."""
    monkeypatch.setenv(pickled.KEY_VARIABLE, str(tmp_path))
    pickled.key_file().parent.mkdir()
    pickled.key_file().write_bytes(b"k" * pickled.KEY_BYTES)
    pickled.key_file().chmod(0o644)
    pickled.signing_key.cache_clear()
    try:
        with workers._worker_pool(2) as (pool, _):
            assert all(pool.map(_key_in_a_worker, [0.3] * 4))
        assert pickled.signing_key() is None
    finally:
        pickled.signing_key.cache_clear()
    assert capfd.readouterr().err.count("dtfilm: warning:") == 1


def test_an_error_from_dtfilm_voice_names_the_variable(project: Path, monkeypatch: pytest.MonkeyPatch):
    """Probe: errors from $DTFILM_VOICE were labelled `--voice`."""
    monkeypatch.setenv(VOICE_VARIABLE, "garbage!")
    one_line_error(dtfilm("status", cwd=project), "dtfilm: error: $DTFILM_VOICE: unknown voice 'garbage!'")
    one_line_error(dtfilm("status", "--voice", "garbage!", cwd=project), "dtfilm: error: --voice: unknown voice")


@pytest.mark.parametrize("command", ["sheet", "pacing"])
@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"hello\n", "cannot be read as a video"),
        (b"", "cannot be read as a video"),
        (
            bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108000000003a7e9b55")
            + bytes.fromhex("0000000a49444154789c6360000000020001e221bc330000000049454e44ae426082"),
            "has no length (a still image?)",
        ),
    ],
    ids=["text", "empty", "png"],
)
def test_a_file_that_is_not_a_clip_is_one_line(project: Path, command: str, content: bytes, expected: str):
    """Probe (a new user's trial, 2026-12-06): `sheet` and `pacing` on a text file or an empty one
    ended in PyAV's InvalidDataError traceback; on a PNG `sheet` tiled it 12 times as 0.0 s of film."""
    clip = project / "clip.mp4"
    clip.write_bytes(content)
    one_line_error(dtfilm(command, str(clip), cwd=project), str(clip), expected, "valid: a video clip")
    assert not (project / "clip.sheet.png").exists()


def test_a_chapter_listed_twice_is_one_line(project: Path):
    """Probe (a new user's trial, 2026-12-06): `chapters: [memory, memory]` was accepted and each
    command ran the chapter twice (the film would have joined it twice, its markers one id)."""
    film = project / "storyboard" / "film.yaml"
    film.write_text(film.read_text().replace("chapters: [why,", "chapters: [why, dp,"))
    one_line_error(dtfilm("check", "dp", cwd=project), "film.yaml:", "'dp' is listed twice", "each chapter once")


def test_a_rendered_clip_that_is_not_a_regular_file_is_refused(tmp_path: Path):
    """Probe (the stop's review, 2026-12-06): renders/dp.mp4 made a named pipe hung `dtfilm pacing
    dp` and `sheet dp` in PyAV's open; a link there is not followed either."""
    from dtfilm.cli.project import _kept_clip

    pipe, link, clip = tmp_path / "dp.mp4", tmp_path / "tp.mp4", tmp_path / "pp.mp4"
    os.mkfifo(pipe)
    clip.write_bytes(b"\0")
    link.symlink_to(clip)
    with pytest.raises(DtfilmError, match="is a named pipe; valid: a rendered clip, a regular file"):
        _kept_clip(pipe)
    with pytest.raises(DtfilmError, match="is a link; valid: a rendered clip"):
        _kept_clip(link)
    assert _kept_clip(clip) == clip
