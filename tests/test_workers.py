"""The test run's own machinery: tests that share a dry run or a render (an `xdist_group`) are
sent to one worker, so each is made once a run."""

from __future__ import annotations

import os

import pytest


@pytest.mark.xdist_group("the-groups-guard")
def test_a_grouped_test_carries_its_group_to_the_scheduler(request: pytest.FixtureRequest):
    """pytest-xdist's `--dist loadgroup` groups tests by the `@group` it adds to their ids. Under
    pytest 9.2.0 (which renamed the attribute xdist 3.8.0 sets) no id carried one: every
    xdist_group was ignored, and a chapter's dry run (and the dp render) was made on both
    workers. pytest stays pinned where the ids carry it (pyproject.toml)."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None or not request.config.getoption("loadgroup", False):
        pytest.skip("run without --dist loadgroup (./dev.sh test uses it)")
    assert request.node.nodeid.endswith("@the-groups-guard"), request.node.nodeid
