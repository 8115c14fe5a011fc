"""The network input: `single-link` with `overlap: none` is the seeds' whiteboard to the last
digit; `nccl` (the default) prices rings and trees on the node's fabric and NICs as NCCL runs
them, the estimate and the planner through the same functions (dtfilm/cost/network.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dtfilm.cost import build_setup, builtin_layer, estimate_setup, parse_value, resolve
from dtfilm.cost.hardware import LINKS
from dtfilm.cost.network import TREE_BUS_SHARE, members_per_node, price_call, shard_members_per_node
from dtfilm.errors import Where
from tests.conftest import ROOT, run_dtfilm

# `estimate --json` of commit ce05118, before the network input: comm and compute.step_seconds
GOLDEN = json.loads((ROOT / "tests" / "data" / "network_golden.json").read_text())
NEW_ROW_KEYS = (
    "calls",
    "algorithm",
    "cards_on_each_node",
    "nodes_spanned",
    "fabric_bytes",
    "nic_bytes",
    "latency_seconds",
    "seconds_each",
)
NVLINK, NDR, ETHERNET = LINKS["nvlink4"], LINKS["infiniband-ndr"], LINKS["ethernet-100g"]


def make_setup(**flags):
    layer = {k: parse_value(k, v, "flag", Where(flag=f"--{k}")) for k, v in flags.items()}
    setup, _ = build_setup(resolve([builtin_layer(), layer]))
    return setup


NEW_GROUPS = ("ep",)  # issue 60's expert-parallel group, after the golden figures: it reads 0 here
NEW_COMM_KEYS = ("nic_bytes",)  # issue 58's sum of the rows' nic_bytes, after the golden figures


def _without_new_keys(comm: dict) -> dict:
    rows = [{k: v for k, v in row.items() if k not in NEW_ROW_KEYS} for row in comm["breakdown"]]
    named = {name: {k: v for k, v in row.items() if k not in NEW_ROW_KEYS} for name, row in comm["collectives"].items()}
    assert all(comm[g] == 0 and comm["groups"][g]["seconds"] == 0 for g in NEW_GROUPS)
    by_group = {
        key: {g: v for g, v in value.items() if g not in NEW_GROUPS}
        for key, value in comm.items()
        if isinstance(value, dict) and key != "collectives"
    }
    kept = {key: value for key, value in comm.items() if key not in NEW_GROUPS + NEW_COMM_KEYS}
    assert comm["nic_bytes"] == sum(row["nic_bytes"] for row in comm["breakdown"])
    return {**kept, **by_group, "breakdown": rows, "collectives": named}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_single_link_is_todays_whiteboard_to_the_last_digit(name):
    """fsdp, dp, 3d and cp, fsdp and dp on two nodes, 405B on 16,384 cards, one card a node and
    Ethernet: every key of `comm` and the step as they were, the new row keys aside."""
    case = GOLDEN[name]
    done = run_dtfilm("estimate", *case["args"], "--network", "single-link", "--overlap", "none", "--json")
    assert done.returncode == 0, done.stderr
    numbers = json.loads(done.stdout)
    assert _without_new_keys(numbers["comm"]) == case["comm"]
    assert numbers["compute"]["step_seconds"] == case["step_seconds"]


def test_the_defaults_are_the_physical_model():
    numbers = estimate_setup(make_setup())
    assert make_setup().network == "nccl" and numbers["overlap"]["mode"] == "framework"


def test_a_ring_across_two_nodes_moves_its_share_over_every_nic():
    """16 cards, 8 on each of 2 nodes: the ring's (n-1)/n B leaves each node over its 8 NICs
    (R/8 on each), R*7/8 stays on NVLink; the NIC, at 50 GB/s, is the slowest hop."""
    buffer = 14e9
    ring = 15 / 16 * buffer
    price = price_call("nccl", "all-gather", ring, 15, 16, 8, True, NVLINK, NDR, 8)
    assert price.nic_bytes == pytest.approx(ring / 8)
    assert price.fabric_bytes == pytest.approx(ring * 7 / 8)
    # NCCL's tuning model: 15 steps, 1 of them between the two nodes
    assert price.latency_seconds == pytest.approx(14 * 3e-6 + 1 * 8e-6)
    assert price.seconds == pytest.approx(price.latency_seconds + ring / 8 / 50e9)
    whiteboard = price_call("single-link", "all-gather", ring, 15, 16, 8, True, NVLINK, NDR, 8)
    assert whiteboard.seconds == pytest.approx(15 * 8e-6 + ring / 50e9)
    assert whiteboard.seconds / price.seconds == pytest.approx(8, rel=0.01)


def test_a_shared_nic_gives_the_group_its_cards_share_of_the_node():
    # Ethernet 100G shared by 8 cards: 12.5/8 GB/s a card, 8 of them on the node's one NIC
    ring = 1e9
    price = price_call("nccl", "all-gather", ring, 31, 32, 8, True, NVLINK, ETHERNET, 8)
    assert price.seconds - price.latency_seconds == pytest.approx(ring / 8 / (12.5e9 / 8))


def test_a_group_inside_a_node_is_priced_as_the_whiteboard():
    bytes_each = 2 * 7 / 8 * 1e8
    nccl = price_call("nccl", "all-reduce", bytes_each, 14, 8, 8, False, NVLINK, NDR, 8)
    whiteboard = price_call("single-link", "all-reduce", bytes_each, 14, 8, 8, False, NVLINK, NDR, 8)
    assert nccl.seconds == pytest.approx(whiteboard.seconds, rel=1e-12) and not nccl.tree
    assert nccl.nic_bytes == 0 and nccl.fabric_bytes == bytes_each


def test_all_reduce_takes_the_tree_where_latency_rules():
    """2,048 nodes of one card each: a ring all-reduce of 25 MB pays 2(n-1) steps of 8 us, NCCL's
    tree 2 log2(n); large buffers keep the ring (the tree's bandwidth is 0.92 of it)."""
    n = 2048
    small = price_call("nccl", "all-reduce", 2 * (n - 1) / n * 25e6, 2 * (n - 1), n, 1, True, NVLINK, NDR, 8)
    assert small.tree and small.latency_seconds == pytest.approx(2 * 11 * 8e-6)
    large = price_call("nccl", "all-reduce", 2 * 15 / 16 * 14e9, 30, 16, 8, True, NVLINK, NDR, 8)
    assert not large.tree
    # all-gathers and reduce-scatters run as rings whatever the size (NCCL has no tree for them)
    gather = price_call("nccl", "all-gather", (n - 1) / n * 25e6, n - 1, n, 1, True, NVLINK, NDR, 8)
    assert not gather.tree and gather.latency_seconds == pytest.approx((n - 1) * 8e-6)
    assert TREE_BUS_SHARE == 0.92


def test_members_per_node_follow_the_rank_order():
    assert members_per_node(1, 8, 8) == 8 and members_per_node(8, 16, 8) == 1 and members_per_node(2, 16, 8) == 4
    # tp 2 x pp 4 x dp 2 on nodes of 8: the two replicas are 8 ranks apart, one on each node
    assert shard_members_per_node(2, 1, 4, 2, 8) == 1
    # tp 1, cp 2, dp 8: cp ranks adjacent, replicas 2 apart: 8 on a node
    assert shard_members_per_node(1, 2, 1, 8, 8) == 8
    arrays = members_per_node(np.array([1, 8, 2]), np.array([8, 16, 16]), 8)
    assert arrays.tolist() == [8, 1, 4]


def test_fsdp_gathers_a_unit_a_call_each_with_its_latency():
    """Under nccl FSDP's calls are per unit, its L layers and the embedding and the output head
    (torchtitan's apply_fsdp wraps each): 2 m (L + 2) all-gathers, m (L + 2) reduce-scatters, the
    same bytes as the seeds' 2m and m calls of the whole model, and L + 2 times their latency."""
    flags = {"cards": 16, "zero": 3, "micro_batches": 2}
    nccl = estimate_setup(make_setup(**flags))["comm"]["collectives"]
    whiteboard = estimate_setup(make_setup(**flags, network="single-link"))["comm"]["collectives"]
    gather, seed = nccl["dp_all_gather"], whiteboard["dp_all_gather"]
    assert gather["calls"] == 2 * 2 * (32 + 2) and seed["calls"] == 4
    assert gather["bytes"] == pytest.approx(seed["bytes"], rel=1e-12)
    assert gather["latency_seconds"] == pytest.approx((32 + 2) * (14 * 3e-6 + 8e-6) * 4)
    assert gather["nic_bytes"] == pytest.approx(gather["bytes"] / 8)
    assert gather["nodes_spanned"] == 2 and gather["cards_on_each_node"] == 8
    assert nccl["dp_reduce_scatter"]["calls"] == 2 * (32 + 2)
    # in a pipeline of two, each stage holds 16 layers and one of the ends: 17 units
    staged = estimate_setup(make_setup(**flags, pp=2, dp=8))["comm"]["collectives"]
    assert staged["dp_all_gather"]["calls"] == 2 * 2 * 17 and staged["dp_reduce_scatter"]["calls"] == 2 * 17


def test_fsdp_across_two_nodes_is_no_longer_charged_to_one_link():
    """The issue's finding: 16 cards on 2 nodes all-gather and reduce-scatter 39.4 GB in 788 ms on
    one card's link; over the node's 8 NICs the same bytes take about an eighth."""
    whiteboard = estimate_setup(make_setup(params="7e9", cards=16, zero=3, network="single-link", overlap="none"))
    nccl = estimate_setup(make_setup(params="7e9", cards=16, zero=3, overlap="none"))
    assert whiteboard["comm"]["seconds"] == pytest.approx(0.78786, rel=1e-4)
    # the bytes move in an eighth of the time; the latency of FSDP's 3m(L + 2) calls comes on top
    assert _transfer_seconds(nccl) == pytest.approx(_transfer_seconds(whiteboard) / 8, rel=1e-9)
    assert nccl["comm"]["seconds"] == pytest.approx(0.78786 / 8, rel=0.06)
    assert nccl["comm"]["total"] == pytest.approx(whiteboard["comm"]["total"], rel=1e-12)


def _transfer_seconds(numbers: dict) -> float:
    """The traffic's seconds less their latency: the bytes over the bandwidth."""
    return numbers["comm"]["seconds"] - sum(row["latency_seconds"] for row in numbers["comm"]["breakdown"])


def test_a_bad_network_is_one_line_naming_the_flag():
    done = run_dtfilm("estimate", "--network", "ring")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--network" in done.stderr and "nccl, single-link" in done.stderr
