"""What dtfilm records of each file it writes, and whether a file still matches its record.

A record is a file's size in bytes, its modification time (ns) and its SHA-256. The manifest
keeps one for every output of a chapter and of the film, and a shot cache entry one for its
clip. Nothing read back is trusted for existing alone: a file matches its record when its size
is the recorded one and, should its modification time differ (or `verify` ask for it), when its
digest is the recorded one too. Comparing sizes and times costs a stat; a changed caption's
render hashes only what it writes (its chapter, a few megabytes: milliseconds).
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
from pathlib import Path
from typing import Any

Record = dict[str, Any]  # {"size": bytes, "mtime_ns": ns, "sha256": hex}


def file_sha256(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def record_of(path: Path, previous: Record | None = None) -> Record:
    """`path`'s record; `previous` (its last) is kept when its size and time are unchanged, so
    that a file not written again is not read again."""
    info = path.stat()
    if isinstance(previous, dict) and _same_stat(previous, info) and isinstance(previous.get("sha256"), str):
        return {"size": info.st_size, "mtime_ns": info.st_mtime_ns, "sha256": previous["sha256"]}
    return {"size": info.st_size, "mtime_ns": info.st_mtime_ns, "sha256": file_sha256(path)}


def _same_stat(record: Record, info: os.stat_result) -> bool:
    return record.get("size") == info.st_size and record.get("mtime_ns") == info.st_mtime_ns


@functools.lru_cache(maxsize=4096)
def _digest_is(path: str, size: int, mtime_ns: int, sha256: str) -> bool:
    """Whether the file (as of this size and time: a later write changes them) has this digest;
    once per process, as a render looks its cached shots up many times."""
    return file_sha256(Path(path)) == sha256


def mismatch(path: Path, record: Record | None, verify: bool = False) -> str | None:
    """Why `path` does not match `record`: "missing" (or not a regular file), "changed" (its
    size, or its digest where its time differs or `verify` asks), "unrecorded"; None if it does."""
    if not isinstance(record, dict) or not isinstance(record.get("sha256"), str):
        return "unrecorded"
    try:
        info = path.stat()
    except OSError:
        return "missing"
    if not stat.S_ISREG(info.st_mode):
        return "missing"
    if info.st_size != record.get("size"):
        return "changed"
    if verify:
        return None if file_sha256(path) == record["sha256"] else "changed"
    if info.st_mtime_ns != record.get("mtime_ns"):
        return None if _digest_is(str(path), info.st_size, info.st_mtime_ns, record["sha256"]) else "changed"
    return None


def matches(path: Path, record: Record | None, verify: bool = False) -> bool:
    return mismatch(path, record, verify) is None
