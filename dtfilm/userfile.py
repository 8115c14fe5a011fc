"""Files the user names (storyboards, the catalog, a runs file, a voice), read only when they are
regular files and only up to a size limit: `/dev/zero` is refused before a byte is read, and a FIFO
before the read that would wait for a writer."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from dtfilm import beneath
from dtfilm.errors import DtfilmError, Where

# os.open's flags: O_NONBLOCK so that opening a FIFO returns at once (to be refused) instead of
# waiting for a writer; no effect on a regular file. O_CLOEXEC keeps it out of drawing processes.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _refused(error: OSError, where: Where) -> DtfilmError:
    if isinstance(error, (FileNotFoundError, NotADirectoryError)):
        return DtfilmError("no such file", where)
    if isinstance(error, IsADirectoryError):
        return DtfilmError("is a folder; valid: a regular file", where)
    return DtfilmError(f"cannot read: {error.strerror or error.__class__.__name__}", where)


def checked_file(path: Path, limit_bytes: int, what: str = "a file", shown_as: str | None = None) -> int:
    """The size of `path` if it is a regular file (a link to one is followed) of at most
    `limit_bytes`, for a file another library opens (a voice model); else a one-line error."""
    where = Where(shown_as or str(path))
    try:
        info = os.stat(path)
    except OSError as error:
        raise _refused(error, where) from None
    if not stat.S_ISREG(info.st_mode):
        raise DtfilmError(f"is {beneath.kind(info.st_mode)}; valid: {what}, a regular file", where)
    if info.st_size > limit_bytes:
        raise DtfilmError(f"{info.st_size:,} bytes; valid: {what} of at most {limit_bytes:,} bytes", where)
    return info.st_size


class _NotKept(Exception):
    """A file refused by `_read_regular`: what it is, in words."""


def _read_regular(path: Path, limit_bytes: int, flags: int = 0) -> bytes:
    """The bytes of `path` when it is a regular file of at most `limit_bytes`. Never reads more
    than `limit_bytes` + 1 bytes, even from a file that grows while it is read; raises OSError,
    or _NotKept naming what the file is instead."""
    fd = os.open(path, _OPEN_FLAGS | flags)
    try:
        info = os.fstat(fd)  # of what was opened, not of what the name points at now
        if not stat.S_ISREG(info.st_mode):
            raise _NotKept(f"is {beneath.kind(info.st_mode)}")
        if info.st_size > limit_bytes:
            raise _NotKept(f"{info.st_size:,} bytes")
        chunks, size = [], 0
        while size <= limit_bytes and (chunk := os.read(fd, limit_bytes + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit_bytes:
        raise _NotKept(f"more than {limit_bytes:,} bytes")
    return data


def read_limited(path: Path, limit_bytes: int, what: str = "a file", shown_as: str | None = None) -> bytes:
    """The bytes of `path`, a regular file (a link to one is followed) of at most `limit_bytes`;
    else a one-line error naming it."""
    where = Where(shown_as or str(path))
    try:
        return _read_regular(path, limit_bytes)
    except OSError as error:
        raise _refused(error, where) from None
    except _NotKept as refused:
        kind = str(refused)
        valid = f"{what}, a regular file" if kind.startswith("is ") else f"{what} of at most {limit_bytes:,} bytes"
        raise DtfilmError(f"{kind}; valid: {valid}", where) from None


def read_back(path: Path, limit_bytes: int, follow_links: bool = True) -> bytes | None:
    """The bytes of a file dtfilm wrote and reads back (a manifest, a kept scene state, a
    chapter's subtitles): None when it is missing, not a regular file (a FIFO planted there is
    not waited on), larger than `limit_bytes`, or unreadable. Whoever asked then treats it as
    missing and makes it again; what it returns is still checked before it is used.

    It is opened beneath the renders folder or cache it lies in (dtfilm.beneath.register), no
    link followed at any component: a link planted there, or on the way, counts as missing.
    Outside one, beneath its own folder: a link at the file itself is not followed either.
    (`follow_links` is kept for callers; no link is followed, whatever it says.)"""
    found = beneath.root_of(path) or (path.parent, path.name)
    try:
        return beneath.read(found[0], found[1], limit_bytes)
    except OSError:
        return None
