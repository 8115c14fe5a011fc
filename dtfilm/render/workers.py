"""The processes that draw shots: one, or a pool for `--jobs` whose processes end with this one,
kept from one render to the next while `kept_workers` is open (`dtfilm render --watch`)."""

from __future__ import annotations

import contextlib
import os
import queue
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from multiprocessing.managers import SyncManager
from typing import Any

from dtfilm.system.lifeline import lifeline, watch_parent
from dtfilm.system.pickled import signing_key
from dtfilm.system.quiet_workers import QuietPool, quiet_context


class InlineExecutor(Executor):
    """One job: each task runs in this process when it is submitted."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # handed to whoever waits on it, as a pool would
            future.set_exception(error)
        return future


@contextlib.contextmanager
def local_executor(jobs: int) -> Iterator[tuple[Executor, Any]]:
    """An executor for `jobs` processes and a queue its tasks can report progress on: the kept
    one while `kept_workers` is open (started by the first render that draws)."""
    if jobs <= 1:
        with InlineExecutor() as inline:
            yield inline, queue.Queue()
        return
    if _kept is None:
        with _worker_pool(jobs) as pool:
            yield pool
        return
    if jobs not in _kept.pools:
        _keep_pool(_kept, jobs)
    executor, updates, own = _kept.pools[jobs]
    try:
        yield executor, updates
    except BaseException as error:  # a render that failed may have left a worker broken or busy:
        del _kept.pools[jobs]  # the next render starts new ones, once these are stopped
        own.__exit__(type(error), error, error.__traceback__)
        raise


@contextlib.contextmanager
def _worker_pool(jobs: int) -> Iterator[tuple[Executor, Any]]:
    context = quiet_context()  # (forked on Linux: see there)
    if context.get_start_method() == "fork":
        import dtfilm.scene  # noqa: F401  (Manim with it: imported once, here, not by each worker)

        signing_key()  # read once, here, and any warning about it said once: every worker inherits it
    # Each process (the drawing ones, and the manager's that serves their progress queue) ends
    # when this one dies, however it dies (dtfilm.system.lifeline): none outlives a killed render.
    with lifeline(context) as line, _manager(context, line) as manager, QuietPool(jobs, line) as pool:
        pool.submit(int).result()  # every worker started now, before a progress display's thread
        try:
            yield pool, manager.Queue()
        except BaseException:
            # What is queued is not drawn, and the processes are waited for: before their queue
            # (the manager) closes, and before this process exits. (A plain shutdown, which
            # __exit__ makes, would draw every shot still queued.)
            pool.shutdown(wait=True, cancel_futures=True)
            raise


def _manager(context: BaseContext, line: Connection) -> SyncManager:
    """A started manager (for the progress queue) whose process watches `line`."""
    manager = SyncManager(ctx=context)
    manager.start(watch_parent, (line, os.getpid()))
    return manager


@dataclass
class _KeptWorkers:
    stack: contextlib.ExitStack  # closes every pool kept
    # by how many processes: each pool, its progress queue, and what closes the two
    pools: dict[int, tuple[Executor, Any, contextlib.ExitStack]] = field(default_factory=dict)


_kept: _KeptWorkers | None = None


def keeping() -> bool:
    """Whether `kept_workers` is open: the processes that draw are kept across renders."""
    return _kept is not None


def _keep_pool(kept: _KeptWorkers, jobs: int) -> None:
    own = kept.stack.enter_context(contextlib.ExitStack())  # the pool's own, to close it alone too
    kept.pools[jobs] = (*own.enter_context(_worker_pool(jobs)), own)


@contextlib.contextmanager
def kept_workers(jobs: int = 1) -> Iterator[None]:
    """While open, the processes that draw shots are kept from one render to the next (`dtfilm
    render --watch`): renders hand them their shots at once, without starting processes or
    importing Manim again (about a second of a changed caption's few). `jobs` processes start
    now (more than one); a render asking for another count starts its own, kept too."""
    global _kept
    with contextlib.ExitStack() as stack:
        _kept = _KeptWorkers(stack)
        if jobs > 1:
            _keep_pool(_kept, jobs)
        try:
            yield
        finally:
            _kept = None
