"""A pytest plugin for benchmarks/ci_phases.py: each test phase's CPU time (user + sys, this
process and the children it waited for), appended to the file $DTFILM_CPU_LOG as
`seconds phase nodeid` lines. CPU, not wall time, because CI's machine is shared: a loaded
machine stretches wall time, not the work done.

    DTFILM_CPU_LOG=/tmp/cpu.log python -m pytest -p benchmarks.ci_cpu tests/test_check.py
"""

from __future__ import annotations

import os
import resource
from collections.abc import Generator

import pytest

LOG_VARIABLE = "DTFILM_CPU_LOG"


def cpu_seconds() -> float:
    """User and system time of this process and of its waited-for children so far."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _logged(phase: str, item: pytest.Item) -> Generator[None, None, None]:
    started = cpu_seconds()
    yield
    path = os.environ.get(LOG_VARIABLE)
    if path:
        line = f"{cpu_seconds() - started:.3f} {phase} {item.nodeid}\n"
        with open(path, "a", encoding="utf-8") as log:  # one short append a line: workers interleave whole lines
            log.write(line)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    yield from _logged("setup", item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    yield from _logged("call", item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    yield from _logged("teardown", item)
