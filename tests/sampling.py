"""Heavy parametrized checks, sampled with a fixed seed and a budget (issue 55).

A family of cases that each cost a dry run or more (the corner cases of `check`, the chapters in
the light theme) runs `budget` of its cases in CI, drawn with a seed that is fixed unless
`DTFILM_SAMPLE_SEED` names another; the rest are reported as skipped, with the variable that runs
them. `DTFILM_SAMPLE=all` runs every case (a longer run, before a release or after a change to
what the family checks):

    DTFILM_SAMPLE=all ./dev.sh test tests/test_check.py tests/test_layout.py
    DTFILM_SAMPLE_SEED=7 ./dev.sh test tests/test_check.py   # another draw of the same budget
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from typing import Any

import pytest

SEED = int(os.environ.get("DTFILM_SAMPLE_SEED", "20261205"))
EVERY_CASE = os.environ.get("DTFILM_SAMPLE", "") == "all"


def sampled(cases: Sequence[Any], budget: int, family: str) -> list[Any]:
    """`cases` (pytest params) with all but `budget` of them, drawn by the seed, marked skipped;
    every case runs under DTFILM_SAMPLE=all or when the budget covers them."""
    if EVERY_CASE or budget >= len(cases):
        return list(cases)
    drawn = set(random.Random(f"{SEED}:{family}").sample(range(len(cases)), budget))
    reason = (
        f"{family}: {budget} of {len(cases)} cases run, drawn with seed {SEED}; "
        "DTFILM_SAMPLE=all runs every one (tests/sampling.py)"
    )
    return [
        case
        if k in drawn
        else pytest.param(*case.values, marks=[*case.marks, pytest.mark.skip(reason=reason)], id=case.id)
        for k, case in enumerate(cases)
    ]
