"""The planner: its enumeration is complete; its pick fits and nothing faster does; its reasons
follow the tree. (Its numbers are the estimate's own body, dtfilm.cost.model: tests/test_model.py.)"""

from __future__ import annotations

import pytest

from dtfilm.cost import build_setup, builtin_layer, estimate_setup, parse_value, resolve
from dtfilm.cost.plan_ranking import zero_two_twins
from dtfilm.cost.planner import evaluate, factorisations, plan
from dtfilm.errors import Where


def make_setup(**flags):
    layer = {k: parse_value(k, v, "flag", Where(flag=f"--{k}")) for k, v in flags.items()}
    setup, _ = build_setup(resolve([builtin_layer(), layer]))
    return setup


def test_enumeration_is_complete():
    # 8 cards, LLaMA 7B: (dp, tp, pp, cp) with product 8 where tp | 32 heads, pp <= 32, cp | s.
    setup = make_setup(model="llama-7b", cards=8)
    facts = factorisations(setup)
    assert len(facts) == 20  # ordered factorisations of 2^3 into four factors: C(6, 3)
    batch = 64
    expected = 0
    for dp, _tp, pp, cp in facts:
        splits = sum(1 for m in range(1, batch // dp + 1) if (batch // dp) % m == 0)
        # 1F1B with v = 1, 2, 4 or 8 virtual stages (at most the layers of a stage), and GPipe
        schedules = 1 if pp == 1 else 1 + sum(1 for v in (1, 2, 4, 8) if v <= 32 // pp)
        # ZeRO 0..3 with cards to shard over (dp x cp); selective or full recomputation (with FlashAttention,
        # "none" is "selective")
        expected += splits * (4 if dp * cp > 1 else 1) * 2 * schedules
    assert evaluate(setup, batch).count == expected


def test_a_selection_of_the_sweep_is_priced_as_in_the_sweep():
    # `where` prices only the plans it selects (a published run's techniques), each as the whole
    # sweep prices it and in the sweep's order: a MoE model, so that ep is among the degrees
    setup = make_setup(model="mixtral-8x7b", cards=64)
    whole = evaluate(setup, 128)
    selected = (whole.zero == 1) & (whole.schedule == 0) & (whole.degree("ep") == 2)
    part = evaluate(
        setup, 128, where=lambda degree: (degree("zero") == 1) & (degree("schedule") == 0) & (degree("ep") == 2)
    )
    assert 0 < part.count < whole.count and part.count == int(selected.sum())
    for name in ("dp", "tp", "pp", "cp", "ep", "micro_batches", "memory_total", "step_seconds", "exposed_seconds"):
        assert (getattr(part, name) == getattr(whole, name)[selected]).all(), name
    assert evaluate(setup, 128, where=lambda degree: degree("dp") < 0).count == 0


def test_the_pick_fits_and_nothing_faster_does():
    setup = make_setup(model="llama2-70b", cards=64)
    result = plan(setup, 128)
    pick = result["pick"]
    assert pick["memory_total"] <= setup.card.memory_bytes
    plans = evaluate(setup, 128)
    per_token = plans.step_seconds / plans.tokens_per_step
    # nothing with room to spare is faster (a tight fit is picked only when no plan has room)
    assert plans.roomy.any()
    assert pick["seconds_per_token"] == pytest.approx(per_token[plans.roomy].min())
    # ZeRO-1's twins (ZeRO-2 over several micro-batches, every figure the same) are not listed
    assert result["evaluated"] == plans.count and result["fitting"] == int((plans.fits & ~zero_two_twins(plans)).sum())


def test_a_tight_fit_is_picked_only_when_no_plan_has_room():
    # Llama 2 70B on 64 cards on the seeds' whiteboard (the 3d chapter's planner): the fastest plan
    # that fits holds 78.9 of 80 GB (132 MB to spare before the complete ledger), a fit the film
    # says the allocator's fragmentation may stop; the pick is the fastest with fit_margin to spare
    from dtfilm.cost.ledger import FIT_MARGIN_SHARE
    from dtfilm.cost.planner import ranked

    setup = make_setup(model="llama2-70b", cards=64, network="single-link", overlap="none")
    plans = evaluate(setup, 512)
    per_token = plans.step_seconds / plans.tokens_per_step
    tight = plans.fits & ~plans.roomy
    assert per_token[tight].min() < per_token[plans.roomy].min()  # a faster plan exists, but tight
    order = ranked(plans)
    pick = int(order[0])
    assert plans.memory_total[pick] <= (1 - FIT_MARGIN_SHARE) * setup.card.memory_bytes
    assert per_token[pick] == pytest.approx(per_token[plans.roomy].min())
    # the tight fits still rank, after every plan with room
    assert list(plans.roomy[order]) == sorted(plans.roomy[order], reverse=True)
    # where no plan has room, the fastest fit is still picked
    from dataclasses import replace

    squeezed = replace(plans, _capacity=float(plans.memory_total[plans.fits].min()) * 1.01)
    only_tight = ranked(squeezed)
    assert only_tight.size and not squeezed.roomy[only_tight].any()


def test_reasons_follow_the_decision_tree():
    small = plan(make_setup(model="llama-7b", params="1B", cards=8, seq_len=1024), 64)
    assert small["reason"][0].startswith("Does one GPU hold the full training state? Yes: DDP")
    seven = plan(make_setup(model="llama-7b", params="7B", cards=8), 64)
    assert "FSDP / ZeRO" in seven["reason"][0]
    big = plan(make_setup(model="llama3.1-405b", cards=8), 8)
    assert big["pick"] is None and "No plan fits" in big["reason"][-1]
    assert "add tensor parallelism inside a node" in big["reason"][0]


def test_zero_paper_figure_1():
    # ZeRO (Rajbhandari et al. 2019), Figure 1: 7.5B parameters, 64 data-parallel cards, K = 12:
    # baseline 120 GB, P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB per card.
    published = {0: 120e9, 1: 31.4e9, 2: 16.6e9, 3: 1.9e9}
    for stage, gigabytes in published.items():
        n = estimate_setup(make_setup(params="7.5B", cards=64, zero=stage))
        assert n["memory"]["static"] == pytest.approx(gigabytes, abs=0.05e9)


def test_the_3d_chapter_shows_the_planners_pick():
    """The plan drawn by the 3D chapter's planner shot is `dtfilm plan --json`'s pick for the
    same inputs, run as a separate process (issue 8)."""
    import json

    from dtfilm.storyboard import load_chapter
    from dtfilm.storyboard.kinds import PLAN_INPUTS
    from tests.conftest import ROOT, run_dtfilm

    chapter = load_chapter("3d", root=ROOT)
    shot = next(s for s in chapter.shots if s.kind == "decision_tree")
    from dtfilm.cost.planner import FIXABLE

    flags = []
    for name, value in shot.numbers.overrides:
        if name in FIXABLE:  # the shot's starting plan; as flags they would restrict the search
            continue
        flag = "--" + name.replace("_", "-")
        flags += [flag] if value is True else [f"--no-{flag[2:]}"] if value is False else [flag, str(value)]
    done = run_dtfilm("plan", "3d", *flags, "--global-batch", str(shot.options["global_batch"]), "--json")
    assert done.returncode == 0, done.stderr
    pick = json.loads(done.stdout)["pick"]
    shown = shot.options["pick"]
    for name in PLAN_INPUTS:
        assert shown.get(f"inputs.{name}") == pick[name], name
    assert shown.get("memory.total") == pytest.approx(pick["memory_total"])
    assert shown.get("compute.step_seconds") == pytest.approx(pick["step_seconds"])
    assert shown.get("memory.fits")


def test_the_tree_ends_in_sequence_too_long_when_only_context_parallel_plans_fit():
    # Llama 2 70B at 512K tokens on 64 H100s: only plans that split the sequence fit (seed 001's
    # "Where is the bottleneck?" -> "Sequence too long").
    setup = make_setup(model="llama2-70b", cards=64, seq_len=524288)
    result = plan(setup, 8, top=1)
    assert result["branch"] == "cp"
    assert result["pick"]["cp"] > 1
    assert "the sequence is too long" in result["reason"][0]
    # at 4K tokens the same model and cards end in 3D parallelism (or sharding), never there
    assert plan(make_setup(model="llama2-70b", cards=64, seq_len=4096), 512, top=1)["branch"] != "cp"


def test_degrees_given_as_flags_restrict_the_search():
    # CONTRACT.md: "degrees given as flags restrict the search, and plans[0] is the pick"; `plan
    # --tp 8 --pp 4` ignored them (Llama 3 70B on 256 cards: its pick was another layout)
    import json

    from tests.conftest import run_dtfilm

    common = ["plan", "--model", "llama3.1-70b", "--cards", "256", "--seq-len", "8192", "--global-batch", "512"]
    free = json.loads(run_dtfilm(*common, "--json").stdout)
    assert (free["pick"]["tp"], free["pick"]["pp"], free["pick"]["zero"]) != (8, 4, 1)
    done = run_dtfilm(*common, "--tp", "8", "--pp", "4", "--zero", "1", "--json")
    assert done.returncode == 0, done.stderr
    fixed = json.loads(done.stdout)
    assert fixed["fixed"] == {"tp": 8, "pp": 4, "zero": 1}
    assert fixed["plans"] and fixed["plans"][0] == fixed["pick"]
    assert all((p["tp"], p["pp"], p["zero"]) == (8, 4, 1) for p in fixed["plans"])
    assert fixed["evaluated"] == free["evaluated"] and fixed["fitting"] < free["fitting"]
    # the restricted pick is never faster than the free one
    assert fixed["pick"]["seconds_per_token"] >= free["pick"]["seconds_per_token"]


def test_the_trees_plan_over_every_fitting_plan_is_the_pick_even_in_a_tie():
    # issue 58: cp's planner (LLaMA 7B, 16 cards, 524,288-token sequences) ties ZeRO 1 and ZeRO 2
    # at dp 2 x cp 8 on time per token; the pick took ZeRO 2 (then the least memory), the tree's
    # plan the first of the tie, ZeRO 1, so its "3D:" line read ZeRO 1 beside "It takes the tree's
    # splits." At its 8 micro-batches ZeRO 2 now holds the gradients whole, as ZeRO 1 does
    # (memory.gradients_sharded): twins, of which both take the first, ZeRO 1.
    from dtfilm.cost.planner import fastest_with_room, ranked
    from dtfilm.storyboard.tree import follows

    plans = evaluate(make_setup(model="llama-7b", cards=16, seq_len=524288), 16)
    pick = int(ranked(plans)[0])
    per_token = plans.step_seconds / plans.tokens_per_step
    tied = plans.fits & plans.roomy & (per_token == per_token[pick])
    assert int(tied.sum()) > 1  # (the tie this is about)
    assert fastest_with_room(plans, plans.fits) == pick
    follow = fastest_with_room(plans, follows(plans, ("cp",)))
    assert follow == pick and int(plans.zero[follow]) == 1
    twin = tied & (plans.zero == 2)
    assert int(twin.sum()) == 1 and plans.memory_total[twin][0] == plans.memory_total[pick]
