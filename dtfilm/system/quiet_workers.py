"""Drawing processes that stop, quietly, on Ctrl-C.

A terminal's Ctrl-C reaches every process of a render, and the render says it was interrupted.
With a plain ProcessPoolExecutor a drawing process busy with a shot ended that task, then drew
the shots already queued for it, which the render waited for (15 s and more into a forced film);
one waiting for its next shot printed Python's KeyboardInterrupt traceback and died; and one
where the interrupt landed in a weak reference's callback printed "Exception ignored" and drew
on. Here a drawing process only notes Ctrl-C; its scene stops at its next animation
(`stop_if_interrupted`, raising KeyboardInterrupt: Manim closes its encoders, the task's
temporary files go as the interrupt unwinds it), and the tasks it takes after that end at once,
so the render's shutdown waits for nothing. Should a process fail after Ctrl-C anyway (a queue
the render already closed), it exits with status 130, printing nothing.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing.connection import Connection
from multiprocessing.context import ForkContext, ForkProcess, SpawnContext, SpawnProcess
from types import FrameType
from typing import Any, TypeVar

from dtfilm.system.lifeline import watch_parent
from dtfilm.system.unwritable import as_plain_oserror

T = TypeVar("T")


class _Heard:
    ctrl_c = False  # this process (a drawing one) has heard Ctrl-C


def _hear_ctrl_c(_signal_number: int, _frame: FrameType | None) -> None:
    _Heard.ctrl_c = True


def stop_if_interrupted() -> None:
    """Raise KeyboardInterrupt in a drawing process that has heard Ctrl-C (called by a scene
    before each animation, where stopping is safe)."""
    if _Heard.ctrl_c:
        raise KeyboardInterrupt


def _run_quietly(run: Callable[[], None]) -> None:
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # (ignored in the background)
        signal.signal(signal.SIGINT, _hear_ctrl_c)
    try:
        run()
    except BaseException:
        if _Heard.ctrl_c:
            sys.exit(130)  # multiprocessing ends a process on SystemExit without a word
        raise


def _task(work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`work`; once Ctrl-C is heard, a task ends before it starts. A folder that cannot take a
    write (a full disk) is handed back as the OSError it is, not the library's wrapper of it."""
    stop_if_interrupted()
    try:
        return work(*args, **kwargs)
    except Exception as error:
        plain = as_plain_oserror(error)
        if plain is error:
            raise
        raise plain from None


class QuietForkProcess(ForkProcess):
    def run(self) -> None:
        _run_quietly(super().run)


class QuietSpawnProcess(SpawnProcess):
    def run(self) -> None:
        _run_quietly(super().run)


class QuietForkContext(ForkContext):
    Process = QuietForkProcess


class QuietSpawnContext(SpawnContext):
    Process = QuietSpawnProcess


def quiet_context() -> ForkContext | SpawnContext:
    """Forked where the system forks (Linux): a worker starts with Manim and dtfilm loaded, where
    a spawned one spends about 1.5 s importing them before its first frame."""
    return QuietForkContext() if sys.platform == "linux" else QuietSpawnContext()


class QuietPool(ProcessPoolExecutor):
    """`jobs` drawing processes (quiet_context) whose tasks Ctrl-C ends, queued ones included;
    given a `lifeline` (dtfilm.system.lifeline), each ends when this process dies."""

    def __init__(self, jobs: int, lifeline: Connection | None = None) -> None:
        if lifeline is None:
            super().__init__(jobs, mp_context=quiet_context())
        else:
            super().__init__(
                jobs, mp_context=quiet_context(), initializer=watch_parent, initargs=(lifeline, os.getpid())
            )

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        return super().submit(_task, fn, *args, **kwargs)
