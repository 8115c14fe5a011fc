"""The facts docs/published-runs.md quotes on Llama 3's group size N (benchmarks/interleaved_group_size.py),
against Megatron-Core's own example and schedules worked by hand."""

from __future__ import annotations

import pytest

from benchmarks.interleaved_group_size import card_gb, run_setup, schedule_table, simulate, warmup


def test_the_schedule_table_is_megatron_cores_example():
    """schedules.py's comment: PP2 N3M5 with VP2 runs micro-batches 0 1 2 0 1 2 3 4 3 4 on chunks
    0 0 0 1 1 1 0 0 1 1 (the last group, 2, is what is left of 5)."""
    table = schedule_table(5, 2, 3)
    assert [j for j, _ in table] == [0, 1, 2, 0, 1, 2, 3, 4, 3, 4]
    assert [c for _, c in table] == [0, 0, 0, 1, 1, 1, 0, 0, 1, 1]


def test_the_warm_up_is_two_per_later_stage_and_v_minus_one_groups():
    # 2(p - rank - 1) + (v - 1)N, at most every chunk forward (v * m)
    assert warmup(4, 0, 8, 2, 4) == 2 * 3 + 1 * 4 == 10
    assert warmup(4, 3, 8, 2, 4) == 4
    assert warmup(4, 0, 4, 2, 2) == 8  # 6 + 2, all 8 chunk forwards
    assert warmup(16, 1, 32, 4, 8) == 2 * 14 + 3 * 8 == 52


def test_two_stages_two_chunks_run_as_worked_by_hand():
    """p = 2, m = 2, v = 2, N = 2 (forward 1 slot, backward 2): rank 0 runs its 4 forwards by slot
    4 and its backwards at 6-8, 9-11, 11-13, 13-15; rank 1 ends at 13. 15 slots for 12 of work:
    a bubble of 3/12 = (p - 1)/(vm)."""
    assert simulate(2, 2, 2, 2) == (pytest.approx(0.25), [])


def test_fewer_contiguous_micro_batches_than_stages_deadlock():
    """p = 4, m = 4, v = 2, N = 2: rank 0 warms up all 8 chunk forwards and waits for rank 3's
    forward of micro-batch 3 (chunk 0) to run its chunk 1; rank 3 runs that after its backward of
    micro-batch 0, chunk 0, which needs rank 0's backward of micro-batch 0, chunk 1: queued
    behind the forward rank 0 waits to run."""
    overhead, stuck = simulate(4, 4, 2, 2)
    assert overhead is None
    assert stuck[0] == ("F", 3, 1) and stuck[3] == ("B", 0, 0)
    assert simulate(4, 4, 2, 4)[0] == pytest.approx(3 / 8)  # N = p runs: (p - 1)/(vm)


def test_at_8192_cards_the_warm_up_below_p_would_fit_but_cannot_run():
    setup, m = run_setup()
    assert (setup.pp, m) == (16, 32)
    capacity_gb = setup.card.memory_bytes / 1e9
    # (6.3 GB more than before ZeRO-2 held its gradients whole over the 32 micro-batches: 62.4 and 100.0)
    assert card_gb(setup, 4, 8) == pytest.approx(68.7, abs=0.05) and card_gb(setup, 4, 8) < capacity_gb
    assert card_gb(setup, 2, 16) == pytest.approx(106.3, abs=0.05) and card_gb(setup, 4, 16) > capacity_gb
    for v in (2, 4):
        assert simulate(16, 32, v, 8)[0] is None
        assert simulate(16, 32, v, 16)[0] == pytest.approx(15 / (v * 32))
