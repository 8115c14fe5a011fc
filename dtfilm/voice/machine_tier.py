"""The voice's sentences, kept for every project on this machine as well as in each project.

A sentence's audio depends only on what is said and the voice (dtfilm.voice.engine.identity),
never on the project: a film copied for a docs build, a second git worktree, CI's fresh clone
and a talk made with `dtfilm init` all say "A hundred and twelve gigabytes." the same way. So
each sentence spoken is also kept in `$XDG_CACHE_HOME/dtfilm/voice/` (dtfilm.system.machine), and
a project that misses one copies it from there before it asks the voice: the voice (Piper) costs
about 20 s of CPU for a chapter's 120 s of narration, a copy nothing.

Nothing there is trusted (docs/security.md): the folder is used only when it is a real folder
(not a link), a file is read beneath it with no link followed, as a regular file of at most
MAX_SENTENCE_BYTES, and used only when it is a mono 16-bit WAV file (`wav_frames`); anything
else counts as missing and is spoken again. The folder keeps at most MAX_FOLDER_BYTES: past
that the sentences used longest ago are removed (each use touches its file).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
import wave
from pathlib import Path

from dtfilm import beneath
from dtfilm.system.atomic import atomic_path
from dtfilm.system.machine import machine_cache

MAX_SENTENCE_BYTES = 32 * 2**20  # 12 minutes of the voice's 22,050 Hz; the film's longest is 0.7 MB
MAX_FOLDER_BYTES = 2 * 2**30  # about 2,500 sentences of the film's length
SENTENCE_NAME = re.compile(r"^[0-9a-f]{24}\.wav$")  # dtfilm.voice.track.sentence_path's names


def wav_frames(data: bytes | None) -> tuple[bytes, int] | None:
    """A mono 16-bit WAV file's frames and rate; None for anything else."""
    if data is None:
        return None
    try:
        with wave.open(io.BytesIO(data), "rb") as wav:
            if wav.getnchannels() != 1 or wav.getsampwidth() != 2 or wav.getframerate() <= 0:
                return None
            frames = wav.readframes(wav.getnframes())
            rate = wav.getframerate()
    except (wave.Error, EOFError, ValueError):
        return None
    return (frames, rate) if len(frames) == 2 * (len(frames) // 2) else None


def folder() -> Path | None:
    """The machine's voice folder, made if need be; None when it (or dtfilm's folder above it) is
    a link or a file, or cannot be made."""
    path = machine_cache() / "voice"
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not all(stat.S_ISDIR(os.lstat(step).st_mode) for step in (path.parent, path)):
            return None
    except OSError:
        return None
    beneath.register(path, scratch=False)
    return path


def fetch(name: str) -> bytes | None:
    """The bytes of sentence `name` kept on this machine, if it is a mono 16-bit WAV file."""
    where = folder()
    if where is None or not SENTENCE_NAME.match(name):
        return None
    try:
        data = beneath.read(where, name, MAX_SENTENCE_BYTES)
    except OSError:
        return None
    if wav_frames(data) is None:
        return None
    with contextlib.suppress(OSError):
        os.utime(where / name, follow_symlinks=False)  # used now: kept longest
    return data


def keep(name: str, data: bytes) -> None:
    """Keep sentence `name` on this machine (a failure to keep it costs a later project its
    copy, nothing else), then trim the folder to MAX_FOLDER_BYTES."""
    where = folder()
    if where is None or not SENTENCE_NAME.match(name):
        return
    with contextlib.suppress(OSError), atomic_path(where / name) as temp:
        temp.write_bytes(data)
    trim(where, MAX_FOLDER_BYTES)


def trim(where: Path, limit_bytes: int) -> list[str]:
    """Remove the sentences used longest ago until the folder's sentences hold at most
    `limit_bytes`; the names removed. Only regular files with a sentence's name are counted or
    removed, never followed."""
    kept = []
    with contextlib.suppress(OSError), os.scandir(where) as found:
        for entry in found:
            if SENTENCE_NAME.match(entry.name) and entry.is_file(follow_symlinks=False):
                info = entry.stat(follow_symlinks=False)
                kept.append((info.st_mtime_ns, info.st_size, entry.name))
    total = sum(size for _, size, _ in kept)
    removed = []
    for _, size, name in sorted(kept):
        if total <= limit_bytes:
            break
        with contextlib.suppress(OSError):
            os.unlink(where / name)
            removed.append(name)
        total -= size
    return removed
