"""Helper processes that end with the process that started them, however it ends.

A render killed with SIGKILL (as the out-of-memory killer kills, the main process only) runs no
cleanup: its drawing processes, about 300 MB each, lived on, waiting for tasks that would never
come. Here the parent opens a pipe (a lifeline) and never writes to it; each child it starts
keeps the read end and a thread that blocks on it. When the parent dies the kernel closes its
write end, the read end sees end-of-file, and the thread ends the child at once (os._exit).
This is plain POSIX, the same on Linux and macOS (prctl's death signal is Linux's alone).

Only the parent may hold the write end: a forked child drops its inherited copy as it starts
(an at-fork hook, for every fork of this process: `parent_only`, which the render lock's
descriptor uses too), and a spawned one never gets it. Should a copy leak anyway, the thread
also notices a new parent process id (the child was adopted) within CHECK_SECONDS.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext

CHECK_SECONDS = 1.0  # how often a child also checks that its parent is the one that started it
ORPHANED_STATUS = 70  # a child's exit status when its parent died (EX_SOFTWARE: nothing printed)

_parent_only: set[int] = set()  # descriptors a forked child must not keep: lifelines' write ends, the lock


def parent_only(fd: int) -> None:
    """Keep `fd` from this process's forked children (until `released`)."""
    _parent_only.add(fd)


def released(fd: int) -> None:
    _parent_only.discard(fd)


def _drop_parent_only_in_child() -> None:
    """In a forked child: its copies of the parent's descriptors point at /dev/null instead, so
    that only the parent holds them open (and the objects copied with them still close a
    descriptor of their own, never one reused for another file)."""
    if not _parent_only:
        return
    null = os.open(os.devnull, os.O_RDONLY)
    for fd in _parent_only:
        with contextlib.suppress(OSError):
            os.dup2(null, fd)
    os.close(null)
    _parent_only.clear()


os.register_at_fork(after_in_child=_drop_parent_only_in_child)


@contextlib.contextmanager
def lifeline(context: BaseContext) -> Iterator[Connection]:
    """A pipe whose write end this process holds until the block ends; yields the read end, for
    the children started in the block (watch_parent)."""
    reader, writer = context.Pipe(duplex=False)
    parent_only(writer.fileno())
    try:
        yield reader
    finally:
        released(writer.fileno())
        writer.close()
        reader.close()


def watch_parent(reader: Connection, parent_pid: int) -> None:
    """In a child (a pool's or a manager's initializer): end this process when its parent dies."""
    threading.Thread(target=_watch, args=(reader, parent_pid), name="dtfilm-lifeline", daemon=True).start()


def _watch(reader: Connection, parent_pid: int) -> None:
    with contextlib.suppress(OSError, ValueError):
        # readable means end-of-file (the parent never writes): the parent has died
        while not reader.poll(CHECK_SECONDS) and os.getppid() == parent_pid:
            pass
    os._exit(ORPHANED_STATUS)
