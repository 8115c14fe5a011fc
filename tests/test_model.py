"""The one body of the cost model (dtfilm.cost.model): the golden values that must not move.

The estimate is the one-row call of the body the planner calls on every plan, so there is no
second implementation to compare with; what is checked instead is that no figure moved when the
two became one: `estimate --json` and `plan --json` as they were at commit 3fae315, before the
refactor (tests/data/model_golden.json), to the last digit, at the defaults (NCCL's network,
the frameworks' overlap). The three plans' picks and counts were written again on 2026-12-06,
when ZeRO-2 came to hold its gradients whole over several micro-batches (memory.gradients_sharded:
each ZeRO-2 pick became a ZeRO-1 plan; no estimate moved). The whiteboard's golden values are
tests/test_network.py's and tests/test_overlap.py's.
"""

from __future__ import annotations

import json

import pytest

from dtfilm.cli import main
from tests.conftest import ROOT

GOLDEN = json.loads((ROOT / "tests" / "data" / "model_golden.json").read_text())


def _run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _at(numbers: dict, path: str) -> object:
    for part in path.split("."):
        numbers = numbers[part]
    return numbers


@pytest.mark.parametrize("name", sorted(GOLDEN["estimates"]))
def test_the_estimates_golden_values_do_not_move(name, capsys):
    """dp, fsdp, 3d and cp as their storyboards set them; fp8, ZeRO-3, 405B on 16,384 cards, 128K
    tokens over cp 16, the interleaved and GPipe schedules, one card: memory, traffic, step, MFU."""
    case = GOLDEN["estimates"][name]
    numbers = _run_json(capsys, "estimate", *case["args"])
    assert {path: _at(numbers, path) for path in case["values"]} == case["values"]


@pytest.mark.parametrize("name", sorted(GOLDEN["plans"]))
def test_the_planners_pick_does_not_move(name, capsys):
    """The 3d chapter's planner, 405B on 2,048 cards, fp8 70B on 128: the pick's plan and its
    seconds, and how many plans were priced and fit."""
    case = GOLDEN["plans"][name]
    result = _run_json(capsys, "plan", *case["args"])
    assert {key: result["pick"][key] for key in case["pick"]} == case["pick"]
    assert (result["evaluated"], result["fitting"]) == (case["evaluated"], case["fitting"])


def test_the_estimate_is_its_typed_frozen_records_written_out():
    """`estimate --json` is `results.as_json` of one frozen `results.Estimate`; every path its types
    define is a path a template can name (dtfilm.paths.lookup), and the JSON has no section the
    types do not define (inputs, training and warnings are added around it by `estimate`)."""
    from dataclasses import FrozenInstanceError, fields, is_dataclass

    from dtfilm.cost import build_setup, builtin_layer, resolve, results
    from dtfilm.cost.estimate import estimate_result, estimate_setup
    from dtfilm.paths import TemplateError, lookup

    setup, _ = build_setup(resolve([builtin_layer()]))
    result = estimate_result(setup)
    with pytest.raises(FrozenInstanceError):
        result.memory.total_bytes = 0.0  # type: ignore[misc]
    assert not hasattr(result.memory, "__dict__")  # slots
    numbers = estimate_setup(setup)
    assert results.as_json(result) == numbers
    assert list(numbers) == [f.name for f in fields(results.Estimate)]
    for path in results.paths(results.Estimate):
        try:
            lookup(numbers, path)
        except TemplateError as error:
            assert "is a group" in str(error), path  # a mapping or a list: its keys name the values
    # a renamed field carries its unit; its contract key stays the one docs/contract.md names
    units = ("_bytes", "_seconds", "_per_second", "_ratio", "_share")
    for record in vars(results).values():
        if isinstance(record, type) and is_dataclass(record):
            for f in fields(record):
                if "key" in f.metadata and f.metadata["key"] != f.name:
                    assert f.name.endswith(units), (record.__name__, f.name)
