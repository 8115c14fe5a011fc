"""Trends the cost model must keep, whatever the model, cluster and plan (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dtfilm.cost import builtin_layer, estimate, parse_value, resolve
from dtfilm.cost.estimate import MEMORY_PARTS
from dtfilm.errors import DtfilmError, Where

POW2 = st.sampled_from([1, 2, 4, 8])
PRESET = st.sampled_from(["llama-7b", "llama-13b", "llama-65b", "llama2-70b", "gpt3-175b"])


def run(**flags) -> dict:
    """The estimate, or a skipped example where the plan is invalid (tp not dividing heads)."""
    layer = {k: parse_value(k, v, "flag", Where(flag=f"--{k}")) for k, v in flags.items()}
    try:
        return estimate(resolve([builtin_layer(), layer]))
    except DtfilmError:
        assume(False)
        raise


common = {
    "model": PRESET,
    "precision": st.sampled_from(["bf16", "fp32", "fp8"]),
    "checkpointing": st.booleans(),
    "micro_batches": st.sampled_from([1, 2, 4, 8, 16]),
    "seq_len": st.sampled_from([1024, 4096]),
}


@settings(max_examples=60, deadline=None)
@given(t=POW2, **common)
def test_memory_never_rises_with_tp(t, **kw):
    low = run(cards=t, tp=t, **kw)["memory"]["total"]
    high = run(cards=2 * t, tp=2 * t, **kw)["memory"]["total"]
    assert high <= low * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(p=st.sampled_from([1, 2, 4]), **common)
def test_memory_never_rises_with_pp(p, **kw):
    low = run(cards=p, pp=p, **kw)["memory"]["total"]
    high = run(cards=2 * p, pp=2 * p, **kw)["memory"]["total"]
    assert high <= low * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(d=st.sampled_from([2, 4, 8, 64]), zero=st.sampled_from([0, 1, 2]), **common)
def test_memory_never_rises_with_zero_stage(d, zero, **kw):
    low = run(cards=d, zero=zero, **kw)["memory"]["total"]
    high = run(cards=d, zero=zero + 1, **kw)["memory"]["total"]
    assert high <= low


@settings(max_examples=40, deadline=None)
@given(d=st.sampled_from([1, 2, 4, 16, 1024]), **common)
def test_plain_dp_memory_does_not_change_with_d(d, **kw):
    assert run(cards=d, **kw)["memory"]["total"] == pytest.approx(run(cards=1, **kw)["memory"]["total"])


@settings(max_examples=40, deadline=None)
@given(d=st.sampled_from([2, 4, 8, 32, 256]), model=PRESET)
def test_fsdp_traffic_is_one_and_a_half_dp(d, model):
    dp = run(model=model, cards=d, micro_batches=1)["comm"]["dp"]
    fsdp = run(model=model, cards=d, micro_batches=1, zero=3)["comm"]["dp"]
    assert fsdp == pytest.approx(1.5 * dp)


@settings(max_examples=40, deadline=None)
@given(p=st.sampled_from([2, 4, 8]), m=st.sampled_from([1, 2, 4, 8, 16]))
def test_bubble_falls_as_m_rises(p, m):
    a = run(cards=p, pp=p, micro_batches=m)["pipeline"]["bubble_fraction"]
    b = run(cards=p, pp=p, micro_batches=2 * m)["pipeline"]["bubble_fraction"]
    assert b < a


@settings(max_examples=60, deadline=None)
@given(
    t=POW2,
    p=st.sampled_from([1, 2, 4]),
    zero=st.sampled_from([0, 1, 2, 3]),
    d=st.sampled_from([1, 2, 4]),
    **common,
)
def test_parts_sum_to_total(t, p, zero, d, **kw):
    n = run(cards=t * p * d, tp=t, pp=p, zero=zero, **kw)
    mem = n["memory"]
    assert sum(mem[k] for k in MEMORY_PARTS) == pytest.approx(mem["total"])
    comm = n["comm"]
    assert comm["dp"] + comm["tp"] + comm["pp"] + comm["cp"] == pytest.approx(comm["total"])
    assert sum(r["bytes"] for r in comm["breakdown"]) == pytest.approx(comm["total"])
    c = n["compute"]
    assert c["compute_seconds"] + c["bubble_seconds"] + c["comm_seconds"] == pytest.approx(c["step_seconds"])
