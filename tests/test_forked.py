"""dtfilm.system.forked: work done in a forked process while this one goes on, or here when it cannot be.

A process forks only while it runs no other thread, and a test process under xdist runs several:
the forking cases run in a fresh Python of their own, which prints what it saw."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

import pytest

from dtfilm.system.forked import forked, on_a_thread

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="forks where the system forks (Linux)")


def seen_in_a_fresh_process(body: str) -> dict:
    """Runs `body` (which sets `seen`, a dict) in a new Python with no other thread, and returns `seen`."""
    script = "import json, multiprocessing, os\nfrom dtfilm.system.forked import forked\n" + textwrap.dedent(body)
    script += "\nprint(json.dumps(seen))\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_the_work_is_done_in_another_process_and_its_answer_read_here() -> None:
    seen = seen_in_a_fresh_process("""
        with forked(lambda: (os.getpid(), [1, 2, 3])) as result:
            first, again = result(), result()
        seen = {"here": os.getpid(), "there": first[0], "answer": first[1], "same": first == again}
    """)
    assert seen["there"] != seen["here"]
    assert seen["answer"] == [1, 2, 3]
    assert seen["same"]  # asked twice, the same answer


def test_what_the_work_raised_is_raised_where_its_answer_is_read() -> None:
    seen = seen_in_a_fresh_process("""
        here = os.getpid()
        def fails():
            raise ValueError(f"no such chapter, said {'another' if os.getpid() != here else 'this'} process")
        with forked(fails) as result:
            try:
                result()
            except ValueError as error:
                seen = {"raised": str(error)}
    """)
    assert seen == {"raised": "no such chapter, said another process"}


def test_a_helper_that_dies_without_answering_has_its_work_done_here() -> None:
    seen = seen_in_a_fresh_process("""
        here = os.getpid()
        def dies_in_the_helper():
            if os.getpid() != here:
                os._exit(3)
            return os.getpid()
        with forked(dies_in_the_helper) as result:
            seen = {"here": here, "by": result()}
    """)
    assert seen["by"] == seen["here"]


def test_an_answer_never_read_leaves_no_process_behind() -> None:
    seen = seen_in_a_fresh_process("""
        from multiprocessing.process import BaseProcess
        killed, kill = [], BaseProcess.kill
        BaseProcess.kill = lambda self: (killed.append(self.pid), kill(self))
        with forked(lambda: list(range(100_000))) as result:  # more than a pipe holds
            pass
        seen = {"killed": killed, "left": len(multiprocessing.active_children())}
    """)
    assert seen == {"killed": [], "left": 0}  # it ended on its own, on the broken pipe


def test_with_another_thread_running_the_work_is_done_on_a_thread_of_this_process() -> None:
    stop = threading.Event()
    waiting = threading.Thread(target=stop.wait)
    waiting.start()
    main = threading.get_ident()
    try:
        with forked(lambda: (os.getpid(), threading.get_ident())) as result:
            pid, thread = result()
            assert pid == os.getpid() and thread != main
            assert result() == (pid, thread)  # asked twice, the same answer
    finally:
        stop.set()
        waiting.join()


def test_on_a_thread_the_work_starts_at_once_and_raises_where_read() -> None:
    started, release = threading.Event(), threading.Event()

    def work() -> int:
        started.set()
        release.wait(10)
        raise ValueError("no such chapter")

    with on_a_thread(work) as result:
        assert started.wait(10)  # begun before its answer is asked for
        release.set()
        with pytest.raises(ValueError, match="no such chapter"):
            result()
