"""What runs on a Dask worker, and the versions it must share with this machine: a task's shots
drawn from the project files it was handed, in a folder of its own, the clips sent back with their
cache entries (dtfilm.render.cluster hands them out)."""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import functools
import hashlib
import platform
import tempfile
import threading
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from dtfilm.errors import DtfilmError
from dtfilm.render.cache import code_digest
from dtfilm.render.job import RenderJob
from dtfilm.render.shot_cache import clip_path, entry_path
from dtfilm.render.shot_render import draw_shots
from dtfilm.render.tasks import DrawnShots, ShotTask
from dtfilm.storyboard import Chapter
from dtfilm.system.fonts import FONTS, fc_match
from dtfilm.system.machine import machine_cache
from dtfilm.voice.engine import VoiceSpec, voice_key
from dtfilm.voice.track import CACHE_FOLDER, narration_track, sentence_paths

PROGRESS_SECONDS = 1.0  # a worker's progress messages, at most one in this long


_one_scene = threading.Lock()  # Manim's config is global: one scene per worker process at a time


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters


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


@dataclass(frozen=True)
class ShotBundle:
    """Everything a worker needs to draw some shots of one chapter, with no shared filesystem."""

    task: ShotTask
    job: RenderJob  # its overrides, quality, theme and voice (its folders are the client's: unused there)
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
        drawn = draw_shots(bundle.task, dataclasses.replace(job, root=root, out_dir=out_dir, voice=bundle.spec), tagged)
        keys = {k.beat: k.key for k in drawn.keys}
        clips = {keys[b]: clip_path(out_dir, keys[b]).read_bytes() for b in drawn.drawn}
        entries = {keys[b]: entry_path(out_dir, keys[b]).read_text() for b in drawn.drawn}
    return DrawnRemotely(drawn, clips, entries, name)
