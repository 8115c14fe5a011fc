"""`dtfilm estimate --json` keeps the names and meanings of ../shared/CONTRACT.md."""

from __future__ import annotations

import json

import pytest

from tests.conftest import estimate_cli, run_dtfilm


def estimate(*args: str) -> dict:
    """The command's figures, from the worker's estimate process (its own entry point)."""
    return estimate_cli(*args)


def test_contract_fields():
    done = run_dtfilm("estimate", "dp", "--json")  # as an outside check runs it: a process of its own
    assert done.returncode == 0, done.stderr
    n = json.loads(done.stdout)
    assert n == estimate("dp")
    for key in ("inputs", "params", "memory", "comm", "pipeline", "compute"):
        assert key in n
    for key in (
        "weights",
        "gradients",
        "master_weights",
        "adam_m",
        "adam_v",
        "activations",
        "static",
        "total",
        "capacity",
        "fits",
        "card",
    ):
        assert key in n["memory"]
    assert set(n["memory"]["card"]) >= {"dp", "pp", "tp"}
    for key in ("dp", "tp", "pp", "cp", "total", "seconds", "breakdown"):
        assert key in n["comm"]
    for key in ("group", "collective", "count", "bytes_each", "bytes", "link", "seconds"):
        assert key in n["comm"]["breakdown"][0]
    assert "bubble_fraction" in n["pipeline"]
    for key in ("flops_per_step", "step_seconds", "training_flops", "training_seconds", "training_seconds_one_card"):
        assert key in n["compute"]


def test_inputs_say_where_they_came_from():
    n = estimate("dp", "--cards", "16")
    inputs = n["inputs"]
    assert inputs["cards"] == {"value": 16, "source": "flag", "where": "--cards"}
    assert inputs["params"]["source"] == "default" and inputs["params"]["where"].startswith("storyboard/film.yaml:")
    assert inputs["dp"]["source"] == "derived" and inputs["dp"]["value"] == 16
    assert inputs["precision"]["value"] == "bf16"


def test_model_preset_clears_inherited_params():
    # CONTRACT.md: --model sets the architecture and its derived count, clearing `params`.
    n = estimate("dp", "--model", "llama2-70b")
    assert n["params"] == 68_976_648_192
    assert n["inputs"]["params"]["source"] == "derived"
    kept = estimate("dp", "--params", "13B")
    assert kept["params"] == 13e9 and kept["model"]["layers"] == 32  # shape kept, count replaced


@pytest.mark.parametrize(
    ("flag", "value", "path", "expected"),
    [
        ("--precision", "fp32", ("memory", "weights"), 28e9),
        ("--zero", "3", ("memory", "static"), 14e9),
        ("--micro-batches", "4", ("compute", "tokens_per_step"), 8 * 4 * 4096),
        ("--gpu", "h200-141gb", ("memory", "capacity"), 141e9),
    ],
)
def test_flags_take_effect(flag, value, path, expected):
    n = estimate("dp", flag, value)
    assert n[path[0]][path[1]] == pytest.approx(expected)


def test_table_output():
    done = run_dtfilm("estimate", "dp")
    assert done.returncode == 0
    assert "does NOT fit" in done.stdout and "all-reduce" in done.stdout


def test_checkpointing_flag_both_ways():
    on = estimate("dp", "--checkpointing")
    assert on["inputs"]["checkpointing"]["value"] is True
    assert on["compute"]["flops_per_token_per_param"] == 8
    off = estimate("dp", "--no-checkpointing")
    assert off["inputs"]["checkpointing"] == {"value": False, "source": "flag", "where": "--checkpointing"}


def test_plan_json():
    done = run_dtfilm("plan", "dp", "--json", "--top", "3")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["evaluated"] > result["fitting"] > 0 and len(result["plans"]) == 3
    assert result["pick"] == result["plans"][0]
    assert result["reason"][0].startswith("One GPU does not hold the full training state")
    text = run_dtfilm("plan", "dp", "--model", "llama2-70b", "--cards", "64")
    assert text.returncode == 0 and "evaluated" in text.stdout and "fastest plan that fits" in text.stdout


def test_every_input_has_a_flag():
    # Any value a storyboard can set must be reproducible as `dtfilm estimate --flag value`.
    from dtfilm.cli import INPUT_FLAGS, SWITCHES
    from dtfilm.cost.inputs import SPECS

    flagged = {name for name, _ in INPUT_FLAGS.values()} | set(SWITCHES)
    assert flagged == set(SPECS)
    assert set(SWITCHES) == {"checkpointing", "flash_attention", "fp8_attention", "sequence_parallel"}
    assert estimate("dp", "--nodes", "2")["cluster"]["cards"] == 16
    assert estimate("dp", "--layers", "16")["model"]["layers"] == 16


def test_cards_and_nodes_together_is_an_error():
    done = run_dtfilm("estimate", "dp", "--cards", "16", "--nodes", "2")
    assert done.returncode == 2 and "card count or the node count, not both" in done.stderr


def test_yes_no_inputs_are_switches():
    """--name / --no-name for every yes/no input, as --checkpointing has always been."""
    on, off = estimate("tp"), estimate("tp", "--no-sequence-parallel")
    assert on["plan"]["sequence_parallel"] is True and off["plan"]["sequence_parallel"] is False
    assert off["inputs"]["sequence_parallel"] == {"value": False, "source": "flag", "where": "--sequence-parallel"}
    # Korthikanti Table 2 at t = 2: (10 + 24/2) against 34/2 bytes per token per hidden unit
    assert off["memory"]["activations"] / on["memory"]["activations"] == pytest.approx(22 / 17)
    assert estimate("tp", "--no-flash-attention")["plan"]["flash_attention"] is False
    assert estimate("tp", "--checkpointing")["plan"]["recompute"] == "full"
