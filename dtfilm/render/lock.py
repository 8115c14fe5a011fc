"""One render at a time per renders folder: a POSIX record lock on renders/.dtfilm.lock, naming its holder."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

from dtfilm import beneath
from dtfilm.errors import DtfilmError, Where
from dtfilm.render.stale import shown
from dtfilm.system.atomic import sweep_scratch
from dtfilm.system.lifeline import parent_only, released

LOCK = ".dtfilm.lock"


_held: set[Path] = set()  # the lock files this process holds (a POSIX lock never refuses its owner)


@contextlib.contextmanager
def render_lock(out_dir: Path) -> Iterator[None]:
    """One render at a time per output folder; a second says who holds it and stops.

    A POSIX record lock (fcntl.lockf), which belongs to this process alone: a forked child does
    not inherit it (as it would inherit flock's open file), and the kernel releases it when this
    process dies, however it dies. (flock's lock outlived a render killed with SIGKILL, held by
    its drawing processes.) The lock file names its holder; a holder that died without
    releasing it is named as its lock is taken over. Taken, the lock's first work is to sweep
    the temporary files that killed runs left (dtfilm.system.atomic.sweep_scratch)."""
    beneath.check_renders_folder(out_dir, given=False, may_make=True, writes=True, where=Where(shown(out_dir)))
    beneath.mark(out_dir)  # (made if missing: a renders folder dtfilm writes in)
    path = out_dir / LOCK
    where = Where(shown(path))
    key = path.resolve()
    if key in _held:  # this process's own render, not finished (opening the file again and
        # closing it would release the lock: POSIX locks go with any of the owner's descriptors)
        raise DtfilmError(f"another dtfilm render is writing here (pid {os.getpid()}); wait for it to finish", where)
    fd = _open_lock(out_dir, where)
    handle = os.fdopen(fd, "r+")
    try:
        fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # BlockingIOError, or PermissionError (EACCES) on some systems
        holder = _holder(fd)
        handle.close()
        raise DtfilmError(f"another dtfilm render is writing here ({holder}); wait for it to finish", where) from None
    _held.add(key)
    parent_only(fd)  # (a forked child's copy holds no lock, but keeps nothing open either)
    try:
        previous = _holder(fd, "")
        if previous and previous != f"pid {os.getpid()}":
            print(
                f"dtfilm: {shown(path)}: taken over from the render that held it ({previous}), which ended"
                " without releasing it",
                file=sys.stderr,
            )
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
        sweep_scratch(out_dir)  # what runs that were killed mid-write left
        yield
    finally:
        _held.discard(key)
        released(fd)
        handle.truncate(0)
        fcntl.lockf(handle, fcntl.LOCK_UN)
        handle.close()


LOCK_MAX_BYTES = 64  # "pid N": what a lock file holds; a longer one is not dtfilm's


_HOLDER = re.compile(r"pid [0-9]{1,10}")


def _open_lock(out_dir: Path, where: Where) -> int:
    """The lock file, opened (made) beneath the renders folder: a link there is refused, never
    followed (a link to a file outside would be truncated), and a FIFO or a device is refused
    without waiting or reading from it. One with other names (hard links: a renders folder
    copied with `cp -al`, or a file of someone else's linked in) is replaced by a file of its
    own, as it is truncated and written."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        with beneath.folder(out_dir) as dir_fd:
            fd = os.open(LOCK, flags, 0o644, dir_fd=dir_fd)
            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                os.close(fd)
                os.unlink(LOCK, dir_fd=dir_fd)  # (this name only: the other names keep their file)
                fd = os.open(LOCK, flags | os.O_EXCL, 0o644, dir_fd=dir_fd)
                info = os.fstat(fd)
    except beneath.Refused as refused:
        raise refused.line_error("a folder dtfilm makes, not a link") from None
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.EMLINK):
            raise DtfilmError(
                "is a link, never followed; valid: the lock file dtfilm makes (remove the link)", where
            ) from None
        if isinstance(error, IsADirectoryError):
            raise DtfilmError("this is a folder where dtfilm keeps its lock file: remove it", where) from None
        raise DtfilmError(f"cannot open the lock file: {error.strerror}", where) from None
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        what = beneath.kind(info.st_mode)
        raise DtfilmError(f"is {what}, not the lock file dtfilm makes; valid: remove it (dtfilm makes it again)", where)
    os.set_blocking(fd, True)
    return fd


def _holder(fd: int, unknown: str = "another process") -> str:
    """Who holds the lock, as its file says ("pid N"): at most LOCK_MAX_BYTES read, and only
    text of that shape is shown (nothing else a stranger wrote reaches the terminal)."""
    try:
        text = os.pread(fd, LOCK_MAX_BYTES, 0).decode("ascii", "replace").strip()
    except OSError:
        return unknown
    return text if _HOLDER.fullmatch(text) else ("an unknown process" if text else unknown)
