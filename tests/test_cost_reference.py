"""The cost model against published numbers and hand-worked cases, each naming its source."""

from __future__ import annotations

import pytest

from dtfilm.cost import builtin_layer, estimate, parse_value, resolve
from dtfilm.cost.memory import BYTES_PER_PARAM, activation_bytes_per_layer
from dtfilm.cost.models import PRESETS, param_count
from dtfilm.cost.pipeline import bubble_fraction, stage_layers
from dtfilm.errors import Where

YEAR = 365.25 * 86400


def run(**flags) -> dict:
    layer = {k: parse_value(k, v, "flag", Where(flag=f"--{k}")) for k, v in flags.items()}
    return estimate(resolve([builtin_layer(), layer]))


def test_bytes_per_param_zero_paper():
    # ZeRO (Rajbhandari et al. 2019), section 3.1: mixed precision Adam = 2 + 2 + 12 = 16.
    assert BYTES_PER_PARAM["bf16"].total == 16
    assert (
        BYTES_PER_PARAM["bf16"].master_weights + BYTES_PER_PARAM["bf16"].adam_m + BYTES_PER_PARAM["bf16"].adam_v == 12
    )
    # Seed 000: "Switch precision from bf16 to fp32 ... the total stays at 16."
    assert BYTES_PER_PARAM["fp32"].total == 16
    assert BYTES_PER_PARAM["fp32"].master_weights == 0
    # Seed 000: fp8 "the weights halve again, though the fp32 master copy and the optimiser
    # moments stay exactly where they were" (REFERENCES.md table: 1/2/4/4/4 = 15).
    assert BYTES_PER_PARAM["fp8"].total == 15
    assert BYTES_PER_PARAM["fp8"].weights == BYTES_PER_PARAM["bf16"].weights / 2


def test_seven_billion_is_112_gb():
    # Seed 001 section 2.2: 7B x 16 bytes = 112 GB of static memory, past an 80 GB H100.
    n = run(params="7e9", cards=1)
    assert n["memory"]["static"] == pytest.approx(112e9)
    assert n["state"]["total"] == pytest.approx(112e9)
    assert n["memory"]["weights"] == pytest.approx(14e9)
    assert n["memory"]["adam_m"] + n["memory"]["adam_v"] + n["memory"]["master_weights"] == pytest.approx(84e9)
    assert not n["memory"]["fits"]
    assert n["memory"]["capacity"] == 80e9


@pytest.mark.parametrize(
    ("preset", "published"),
    [
        # LLaMA (Touvron et al. 2023): 6.7B, 13.0B, 32.5B, 65.2B; the exact counts of the
        # released checkpoints are 6,738,415,616 and 13,015,864,320.
        ("llama-7b", 6_738_415_616),
        ("llama-13b", 13_015_864_320),
        ("llama-33b", 32.5e9),
        ("llama-65b", 65.2e9),
        # Llama 2 70B model card: 68,976,648,192 parameters in the released checkpoint.
        ("llama2-70b", 68_976_648_192),
        # Llama 3.1 405B: 405.9B in the released checkpoint.
        ("llama3.1-405b", 405.85e9),
        # GPT-3 (Brown et al. 2020, Table 2.1): 175.0B.
        ("gpt3-175b", 175.0e9),
        # Llama 3.1 8B and 70B model cards: 8.03B and 70.6B; Mistral 7B: 7.24B (Jiang et al.
        # 2023); Qwen 2.5 72B: 72.7B (Qwen2.5 technical report, Table 1).
        ("llama3.1-8b", 8.03e9),
        ("llama3.1-70b", 70.6e9),
        ("mistral-7b", 7.24e9),
        ("qwen2.5-72b", 72.7e9),
    ],
)
def test_parameter_counts_from_architecture(preset, published):
    assert param_count(PRESETS[preset]) == pytest.approx(published, rel=0.005)


def test_seventy_billion_on_a_trillion_tokens():
    # Seed 001 section 1.2: 6 x 70e9 x 1e12 = 4.2e23 FLOPs; one H100 at 989 TFLOP/s and
    # 50% MFU takes "more than twenty years"; 1024 GPUs "about 9 days" (9.6).
    n = run(params="70e9", tokens="1e12", mfu=0.5, cards=1024, gpu="h100-sxm-80gb")
    c = n["compute"]
    assert c["training_flops"] == pytest.approx(4.2e23)
    assert c["training_seconds_one_card"] / YEAR == pytest.approx(26.9, abs=0.05)
    assert c["training_seconds"] / 86400 == pytest.approx(9.6, abs=0.05)


@pytest.mark.parametrize(("params", "cards"), [("7e9", 2), ("70e9", 14), ("405e9", 81)])
def test_cards_just_to_hold_the_state(params, cards):
    # Seed 001 section 1.1: static memory 16 bytes x P against one H100's 80 GB:
    # 112 GB -> 2 cards, 1,120 GB -> 14, 6,480 GB -> 81 ("needs dozens of GPUs").
    n = run(params=params, cards=1)
    assert n["state"]["cards_needed"] == cards
    assert n["state"]["cards_to_hold"] == pytest.approx(float(params) * 16 / 80e9)


def test_link_catalog_per_card():
    # Seed 001 section 4.1: NVLink 900 GB/s both ways (450 each way); InfiniBand 400 Gb/s =
    # 50 GB/s; Ethernet is per node, so 100 Gb/s shared by 8 cards is 1.5625 GB/s a card.
    links = run(cards=8, cards_per_node=8)["links"]
    assert links["nvlink4"]["per_card_bandwidth"] == 450e9
    assert links["infiniband-ndr"]["per_card_bandwidth"] == 50e9
    assert links["ethernet-100g"]["per_card_bandwidth"] == pytest.approx(12.5e9 / 8)
    widths = [link["per_card_bandwidth"] for link in links.values()]
    assert widths == sorted(widths, reverse=True)


def test_activation_factor_in_the_estimate():
    # 34 bytes per token per hidden unit per layer, 2 when checkpointed, twice in fp32.
    assert run()["memory"]["activation_bytes_per_token_per_hidden"] == 34
    assert run(checkpointing=True)["memory"]["activation_bytes_per_token_per_hidden"] == 2
    assert run(precision="fp32")["memory"]["activation_bytes_per_token_per_hidden"] == 68
    n = run(params="7e9", cards=1, seq_len=4096)
    assert n["memory"]["activations_per_layer"] * 32 == n["memory"]["activations"]


def test_activation_bytes_korthikanti_table2():
    # Korthikanti et al. 2022, Table 2: s*b*h*(34 + 5as/h) bytes per layer with no recomputation,
    # 34*s*b*h with selective recomputation (or FlashAttention, which never keeps the scores),
    # 2*s*b*h with full recomputation; TP with sequence parallelism divides by t.
    s, b, h, a = 2048, 1, 12288, 96  # GPT-3 175B
    assert activation_bytes_per_layer(s, b, h, "bf16", "none", a, flash=False) == s * b * h * (34 + 5 * a * s / h)
    assert activation_bytes_per_layer(s, b, h, "bf16", "none", a) == 34 * s * b * h
    assert activation_bytes_per_layer(s, b, h, "bf16", "selective", a, flash=False) == 34 * s * b * h
    assert activation_bytes_per_layer(s, b, h, "bf16", "full", a) == 2 * s * b * h
    assert activation_bytes_per_layer(s, b, h, "bf16", "selective", a, tp=8) == 34 * s * b * h / 8
    assert activation_bytes_per_layer(s, b, h, "fp32", "selective", a) == 2 * 34 * s * b * h
    # GPT-3 at 2K tokens: the scores are 5as/h = 80 bytes against 34, which is why they are recomputed
    assert 5 * a * s / h == 80


def test_seven_b_activations_by_hand():
    # 34 * 4096 tokens * 4096 hidden * 32 layers = 18.25e9 bytes for one micro-batch.
    n = run(params="7e9", cards=1, seq_len=4096, micro_batch_size=1, micro_batches=8)
    assert n["memory"]["activations"] == pytest.approx(34 * 4096 * 4096 * 32)


@pytest.mark.parametrize(
    ("stage", "formula"),
    [
        (1, lambda p, d: 4 * p + 12 * p / d),
        (2, lambda p, d: 2 * p + 14 * p / d),
        (3, lambda p, d: 16 * p / d),
    ],
)
def test_zero_stages(stage, formula):
    # ZeRO paper, Figure 1: stage 1 = 4P + 12P/d, stage 2 = 2P + 14P/d, stage 3 = 16P/d.
    n = run(params="7e9", cards=8, zero=stage)
    assert n["memory"]["static"] == pytest.approx(formula(7e9, 8))


def test_fsdp_fits_seven_b_on_eight_cards():
    # Seed 000: "This is how the 7B that did not fit on one card fits comfortably on eight."
    n = run(params="7e9", cards=8, zero=3)
    assert n["memory"]["static"] == pytest.approx(14e9)
    assert n["memory"]["fits"]


def test_ring_allreduce_bytes():
    # NCCL tests PERFORMANCE.md: all-reduce bus traffic 2(n-1)/n of the buffer per rank.
    n = run(params="7e9", cards=8)
    assert n["comm"]["dp"] == pytest.approx(2 * 7 / 8 * 14e9)  # 24.5 GB, the DESIGN.md figure
    assert n["comm"]["breakdown"][0]["steps_each"] == 14


def test_fsdp_traffic_is_one_and_a_half_dp_at_one_micro_batch():
    # ZeRO section 7 / seed 000: all-gather forward + backward + reduce-scatter = 1.5x DP.
    dp = run(params="7e9", cards=8, micro_batches=1)["comm"]["dp"]
    fsdp = run(params="7e9", cards=8, micro_batches=1, zero=3)["comm"]["dp"]
    assert fsdp == pytest.approx(1.5 * dp)
    # With gradient accumulation FSDP gathers for every micro-batch: 3m(n-1)/n * W.
    fsdp4 = run(params="7e9", cards=8, micro_batches=4, zero=3)["comm"]["dp"]
    assert fsdp4 == pytest.approx(3 * 4 * 7 / 8 * 14e9)


def test_tp_traffic_four_allreduces_per_layer():
    # Narayanan et al. 2021: 2 all-reduces forward and 2 backward per layer, of b*s*h; plus,
    # outside the layers, the vocabulary-parallel embedding's forward and the output head's
    # input gradient (Megatron-LM; counted by `dtfilm validate` in PyTorch).
    n = run(params="7e9", cards=8, tp=8, micro_batches=2)
    row = n["comm"]["breakdown"][0]
    assert row["group"] == "tp" and row["count"] == (4 * 32 + 2) * 2
    assert row["buffer_bytes"] == 1 * 4096 * 4096 * 2
    assert n["comm"]["tp"] == pytest.approx((4 * 32 + 2) * 2 * 2 * 7 / 8 * 4096 * 4096 * 2)
    assert (
        run(params="7e9", cards=8, tp=8, micro_batches=2, checkpointing=True)["comm"]["breakdown"][0]["count"]
        == (6 * 32 + 2) * 2
    )
    # a middle pipeline stage has neither end
    middle = run(params="7e9", cards=8, tp=2, pp=4, micro_batches=4)
    assert middle["memory"]["card"]["pp"] == 0  # the busiest card is the first stage: one end
    assert middle["comm"]["breakdown"][0]["count"] == (4 * 8 + 1) * 4


def test_tp_replicates_the_norms():
    # Megatron-LM keeps RMSNorm weights whole on every TP rank: 65 norms of h for LLaMA 7B.
    shape = PRESETS["llama-7b"]
    whole, split = run(model="llama-7b", cards=1), run(model="llama-7b", cards=8, tp=8)
    norms = (2 * shape.layers + 1) * shape.hidden
    assert split["memory"]["params_on_card"] == pytest.approx((whole["memory"]["params_on_card"] - norms) / 8 + norms)


def test_bubble_gpipe_formula():
    # GPipe (Huang et al. 2019): (p-1)/(m+p-1) of the timeline is idle.
    assert bubble_fraction(4, 8) == pytest.approx(3 / 11)
    assert bubble_fraction(1, 8) == 0
    n = run(params="7e9", cards=8, pp=8, micro_batches=8)
    assert n["pipeline"]["bubble_fraction"] == pytest.approx(7 / 15)
    # counted on one card's row, as the timeline shot counts it: 7 idle slots of 15
    assert (n["pipeline"]["idle_slots"], n["pipeline"]["row_slots"]) == (7, 15)


def test_first_stage_holds_min_m_p_micro_batches():
    # Narayanan et al. 2021: under 1F1B the first stage keeps min(m, p) micro-batches.
    per_layer = 34 * 4096 * 4096
    one_f = run(params="7e9", cards=4, pp=4, micro_batches=8)
    assert one_f["memory"]["activations"] == pytest.approx(8 * per_layer * 4)
    gpipe = run(params="7e9", cards=4, pp=4, micro_batches=8, schedule="gpipe")
    assert gpipe["memory"]["activations"] == pytest.approx(8 * per_layer * 8)


def test_uneven_stages_405b():
    # CONTRACT.md: 126 layers over 16 stages get 7 or 8 each, with a warning.
    counts = stage_layers(126, 16)
    assert sum(counts) == 126 and set(counts) == {7, 8}
    assert counts[0] == 7 and counts[-1] == 7  # the end stages carry the embedding and head
    n = run(model="llama3.1-405b", cards=16384, tp=8, pp=16)
    assert any("does not divide 126 layers" in w for w in n["warnings"])


def test_time_on_links():
    # NVLink 4: 450 GB/s each way; IB NDR: 50 GB/s each way per card (REFERENCES.md).
    inside = run(params="7e9", cards=8)["comm"]["breakdown"][0]
    across = run(params="7e9", cards=16)["comm"]["breakdown"][0]
    assert inside["link"] == "nvlink4" and across["link"] == "infiniband-ndr"
    assert inside["seconds"] == pytest.approx(24.5e9 / 450e9 + 14 * 3e-6)
    # NCCL's ring over 16 cards, 8 on each node: each card's NIC carries 1/8 of the ring's bytes; of
    # its 30 steps 2 cross between the nodes (NCCL's tuning.cc, nInterSteps)
    assert across["seconds"] == pytest.approx(2 * 15 / 16 * 14e9 / 8 / 50e9 + 28 * 3e-6 + 2 * 8e-6)
    # the seeds' whiteboard: every byte on one card's InfiniBand link
    whiteboard = run(params="7e9", cards=16, network="single-link")["comm"]["breakdown"][0]
    assert whiteboard["seconds"] == pytest.approx(2 * 15 / 16 * 14e9 / 50e9 + 30 * 8e-6)


def test_context_parallel_ring_attention_by_hand():
    # Ring attention (Liu et al. 2023), as dtfilm validate measures it: K and V blocks of
    # b*(s/c)*h_kv 16-bit values hop c-1 times per layer forward and c-1 again backward; their
    # gradients c times. Llama 2 70B: h_kv = 8192 * 8/64 = 1024.
    n = run(model="llama2-70b", cards=4, cp=4, seq_len=32768, micro_batches=1)
    blocks, grads = n["comm"]["collectives"]["cp_ring_send_recv"], n["comm"]["collectives"]["cp_gradient_ring"]
    block = 1 * (32768 / 4) * 1024 * 2
    assert blocks["count"] == 2 * 80 and blocks["bytes_each"] == pytest.approx(3 * 2 * block)
    assert grads["count"] == 80 and grads["bytes_each"] == pytest.approx(4 * 2 * block)
    assert n["comm"]["cp"] == pytest.approx(80 * (2 * 3 + 4) * 2 * block)
    # Korthikanti's 34, K and V (4 of them) at 8 KV heads of 64 (grouped-query attention, issue 57)
    assert n["memory"]["activations"] == pytest.approx(80 * (34 - 4 * (1 - 8 / 64)) * 32768 * 8192 / 4)


def test_plan_warnings():
    # tp beyond a node, KV heads fewer than tp, fp8 on a card without fp8 tensor cores.
    wide = run(model="llama-7b", cards=16, tp=16)
    assert any("spans more than one node" in w for w in wide["warnings"])
    assert wide["comm"]["links"]["tp"] == "infiniband-ndr"
    gqa = run(model="llama2-70b", cards=16, tp=16)
    assert any("replicated on 2 cards" in w for w in gqa["warnings"])
    a100 = run(gpu="a100-80gb", precision="fp8", cards=1)
    assert any("no fp8 tensor cores" in w for w in a100["warnings"])
    assert a100["cluster"]["peak_flops"] == 312e12


def test_sequence_parallelism_korthikanti_table2():
    # Korthikanti et al. 2022, Table 2: tensor parallel without sequence parallelism keeps
    # s*b*h*(10 + 24/t) per layer (selective recomputation); with it, 34*s*b*h/t. Full
    # recomputation keeps the layer's input: 2*s*b*h whole without SP, split t ways with it.
    s, b, h, a, t = 2048, 1, 12288, 96, 8
    kept = {sp: activation_bytes_per_layer(s, b, h, "bf16", "selective", a, tp=t, sequence_parallel=sp)
            for sp in (True, False)}  # fmt: skip
    assert kept[True] == 34 * s * b * h / t
    assert kept[False] == s * b * h * (10 + 24 / t)
    assert activation_bytes_per_layer(s, b, h, "bf16", "full", a, tp=t, sequence_parallel=False) == 2 * s * b * h
    # without FlashAttention and without recomputation: s*b*h*(10 + 24/t + 5as/(ht))
    assert activation_bytes_per_layer(
        s, b, h, "bf16", "none", a, tp=t, flash=False, sequence_parallel=False
    ) == pytest.approx(s * b * h * (10 + 24 / t + 5 * a * s / (h * t)))
    on = run(model="gpt3-175b", cards=8, tp=8, seq_len=2048)["memory"]["activations"]
    off = run(model="gpt3-175b", cards=8, tp=8, seq_len=2048, sequence_parallel=False)["memory"]["activations"]
    assert off / on == pytest.approx((10 + 24 / 8) / (34 / 8))
