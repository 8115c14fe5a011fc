"""`dtfilm render --cluster ADDRESS`: the stale shots as tasks on a Dask scheduler.

Dask distributed is the engine (the `dtfilm[cluster]` extra); dtfilm writes no scheduler of its
own. The render's executor (dtfilm.render.schedule) becomes the cluster's `client.get_executor()`.

No filesystem is shared. A task (`ShotBundle`) carries what a worker needs: the storyboard
folder, the voice's sentences for the chapter's narration (so the worker's dry run of the shots
before reaches the same starting state, timed by the same audio), the input overrides, the
quality, theme and voice (the worker's own DTFILM_VOICE has no say), and the client's code
digest. The worker draws in a temporary project of its own and returns each drawn shot's
encoded clip and cache entry as bytes (`DrawnRemotely`); the client checks each clip, writes it
through a temporary file into its own shot cache and joins the chapter locally. A worker that
dies mid-shot leaves nothing behind: the scheduler gives the task to another worker.

On connecting, every worker must have the same dtfilm code and the same Python, Manim, Cairo,
Pango, fonts, voice and encoder as this machine (any of them changes pixels); a difference is
a one-line error naming the worker.

Dask runs pickled code on its workers: only connect to a scheduler you trust.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import queue
import socket
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError, Executor, Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import av

from dtfilm.errors import DtfilmError, Where
from dtfilm.render.cluster_bounds import answered, bound_frames
from dtfilm.render.cluster_worker import (
    DrawnRemotely,
    ShotBundle,
    draw_remotely,
    machine_versions,
    project_files,
    version_mismatch,
)
from dtfilm.render.job import RenderJob
from dtfilm.render.shot_cache import CachedShot, cached, clip_path, parse_entry, write_entry
from dtfilm.render.tasks import DrawnShots, ShotTask
from dtfilm.storyboard import Chapter
from dtfilm.storyboard.film import SCHEDULER_TEXT, is_scheduler_address
from dtfilm.system.atomic import atomic_path
from dtfilm.system.quality import FRAME_RATES
from dtfilm.voice.engine import VoiceSpec

CLUSTER_VARIABLE = "DTFILM_CLUSTER"  # names the scheduler instead of film.yaml's `scheduler:`


LOCAL = "none"  # `--cluster none`: render here, whatever film.yaml or the environment say


CONNECT_SECONDS = 10


HANDSHAKE_SECONDS = 2 * CONNECT_SECONDS  # the connect and Dask's handshake after it, together


DEFAULT_WAIT_SECONDS = 120.0  # for a first worker (--cluster-wait)


def cluster_address(flag: str | None, film_scheduler: str) -> str | None:
    """The scheduler to render on: --cluster, else $DTFILM_CLUSTER, else film.yaml's `scheduler:`;
    None (render here) when none is named, or when the first one named is `none`."""

    from_environment = os.environ.get(CLUSTER_VARIABLE)
    if from_environment and not is_scheduler_address(from_environment):
        raise DtfilmError(
            f"{from_environment!r} is not a Dask scheduler's address; valid: {SCHEDULER_TEXT}",
            Where(flag=f"${CLUSTER_VARIABLE}"),
        )
    for named in (flag, from_environment, film_scheduler):
        if named:
            return None if named == LOCAL else named
    return None


def check_clip(data: bytes, entry: CachedShot, frame_rate: int, where: str) -> None:
    """A returned clip must decode whole, with the frames its shot's length makes."""

    try:
        with av.open(io.BytesIO(data)) as movie:
            frames = sum(1 for _ in movie.decode(video=0))
    except (av.error.FFmpegError, ValueError) as error:
        raise DtfilmError(f"the clip of shot {entry.beat} from {where} does not decode ({error})") from None
    expected = entry.seconds * frame_rate
    if abs(frames - expected) > 2:
        raise DtfilmError(
            f"the clip of shot {entry.beat} from {where} has {frames} frames; its {entry.seconds:.2f} s make"
            f" {expected:.0f}"
        )


def receive(result: DrawnRemotely, out_dir: Path, frame_rate: int) -> DrawnShots:
    """Check a task's clips and write them into this machine's shot cache (clip, then entry)."""
    for key, data in result.clips.items():
        entry = parse_entry(result.entries[key])
        if entry.key != key:
            raise DtfilmError(f"worker {result.worker} returned shot {entry.beat} under another key")
        check_clip(data, entry, frame_rate, f"worker {result.worker}")
        if cached(out_dir, key) is None:
            with atomic_path(clip_path(out_dir, key)) as temp:
                temp.write_bytes(data)
            write_entry(out_dir, entry)
    return result.drawn


class ClusterUpdates:
    """The workers' progress (a Dask queue) read as the local progress display reads a queue."""

    def __init__(self, shared: Any) -> None:
        self.shared = shared

    def get(self, timeout: float) -> Any:
        try:
            return tuple(self.shared.get(timeout=timeout))
        except TimeoutError:
            raise queue.Empty from None


@dataclass
class Cluster:
    """A connected Dask client, the executor its tasks go through and where shots land."""

    address: str
    client: Any
    executor: Executor
    updates: ClusterUpdates
    job: RenderJob  # the project here, where its shots land, and how they are drawn
    labels: dict[Future[Any], str] = field(default_factory=dict)  # each task's shots, by future
    files: dict[str, dict[str, bytes]] = field(default_factory=dict)  # each chapter's, read once

    @property
    def jobs(self) -> int:
        """Shots drawn at once: every worker's threads."""
        return max(1, sum(self.client.nthreads().values()))

    def submit(self, task: ShotTask, chapter: Chapter) -> Future[Any]:
        spec = chapter.film.voice
        if chapter.id not in self.files:  # (a chapter split between workers is read once)
            self.files[chapter.id] = project_files(self.job.root, chapter)
        bundle = ShotBundle(task, self.job, self.files[chapter.id], spec, machine_versions(spec))
        future = self.executor.submit(draw_remotely, bundle, self.updates.shared)
        self.labels[future] = task.label
        return future

    def result(self, future: Future[Any]) -> DrawnShots:
        """A task's shots, written into the cache here. A task that failed on its worker is one
        line naming the shots; a lost scheduler, one line saying so."""

        label = self.labels.pop(future, "a task")
        try:
            returned = future.result()
        except CancelledError:
            raise DtfilmError(
                f"the Dask scheduler at {self.address} went away mid-render; earlier renders are intact"
            ) from None
        except DtfilmError:
            raise
        except Exception as error:
            if _gone(error):
                raise
            raise DtfilmError(f"drawing {label} failed on the cluster: {type(error).__name__}: {error}") from None
        return receive(returned, self.job.out_dir, FRAME_RATES[self.job.quality])


def _gone(error: BaseException) -> bool:
    return type(error).__name__ in {"CommClosedError", "StreamClosedError"} or isinstance(error, OSError)


@contextlib.contextmanager
def connect(
    address: str, job: RenderJob, voice: VoiceSpec, wait_seconds: float = DEFAULT_WAIT_SECONDS
) -> Iterator[Cluster]:
    """A client of the scheduler at `address`, once every worker is checked to match this machine
    (waiting up to `wait_seconds` for a first worker where there is none yet). Leaving the block
    (Ctrl-C included) cancels whatever tasks are left and closes the client."""
    try:
        # (here: Dask, an extra, only on a cluster)
        from distributed import Client, Queue
    except ImportError:
        raise DtfilmError("--cluster needs Dask: pip install 'dtfilm[cluster]'", Where(flag="--cluster")) from None
    _check_tls(address)
    _refused_at_once(address)
    bound_frames()
    try:
        client = answered(
            address,
            HANDSHAKE_SECONDS,
            "the handshake",
            lambda: Client(address, timeout=f"{CONNECT_SECONDS}s", set_as_default=False),
        )
    except (OSError, TimeoutError, ValueError) as error:
        raise DtfilmError(
            f"no Dask scheduler answers at {address} ({type(error).__name__}: {error})", Where(flag="--cluster")
        ) from None
    executor = None
    quiet = _dask_quiet()
    try:
        # every exchange before the first task is bounded: a scheduler that stops answering
        # stops the run in one line (and frees the render's lock), never holds it
        answered(
            address,
            wait_seconds + HANDSHAKE_SECONDS,
            "with a worker",
            lambda: _wait_for_a_worker(client, address, voice, wait_seconds),
        )
        answered(
            address, HANDSHAKE_SECONDS, "for its workers' versions", lambda: _check_workers(client, address, voice)
        )
        executor = client.get_executor()
        updates = answered(address, HANDSHAKE_SECONDS, "a queue", lambda: ClusterUpdates(Queue(client=client)))
        yield Cluster(address, client, executor, updates, job)
    except BaseException as error:
        if executor is not None:
            with contextlib.suppress(Exception):
                executor.shutdown(wait=False)  # cancels every task not yet done
        if _gone(error):
            raise DtfilmError(
                f"the Dask scheduler at {address} went away mid-render; earlier renders are intact"
            ) from None
        raise
    finally:
        with contextlib.suppress(Exception):
            client.close(timeout=CONNECT_SECONDS)
        quiet()


def _dask_quiet() -> Callable[[], None]:
    """Dask's loggers silenced, and what sets them back. A lost scheduler is this run's one-line
    error, not Dask's tracebacks; Dask's loggers have levels and handlers of their own
    (distributed.client logs a cancelled reconnect as it closes)."""
    levels = [
        (logger, logger.level)
        for name, logger in logging.root.manager.loggerDict.items()
        if name.startswith("distributed") and isinstance(logger, logging.Logger)
    ]
    for logger, _ in levels:
        logger.setLevel(logging.CRITICAL)

    def restore() -> None:
        for logger, level in levels:
            logger.setLevel(level)

    return restore


REFUSED_RETRY_SECONDS = 2.0  # a scheduler starting beside the render has this long to listen


def _refused_at_once(address: str) -> None:
    """A TCP (or TLS) address where nothing listens is an error in about 2 s: Dask's client
    tries a refused connection again until its 10 s timeout, and a mistyped port waited that
    long for its one line. Anything else (an address Dask reads otherwise, no answer at all) is
    left to Dask's own connect and its timeout."""
    # (here: Dask, an extra, only on a cluster)
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port

    try:
        scheme, location = parse_address(address)
        host, port = parse_host_port(location)
    except (ValueError, TypeError):
        return
    if scheme not in ("tcp", "tls"):
        return
    deadline = time.monotonic() + REFUSED_RETRY_SECONDS
    while True:
        try:
            # (no answer in this long is left to Dask's connect: a silent address waits for it once)
            socket.create_connection((host, port), timeout=REFUSED_RETRY_SECONDS).close()
            return
        except ConnectionRefusedError as error:
            if time.monotonic() >= deadline:
                raise DtfilmError(
                    f"no Dask scheduler answers at {address} (ConnectionRefusedError: {error})", Where(flag="--cluster")
                ) from None
            time.sleep(0.2)
        except OSError:
            return  # (no route, a name that does not resolve, a timeout: Dask's connect says so)


def _check_tls(address: str) -> None:
    """A tls:// scheduler needs Dask's TLS settings for a client (its CA and the client's own
    certificate and key), read from Dask's configuration as any Dask client reads them."""
    # (here: Dask, an extra, only on a cluster)
    from distributed.security import Security

    if address.startswith("tls://") and Security().get_connection_args("client").get("ssl_context") is None:
        raise DtfilmError(
            f"{address} speaks TLS, and Dask has no TLS settings for a client: set distributed.comm.tls.ca-file,"
            " .client.cert and .client.key in Dask's configuration (or DASK_DISTRIBUTED__COMM__TLS__CA_FILE and"
            " friends)",
            Where(flag="--cluster"),
        )


def _wait_for_a_worker(client: Any, address: str, voice: VoiceSpec, wait_seconds: float) -> None:
    """Where the scheduler has no worker yet (an adaptive cluster, dask-jobqueue or Kubernetes,
    starts with none and scales up when work arrives): a first task, the version check, is
    submitted, which is what makes such a cluster start a worker, and waited for."""
    if client.scheduler_info(n_workers=-1)["workers"]:
        return
    print(
        f"dtfilm: the Dask scheduler at {address} has no workers yet; waiting up to {wait_seconds:g} s for one"
        " (--cluster-wait)",
        file=sys.stderr,
        flush=True,
    )
    first = client.submit(machine_versions, voice, pure=False)
    try:
        first.result(timeout=wait_seconds)
    except TimeoutError:
        raise DtfilmError(
            f"no worker joined the Dask scheduler at {address} in {wait_seconds:g} s; start some with"
            f" `dask worker {address}`, or wait longer with --cluster-wait SECONDS",
            Where(flag="--cluster"),
        ) from None
    finally:
        first.cancel()


def _check_workers(client: Any, address: str, voice: VoiceSpec) -> None:
    workers = client.scheduler_info(n_workers=-1)["workers"]
    if not workers:
        raise DtfilmError(f"the Dask scheduler at {address} has no workers; start some with `dask worker {address}`")
    names = {addr: str(info.get("name", addr)) for addr, info in workers.items()}
    theirs = client.run(machine_versions, voice)
    difference = version_mismatch(machine_versions(voice), theirs, names)
    if difference is not None:
        raise DtfilmError(difference, Where(flag="--cluster"))
