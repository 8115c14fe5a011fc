"""Plans compared (issue 59, finding 3 and item 3): traffic_compare's groups each named under
its pieces (drawn in the traffic ink, issue 58), its bars and figures inside the frame with
exposed and total time; step_breakdown's step cut into its terms, from the estimate, rendered at
preview."""

from __future__ import annotations

from pathlib import Path

import pytest
from manim.utils.color import ManimColor

from dtfilm.numbers import Numbers
from dtfilm.visuals.theme import DARK
from tests.conftest import run_dtfilm
from tests.test_cost_reference import run

TALK = {"model": "llama3.1-70b", "cards": 256, "tp": 8, "pp": 4, "zero": 1, "seq_len": 8192}

ROWS = """\
    rows:
      - label: "tp {plan.tp} × pp {plan.pp} × dp {plan.dp}"
      - label: "tp {plan.tp} × pp {plan.pp} × dp {plan.dp}"
        with: {plan.pp: 8, plan.dp: 4}
      - label: "tp {plan.tp} × pp {plan.pp} × dp {plan.dp}"
        with: {plan.pp: 2, plan.dp: 16}
"""

# A stranger's talk, as a user writes it: 70B on 256 H100s, tp 8 x pp 4 x dp 8, its traffic with
# the compute said against it on the last row (compute 14.5 s against 3.1 s on the link: the
# compute bar ran off the frame), and its plans' steps broken down. Short: no voice, short lines.
TALK_CHAPTER = (
    """\
id: talk
title: "{model.label} on {cluster.cards:int} cards"
model: {preset: llama3.1-70b}
cluster: {cards: 256}
plan: {tp: 8, pp: 4, dp: 8, zero: 1}
training: {seq_len: 8192, global_batch: 512}
shots:
  - kind: traffic_compare
    beat: traffic
    caption: "Traffic by group"
"""
    + ROWS
    + """\
    narration: >-
      [row1] Ours. [row2] Deeper. [row3] Shallower,
      [row3_compute] against {rows[2].compute.compute_seconds:time} of compute.
  - kind: step_breakdown
    beat: step
    caption: "Where each step goes"
"""
    + ROWS
    + """\
    narration: >-
      [row1] Ours, [row1_parts] in parts. [row2] Deeper. [row3] Shallower. [key] The key.
"""
)


def _hex(colour) -> str:
    return ManimColor(colour).to_hex().lower()


@pytest.mark.parametrize(
    "config",
    [TALK, {**TALK, "pp": 1, "tp": 8}, {**TALK, "overlap": "none"}, {"params": "7e9", "cards": 8, "cp": 2}],
)
def test_the_step_is_its_parts(config):
    # The bar's parts are the terms of compute.step_seconds (docs/contract.md "Time"): a part
    # the cost model adds that the shot leaves out would make the bar shorter than the step.
    from dtfilm.shots.step_breakdown.draw import step_bar, step_parts

    numbers = Numbers(run(**config))
    parts = step_parts(numbers)
    step = float(numbers.get("compute.step_seconds"))
    assert sum(p.seconds for p in parts) == pytest.approx(step, rel=1e-9)
    assert parts[0].kind == "compute" and all(p.seconds > 0 for p in parts)
    bar = step_bar(DARK, numbers, unit=0.3)
    assert [piece.seconds_drawn for piece in bar] == [p.seconds for p in parts]
    assert bar.width == pytest.approx(0.3 * step, abs=0.05)  # one scale: a second, 0.3 units


def test_traffic_says_each_group_and_its_figures_say_exposed_and_total():
    # pipeline and data parallel were grey slivers beside tensor parallel's all-reduce: each group
    # is said under its pieces; its pieces wear the traffic ink, no card's colour (issue 58: a
    # group borrowed card i's colour), and its seconds were the link's, said as exposed.
    from dtfilm.shots.compare.draw import (
        bytes_scale,
        group_line,
        groups_under,
        row_width,
        segmented_bar,
        traffic_value,
    )
    from dtfilm.visuals.regions import regions

    numbers = Numbers(run(**TALK))
    bar = segmented_bar(DARK, numbers, 4.0)
    assert {piece.group for piece in bar} == {"tp", "pp", "dp"}
    for piece in bar:
        assert _hex(piece.get_fill_color()) == _hex(DARK.traffic_ink)
    said = " ".join(t.phrase.text for t in group_line(DARK, numbers)).replace("\xa0", " ")
    assert said == numbers("TP {comm.tp:bytes} PP {comm.pp:bytes} DP {comm.dp:bytes}").text.replace("\xa0", " ")
    # under a bar of several groups' traffic, each group's bytes; under one group's, none (its total again)
    assert len(groups_under(DARK, numbers, bar)) == 3
    alone = Numbers(run(**{**TALK, "tp": 1, "pp": 1}))
    assert {p.group for p in segmented_bar(DARK, alone, 4.0)} == {"dp"}
    assert len(groups_under(DARK, alone, segmented_bar(DARK, alone, 4.0))) == 0
    value = traffic_value(DARK, numbers)
    words = [t.phrase.text for t in value]
    assert words == [
        numbers(t).text
        for t in ("{comm.total:bytes} · {comm.seconds:time}", "{comm.exposed_seconds:time} of it exposed")
    ]
    right = regions(DARK).stage.right
    unit = bytes_scale([("ours", numbers)], [value], right)
    assert -1.2 + row_width(numbers, unit) + 0.15 + value.width <= right + 1e-9


@pytest.mark.render
def test_traffic_wears_no_card_colour_and_one_groups_no_group_line():
    """fsdp's traffic is the data-parallel group's in every row: its pieces wore card 5's lavender
    (GPU 5's shard in the gather just before: one colour, two meanings) and "DP 36.8 GB" stood
    under "FSDP", read as data parallelism's bytes beside the "Data parallel" row's own (issue 58).
    Now each piece is drawn as the key draws its collective, and no group line or group key is
    drawn; pp's rows wear no card's colour either, and draw no group line: each row's traffic is
    one group's, so "PP 1.07 GB" under it only said the row's "1.07 GB" again (issue 58)."""
    import dataclasses
    from typing import Any

    from manim import Rectangle, Text

    from dtfilm.check.inspect import dry_run
    from dtfilm.storyboard import load_chapter
    from tests.conftest import ROOT

    def traffic(chapter_id: str) -> tuple[set[str], set[str]]:
        texts: set[str] = set()
        fills: set[str] = set()

        def observe(scene: Any, beat: str) -> None:
            if beat != "traffic":
                return
            for mob in scene.get_mobject_family_members():
                if isinstance(mob, Text):
                    texts.add(mob.original_text)
                elif isinstance(mob, Rectangle) and mob.get_fill_opacity() > 0.5:
                    fills.add(_hex(mob.get_fill_color()))

        chapter = load_chapter(chapter_id, None, ROOT)
        shots = tuple(s for s in chapter.shots if s.beat in ("title", "traffic"))
        dry_run(dataclasses.replace(chapter, shots=shots), None, [observe])
        return texts, fills

    cards = {_hex(c) for c in DARK.cards}
    texts, fills = traffic("fsdp")
    assert "FSDP" in texts and not [t for t in texts if t.startswith("DP ")]
    assert "data parallel" not in texts and {"all-gather", "reduce-scatter"} <= texts
    assert fills and not fills & cards
    texts, fills = traffic("pp")
    assert not [t for t in texts if t.startswith(("DP ", "PP "))]
    assert [t for t in texts if t.startswith("Pipeline, ")] and [t for t in texts if t.startswith("Data parallel, ")]
    assert fills and not fills & cards


def test_a_strangers_talk_checks_clean_and_renders_at_preview(tmp_path: Path):
    import av
    import numpy as np

    assert run_dtfilm("init", str(tmp_path / "talk")).returncode == 0
    project = tmp_path / "talk"
    (project / "storyboard" / "talk.yaml").write_text(TALK_CHAPTER)
    film = project / "storyboard" / "film.yaml"
    film.write_text(film.read_text().replace("chapters: [memory]", "chapters: [memory, talk]"))
    checked = run_dtfilm("check", "talk", cwd=project)
    assert checked.returncode == 0 and ": clean" in checked.stdout, checked.stdout + checked.stderr
    done = run_dtfilm("render", "talk", "--voice", "none", cwd=project)
    assert done.returncode == 0, done.stderr
    with av.open(str(project / "renders" / "talk.mp4")) as box:
        frames = [f for f in box.decode(video=0)]
        assert (frames[0].width, frames[0].height) == (854, 480)
        last = frames[-2].to_ndarray(format="rgb24").astype(int)  # the step's rows, all drawn
    # the groups' exposed parts and their seconds in the bad colour (time the step waits), over
    # the dark background (an exposed part is drawn at 0.8: blended, not the colour itself)
    background, bad = (np.array(ManimColor(c).to_int_rgb()) for c in (DARK.background, DARK.bad))
    exposed = background + 0.8 * (bad - background)
    assert (np.abs(last - exposed).sum(axis=2) < 40).sum() > 50


def test_step_breakdown_takes_four_rows_at_most(tmp_path: Path):
    assert run_dtfilm("init", str(tmp_path / "talk")).returncode == 0
    project = tmp_path / "talk"
    five = TALK_CHAPTER.split("  - kind: step_breakdown")[1]
    extra = '      - label: "tp {plan.tp} × pp {plan.pp} × dp {plan.dp}"\n        with: {plan.pp: 1, plan.dp: 32}\n'
    chapter = "id: five\ntitle: Five\nmodel: {preset: llama3.1-70b}\ncluster: {cards: 256}\n"
    chapter += "plan: {tp: 8, pp: 4, dp: 8}\nshots:\n"
    chapter += "  - kind: step_breakdown" + five.replace("    narration:", extra + extra + "    narration:", 1)
    (project / "storyboard" / "five.yaml").write_text(chapter)
    done = run_dtfilm("check", "storyboard/five.yaml", cwd=project)
    assert done.returncode == 2
    assert done.stderr.strip().endswith("shots[0].rows: expected a list of 1 to 4 rows"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_every_kind_has_its_draw_cost():
    # a kind's draw cost is a field of its spec, which the registry refuses without one (tests/test_kind_registry.py)
    from dtfilm.shots.registry import KINDS

    assert [kind for kind, spec in KINDS.items() if not spec.draw_seconds_per_second > 0] == []


@pytest.mark.parametrize("width", [0.05, 0.6, 2.5, 5.0])
@pytest.mark.parametrize("config", [TALK, {"params": "7e9", "cards": 16, "zero": 3, "overlap": "none"}])
def test_a_rows_compute_stays_in_the_frame_whatever_its_ratio_to_the_traffic(config, width):
    # [rowN_compute]: compute 4.6 times the link's seconds (the talk) or less than them (FSDP over two
    # nodes, nothing overlapped); however long the row's bar, its compute and its name end inside.
    from dtfilm.shots.compare.draw import BAR_LEFT_X, group_line, segmented_bar
    from dtfilm.shots.compare.times import compute_bar
    from dtfilm.visuals.regions import regions

    numbers = Numbers(run(**config))
    right = regions(DARK).stage.right
    bar = segmented_bar(DARK, numbers, width).move_to([BAR_LEFT_X, 0, 0], aligned_edge=[-1, 0, 0])
    under = group_line(DARK, numbers).next_to(bar, [0, -1, 0], buff=0.08)
    compute = compute_bar(DARK, numbers, bar, right, under)
    assert compute.get_right()[0] <= right + 1e-6 and compute.get_left()[0] >= BAR_LEFT_X - 1e-6
    assert compute[0].get_top()[1] < under.get_bottom()[1]  # under the groups' bytes, not over them
