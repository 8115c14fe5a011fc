"""Mixture-of-experts models and expert parallelism in the cost model (issue 60): the presets'
counts against their published totals, active parameters and the FLOPs they set, the experts
sharded over EP with ZeRO over the data-parallel cards that remain, the all-to-all, routing
imbalance, the H800, and the refusals of an EP that cannot be."""

from __future__ import annotations

import json

import pytest

from dtfilm.cli import main
from dtfilm.cost.hardware import CARDS, LINKS
from dtfilm.cost.models import PRESETS, active_param_count, param_count

# (total, active) as each model's own paper or card publishes them, and the tolerance the
# published rounding allows (46.7B, 12.9B: Mixtral of Experts, section 2; 57B-A14B: Qwen2
# technical report, Table 1, and the config's model card, 57.41B; 671B, 37B: DeepSeek-V3 report).
PUBLISHED = {
    "mixtral-8x7b": (46.7e9, 12.9e9, 0.005),
    "qwen2-57b-a14b": (57.4e9, 14.2e9, 0.01),
    "deepseek-v3": (671e9, 37e9, 0.02),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_moe_presets_match_their_published_totals(name):
    total, active, tolerance = PUBLISHED[name]
    shape = PRESETS[name]
    assert param_count(shape) == pytest.approx(total, rel=tolerance)
    assert active_param_count(shape) == pytest.approx(active, rel=tolerance)


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["estimate", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


MIXTRAL = ("--model", "mixtral-8x7b", "--cards", "64", "--tp", "2", "--zero", "1", "--micro-batches", "4")


def test_params_active_is_params_for_a_dense_model_and_sets_a_moe_models_flops(capsys):
    dense = _json(capsys, "--model", "llama-7b")
    assert dense["params_active"] == dense["params"]
    moe = _json(capsys, *MIXTRAL)
    assert moe["params"] == param_count(PRESETS["mixtral-8x7b"])
    assert moe["params_active"] == active_param_count(PRESETS["mixtral-8x7b"])
    tokens = moe["compute"]["tokens_per_step"]
    assert moe["compute"]["flops_per_step"] == pytest.approx(6 * moe["params_active"] * tokens)


def test_ep_one_changes_no_figure(capsys):
    """--ep 1 is the plan without EP: the same object, to the last digit (but for where ep came from)."""
    for argv in (MIXTRAL, ("dp",)):
        flagged, plain = _json(capsys, *argv, "--ep", "1"), _json(capsys, *argv)
        assert flagged.pop("inputs")["ep"]["source"] == "flag"
        plain.pop("inputs")
        assert flagged == plain


def test_experts_shard_over_ep_and_zero_over_the_dp_cards_that_remain(capsys):
    shape = PRESETS["mixtral-8x7b"]
    routed = shape.layers * shape.experts * 3 * shape.hidden * shape.expert_ffn
    plain = _json(capsys, *MIXTRAL)
    split = _json(capsys, *MIXTRAL, "--ep", "8")
    assert split["plan"]["ep"] == 8 and split["plan"]["expert_data_parallel"] == 32 // 8
    # weights (bf16, 2 bytes) on a card: the routed experts' 1/tp becomes 1/(tp ep)
    saved = plain["memory"]["weights"] - split["memory"]["weights"]
    assert saved == pytest.approx(2 * routed / 2 * (1 - 1 / 8))
    # ZeRO-1's optimizer state: the experts' over dp/ep = 4 cards, the rest over all 32
    optimizer = split["memory"]["master_weights"]
    rest = (split["params"] - routed) / 2  # tp 2 splits all but the norms (a rounding's worth)
    assert optimizer == pytest.approx(4 * (rest / 32 + routed / (2 * 8) / 4), rel=1e-3)


def test_the_all_to_all_moves_tokens_times_hidden_times_k(capsys):
    shape = PRESETS["mixtral-8x7b"]
    numbers = _json(capsys, *MIXTRAL, "--ep", "8")
    row = numbers["comm"]["collectives"]["ep_all_to_all"]
    tokens = 4096  # one sequence of the default length a micro-batch
    buffer = tokens * shape.top_k * shape.hidden * 2  # bf16 activations
    assert row["collective"] == "all-to-all" and row["group"] == "ep" and row["group_size"] == 8
    assert row["buffer_bytes"] == buffer
    assert row["bytes_each"] == buffer * 7 / 8
    # dispatch and combine, forward and backward, each MoE layer, each micro-batch
    assert row["calls"] == 4 * shape.layers * 4
    assert numbers["comm"]["ep"] == row["bytes"] == row["calls"] * row["bytes_each"]
    # 8 replicas tp 2 apart: 16 ranks, two nodes of 8, four of the group on each
    assert row["nodes_spanned"] == 2 and row["cards_on_each_node"] == 4
    assert row["nic_bytes"] == pytest.approx(row["bytes"] * 4 / 7)  # to the 4 of 7 peers off the node
    assert any(r["collective"] == "all-to-all" for r in numbers["comm"]["breakdown"])
    assert numbers["comm"]["groups"]["ep"]["exposed_seconds"] == pytest.approx(row["seconds"])


def test_inside_a_node_the_all_to_all_rides_nvlink(capsys):
    numbers = _json(capsys, "--model", "mixtral-8x7b", "--cards", "8", "--ep", "8", "--zero", "1")
    row = numbers["comm"]["collectives"]["ep_all_to_all"]
    assert row["nic_bytes"] == 0 and row["fabric_bytes"] == row["bytes"]
    across = _json(capsys, "--model", "mixtral-8x7b", "--cards", "64", "--tp", "8", "--ep", "8", "--zero", "1")
    row_across = across["comm"]["collectives"]["ep_all_to_all"]
    assert row_across["nic_bytes"] == row_across["bytes"]  # one of the group a node
    assert row_across["seconds_each"] > row["seconds_each"]


def test_routing_imbalance_slows_the_expert_compute_only_under_ep(capsys):
    balanced = _json(capsys, *MIXTRAL, "--ep", "8")
    skewed = _json(capsys, *MIXTRAL, "--ep", "8", "--routing-imbalance", "1.5")
    matmul, skewed_matmul = (n["compute"]["stage_seconds"]["matmul"] for n in (balanced, skewed))
    # Mixtral's routed experts are most of its active matmul: the busiest card's share rises by half
    shape = PRESETS["mixtral-8x7b"]
    routed_active = shape.layers * shape.top_k * 3 * shape.hidden * shape.expert_ffn
    layers_active = active_param_count(shape) - 2 * shape.vocab * shape.hidden - shape.hidden
    assert skewed_matmul / matmul == pytest.approx(1 + 0.5 * routed_active / layers_active, rel=0.03)
    # without EP every card runs all the experts: one expert's load sets no card's pace
    plain = _json(capsys, *MIXTRAL, "--routing-imbalance", "1.5")
    assert plain["compute"]["step_seconds"] == _json(capsys, *MIXTRAL)["compute"]["step_seconds"]


def test_h800_is_h100_compute_with_400_gb_s_nvlink():
    h800, h100 = CARDS["h800-sxm-80gb"], CARDS["h100-sxm-80gb"]
    assert h800.peak_flops == h100.peak_flops and h800.memory_bytes == h100.memory_bytes
    assert LINKS[h800.nvlink].bytes_per_second_each_way * 2 == 400e9


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (("--model", "llama-7b", "--cards", "8", "--ep", "2"), "has none (a dense model); valid: 1"),
        # valid: what divides both dp and the experts (a new user's trial: it listed dp's divisors,
        # 16 to 64 among them, each refused next for not dividing the 8 experts)
        (("--model", "mixtral-8x7b", "--cards", "12", "--ep", "8"), "ep = 8 does not divide dp = 12; valid: 1, 2, 4"),
        (
            ("--model", "mixtral-8x7b", "--cards", "64", "--ep", "3"),
            "ep = 3 does not divide dp = 64; valid: 1, 2, 4, 8",
        ),
        (
            ("--model", "mixtral-8x7b", "--cards", "48", "--ep", "16"),
            "does not divide the 8 experts of Mixtral 8x7B; valid: 1, 2, 4, 8",
        ),
        (("--model", "mixtral-8x7b", "--routing-imbalance", "0.5"), "outside the supported range"),
    ],
)
def test_an_ep_that_cannot_be_is_refused_in_one_line(argv, said, capsys):
    assert main(["estimate", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and len(err.splitlines()) == 1, err
    assert "--ep" in err or "--routing-imbalance" in err


def test_a_capacity_factor_caps_the_busiest_experts_load():
    """Dropless routing (every preset) waits for the whole imbalance; a capacity of 1.25 drops
    the tokens past it, so the busiest card's expert matmuls take at most 1.25x their mean."""
    from dataclasses import replace

    from dtfilm.cost import model
    from dtfilm.cost.inputs import builtin_layer, parse_value, resolve
    from dtfilm.cost.layouts import Layouts
    from dtfilm.cost.setup_checks import build_setup
    from dtfilm.errors import Where

    flags = {"model": "mixtral-8x7b", "cards": 64, "tp": 2, "ep": 8, "zero": 1, "routing_imbalance": 2.0}
    layer = {k: parse_value(k, v, "flag", Where("test")) for k, v in flags.items()}
    setup, _ = build_setup(resolve([builtin_layer(), layer]))

    def matmul(s):
        return float(model.evaluate(s, Layouts.of(s)).busy.matmul[0])

    capped = replace(setup, shape=replace(setup.shape, capacity_factor=1.25))
    at_capacity = replace(setup, routing_imbalance=1.25)
    assert matmul(capped) == matmul(at_capacity) < matmul(setup)


def test_deepseek_v3_published_layout_fits_and_its_all_to_all_crosses_nodes(capsys):
    """DeepSeek-V3's own layout (report, section 3.2: 2,048 H800s, PP16, EP64, ZeRO-1, fp8,
    sequences of 4K, 15,360 a step) lays out, fits its 80 GB, and its EP group, 64 replicas 16
    ranks apart, has one card a node: every byte of the all-to-all on the NIC."""
    numbers = _json(
        capsys, "--model", "deepseek-v3", "--gpu", "h800-sxm-80gb", "--cards", "2048", "--pp", "16", "--ep", "64",
        "--zero", "1", "--precision", "fp8", "--seq-len", "4096", "--global-batch", "15360",
    )  # fmt: skip
    assert numbers["memory"]["fits"]
    assert numbers["params"] == pytest.approx(671e9, rel=0.001)
    row = numbers["comm"]["collectives"]["ep_all_to_all"]
    assert row["nodes_spanned"] == 64 and row["nic_bytes"] == row["bytes"]
    assert numbers["cluster"]["intra_node_bandwidth"] == 200e9


def _plan(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["plan", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_planner_searches_ep_for_a_moe_model_only(capsys):
    """Every ep dividing dp and the experts is a plan of its own, priced by the estimate's body;
    a dense model's plans name no ep (its plan --json as it was)."""
    moe = _plan(capsys, "--model", "mixtral-8x7b", "--cards", "16", "--global-batch", "64", "--top", "400")
    searched = {row["ep"] for row in moe["plans"]}
    assert searched == {1, 2, 4, 8}  # gcd(dp, 8)'s divisors, dp up to 16
    assert all(row["dp"] % row["ep"] == 0 for row in moe["plans"])
    pick = moe["pick"]
    flags = [f"--{k.replace('_', '-')}" for k in ("dp", "tp", "pp", "cp", "ep", "zero", "micro_batches")]
    values = [str(pick[k]) for k in ("dp", "tp", "pp", "cp", "ep", "zero", "micro_batches")]
    estimate = _json(
        capsys, "--model", "mixtral-8x7b", "--cards", "16", "--micro-batch-size", str(pick["micro_batch_size"]),
        "--recompute", pick["recompute"], *[x for pair in zip(flags, values, strict=True) for x in pair],
    )  # fmt: skip
    assert estimate["compute"]["step_seconds"] == pytest.approx(pick["step_seconds"], rel=1e-12)
    fixed = _plan(capsys, "--model", "mixtral-8x7b", "--cards", "16", "--global-batch", "64", "--ep", "4")
    assert fixed["fixed"]["ep"] == 4 and {row["ep"] for row in fixed["plans"]} == {4}
    ranked = _plan(capsys, "--model", "mixtral-8x7b", "--cards", "16", "--global-batch", "64", "--rank", "--dp", "16",
                   "--ep", "2")  # fmt: skip
    assert ranked["rank"]["given"] == {"dp": 16, "ep": 2} and ranked["rank"]["plan"]["ep"] == 2
    dense = _plan(capsys, "--model", "llama-7b", "--cards", "8")
    assert all("ep" not in row for row in dense["plans"])
    assert _plan(capsys, "--model", "llama-7b", "--cards", "8", "--rank", "--dp", "8")["rank"]["position"] >= 1


def test_the_all_to_all_counts_on_the_stage_with_the_most_moe_layers(capsys):
    """DeepSeek-V3 on 16 stages: the first holds the three dense layers and no MoE layer, and with
    tp 2 and no ZeRO it is the card whose traffic the step counts; the all-to-all read 0 there, and
    the planner picked the plan for it. It is counted on a stage of 4 MoE layers."""
    numbers = _json(
        capsys, "--model", "deepseek-v3", "--gpu", "h800-sxm-80gb", "--cards", "2048", "--tp", "2", "--pp", "16",
        "--ep", "64", "--zero", "0", "--precision", "fp8", "--seq-len", "4096", "--global-batch", "15360",
    )  # fmt: skip
    row = numbers["comm"]["collectives"]["ep_all_to_all"]
    assert row["calls"] == 4 * 4 * numbers["training"]["micro_batches"]
    assert numbers["comm"]["ep"] > 0
