"""Work done in a forked process while this one goes on: a core left idle put to use.

A render of named chapters joins the film at its end only once it has loaded every other
chapter and found it fresh (0.1-0.25 s here). The render's own process spends its first second
alone on one core (planning, importing Manim) before its drawing processes start; a process
forked at the start loads the other chapters on the second core meanwhile, and the join reads
its answer. Where it cannot fork (another thread runs: `dtfilm render --watch` keeps its drawing
processes, and their pool's threads), the work runs on a thread of this process instead, while
its main thread waits for the drawing processes, not after them.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from multiprocessing import get_context
from multiprocessing.connection import Connection
from typing import Any, TypeVar

T = TypeVar("T")
REAP_SECONDS = 5.0  # how long a helper whose answer nobody read may take to end, before it is stopped


Answer = tuple[str, Any]  # ("value", what the work returned) or ("raised", what it raised)


def _attempted(work: Callable[[], Any]) -> Answer:
    try:
        return ("value", work())
    except Exception as error:  # raised where the answer is read
        return ("raised", error)


def _given(answers: list[Answer], work: Callable[[], T]) -> T:
    """The work's answer (what it returned, or raises what it raised); done here, by the reader,
    when none came."""
    if not answers:
        answers.append(("value", work()))
    kind, value = answers[0]
    if kind == "raised":
        raise value
    return value


def _answer(work: Callable[[], Any], receiving: Connection, sending: Connection) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the render's to answer, not this helper's
    receiving.close()  # the reader's end, copied by the fork: once the reader closes it, sending fails
    answer = _attempted(work)
    try:
        sending.send(answer)
    except Exception:  # not picklable: the reader does the work itself
        pass
    sending.close()


@contextlib.contextmanager
def forked(work: Callable[[], T]) -> Iterator[Callable[[], T]]:
    """Starts `work` in a forked process and yields the function that returns its result (or
    raises what it raised). Where this system does not fork, or another thread is running (a
    fork copies only this one, and any lock another holds stays held in the copy), `work` runs
    on a thread of this process (on_a_thread); should the forked process die without answering,
    it runs here when its result is asked for."""
    if sys.platform != "linux" or threading.active_count() > 1:
        with on_a_thread(work) as threaded:
            yield threaded
        return
    context = get_context("fork")
    receiving, sending = context.Pipe(duplex=False)
    process = context.Process(target=_answer, args=(work, receiving, sending), daemon=True)
    process.start()
    sending.close()

    answers: list[Answer] = []

    def result() -> T:
        if not answers:
            with contextlib.suppress(EOFError, OSError):  # it died, or could not send its answer
                answers.append(receiving.recv())
        return _given(answers, work)

    try:
        yield result
    finally:
        receiving.close()  # a helper still sending gets a broken pipe, and ends
        process.join(REAP_SECONDS)
        if process.is_alive():
            process.kill()
            process.join()


@contextlib.contextmanager
def on_a_thread(work: Callable[[], T]) -> Iterator[Callable[[], T]]:
    """Starts `work` on a thread and yields the function that waits for its result (or raises
    what it raised). The thread is waited for on leaving, read or not."""
    answers: list[Answer] = []
    thread = threading.Thread(target=lambda: answers.append(_attempted(work)), name="dtfilm-meanwhile", daemon=True)
    thread.start()

    def result() -> T:
        thread.join()
        return _given(answers, work)

    try:
        yield result
    finally:
        thread.join()
