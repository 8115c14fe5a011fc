"""The complete ledger (issue 57): the recompute working set, the fp32 logits, an fp8 recipe's
weight copies and the CUDA/NCCL reserve, each its own key in `memory` and counted in `total`;
and precision per operation: fp8 runs the layers' GEMMs, attention stays bf16 unless asked,
at FlashAttention's measured share for its sequence length and head size."""

from __future__ import annotations

import pytest

from dtfilm.cost import build_setup, builtin_layer, estimate_setup, parse_value, resolve
from dtfilm.cost import ledger as terms
from dtfilm.cost.attention import FA2_H100_LONG_SEQUENCE_SHARE, attention_share
from dtfilm.cost.memory import STATE_PARTS, activation_factor
from dtfilm.cost.planner import plan
from dtfilm.errors import Where

MIB = 2**20


def estimate(**flags):
    layer = {k: parse_value(k, v, "flag", Where(flag=f"--{k}")) for k, v in flags.items()}
    setup, _ = build_setup(resolve([builtin_layer(), layer]))
    return setup, estimate_setup(setup)


def test_total_counts_every_key():
    _, n = estimate(model="llama-7b", cards=8, tp=2, micro_batches=4, checkpointing=True, precision="fp8")
    m = n["memory"]
    parts = sum(m[p] for p in (*STATE_PARTS, "activations", *terms.LEDGER_EXTRA_PARTS))
    assert m["total"] == pytest.approx(parts)
    assert m["static"] == pytest.approx(sum(m[p] for p in STATE_PARTS))  # static keeps its meaning
    assert all(m[p] > 0 for p in terms.LEDGER_EXTRA_PARTS)
    assert m["fits"] == (m["total"] <= m["capacity"])


def test_full_recomputation_holds_one_whole_layer():
    # the finding: cp's 512K pick recomputes a 262,144-token shard's layer, 36.5 GB at once
    _, n = estimate(model="llama-7b", cards=8, cp=2, seq_len=524288, checkpointing=True)
    assert n["memory"]["recompute_working_set"] == pytest.approx(34 * 262_144 * 4096)
    assert n["memory"]["recompute_working_set"] > 36e9
    _, selective = estimate(model="llama-7b", cards=8, cp=2, seq_len=524288)
    assert selective["memory"]["recompute_working_set"] == 0


def test_logits_sit_on_the_stage_with_the_head():
    setup, n = estimate(model="llama-7b", cards=8, tp=2, pp=4, micro_batches=8)
    stages = n["memory"]
    logits = 4 * 1 * 4096 * setup.shape.vocab / 2  # fp32, b*s*V/t, one micro-batch in flight on the last stage
    assert terms.logits_bytes(1, 4096, setup.shape.vocab, 2, 1, 1) == logits
    # the most loaded card under 1F1B is the first stage, which has no head
    assert stages["card"]["pp"] == 0 and stages["logits"] == 0
    _, one = estimate(model="llama-7b", cards=8, tp=2, micro_batches=8)
    assert one["memory"]["logits"] == logits


def test_reserve_is_the_context_and_nccls_buffers_per_group():
    _, n = estimate(model="llama-7b", cards=16, tp=8, pp=2)
    parts = n["memory"]["reserve_parts"]
    assert parts["nccl_communicators"] == 2  # tp and pp; dp = 1
    assert parts["nccl_buffers"] == 2 * 4 * MIB * 32 * 2
    assert n["memory"]["reserve"] == parts["cuda_context"] + parts["nccl_buffers"]
    assert parts["cuda_context"] == 723 * MIB


def test_fp8_keeps_its_recipes_copies_beside_one_byte_weights():
    _, n = estimate(model="llama-7b", cards=8, precision="fp8")
    m = n["memory"]
    assert m["weights"] == pytest.approx(m["params_on_card"])  # 1 byte a parameter, as before
    assert m["fp8_weight_copies"] == pytest.approx(3 * m["params_on_card"])
    _, bf16 = estimate(model="llama-7b", cards=8)
    assert bf16["memory"]["fp8_weight_copies"] == 0


def test_fp8_runs_the_gemms_and_leaves_attention_in_bf16():
    # under what frameworks do; the whiteboard (overlap none) keeps the seeds' numbers to the digit
    _, bf16 = estimate(model="llama-7b", cards=8, overlap="framework")
    _, fp8 = estimate(model="llama-7b", cards=8, precision="fp8", overlap="framework")
    _, fp8_attention = estimate(model="llama-7b", cards=8, precision="fp8", fp8_attention=True, overlap="framework")
    # the seeds' whiteboard times fp8's attention at the fp8 peak, as before: today's numbers
    _, whiteboard = estimate(model="llama-7b", cards=8, precision="fp8", overlap="none")
    _, whiteboard_bf16 = estimate(model="llama-7b", cards=8, overlap="none")
    seconds = whiteboard_bf16["compute"]["stage_seconds"]["attention"]
    assert seconds / whiteboard["compute"]["stage_seconds"]["attention"] == pytest.approx(1979 / 989)
    assert fp8["compute"]["stage_seconds"]["attention"] == pytest.approx(bf16["compute"]["stage_seconds"]["attention"])
    assert fp8["compute"]["stage_seconds"]["matmul"] < 0.8 * bf16["compute"]["stage_seconds"]["matmul"]
    ratio = fp8["compute"]["stage_seconds"]["attention"] / fp8_attention["compute"]["stage_seconds"]["attention"]
    assert ratio == pytest.approx(1979 / 989)


def test_attention_efficiency_follows_sequence_and_head_size():
    short, long = attention_share(0.33, 512, 128), attention_share(0.33, 16384, 128)
    assert short < 0.7 * long and long == pytest.approx(0.33)
    assert attention_share(0.33, 8192, 64) < attention_share(0.33, 8192, 128)
    assert attention_share(0.33, 1 << 20, 128) == pytest.approx(0.33)  # past the table: its last column
    # the H100's share is the FlashAttention-3 paper's FlashAttention-2 bars, 16K tokens, head 128
    assert FA2_H100_LONG_SEQUENCE_SHARE == pytest.approx(3 / (1 / 335 + 2 / 322) / 989)

    def seconds_per_flop(seq_len):
        _, n = estimate(model="llama-7b", cards=8, seq_len=seq_len, overlap="framework")
        return n["compute"]["stage_seconds"]["attention"] / (seq_len * seq_len)

    assert seconds_per_flop(1024) > 1.2 * seconds_per_flop(16384)


def test_grouped_query_attention_keeps_smaller_keys_and_values():
    assert activation_factor("selective", 128, 8192, 16384, kv_heads=8) == pytest.approx(34 - 4 * (1 - 8 / 128))
    assert activation_factor("selective", 32, 4096, 4096, kv_heads=32) == 34


def test_the_planner_never_picks_what_the_complete_ledger_does_not_fit():
    setup, _ = estimate(model="llama2-70b", cards=64, seq_len=8192)
    out = plan(setup, 128, top=3)
    pick = out["pick"]
    assert pick is not None and pick["memory_total"] <= setup.card.memory_bytes
    assert out["plans"][0] == pick and all(p["memory_total"] <= setup.card.memory_bytes for p in out["plans"])


def test_each_stage_has_its_own_total_and_gpipe_holds_the_whole_batch_on_every_stage():
    # pp's slider at a fixed batch of 16 sequences (Llama 7B, pp 4, 8 layers a stage). Hand-worked:
    # 34 bytes per token per hidden unit per layer (Korthikanti et al. 2022, Table 2, FlashAttention),
    # so 16 sequences' activations on a stage are 8 x 34 x 4096 x 16 x 4096 = 73,014,444,032 bytes.
    # GPipe (Huang et al. 2019) runs every forward first, so every stage holds all 16 at any cut;
    # 1F1B's first stage holds min(m, p) micro-batches (Narayanan et al. 2021): the same 16 while
    # m <= 4, four sequences at m = 16. The last stage under GPipe adds every sequence's fp32 logits,
    # 16 x 4096 x 32000 x 4 = 8,388,608,000 bytes: its total, not the first's, is `memory.total`.
    whole_batch = 8 * 34 * 4096 * 16 * 4096
    logits = 16 * 4096 * 32000 * 4
    flags = {"model": "llama-7b", "cards": 4, "pp": 4}
    firsts = []
    for m in (1, 4, 16):
        _, gpipe = estimate(**flags, schedule="gpipe", micro_batches=m, micro_batch_size=16 // m)
        first, last = gpipe["memory"]["stages"][0], gpipe["memory"]["stages"][-1]
        for stage in gpipe["memory"]["stages"]:
            assert stage["total"] == pytest.approx(sum(stage[p] for p in (*STATE_PARTS, "activations", "buffers")))
            assert stage["activations"] == pytest.approx(whole_batch)
            assert stage["micro_batches_in_flight"] == m
        assert last["buffers"] - first["buffers"] == pytest.approx(logits)
        assert gpipe["memory"]["total"] == pytest.approx(last["total"]) and gpipe["memory"]["card"]["pp"] == 3
        firsts.append(first["total"])
        _, onef = estimate(**flags, schedule="1f1b", micro_batches=m, micro_batch_size=16 // m)
        held = onef["memory"]["stages"][0]
        assert held["micro_batches_in_flight"] == min(m, 4)
        assert held["activations"] == pytest.approx(whole_batch * min(m, 4) / m)
        if m <= 4:
            assert held["total"] == pytest.approx(first["total"])  # the same 16 sequences in flight
    assert firsts == pytest.approx([firsts[0]] * 3)  # the whole batch at every cut
