"""The logic behind the drawings: the ring algorithm, the rack's elision, the shot registry."""

from __future__ import annotations

import numpy as np
import pytest

from dtfilm.shots import SHOTS
from dtfilm.storyboard.kinds import KINDS
from dtfilm.visuals.rack import plan_rack
from dtfilm.visuals.ring import drawn_ranks, simulate_ring


@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_ring_allreduce_leaves_every_card_with_the_sum(n):
    rng = np.random.default_rng(n)
    buffers = rng.normal(size=(n, n))
    final, steps = simulate_ring(buffers)
    assert np.allclose(final, np.tile(buffers.sum(axis=0), (n, 1)))
    assert len(steps) == 2 * (n - 1)  # n-1 reduce-scatter steps, n-1 all-gather steps
    assert [s.phase for s in steps] == ["reduce-scatter"] * (n - 1) + ["all-gather"] * (n - 1)
    for step in steps:  # every card sends one chunk to its neighbour each step
        assert sorted(src for src, _, _ in step.sends) == list(range(n))
        assert all(dst == (src + 1) % n for src, dst, _ in step.sends)
    assert (steps[-1].counts == n).all()


def test_rack_draws_everything_when_small_and_elides_when_huge():
    small = plan_rack(8, 8)
    assert [v.ranks for v in small.nodes] == [tuple(range(8))] and small.hidden_nodes == 0
    two = plan_rack(16, 8)
    assert [v.node for v in two.nodes] == [0, 1]
    assert two.nodes[1].ranks[-1] == 15 and all(v.elided for v in two.nodes)
    huge = plan_rack(16384, 8)
    assert sum(len(v.ranks) for v in huge.nodes) <= 8
    assert huge.hidden_nodes == 2046 and huge.nodes[-1].ranks[-1] == 16383
    assert drawn_ranks(16384) == [0, 1, 2, 3, 4, 5, 6, 16383]


def test_every_storyboard_kind_has_a_shot_function():
    assert set(KINDS) == set(SHOTS)


def test_gauge_heights_follow_the_bytes():
    from dtfilm.phrases import plain
    from dtfilm.visuals.card import SPILL_CAP, CardBox
    from dtfilm.visuals.theme import DARK

    card = CardBox(DARK, plain("GPU"), width=1.0, height=2.0)
    ledger = {
        "weights": 14e9,
        "gradients": 14e9,
        "master_weights": 3.5e9,
        "adam_m": 3.5e9,
        "adam_v": 3.5e9,
        "activations": 18.25e9,
    }
    gauge = card.gauge(ledger, 80e9)
    for segment in gauge.segments:
        assert segment.height == pytest.approx(ledger[segment.part] * 2.0 / 80e9, rel=1e-6)
    assert gauge.spill is None
    # 130 GB on an 80 GB card: a spill above the card, to scale up to the cap
    over = card.gauge({**ledger, "master_weights": 28e9, "adam_m": 28e9, "adam_v": 28e9}, 80e9)
    assert over.spill is not None
    drawn = sum(s.height for s in over.segments)
    assert drawn == pytest.approx(min(130.25e9 / 80e9, 1 + SPILL_CAP) * 2.0, rel=1e-6)
    # 405B on one card: capped, so the gauge stays in frame
    huge = card.gauge({k: v * 60 for k, v in ledger.items()}, 80e9)
    assert sum(s.height for s in huge.segments) == pytest.approx((1 + SPILL_CAP) * 2.0)
    # a ZeRO shard is edged in its card's colour
    edged = card.gauge(ledger, 80e9, outline={"adam_m": "#FF0000"})
    assert [s.get_stroke_width() > 0 for s in edged.segments] == [s.part == "adam_m" for s in edged.segments]
