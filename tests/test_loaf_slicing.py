"""The loaf and its cuts: slices that stand for the layers they say, and each strategy's cut
along its own axis (lengthwise for TP, between layers for PP, a sliver per card for FSDP)."""

from __future__ import annotations

import itertools

import pytest

from dtfilm.visuals.loaf import MAX_SLICES, Loaf, group_size, layer_groups
from dtfilm.visuals.slicing import ACROSS, LENGTHWISE, SLIVERS, cut_across, cut_lengthwise, cut_slivers
from dtfilm.visuals.theme import DARK

EPS = 1e-6


def _box(m):
    return m.get_left()[0], m.get_right()[0], m.get_bottom()[1], m.get_top()[1]


@pytest.mark.parametrize("layers", [1, 2, 12, 13, 24, 32, 40, 61, 80, 126])
def test_slices_cover_every_layer_once_and_stand_for_what_they_say(layers: int):
    # the loaf of 32 layers was 12 slices labelled "32 layers": a slice stood for 2.67 layers
    groups = layer_groups(layers)
    size = group_size(layers)
    assert [layer for first, count in groups for layer in range(first, first + count)] == list(range(layers))
    assert len(groups) <= MAX_SLICES and all(0 < count <= size for _, count in groups)
    assert sum(1 for _, count in groups if count != size) <= 1  # one shorter slice at most, the last
    loaf = Loaf(DARK, layers, slice_height=0.2)
    for piece, (_, count) in zip(loaf.slices, groups, strict=True):  # height in proportion to its layers
        assert piece.height == pytest.approx(0.2 * count / size)
    assert layer_groups(32) == [(4 * i, 4) for i in range(8)]  # 32 layers: 8 slices of 4


@pytest.mark.parametrize(("layers", "breaks"), [(32, [8, 16, 24]), (126, [31, 63, 95]), (80, [27, 54])])
def test_no_slice_straddles_a_stage_boundary(layers: int, breaks: list[int]):
    for first, count in layer_groups(layers, breaks=breaks):
        assert not any(first < b < first + count for b in breaks)


@pytest.mark.parametrize("parts", [2, 4, 8])
def test_tensor_parallel_cut_runs_lengthwise_through_every_layer(parts: int):
    loaf = Loaf(DARK, 32, width=4.0, slice_height=0.2)
    cut = cut_lengthwise(DARK, loaf, parts)
    assert cut.axis == LENGTHWISE and len(cut.pieces) == parts
    left, right, bottom, top = _box(loaf.slices)
    for i, owner in enumerate(cut.pieces):
        assert len(owner) == len(loaf.slices)  # a piece of every layer on every card
        for piece in owner:
            whole = loaf.slices[piece.slice_index]
            pl, pr, pb, pt = _box(piece)
            assert pb == pytest.approx(whole.get_bottom()[1]) and pt == pytest.approx(whole.get_top()[1])
            assert pl == pytest.approx(left + i * (right - left) / parts)
            assert pr == pytest.approx(left + (i + 1) * (right - left) / parts)
    assert len(cut.knives) == parts - 1
    for knife in cut.knives:  # vertical, through the whole loaf
        start, end = knife.get_start(), knife.get_end()
        assert start[0] == pytest.approx(end[0])
        assert max(start[1], end[1]) > top and min(start[1], end[1]) < bottom


def test_pipeline_cut_runs_across_between_layers():
    loaf = Loaf(DARK, 32, breaks=[8, 16, 24])
    shares = [[0, 1], [2, 3], [4, 5], [6, 7]]
    cut = cut_across(DARK, loaf, shares)
    assert cut.axis == ACROSS
    for owner, share in zip(cut.pieces, shares, strict=True):
        assert [p.slice_index for p in owner] == share
        for piece in owner:  # whole slices, where they were
            assert _box(piece) == pytest.approx(_box(loaf.slices[piece.slice_index]))
    assert len(cut.knives) == len(shares) - 1
    for knife, share in zip(cut.knives, shares, strict=False):  # horizontal, in the gap after the share
        start, end = knife.get_start(), knife.get_end()
        assert start[1] == pytest.approx(end[1])
        assert loaf.slices[share[-1]].get_top()[1] < start[1] < loaf.slices[share[-1] + 1].get_bottom()[1]
        assert min(start[0], end[0]) < loaf.slices.get_left()[0] and max(start[0], end[0]) > loaf.slices.get_right()[0]


@pytest.mark.parametrize("parts", [2, 8])
def test_fsdp_cut_leaves_a_sliver_of_every_layer_per_card(parts: int):
    loaf = Loaf(DARK, 32, slice_height=0.4, max_slices=6)
    cut = cut_slivers(DARK, loaf, parts)
    assert cut.axis == SLIVERS and len(cut.pieces) == parts
    for i, owner in enumerate(cut.pieces):
        assert sorted(p.slice_index for p in owner) == list(range(len(loaf.slices)))
        for piece in owner:
            whole = loaf.slices[piece.slice_index]
            wl, wr, wb, wt = _box(whole)
            pl, pr, pb, pt = _box(piece)
            assert (pl, pr) == pytest.approx((wl, wr))  # the slice's full width, a thin height
            assert pb == pytest.approx(wb + i * (wt - wb) / parts) and pt == pytest.approx(
                wb + (i + 1) * (wt - wb) / parts
            )
    assert len(cut.knives) == (parts - 1) * len(loaf.slices)


PX_PER_UNIT = 854 / (128 / 9)  # the 854×480 preview


@pytest.mark.parametrize(("cards", "least_px"), [(2, 80), (4, 80), (8, 55)])
def test_a_gauge_is_wide_enough_to_read_at_480p(cards: int, least_px: float):
    # the gauges were 46 px wide at 480p whatever the cards: a few cards are now drawn wide
    from dtfilm.numbers import Numbers
    from dtfilm.shots.common.draw import build_rack
    from tests.test_cost_reference import run

    numbers = Numbers(run(params="7e9", cards=cards))
    rack = build_rack(DARK, numbers)
    assert min(card.inner_width for card in rack.cards.values()) * PX_PER_UNIT >= least_px


def test_a_ring_chunk_and_its_packet_can_be_followed_at_480p():
    # the ring's chunks were columns 8 px wide: 8 cards' chunks are now 12 px, a packet 18 px
    from dtfilm.phrases import plain
    from dtfilm.visuals.ring import PACKET_SIZE, Ring

    ring = Ring(DARK, 8, lambda rank: plain(f"GPU {rank}"))
    assert min(cell.width for row in ring.cells for cell in row) * PX_PER_UNIT >= 11.5
    assert ring.cell_height * PX_PER_UNIT >= 40 and PACKET_SIZE * PX_PER_UNIT >= 17
    assert ring.width < 128 / 9 - 2 * DARK.margin and ring.height < 8 - 2.5  # and inside the stage


def test_each_colour_means_one_thing_and_reads_apart_in_both_themes():
    # the optimizer's three greens were 18 apart (one colour at 480p); a card's colour was red's
    # neighbour (#FB7185 by #FF4D5E, 21 apart); the light theme drew card 5 in activations' colour
    from dtfilm.visuals.palette import palette_clashes
    from dtfilm.visuals.theme import LIGHT

    assert palette_clashes(DARK) == []
    assert palette_clashes(LIGHT) == []


def test_a_counter_past_the_card_is_drawn_in_the_bad_colour_and_only_then():
    # dp's 130 GB and 3d's 93.7 GB were yellow, as every counter
    from manim import ManimColor

    from dtfilm.numbers import Numbers
    from dtfilm.visuals.stats import Stat
    from tests.test_cost_reference import run

    over = Numbers(run(params="7e9", cards=8))  # data parallel: 7B's state on every card
    under = Numbers(run(params="7e9", cards=8, zero=3))
    assert over.get("memory.total") > over.get("memory.capacity") > under.get("memory.total")
    for numbers, colour in ((over, DARK.bad), (under, DARK.accent)):
        stat = Stat(DARK, "Per card", numbers("{memory.total:GB}"), emphasis=True)
        assert ManimColor(stat.value.get_fill_color()).to_hex().upper() == colour.upper()
    assert Stat(DARK, "Layers", over("{model.layers}")).value.get_fill_color().to_hex().upper() == DARK.text.upper()


def test_bandwidth_pipes_keep_their_ratios_at_480p():
    # why's ladder drew HDR 3.3 px and NDR 6.7 px thick (NVLink 1 unit): 1.5x apart as the
    # preview's pixels drew them, where HDR is half of NDR. Pipes are to scale, thick enough for
    # a 2x to read as 2x, and a link thinner than a pixel is a hairline, never a floor-sized pipe.
    from dtfilm.shots.why.draw import PIPE_FLOOR, pipe_thicknesses
    from tests.test_cost_reference import run

    links = run(params="7e9", cards=8)["links"]
    bandwidth = {name: float(link["per_card_bandwidth"]) for name, link in links.items()}
    thick = dict(zip(bandwidth, pipe_thicknesses(list(bandwidth.values())), strict=True))
    ndr, hdr = thick["infiniband-ndr"], thick["infiniband-hdr"]
    assert ndr / hdr == pytest.approx(bandwidth["infiniband-ndr"] / bandwidth["infiniband-hdr"]) == pytest.approx(2)
    assert hdr * PX_PER_UNIT >= 5 and ndr * PX_PER_UNIT >= 10  # whole pixels enough to hold the 2x
    for a, b in itertools.combinations(bandwidth, 2):
        assert thick[a] / thick[b] == pytest.approx(bandwidth[a] / bandwidth[b])
    assert PIPE_FLOOR * 480 / 8 == pytest.approx(1.0)
