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
import ctypes
import functools
import hashlib
import io
import logging
import os
import platform
import queue
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import CancelledError, Executor, Future
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import av

from dtfilm.errors import DtfilmError, Where
from dtfilm.render.cache import code_digest
from dtfilm.render.cluster_bounds import answered, bound_frames
from dtfilm.render.schedule import ShotJob
from dtfilm.render.shot_cache import CachedShot, cached, clip_path, entry_path, parse_entry, write_entry
from dtfilm.render.shot_render import DrawnShots, ShotTask, draw_shots
from dtfilm.storyboard import Chapter
from dtfilm.storyboard.film import SCHEDULER_TEXT, is_scheduler_address
from dtfilm.system.atomic import atomic_path
from dtfilm.system.fonts import FONTS, fc_match
from dtfilm.system.machine import machine_cache
from dtfilm.system.quality import FRAME_RATES
from dtfilm.voice.engine import VoiceSpec, voice_key
from dtfilm.voice.track import CACHE_FOLDER, narration_track, sentence_paths

CLUSTER_VARIABLE = "DTFILM_CLUSTER"  # names the scheduler instead of film.yaml's `scheduler:`
LOCAL = "none"  # `--cluster none`: render here, whatever film.yaml or the environment say
CONNECT_SECONDS = 10
HANDSHAKE_SECONDS = 2 * CONNECT_SECONDS  # the connect and Dask's handshake after it, together
DEFAULT_WAIT_SECONDS = 120.0  # for a first worker (--cluster-wait)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
PROGRESS_SECONDS = 1.0  # a worker's progress messages, at most one in this long

_one_scene = threading.Lock()  # Manim's config is global: one scene per worker process at a time


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


# --- what must match on every machine ---------------------------------------------------------


def _font_files() -> str:
    """The font files Pango is given for the themes' fonts, by name and content."""
    digest = hashlib.sha256()
    for family in FONTS:
        found = fc_match(family, "file")
        digest.update(f"{family}={Path(found).name}".encode())
        if found and Path(found).is_file():
            digest.update(Path(found).read_bytes())
    return digest.hexdigest()[:16]


@functools.cache
def machine_versions(voice: VoiceSpec) -> dict[str, str]:
    """Everything besides the storyboard that changes a shot's pixels or sound on a machine."""
    # (here: the drawing libraries, whose versions a worker reports, only when asked)
    import av
    import cairo
    import manimpango

    codec = av.library_versions.get("libavcodec", ())
    return {
        "dtfilm code": code_digest(),
        "Python": platform.python_version(),
        "Manim": metadata.version("manim"),
        "Cairo": cairo.cairo_version_string(),
        "Pango": manimpango.pango_version(),
        "fonts": _font_files(),
        "voice": voice_key(voice),
        "encoder": f"PyAV {av.__version__}, libavcodec {'.'.join(map(str, codec))}",
    }


def version_mismatch(here: dict[str, str], workers: dict[str, dict[str, str]], names: dict[str, str]) -> str | None:
    """The first difference between this machine and a worker, in words; None when all match."""
    for address, theirs in sorted(workers.items()):
        for part, value in here.items():
            if theirs.get(part) != value:
                name = names.get(address, address)
                who = f"{name} ({address})" if name != address else address
                return f"worker {who} differs in {part}: {theirs.get(part)!r} there, {value!r} here"
    return None


# --- a task and what it returns ---------------------------------------------------------------


@dataclass(frozen=True)
class ShotBundle:
    """Everything a worker needs to draw some shots of one chapter, with no shared filesystem."""

    task: ShotTask
    job: ShotJob  # its overrides, quality, theme and voice (its folders are the client's: unused there)
    files: dict[str, bytes]  # the project's files the chapter reads, by path in the project
    spec: VoiceSpec  # the voice the film speaks with
    versions: dict[str, str]  # the client's (machine_versions): a worker that differs refuses the task


@dataclass(frozen=True)
class DrawnRemotely:
    drawn: DrawnShots
    clips: dict[str, bytes]  # shot key: its encoded clip
    entries: dict[str, str]  # shot key: its cache entry (JSON)
    worker: str


def project_files(root: Path, chapter: Chapter) -> dict[str, bytes]:
    """The storyboard folder, and the voice's cached sentences of the chapter's narration."""

    files = {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted((root / "storyboard").rglob("*"))
        if path.is_file() and not path.name.startswith(".")
    }
    if narration_track(chapter, chapter.film.voice):  # spoken here first (the audio cache), then carried
        for shot in chapter.shots:
            if shot.narration is None:
                continue
            for path in sentence_paths(chapter.film.voice, shot.narration.text, root / CACHE_FOLDER):
                files[str(path.relative_to(root))] = path.read_bytes()
    return files


def _safe_path(root: Path, relative: str) -> Path:
    path = (root / relative).resolve()
    if not path.is_relative_to(root.resolve()):
        raise ValueError(f"a task's file {relative!r} lies outside its project")
    return path


class TaggedUpdates:
    """Progress from a worker: (row, seconds) with the worker's name added, at most one message
    every PROGRESS_SECONDS (each is a round trip through the scheduler that the drawing waits on)."""

    def __init__(self, updates: Any, worker: str) -> None:
        self.updates, self.worker = updates, worker
        self.sent = -PROGRESS_SECONDS

    def put(self, item: tuple[str, float]) -> None:
        now = time.monotonic()
        if now - self.sent < PROGRESS_SECONDS:
            return
        self.sent = now
        with contextlib.suppress(Exception):  # progress is never worth failing a shot for
            self.updates.put([*item, self.worker])


@functools.cache
def _frames_on_the_heap() -> None:
    """Once per worker process. Dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536 (to
    hand memory back to the system early), which also stops glibc raising its mmap threshold as a
    program frees large blocks: every frame buffer Manim allocates (1.6 MB at preview, 8 MB at
    final) is then mapped and unmapped, its pages faulted in afresh each frame. Drawing keeps them
    on the heap instead, as it does in a process of its own."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc: nothing to undo
        return
    libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)  # glibc's largest (what its dynamic threshold grows to)
    libc.mallopt(M_TRIM_THRESHOLD, 64 << 20)


def worker_typeset_folder() -> Path:
    """Where a worker machine keeps typeset labels, for every worker and render on it: a fresh
    worker's own folder (Dask's local directory is new at each start) typesets every label
    again through Pango, which drew a chapter of many labels about 40% slower. Labels are
    stored by their look (dtfilm.visuals.text) and written atomically, so workers share them."""
    return machine_cache() / "typeset"


def draw_remotely(bundle: ShotBundle, updates: Any = None) -> DrawnRemotely:
    """On a worker: draw a bundle's shots in a temporary project and return their clips as bytes."""
    # (here: Dask, an extra, only on a cluster)
    from distributed import get_worker

    _frames_on_the_heap()

    worker = get_worker()
    name = str(worker.name)
    difference = version_mismatch(
        bundle.versions, {worker.address: machine_versions(bundle.spec)}, {worker.address: name}
    )
    if difference is not None:  # (a worker that joined after the client checked them all)
        raise DtfilmError(difference)
    typeset = worker_typeset_folder()
    with _one_scene, tempfile.TemporaryDirectory(prefix="dtfilm-task-") as folder:
        root = Path(folder)
        for relative, data in bundle.files.items():
            path = _safe_path(root, relative)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        typeset.mkdir(parents=True, exist_ok=True)
        (root / ".dtfilm-cache").mkdir(exist_ok=True)
        (root / ".dtfilm-cache" / "typeset").symlink_to(typeset)
        out_dir = root / "renders"
        tagged = TaggedUpdates(updates, name) if updates is not None else None
        job = bundle.job  # (the voice as the client chose it: the worker's environment has no say)
        drawn = draw_shots(bundle.task, root, job.overrides, job.quality, out_dir, job.theme, tagged, bundle.spec)
        keys = {k.beat: k.key for k in drawn.keys}
        clips = {keys[b]: clip_path(out_dir, keys[b]).read_bytes() for b in drawn.drawn}
        entries = {keys[b]: entry_path(out_dir, keys[b]).read_text() for b in drawn.drawn}
    return DrawnRemotely(drawn, clips, entries, name)


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


# --- the client ---------------------------------------------------------------------------


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
    job: ShotJob  # the project here, where its shots land, and how they are drawn
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
    address: str, job: ShotJob, voice: VoiceSpec, wait_seconds: float = DEFAULT_WAIT_SECONDS
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
    # A lost scheduler is this run's one-line error, not Dask's tracebacks. Dask's loggers have
    # levels and handlers of their own (distributed.client logs a cancelled reconnect as it closes).
    levels = [
        (logger, logger.level)
        for name, logger in logging.root.manager.loggerDict.items()
        if name.startswith("distributed") and isinstance(logger, logging.Logger)
    ]
    for logger, _ in levels:
        logger.setLevel(logging.CRITICAL)
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
        for logger, level in levels:
            logger.setLevel(level)


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
