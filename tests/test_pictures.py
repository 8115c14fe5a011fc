"""Pictures are facts (issue 44): every bar, gauge, label and counter drawn is the cost model's
value for the card or setting it stands for, and stays legible to the envelope's limits."""

from __future__ import annotations

import pytest

from dtfilm.cost.estimate import MEMORY_PARTS
from dtfilm.numbers import Numbers
from dtfilm.visuals.theme import DARK
from tests.test_cost_reference import run


def _drawn_bytes(gauge, capacity: float, inner: float) -> dict[str, float]:
    """What a gauge drawn to scale says each part is, in bytes."""
    return {s.part: s.height * capacity / inner for s in gauge.segments}


def test_each_card_is_drawn_with_its_own_stages_ledger():
    # 7B on 16 cards, tp 2 x pp 4 x dp 2, 1F1B with 8 micro-batches: the first stage holds four
    # micro-batches of activations, the last stage one. GPU 0 is stage 0; GPU 7 stage 3.
    from dtfilm.shots.common import build_rack, rack_gauges
    from dtfilm.visuals.card import GAUGE_INSET

    numbers = Numbers(run(params="7e9", cards=16, tp=2, pp=4, micro_batches=8))
    stages = numbers.get_list("memory.stages")
    assert stages[0]["activations"] > 2 * stages[-1]["activations"]
    rack = build_rack(DARK, numbers)
    gauges = dict(zip(rack.cards, rack_gauges(rack, numbers), strict=True))
    capacity = float(numbers.get("memory.capacity"))
    for rank, stage in ((0, 0), (2, 1), (7, 3), (15, 3)):
        card = rack.cards[rank]
        inner = card.body.height - 2 * GAUGE_INSET
        drawn = _drawn_bytes(gauges[rank], capacity, inner)
        for part in MEMORY_PARTS:
            assert drawn.get(part, 0.0) == pytest.approx(stages[stage][part], rel=1e-3, abs=capacity * 0.01), (
                rank,
                part,
            )
