"""ZeRO-2 under gradient accumulation (a teacher's review, 2026-12-06): the contract prices ZeRO-1
and -2 as moving what DP moves, one reduction a step, so over several micro-batches the gradients
build up whole and the card holds them whole, as under ZeRO-1; at one micro-batch each bucket is
reduce-scattered as the backward makes it and the card holds its shard (ZeRO, section 5.2).
ZeRO-3 reduce-scatters every micro-batch and always holds its shard."""

from __future__ import annotations

import pytest

from dtfilm.cost import estimate_setup
from tests.test_planner import make_setup

CARDS = 64  # LLaMA 7B over 64 data-parallel cards: ZeRO shards over all of them


def ledger(zero: int, micro_batches: int) -> dict:
    setup = make_setup(model="llama-7b", cards=CARDS, zero=zero, micro_batches=micro_batches)
    return estimate_setup(setup)


@pytest.mark.parametrize("micro_batches", [2, 8, 32])
def test_zero2_over_several_micro_batches_holds_what_zero1_does(micro_batches: int):
    one, two = ledger(1, micro_batches), ledger(2, micro_batches)
    assert two["memory"] == {**one["memory"]}
    assert two["comm"]["dp"] == one["comm"]["dp"]  # the same bytes: one reduction a step


def test_zero2_at_one_micro_batch_shards_the_gradients():
    one, two, three = ledger(1, 1), ledger(2, 1), ledger(3, 1)
    assert two["memory"]["gradients"] == pytest.approx(one["memory"]["gradients"] / CARDS)
    assert three["memory"]["gradients"] == pytest.approx(two["memory"]["gradients"])
    assert two["comm"]["dp"] == one["comm"]["dp"]


@pytest.mark.parametrize("micro_batches", [1, 8])
def test_zero3_always_holds_its_shard(micro_batches: int):
    whole, sharded = ledger(0, micro_batches), ledger(3, micro_batches)
    assert sharded["memory"]["gradients"] == pytest.approx(whole["memory"]["gradients"] / CARDS)
