"""Trends the cost model must keep, whatever the model, cluster and plan (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dtfilm.cost import builtin_layer, estimate, parse_value, resolve
from dtfilm.cost.models import PRESETS
from dtfilm.errors import DtfilmError, Where

POW2 = st.sampled_from([1, 2, 4, 8])
PRESET = st.sampled_from(["llama-7b", "llama-13b", "llama-65b", "llama2-70b", "gpt3-175b"])


def declared_valid(flags: dict) -> bool:
    """The plan rules of the envelope (README): tp divides the heads and divides or is a
    multiple of the KV heads, pp at most the layers, cp divides the sequence."""
    shape = PRESETS[flags.get("model", "llama-7b")]
    tp, pp, cp = flags.get("tp", 1), flags.get("pp", 1), flags.get("cp", 1)
    kv_ok = shape.kv_heads % tp == 0 or tp % shape.kv_heads == 0
    return shape.heads % tp == 0 and kv_ok and pp <= shape.layers and flags.get("seq_len", 4096) % cp == 0


def exact(**flags) -> dict:
    layer = {k: parse_value(k, v, "flag", Where(flag=f"--{k}")) for k, v in flags.items()}
    return estimate(resolve([builtin_layer(), layer]))


def run(**flags) -> dict:
    """The estimate; an example whose plan the rules declare invalid is skipped, and any
    other refusal fails the test."""
    assume(declared_valid(flags))
    return exact(**flags)


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
    # all but the reserve: replicas past one open a data-parallel NCCL communicator (dtfilm.cost.ledger)
    many, one = run(cards=d, **kw)["memory"], run(cards=1, **kw)["memory"]
    assert many["total"] - many["reserve"] == pytest.approx(one["total"] - one["reserve"])
    assert many["reserve"] - one["reserve"] == (4 * 2**20 * 32 * 2 if d > 1 else 0)


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


# Hand-worked cases (ZeRO section 3.1; Korthikanti et al. 2022 Table 2; NCCL's ring factors),
# each computed here from the formula, not from the model's own parts.
SEVEN_B = {"model": "llama-7b", "params": 7e9, "seq_len": 4096, "micro_batch_size": 1}


def test_seven_b_on_one_card_by_hand():
    n = exact(cards=1, micro_batches=8, **SEVEN_B)
    mem = n["memory"]
    assert (mem["weights"], mem["gradients"]) == (14e9, 14e9)
    assert (mem["master_weights"], mem["adam_m"], mem["adam_v"]) == (28e9, 28e9, 28e9)
    assert mem["static"] == 112e9
    # p = 1: gradient accumulation holds one micro-batch, not m = 8: 34 * s * b * h * L bytes
    assert mem["micro_batches_in_flight"] == 1
    assert mem["activations"] == 34 * 4096 * 1 * 4096 * 32
    # the complete ledger (issue 57): fp32 logits of the 4,096 tokens over 32,000 words, and the
    # CUDA context (one card: no NCCL communicator)
    assert mem["logits"] == 4 * 4096 * 32000 and mem["reserve"] == 723 * 2**20
    assert mem["total"] == 112e9 + 18_253_611_008 + 4 * 4096 * 32000 + 723 * 2**20


def test_traffic_by_hand():
    dp = exact(cards=8, micro_batches=1, **SEVEN_B)["comm"]
    assert dp["dp"] == pytest.approx(2 * 7 / 8 * 14e9)  # 24.5 GB: one ring all-reduce of the gradients
    fsdp = exact(cards=8, micro_batches=1, zero=3, **SEVEN_B)["comm"]
    assert fsdp["dp"] == pytest.approx(3 * 7 / 8 * 14e9)  # two all-gathers and a reduce-scatter: 36.75 GB
    # context-parallel ranks hold the same weights: their gradients reduce over dp x cp cards,
    # and ZeRO shards over them (Megatron-LM's data-parallel group with context parallelism)
    cp = exact(cards=8, cp=2, micro_batches=1, zero=1, **SEVEN_B)
    assert cp["plan"]["shard_group"] == 8 and cp["comm"]["collectives"]["dp_all_reduce"]["group_size"] == 8
    assert cp["comm"]["dp"] == pytest.approx(2 * 7 / 8 * 14e9)
    assert cp["memory"]["adam_m"] == pytest.approx(28e9 / 8)
    tp = exact(cards=2, tp=2, micro_batches=1, **SEVEN_B)["comm"]
    buffer = 4096 * 4096 * 2  # b * s * h in bf16
    # 4 all-reduces per layer x 32 layers, plus the embedding's and the head's, each 2(n-1)/n of it
    assert tp["tp"] == pytest.approx((4 * 32 + 2) * buffer)
    ckpt = exact(cards=2, tp=2, micro_batches=1, checkpointing=True, **SEVEN_B)["comm"]
    assert ckpt["tp"] == pytest.approx((6 * 32 + 2) * buffer)
    assert ckpt["tp_exchanges"] == {"forward": 2, "backward": 4, "total": 6}


def test_pipeline_and_time_by_hand():
    n = exact(cards=4, pp=4, micro_batches=4, **SEVEN_B)
    assert n["pipeline"]["bubble_fraction"] == pytest.approx(3 / 7)
    assert n["memory"]["micro_batches_in_flight"] == 4  # 1F1B: min(m, p) on the first stage
    c = exact(cards=8, micro_batches=1, overlap="none", **SEVEN_B)["compute"]  # the whiteboard's 0.87
    tokens = 8 * 4096
    # One micro-batch of 4,096 tokens through 32 layers and the head on an H100 (efficiency.py):
    # matmuls 6 FLOPs per parameter per token at 80.3% of 989 TFLOP/s; attention 2*s*h per token
    # per layer, 4 passes (FlashAttention recomputes the scores) at 35% (the whiteboard's one share;
    # under overlap framework, FlashAttention-2's measured share: tests/test_ledger.py); 34*s*h bytes per layer
    # 4 times through 3.35 TB/s; 40 us per layer per pass; all over the 0.87 training sustains.
    h, ffn, vocab, s = 4096, 11008, 32000, 4096
    per_layer = 4 * h * h + 3 * h * ffn + 2 * h
    scale = 7e9 / (32 * per_layer + 2 * vocab * h + h)
    matmul = 6 * s * (32 * per_layer + vocab * h) * scale / (989e12 * 0.803)
    attention = 2 * s * s * h * 32 * 4 / (989e12 * 0.35)
    memory_bound = 34 * s * h * 32 * 4 / 3.35e12
    overhead = 40e-6 * 32 * 3
    assert c["compute_seconds"] == pytest.approx((matmul + attention + memory_bound + overhead) / 0.87)
    assert c["predicted_mfu"] == pytest.approx(6 * 7e9 * tokens / (8 * 989e12 * c["step_seconds"]))
    # the seeds' figure stays compute-only arithmetic at the assumed MFU
    assert c["training_seconds"] == pytest.approx(6 * 7e9 * 1e12 / (8 * 989e12 * 0.5))
    # the whiteboard step repeated is never shorter than the seeds' MFU figure's compute
    assert c["training_seconds_from_steps"] == pytest.approx(1e12 / tokens * c["step_seconds"])


@settings(max_examples=40, deadline=None)
@given(t=POW2, **common)
def test_an_invalid_plan_is_refused_and_a_valid_one_is_not(t, **kw):
    flags = {"cards": t, "tp": t, **kw}
    layer = {k: parse_value(k, v, "flag", Where(flag=f"--{k}")) for k, v in flags.items()}
    if declared_valid(flags):
        estimate(resolve([builtin_layer(), layer]))
    else:
        with pytest.raises(DtfilmError):
            estimate(resolve([builtin_layer(), layer]))


# --- the step model of dtfilm/cost/efficiency.py and the interleaved schedule -----------------


@settings(max_examples=30, deadline=None)
@given(b=st.sampled_from([1, 2, 4]), cp=st.sampled_from([1, 2, 4]), t=POW2, model=PRESET)
def test_efficiency_falls_as_the_work_per_card_shrinks(b, cp, t, model):
    """Fewer tokens per micro-batch per card (b*s/c), or a thinner TP slice (h/t): the card
    computes a smaller share of its peak (README, "The cost model against published runs")."""
    base = {"model": model, "seq_len": 4096, "micro_batches": 1}
    here = run(cards=t * cp, tp=t, cp=cp, micro_batch_size=b, **base)["compute"]["compute_efficiency"]
    fewer_tokens = run(cards=t * 2 * cp, tp=t, cp=2 * cp, micro_batch_size=b, **base)["compute"]["compute_efficiency"]
    thinner = run(cards=2 * t * cp, tp=2 * t, cp=cp, micro_batch_size=b, **base)["compute"]["compute_efficiency"]
    assert fewer_tokens < here
    assert thinner < here


@settings(max_examples=30, deadline=None)
@given(p=st.sampled_from([2, 4, 8]), m=st.sampled_from([1, 2, 8, 16, 32]), v=st.sampled_from([2, 4]))
def test_interleaving_shrinks_the_bubble_and_grows_the_first_stage(p, m, v):
    flags = {"model": "llama-7b", "cards": p, "pp": p, "micro_batches": m}
    plain, interleaved = run(**flags), run(virtual_stages=v, **flags)
    assert interleaved["pipeline"]["bubble_fraction"] == pytest.approx((p - 1) / (v * m + p - 1))
    assert interleaved["pipeline"]["bubble_fraction"] < plain["pipeline"]["bubble_fraction"]
    assert interleaved["memory"]["activations"] >= plain["memory"]["activations"]
    assert interleaved["comm"]["pp"] == pytest.approx(v * plain["comm"]["pp"])  # each chunk hands on


def test_interleaved_first_stage_holds_korthikanti_factor():
    # Korthikanti et al. 2022, 4.2.3: with m >= p the first stage keeps p(1 + (p-1)/(pv))
    # micro-batches' worth of its layers under interleaving (Megatron's warm-up + 1 chunks of 1/v).
    p, v = 4, 2
    n = exact(model="llama-7b", cards=p, pp=p, micro_batches=16, virtual_stages=v)
    stage0 = n["memory"]["micro_batches_in_flight"] if n["memory"]["card"]["pp"] == 0 else None
    assert stage0 == pytest.approx(p * (1 + (p - 1) / (p * v)))
    # with fewer micro-batches than that, every chunk of every micro-batch is held: m of them
    few = exact(model="llama-7b", cards=p, pp=p, micro_batches=2, virtual_stages=v)
    assert few["memory"]["micro_batches_in_flight"] == pytest.approx(2)


@settings(max_examples=40, deadline=None)
@given(t=POW2, **common)
def test_predicted_mfu_never_exceeds_the_compute_efficiency(t, **kw):
    """Bubble and traffic only add time: the step's MFU is at most the share of peak the card
    reaches while computing, scaled from hardware FLOPs to 6P (recomputation counts against it)."""
    c = run(cards=t, tp=t, **kw)["compute"]
    assert 0 < c["predicted_mfu"] <= c["compute_efficiency"] * (1 + 1e-9)
    assert c["step_seconds"] >= c["compute_seconds"]


def test_recomputation_modes_by_hand():
    # GPT-3 175B at 2K tokens without FlashAttention: the scores cost 5as/h = 80 bytes more than 34.
    flags = {"model": "gpt3-175b", "cards": 8, "tp": 8, "seq_len": 2048, "flash_attention": False}
    per = {r: exact(recompute=r, **flags)["memory"]["activation_bytes_per_token_per_hidden"] for r in RECOMPUTES}
    assert per == {"none": 34 + 80, "selective": 34, "full": 2}
    times = {r: exact(recompute=r, **flags)["compute"]["stage_seconds"] for r in RECOMPUTES}
    # selective repeats only the attention core's forward; full the whole forward
    assert times["none"]["matmul"] == times["selective"]["matmul"] < times["full"]["matmul"]
    assert times["none"]["attention"] < times["selective"]["attention"] == times["full"]["attention"]
    assert exact(checkpointing=True, **flags)["plan"]["recompute"] == "full"


RECOMPUTES = ("none", "selective", "full")
