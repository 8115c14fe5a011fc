"""Bounds on what a Dask scheduler can make this run do: how long it may stay silent and how
large a message it may announce. A listener that accepts and never answers held `render
--cluster` (and its lock) for minutes: Dask's connect timeout does not cover its handshake. A
frame length of 2^62 was an "Unable to allocate 4.00 EiB" traceback: Dask allocates what the
length prefix says before a byte of it arrives."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from dtfilm.errors import DtfilmError, Where

T = TypeVar("T")

# A task's returned clips are tens of MB at final quality; the storyboard folder sent with it,
# less. A message announcing more is refused before anything is allocated for it.
MAX_FRAME_BYTES = 1 << 31


class FrameTooLarge(RuntimeError):
    """A peer announced a message past MAX_FRAME_BYTES. Not an OSError: Dask's connect would
    take that for a refused connection and try again until its timeout."""


def bound_frames() -> None:
    """Dask's TCP reads refuse a message past MAX_FRAME_BYTES before allocating for it. Dask has
    no setting for this, so its reader is wrapped, once, in this (the client's) process."""
    # (here: Dask, an extra, only on a cluster)
    from distributed.comm import tcp

    read = tcp.read_bytes_rw
    if getattr(read, "dtfilm_bounded", False):
        return

    async def bounded(stream: Any, n: int) -> Any:
        if not 0 <= n <= MAX_FRAME_BYTES:
            raise FrameTooLarge(f"the scheduler announced a message of {n:,} bytes; at most {MAX_FRAME_BYTES:,}")
        return await read(stream, n)

    bounded.dtfilm_bounded = True  # type: ignore[attr-defined]
    tcp.read_bytes_rw = bounded


def answered(address: str, seconds: float, what: str, call: Callable[[], T]) -> T:
    """`call()` (a blocking exchange with the scheduler), given at most `seconds`: past them the
    run stops in one line, and whatever holds it (the render's lock) is released as the error
    unwinds. The call goes on in a daemon thread, abandoned; the process exits soon after."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as error:  # handed to the waiting thread as it is
            outcome["error"] = error

    thread = threading.Thread(target=run, name=f"dtfilm: {what}", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise DtfilmError(
            f"the Dask scheduler at {address} did not answer {what} in {seconds:g} s; valid: the address of a"
            " running Dask scheduler (dask scheduler prints it)",
            Where(flag="--cluster"),
        )
    error = outcome.get("error")
    if isinstance(error, (FrameTooLarge, MemoryError)):
        raise DtfilmError(
            f"the Dask scheduler at {address} sent a message too large to read ({error}); valid: a Dask"
            " scheduler you trust",
            Where(flag="--cluster"),
        ) from None
    if error is not None:
        raise error
    return outcome["value"]
