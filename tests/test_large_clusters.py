"""The 3D layout at any size (issue 59, findings 1 and 2): one whole pipeline replica and one
data-parallel group drawn with their links across nodes and the nodes between said; and the
loaf cut across at [across], down at [down]."""

from __future__ import annotations

import dataclasses
from itertools import pairwise

import pytest

from dtfilm.numbers import Numbers
from dtfilm.visuals.grid import NodeGap, drawn_nodes
from dtfilm.visuals.theme import DARK
from tests.test_cost_reference import run

TALK = {"model": "llama3.1-70b", "cards": 256, "tp": 8, "pp": 4}  # a user's talk: dp 8, 32 nodes


def _degrees(tp: int, pp: int, dp: int, cp: int = 1) -> dict[str, int]:
    return {"tp": tp, "pp": pp, "dp": dp, "cp": cp}


def test_a_big_cluster_draws_a_whole_replica_and_a_data_parallel_group():
    # 32 nodes, tp 8 x pp 4 x dp 8: the grid drew node 0 and node 31 only, so no pipeline hop and
    # no data-parallel pair crossed a drawn link. Now: replica 0's first and last node (stages 1
    # and 2 between, said), then the node holding the last replica's same cards.
    # The second gap names every replica with a node in it: 1 to 6 whole, and 7's nodes 28 to 30
    # (its last, node 31, is drawn); it said "replicas 1 to 6" of 27 nodes that hold seven.
    layout = drawn_nodes(256, 8, _degrees(8, 4, 8), most_rows=4)
    assert layout == (0, NodeGap(1, 2, stages=(1, 2)), 3, NodeGap(4, 30, replicas=(1, 7)), 31)
    assert drawn_nodes(256, 8, _degrees(8, 8, 4), most_rows=4)[-2:] == (NodeGap(8, 30, replicas=(1, 3)), 31)
    # A replica inside a node: the next replica's node, the rest between, the last.
    assert drawn_nodes(64, 8, _degrees(2, 4, 8), most_rows=3) == (0, NodeGap(1, 6, replicas=(1, 6)), 7)
    assert drawn_nodes(32, 8, _degrees(8, 4, 1), most_rows=4) == (0, 1, 2, 3)  # four nodes: all drawn
    assert drawn_nodes(8, 8, _degrees(2, 2, 2), most_rows=3) == (0,)
    # Two replicas of two nodes each (3d at 4 cards a node): the one gap holds no whole replica
    # to name (it read past its list of the partners' nodes: an IndexError)
    assert drawn_nodes(16, 4, _degrees(2, 4, 2), most_rows=3) == (0, 1, NodeGap(2, 2), 3)


@pytest.mark.parametrize(
    ("config", "rows"),
    [
        (TALK, ("Node 0", "Node 3", "Node 31")),
        ({"model": "llama3.1-405b", "cards": 16384, "tp": 8, "pp": 16}, ("Node 0", "Node 15", "Node 2047")),
        ({"model": "llama3.1-405b", "cards": 131072, "tp": 8, "pp": 16}, ("Node 0", "Node 15", "Node 16383")),
    ],
)
def test_pipeline_and_data_parallel_links_cross_the_drawn_nodes(config, rows):
    from dtfilm.onscreen.layout import LayoutCheck
    from dtfilm.shots.three_d.draw import _connections, _place_grid, plan_grid, sliced_loaf
    from dtfilm.visuals.regions import regions
    from tests.test_pictures import _Planted

    numbers = Numbers(run(**config))
    grid = _place_grid(plan_grid(DARK, numbers))
    assert tuple(row.caption[0].phrase.text for row in grid.node_rows) == rows
    nodes = [row.node for row in grid.node_rows]
    tp, pp = config["tp"], config["pp"]
    for a, b in _connections(grid, numbers, "pp"):  # stage 0 on the first node to the last stage
        assert (grid.node_of[a], grid.node_of[b]) == (nodes[0], nodes[1])
        assert (a // tp % pp, b // tp % pp) == (0, pp - 1)
    dp_pairs = _connections(grid, numbers, "dp")
    assert dp_pairs and all((grid.node_of[a], grid.node_of[b]) == (nodes[1], nodes[2]) for a, b in dp_pairs)
    gaps = [gap.phrase.text for gap in grid.gap_after.values()]
    assert gaps[0] == f"⋯ nodes 1 to {nodes[1] - 1}: stages 1 to {pp - 2} ⋯"
    assert gaps[1] == f"⋯ nodes {nodes[1] + 1} to {nodes[2] - 1}: replicas 1 to {numbers.get('plan.dp') - 1} ⋯"
    loaf, names = sliced_loaf(DARK, numbers, regions(DARK).side.left + 0.8)
    check = LayoutCheck()
    check(_Planted(loaf, names, grid), "planted")
    assert check.problems == []
    for text in [m for m in grid.get_family() if hasattr(m, "phrase")]:  # never shrunk below the small size
        assert text.height >= 0.95 * _small_height(text.phrase.text), text.phrase.text


def _small_height(text: str) -> float:
    from dtfilm.visuals.text import label

    return label(DARK, text, DARK.small_size).height


class _Cuts:
    """After each animation of the layout shot, the knife's lines on screen in the accent
    colour, as (direction, is horizontal, position); with the marks the shot waited for."""

    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def __call__(self, scene, beat: str) -> None:
        from manim.utils.color import ManimColor

        if beat != "layout":
            return
        lit = set()
        for mob in (m for top in scene.mobjects for m in top.get_family()):
            if hasattr(mob, "cut") and mob.get_stroke_opacity() > 0.5:
                if ManimColor(mob.get_stroke_color()).to_hex().lower() == ManimColor(DARK.accent).to_hex().lower():
                    horizontal = mob.width > mob.height
                    lit.add((horizontal, round(float(mob.get_center()[1 if horizontal else 0]), 3)))
        self.events.append(("seen", frozenset(lit)))


def test_the_loaf_is_cut_across_at_across_and_down_at_down(monkeypatch):
    # 3d:layout's [across] and [down] both lit the whole loaf at once, which read as rows either
    # way; the words say "cut across into stages" then "down the middle into tensor slices".
    from dtfilm.check.inspect import dry_run
    from dtfilm.scene import ShotContext
    from dtfilm.shots.three_d.draw import sliced_loaf
    from dtfilm.storyboard import load_chapter
    from dtfilm.visuals.regions import regions
    from tests.conftest import ROOT

    cuts = _Cuts()
    until = ShotContext.until

    def marked(self, name, share=None):
        until(self, name, share)
        if self.shot.beat == "layout":
            cuts.events.append(("mark", name))

    monkeypatch.setattr(ShotContext, "until", marked)
    overrides = {"model": "llama3.1-70b", "cards": 256, "tp": 8, "pp": 4}
    chapter = load_chapter("3d", overrides, ROOT)
    dry_run(dataclasses.replace(chapter, shots=tuple(s for s in chapter.shots if s.beat == "layout")), None, [cuts])
    marks = [i for i, (kind, _) in enumerate(cuts.events) if kind == "mark"]
    at = {cuts.events[i][1]: i for i in marks}
    between = [seen for kind, seen in cuts.events[at["across"] : at["down"]] if kind == "seen"]
    after = [seen for kind, seen in cuts.events[at["down"] : at["pieces"]] if kind == "seen"]
    numbers = Numbers(run(**TALK))
    loaf, _ = sliced_loaf(DARK, numbers, regions(DARK).side.left + 0.8)
    across = max(between, key=len)
    assert len(across) == 3 and all(horizontal for horizontal, _ in across)  # pp - 1 cuts between stages
    for _, y in across:  # each in a gap between two bands
        assert any(b.get_bottom()[1] > y > nxt.get_top()[1] for b, nxt in pairwise(loaf.bands))
    down = max(after, key=len)
    assert len(down) == 7 and not any(horizontal for horizontal, _ in down)  # tp - 1 cuts between slices
