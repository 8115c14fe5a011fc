"""The shot API: the theme's regions, the checked hand-off between shots, and the causal work
per card that the sequence chapter draws."""

from __future__ import annotations

import itertools

import pytest
from manim import DOWN, LEFT, RIGHT, UP, Square

from dtfilm.cost import context
from dtfilm.errors import DtfilmError
from dtfilm.visuals.regions import Region, regions
from dtfilm.visuals.theme import DARK, FRAME_HEIGHT, FRAME_WIDTH, LIGHT


def test_place_puts_the_matching_edge_on_the_regions_point():
    region = Region("r", -2.0, 4.0, -1.0, 3.0)
    box = region.place(Square(1.0), UP + LEFT)
    assert box.get_left()[0] == pytest.approx(-2.0) and box.get_top()[1] == pytest.approx(3.0)
    box = region.place(Square(1.0), DOWN + RIGHT)
    assert box.get_right()[0] == pytest.approx(4.0) and box.get_bottom()[1] == pytest.approx(-1.0)
    assert region.place(Square(1.0)).get_center()[:2] == pytest.approx([1.0, 1.0])
    assert region.holds(box)


def test_fit_only_shrinks_and_part_stays_inside():
    region = Region("r", 0.0, 2.0, 0.0, 1.0)
    assert region.fit(Square(4.0)).width == pytest.approx(1.0)  # limited by the height
    assert region.fit(Square(0.5)).width == pytest.approx(0.5)
    inner = region.part(left=-5.0, top=0.6)
    assert (inner.left, inner.right, inner.bottom, inner.top) == (0.0, 2.0, 0.0, 0.6)


@pytest.mark.parametrize("theme", [DARK, LIGHT])
def test_regions_lie_in_the_frame_and_apart(theme):
    layout = regions(theme)
    named = [layout.header, layout.stats, layout.stage, layout.caption]
    for region in [*named, layout.side]:
        assert -FRAME_WIDTH / 2 <= region.left < region.right <= FRAME_WIDTH / 2
        assert -FRAME_HEIGHT / 2 <= region.bottom < region.top <= FRAME_HEIGHT / 2
    for a, b in itertools.combinations(named, 2):
        apart_x = a.right <= b.left or b.right <= a.left
        apart_y = a.top <= b.bottom or b.top <= a.bottom
        assert apart_x or apart_y, (a.name, b.name)
    side, stage = layout.side, layout.stage
    assert stage.left <= side.left and side.right < layout.stage_right_of_side.left and side.bottom == stage.bottom


class _Scene:
    def __init__(self) -> None:
        self.played: list[object] = []

    def play(self, *animations: object, **_: object) -> None:
        self.played.append(animations)


def _context():
    from dtfilm.scene import ShotContext

    ctx = ShotContext.__new__(ShotContext)
    ctx.scene, ctx.stage, ctx.handed, ctx.taken = _Scene(), {}, {}, set()
    return ctx


def test_a_piece_is_kept_only_for_the_values_it_was_drawn_for():
    ctx = _context()
    rack = Square(1.0)
    ctx.hand_on("rack", rack, (("cluster.cards", 8),))
    assert ctx.take("rack", (("cluster.cards", 8),)) is rack
    assert ctx.taken == {"rack"}
    assert ctx.take("rack", (("cluster.cards", 16),)) is None  # drawn for 8 cards: it goes
    assert "rack" not in ctx.stage and len(ctx.scene.played) == 1
    assert ctx.take("rack", (("cluster.cards", 16),)) is None  # and nothing is left to take


def test_a_piece_left_to_clear_is_never_taken():
    ctx = _context()
    ctx.leave(ring=Square(1.0))
    assert ctx.take("ring", ()) is None


def test_passing_an_undeclared_piece_fails_naming_the_kind():
    from dtfilm.scene import check_handoff

    ctx = _context()
    ctx.hand_on("rack", Square(1.0), ())
    check_handoff("loaf_to_rack", ctx)  # declared: hands_on=("rack",)
    with pytest.raises(DtfilmError, match="'ring_allreduce' passes \\['rack'\\]"):
        check_handoff("ring_allreduce", ctx)
    ctx.handed.clear()
    ctx.taken = {"grid"}
    with pytest.raises(DtfilmError, match="'memory_bars' passes \\['grid'\\]"):
        check_handoff("memory_bars", ctx)


@pytest.mark.parametrize("cp", [1, 2, 3, 4, 8, 16])
def test_causal_work_per_card(cp):
    # Dealt in order the last card does (2c-1)/c the average (i whole blocks and half of one,
    # per card i, of c); zig-zag (Llama 3, section 3.3.2) gives every card the same.
    contiguous, zigzag = context.work_per_card(cp, "contiguous"), context.work_per_card(cp, "zigzag")
    assert sum(contiguous) == pytest.approx(1.0) and sum(zigzag) == pytest.approx(1.0)
    assert context.imbalance(cp, "contiguous") == pytest.approx((2 * cp - 1) / cp)
    assert zigzag == pytest.approx([1 / cp] * cp)
    assert contiguous == sorted(contiguous)  # later tokens see more keys
    owners = context.chunk_owners(cp, "zigzag")
    assert all(owners.count(card) == 2 for card in range(cp))
    assert all(owners[i] == owners[2 * cp - 1 - i] for i in range(cp))  # a chunk and its mirror


def test_the_estimate_carries_the_imbalance_it_does_not_assume():
    from tests.test_cost_reference import run

    data = run(params="7e9", cards=8, cp=4, seq_len=131072)["compute"]
    assert data["cp_contiguous_imbalance"] == pytest.approx(7 / 4)
    assert data["attention_seconds_per_step_contiguous"] == pytest.approx(7 / 4 * data["attention_seconds_per_step"])
    one = run(params="7e9", cards=8, seq_len=131072)["compute"]
    assert one["cp_contiguous_imbalance"] == 1.0
