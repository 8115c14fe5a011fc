"""Pictures are facts (issue 44): every bar, gauge, label and counter drawn is the cost model's
value for the card or setting it stands for, and stays legible to the envelope's limits."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from manim import VGroup

from dtfilm.cost.estimate import MEMORY_PARTS
from dtfilm.numbers import Numbers
from dtfilm.visuals.theme import DARK
from tests.conftest import inspection
from tests.test_cost_reference import run


def _drawn_bytes(gauge, capacity: float, inner: float) -> dict[str, float]:
    """What a gauge drawn to scale says each part is, in bytes."""
    return {s.part: s.height * capacity / inner for s in gauge.segments}


def test_each_card_is_drawn_with_its_own_stages_ledger():
    # 7B on 16 cards, tp 2 x pp 4 x dp 2, 1F1B with 8 micro-batches: the first stage holds four
    # micro-batches of activations, the last stage one. GPU 0 is stage 0; GPU 7 stage 3.
    from dtfilm.shots.common.draw import build_rack, rack_gauges
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


def test_a_link_bar_is_as_long_as_its_bytes():
    # 3d:links at the chapter's plan (tp 2 x pp 4 x dp 2): TP sends 26.6 GB a step, PP 0.44 GB.
    # Each group's bar is as long as its bytes, on one scale (TP, the most, fills the track).
    from dtfilm.shots.three_d.draw import group_entries

    numbers = Numbers(run(params="7e9", cards=16, tp=2, pp=4))
    groups = ["tp", "pp", "dp"]
    entries = group_entries(DARK, numbers, groups)
    sent = {g: float(numbers.get(f"comm.{g}")) for g in groups}
    assert sent["tp"] > 10 * sent["pp"]
    most = max(sent.values())
    for group, entry in zip(groups, entries, strict=True):
        assert entry.pipe.width == pytest.approx(entry.track.width * sent[group] / most, rel=1e-3), group


def test_a_timeline_row_names_the_gpu_the_layout_gave_its_stage():
    # Llama 2 70B on 32 cards, tp 8 x pp 4: the layout puts stage s (replica 0, slice 0) on GPU 8s, so
    # the rows read GPU 0, 8, 16, 24 (not 0 to 3). The cp ring's cards likewise (tp 2: GPU 0, 2, ...).
    from dtfilm.shots.context.draw import _cp_names
    from dtfilm.shots.pipeline.draw import timeline_of
    from dtfilm.shots.three_d.draw import coordinates_phrase

    numbers = Numbers(run(model="llama2-70b", cards=32, tp=8, pp=4))
    line = timeline_of(DARK, numbers, width=8.0, height=3.0)
    assert [n.phrase.text for n in line.names] == ["GPU 0", "GPU 8", "GPU 16", "GPU 24"]
    from dtfilm.shots.common.draw import group_card

    for stage in range(4):  # the grid's coordinates of that card, (dp, tp, pp): replica 0, slice 0, stage s
        assert coordinates_phrase(numbers, group_card(numbers, "pp", stage)).text == f"(0, 0, {stage})"
    cp = Numbers(run(model="llama2-70b", cards=32, tp=2, cp=4))
    assert [n.text for n in _cp_names(cp)] == ["GPU 0", "GPU 2", "GPU 4", "GPU 6"]


def test_a_capacity_line_is_its_own_cards():
    # memory_columns comparing an 80 GB H100 with a 141 GB H200: each column sits under its own
    # card's line (today one 80 GB line runs over both).
    from dtfilm.phrases import plain
    from dtfilm.shots.context.columns import column_of
    from dtfilm.visuals.columns import MemoryColumns

    cards = [Numbers(run(params="7e9", cards=8, gpu=gpu)) for gpu in ("h100-sxm-80gb", "h200-141gb")]
    columns = [column_of(DARK.memory, n, plain(n.get("cluster.gpu_label")), None) for n in cards]
    chart = MemoryColumns(DARK, columns, 80e9, plain("80 GB card"), width=6.0, height=3.0)
    lines = {column: line for line in chart.line for column in line.columns}
    tallest = max(141e9, *[sum(b for _, b in c.parts) for c in columns])
    for i, numbers in enumerate(cards):
        capacity = float(numbers.get("memory.capacity"))
        assert lines[i].get_center()[1] == pytest.approx(capacity * 3.0 / tallest, rel=1e-6)
        bar = chart.bars[i]
        assert lines[i].get_left()[0] <= bar.get_left()[0] and lines[i].get_right()[0] >= bar.get_right()[0]
    assert sorted(t.phrase.text.replace("\xa0", " ") for t in chart.line_label) == ["141 GB card", "80 GB card"]


@pytest.mark.parametrize("micro_batches", [(2, 16), (16, 2)])
def test_a_counter_shows_only_values_some_setting_has(micro_batches):
    # pp's slider moves m between two settings; every frame of the stats shows one of the two
    # settings' values, never a number between them (today: 71.9% on the way from 60% to 15.8%).
    import numpy as np

    from dtfilm.visuals.stats import CountTo, Stat

    a, b = (Numbers(run(params="7e9", cards=4, pp=4, micro_batches=m)) for m in micro_batches)
    stat = Stat(DARK, "Bubble", a("{pipeline.bubble_fraction:%}"))
    target = b("{pipeline.bubble_fraction:%}")
    truths = {a("{pipeline.bubble_fraction:%}").text, target.text}
    count = CountTo(stat, target)
    count.begin()
    seen = set()
    for alpha in np.linspace(0, 1, 31):
        count.interpolate_mobject(float(alpha))
        seen.add(stat.value.text)
    assert seen <= truths, seen - truths
    assert stat.value.text == target.text and stat.value.phrase == target


class _Planted:
    """A scene of planted pieces for the layout check (it reads `mobjects`, and the design
    check the background behind them)."""

    def __init__(self, *mobjects) -> None:
        self.mobjects = list(mobjects)
        self.camera = SimpleNamespace(background_color=DARK.background)


def test_the_layout_check_catches_labels_that_run_together():
    # "GPU 16376GPU 16377": two labels on one row with less than a word space between them read
    # as one; the check passed them today (their boxes do not touch).
    from manim import RIGHT

    from dtfilm.onscreen.layout import LayoutCheck
    from dtfilm.visuals.text import label

    a = label(DARK, "GPU 16376", DARK.small_size)
    close = label(DARK, "GPU 16377", DARK.small_size).next_to(a, RIGHT, buff=0.05)
    check = LayoutCheck()
    check(_Planted(a, close), "planted")
    assert any("runs into" in p for p in check.problems), check.problems
    apart = label(DARK, "GPU 16377", DARK.small_size).next_to(a, RIGHT, buff=0.3)
    fine = LayoutCheck()
    fine(_Planted(a, apart), "planted")
    assert fine.problems == []


@pytest.mark.parametrize(
    ("model", "cards", "tp", "pp"),
    [
        ("llama-33b", 32, 2, 16),  # `dtfilm check 3d --pp 16 --cards 32 --tp 2`: stage names overlapped
        ("llama3.1-405b", 16384, 8, 16),  # five-digit GPU names ran together
        ("llama3.1-405b", 129024, 1, 126),  # the envelope: a stage a layer, six-digit GPU names
    ],
)
def test_the_3d_layout_is_legible_to_the_envelope(model, cards, tp, pp):
    from dtfilm.onscreen.layout import LayoutCheck
    from dtfilm.shots.three_d.draw import _place_grid, plan_grid, sliced_loaf
    from dtfilm.visuals.regions import regions

    numbers = Numbers(run(model=model, cards=cards, tp=tp, pp=pp))
    loaf, names = sliced_loaf(DARK, numbers, regions(DARK).side.left + 0.8)
    assert names[0].phrase.text == "stage 0" and names[-1].phrase.text == f"stage {pp - 1}"
    grid = _place_grid(plan_grid(DARK, numbers))
    pick = _place_grid(plan_grid(DARK, numbers, card_width=0.98, card_height=1.3, arc_room=0.0))
    for pieces in ((loaf, names, grid), (pick,)):
        check = LayoutCheck()
        check(_Planted(*pieces), "planted")
        assert check.problems == []


def test_a_colour_means_one_thing_and_the_key_says_which():
    # The timeline colours a block by its pass (forward, backward: the theme's passes, no card's
    # colour: a card's colour says whose a thing is, not which micro-batch) and writes the
    # micro-batch's number on it; its key says both. fsdp's shards wear their owner's colour,
    # and the shot's key says so.
    from types import SimpleNamespace

    from manim.utils.color import ManimColor

    from dtfilm.shots.fsdp.draw import owner_key
    from dtfilm.shots.pipeline.draw import _timeline_key, timeline_of

    def hex_of(colour) -> str:
        return ManimColor(colour).to_hex().lower()

    numbers = Numbers(run(params="7e9", cards=4, pp=4, micro_batches=4))
    line = timeline_of(DARK, numbers, width=8.0, height=3.0)
    card_colours = {hex_of(c) for c in DARK.cards}
    for block in line.busy:
        assert hex_of(block.get_fill_color()) == hex_of(DARK.pass_color(block.kind == "B"))
    assert {hex_of(b.get_fill_color()) for b in line.busy}.isdisjoint(card_colours)
    assert {m.phrase.text for m in line.marks} == {f"{k}{i}" for k in "FB" for i in range(1, 5)}  # the numbers
    key = _timeline_key(SimpleNamespace(theme=DARK))
    words = [item[1].phrase.text for item in key]
    assert words[:2] == ["forward", "backward"] and any("micro-batch" in w for w in words)
    for item, backward in zip(key[:2], (False, True), strict=True):
        assert hex_of(item[0].get_fill_color()) == hex_of(DARK.pass_color(backward))
    owners = owner_key(DARK, [DARK.card_color(i) for i in range(8)])
    assert [hex_of(s.get_fill_color()) for s in owners.swatches] == [hex_of(DARK.card_color(i)) for i in range(8)]
    assert "owns" in " ".join(t.phrase.text for t in owners[1])


@pytest.mark.parametrize(
    ("pp", "micro_batches", "schedule"), [(4, 4, "1f1b"), (8, 16, "1f1b"), (2, 1, "1f1b"), (4, 8, "gpipe")]
)
def test_the_bubble_is_counted_on_a_row_packed_into_slots(pp, micro_batches, schedule):
    # The bubble's (p-1)/(m+p-1), counted on the timeline (issue 45): the voice says "a row is m+p-1
    # slots, p-1 of them empty". A grid over the schedule cut through its blocks (a backward is 2
    # units: issue 58), so the first card's row is packed into slots of one micro-batch's forward
    # and backward: as many slots drawn, and as many empty ones, as the cost model counts.
    from dtfilm.shots.pipeline.draw import timeline_of, timeline_words

    numbers = Numbers(run(params="7e9", cards=pp, pp=pp, micro_batches=micro_batches, schedule=schedule))
    idle, row = int(numbers.get("pipeline.idle_slots")), int(numbers.get("pipeline.row_slots"))
    assert (idle, row) == (pp - 1, micro_batches + pp - 1)
    assert idle / row == pytest.approx(float(numbers.get("pipeline.bubble_fraction")))
    line = timeline_of(DARK, numbers, width=8.0, height=3.0)
    packed = line.packed_row(
        DARK, timeline_words(numbers), lambda i: numbers.index("{}", i, "pipeline.row_slots", one_based=True)
    )
    assert (len(packed.outlines), len(packed.empty)) == (row, idle)
    assert packed.numbers[-1].phrase.text == str(row)
    # a slot's edges are its blocks' edges: micro-batch i's forward and backward fill slot i
    for i, slot in enumerate(packed.outlines):
        inside = [b for b in packed.work if slot.get_left()[0] < b.get_center()[0] < slot.get_right()[0]]
        holes = [b for b in packed.empty if slot.get_left()[0] < b.get_center()[0] < slot.get_right()[0]]
        if i < row - idle:
            assert [(b.kind, b.micro_batch) for b in inside] == [("F", i + 1), ("B", i + 1)] and holes == []
            assert inside[0].get_left()[0] - slot.get_left()[0] == pytest.approx(0.01, abs=1e-6)
            assert slot.get_right()[0] - inside[1].get_right()[0] == pytest.approx(0.01, abs=1e-6)
        else:
            assert inside == [] and len(holes) == 1
    # the empty slots hold the row's idle time in the schedule, no more and no less
    empty_width = sum(slot.width for slot in packed.outlines[row - idle :])
    assert empty_width == pytest.approx(sum(b.width for b in line.row_idle(0)), rel=1e-6)
    assert packed.outlines.get_left()[0] == pytest.approx(VGroup(*line.busy, *line.idle).get_left()[0])


@pytest.mark.xdist_group("pp-default")  # the chapter's shared dry run (tests.conftest.inspection)
def test_pp_says_what_each_card_holds_and_the_slider_stops_at_each_value_said():
    """pp's narration said "as drawn, the first card holds 102 GB" over cards with no gauge, and
    its slider swept five values in 6 s while the voice named two; now each card's gauge shows as
    it is said, and the knob reaches each value at the mark before it is named."""
    from dtfilm.storyboard.load import load_chapter

    chapter = load_chapter("pp")
    said = {text.replace("\xa0", " ") for text, _ in inspection("pp", "default").texts.shown}  # dark
    # 102 GB before the reserve was counted (issue 57); "GPU 0 holds 103 GB of 80 GB" before a
    # fresh review of issue 58 (a card cannot hold more than it has), which also heard the voice
    # name the first card alone while the second's gauge spilled too (82.7 GB)
    assert "GPU 0 needs 103 GB, holds 80 GB" in said
    assert "GPipe" in said and "GPIPE" not in said  # the schedule as its paper writes it (a fresh review)
    narration = next(shot for shot in chapter.shots if shot.beat == "stages").narration
    assert narration is not None
    spoken = narration.text.replace("\xa0", " ")
    assert "The first card needs 103 GB, the second 82.7 GB: neither fits." in spoken
    assert "Bubble: 3 idle slots of 7 on every row, 42.9% of the timeline, (p−1)/(m+p−1)" in said
    slider = next(shot for shot in chapter.shots if shot.kind == "pipeline_slider")
    assert [mark for mark, _ in slider.marks if mark.startswith("value")] == [f"value{i}" for i in range(1, 6)]


# -- fsdp at 405B on 16,384 cards, pp 16: the owner key of shard_steps and the gather shot's layout --

FSDP_HUGE = {"model": "llama3.1-405b", "cards": 16384, "pp": 16}


class _OwnerEdges:
    """Records, after each animation of the sharding shot, the colours of the gauges' owner edges
    on screen and of the owner key's swatches (none when no key is shown)."""

    def __init__(self) -> None:
        self.seen: list[tuple[set[str], set[str] | None, str]] = []

    def __call__(self, scene, beat: str) -> None:
        from manim.utils.color import ManimColor

        from dtfilm.onscreen.layout import visible

        if beat != "sharding":
            return
        edges, key, words = set(), None, ""
        for mob in (m for top in scene.mobjects for m in top.get_family()):
            if hasattr(mob, "part") and mob.get_stroke_width() > 0 and mob.get_stroke_opacity() > 0.05:
                edges.add(ManimColor(mob.get_stroke_color()).to_hex().lower())
            if hasattr(mob, "swatches") and visible(mob):
                key = {ManimColor(s.get_stroke_color()).to_hex().lower() for s in mob.swatches}
                words = " ".join(t.original_text for t in mob.get_family() if hasattr(t, "original_text"))
        self.seen.append((edges, key, words))


def _fsdp_dry_run(overrides: dict, beats: tuple[str, ...], observers: list) -> None:
    """A dry run of fsdp's shots `beats` alone."""
    import dataclasses

    from dtfilm.check.inspect import dry_run
    from dtfilm.storyboard import load_chapter
    from tests.conftest import ROOT

    chapter = load_chapter("fsdp", overrides, ROOT)
    dry_run(dataclasses.replace(chapter, shots=tuple(s for s in chapter.shots if s.beat in beats)), None, observers)


def test_shard_steps_keys_its_owner_colours():
    # fsdp:sharding edges each sharded part in the colour of the card that owns the shard; its
    # legend said only the parts' colours. Whenever such edges are on screen, a key says what
    # they mean and shows every edge colour (today: no key at all).
    owners = _OwnerEdges()
    _fsdp_dry_run({}, ("title", "copies", "sharding"), [owners])
    edged = [(edges, key, words) for edges, key, words in owners.seen if edges]
    assert len(edged) >= 3  # ZeRO-1, 2, 3
    for edges, key, words in edged:
        assert key is not None, "owner edges on screen without a key"
        assert edges <= key, edges - key
        assert "edge" in words and "the card that owns it" in words


def test_the_layout_check_sees_a_box_run_through_a_block_and_the_gather_shot_is_clear():
    # fsdp:gather at 405B on 16,384 cards: GPU names of five digits made the rack 12.5 wide (it
    # was asked for 10.2), and its first node box ran under the loaf and its "126 layers" label.
    # The check saw text only; it reports that layout now, and the shot draws the rack clear of it.
    from manim import DOWN

    from dtfilm.onscreen.layout import LayoutCheck
    from dtfilm.shots.common.draw import CARD_TOP_Y, rack_of
    from dtfilm.visuals.loaf import Loaf
    from dtfilm.visuals.regions import regions
    from dtfilm.visuals.text import label

    numbers = Numbers(run(**FSDP_HUGE))
    stage = regions(DARK).stage
    loaf = Loaf(DARK, int(numbers.get("model.layers")), width=1.3, slice_height=0.1, gap=0.03)
    loaf.move_to([stage.left + 0.75, 0.05, 0])
    loaf_label = label(DARK, numbers("{model.layers} layers"), DARK.small_size, DARK.muted).next_to(
        loaf, DOWN, buff=0.15
    )
    rack = rack_of(DARK, numbers, card_height=1.1, max_width=10.2)  # the old placement, at the stage's right
    top = max(card.body.get_top()[1] for card in rack.cards.values())
    rack.shift([stage.right - rack.get_right()[0], CARD_TOP_Y - 0.55 - top, 0])
    # (cards drawn wider since leave the old rack's left edge clear: it is planted where it reached)
    rack.shift([stage.right - 12.5 - rack.get_left()[0], 0, 0])
    old = LayoutCheck()
    old(_Planted(loaf, loaf_label, rack), "gather")
    assert any("runs through a Slice of Loaf" in p for p in old.problems), old.problems
    assert any("runs through text '126 layers'" in p for p in old.problems), old.problems
    layout = LayoutCheck()
    _fsdp_dry_run(FSDP_HUGE, ("title", "gather"), [layout])
    assert layout.checks > 20
    assert layout.problems == []


def test_the_outline_check_lets_pieces_wholly_inside_or_outside_a_box():
    from manim import DOWN, Rectangle

    from dtfilm.onscreen.layout import LayoutCheck
    from dtfilm.visuals.text import label

    box = Rectangle(width=3, height=2, stroke_color=DARK.faint, fill_opacity=0)
    inside = Rectangle(width=1, height=0.5, fill_color=DARK.accent, fill_opacity=1, stroke_width=0)
    words = label(DARK, "inside", DARK.small_size).move_to([0, -0.6, 0])
    below = label(DARK, "below", DARK.small_size).next_to(box, DOWN)
    wash = Rectangle(width=4, height=0.4, fill_color=DARK.accent, fill_opacity=0.2, stroke_width=0)  # a highlight
    check = LayoutCheck()
    check(_Planted(box, inside, words, below, wash), "planted")
    assert check.problems == []
    across = Rectangle(width=1, height=0.5, fill_color=DARK.accent, fill_opacity=1, stroke_width=0).move_to([1.5, 0, 0])
    cut = LayoutCheck()
    cut(_Planted(box, across, label(DARK, "on the edge", DARK.small_size).move_to([0, 1, 0])), "planted")
    assert len(cut.problems) == 2, cut.problems


# -- drawn values are facts: `dtfilm check` fails on a counter that counts through values --


def test_drawn_values_catch_a_manim_number_between_settings():
    # A plain Manim number standing at 71.9 beside a stat made from the cost model (60%): the
    # number is no fact of the shot's; the stat's own value passes.
    from manim import DecimalNumber, Text

    from dtfilm.onscreen.drawn import DrawnValues
    from dtfilm.visuals.text import label

    numbers = Numbers(run(params="7e9", cards=4, pp=4, micro_batches=2))
    stat = label(DARK, numbers("{pipeline.bubble_fraction:%}"), DARK.label_size)
    assert stat.phrase.text == "60%"
    drawn = DrawnValues()
    drawn(_Planted(stat, DecimalNumber(60.0, num_decimal_places=1, mob_class=Text).shift(2)), "slider")
    assert drawn.problems() == []
    drawn(_Planted(stat, DecimalNumber(71.9, num_decimal_places=1, mob_class=Text).shift(2)), "slider")
    assert drawn.problems() == ["slider: drawn value(s) '71.9' not a fact of the shot's settings"
                                " (shown in '71.9'; a counter between two settings shows only theirs)"]  # fmt: skip


def test_check_fails_on_a_counter_that_counts_through_values(monkeypatch):
    # pp's slider with its stats counting as they did before issue 44 (through the numbers
    # between two settings' values): `dtfilm check` fails, one line naming the shot and values.
    # Its cross-fading counters pass.
    import dataclasses
    import re

    from manim import Animation

    from dtfilm.check.chapters import check_loaded
    from dtfilm.storyboard import load_chapter
    from dtfilm.visuals.text import relabel
    from tests.conftest import ROOT

    class CountingThrough(Animation):
        def __init__(self, stat, target, run_time: float = 1.2) -> None:
            self.stat, self.target, self.start = stat, target, stat.value.phrase
            super().__init__(stat.value, run_time=run_time)

        def interpolate_mobject(self, alpha: float) -> None:
            number = re.compile(r"\d+(?:\.\d+)?")
            a, b = (number.search(p.text) for p in (self.start, self.target))
            text = self.target
            if alpha < 1 and a and b:
                value = float(a.group()) + (float(b.group()) - float(a.group())) * alpha
                text = self.target.text[: b.start()] + f"{value:.1f}" + self.target.text[b.end() :]
            relabel(self.mobject, self.stat._value_label(text).move_to(self.mobject, aligned_edge=RIGHT))

    from manim import RIGHT

    chapter = load_chapter("pp", None, ROOT)
    slider = dataclasses.replace(chapter, shots=tuple(s for s in chapter.shots if s.beat in ("title", "slider")))
    assert [p for p in check_loaded(slider).problems if "drawn value" in p] == []
    monkeypatch.setattr("dtfilm.scene.CountTo", CountingThrough)
    lines = [f"{chapter.id}: {p}" for p in check_loaded(slider).problems if "drawn value" in p]
    assert len(lines) == 1, lines
    assert lines[0].startswith("pp: slider: drawn value(s) '") and "not a fact of the shot's settings" in lines[0]


@pytest.mark.xdist_group("fsdp-default")  # the chapter's shared dry run (tests.conftest.inspection)
def test_fsdp_draws_the_compute_its_two_node_traffic_is_weighed_against():
    """fsdp's traffic shot said "788 ms a step against 332 ms of compute" over 10 s of a still
    picture that showed no compute (issue 45); at [row4_compute] the row's time is drawn. Issue
    58 (finding 7): that compute bar was drawn on the bytes axis, "to this row's time scale"; now
    the link's time and the compute are two bars on an axis of seconds of their own, named as
    time, and their lengths owe nothing to the bytes bar's."""
    from dtfilm.shots.compare.draw import compute_bar, segmented_bar
    from dtfilm.storyboard.load import load_chapter

    chapter = load_chapter("fsdp")
    traffic = next(shot for shot in chapter.shots if shot.kind == "traffic_compare")
    numbers = traffic.options["rows"][3][1]
    said = {text.replace("\xa0", " ") for text, _ in inspection("fsdp", "default").texts.shown}  # dark
    for words in ("compute {compute.compute_seconds:time}", "on the link {comm.seconds:time}"):
        assert numbers(words).text.replace("\xa0", " ") in said
    assert "time a step:" in said and not any("time scale" in text or "cut short" in text for text in said)
    ratio = float(numbers.get("compute.compute_seconds")) / float(numbers.get("comm.seconds"))
    drawn = []
    for width in (0.5, 2.0):  # the same traffic drawn shorter or longer in bytes
        bar = segmented_bar(DARK, numbers, width)
        time = compute_bar(DARK, numbers, bar, right_x=bar.get_left()[0] + 12)
        link, compute = time[0]
        assert compute.width / link.width == pytest.approx(ratio, rel=1e-6)  # one unit: seconds
        assert time.get_top()[1] < bar.get_bottom()[1]  # under the traffic, not over it
        drawn.append((link.width, compute.width))
    assert drawn[0] == pytest.approx(drawn[1])  # not to the bytes bar's scale


@pytest.mark.parametrize(("pp", "micro_batches", "v"), [(4, 16, 2), (4, 4, 2), (8, 3, 4)])
def test_interleavings_picture_has_the_cost_models_interleaved_bubble(pp, micro_batches, v):
    # issue 58: "Interleaving, several thinner stages a card, shrinks the bubble again" had no
    # picture. The timeline is drawn again with v virtual stages a card, on the same scale of time:
    # the work as long, in v times as many chunks, and the bubble the cost model's at v.
    from dtfilm.shots.pipeline.draw import interleaved_line, timeline_of

    numbers = Numbers(run(params="7e9", cards=pp, pp=pp, micro_batches=micro_batches))
    at_v = Numbers(run(params="7e9", cards=pp, pp=pp, micro_batches=micro_batches, virtual_stages=v))
    line = timeline_of(DARK, numbers, width=8.2, height=3.3)
    chunks = interleaved_line(DARK, numbers, line, v)
    assert chunks.idle_fraction() == pytest.approx(float(at_v.get("pipeline.bubble_fraction")), abs=1e-6)
    assert chunks.span_slots == 3 * int(at_v.get("pipeline.row_slots"))  # v·m+p−1 chunk slots
    assert len(chunks.busy) == v * len(line.busy) and len(chunks.marks) == 0  # no chunk is a micro-batch
    work = sum(b.width + 0.02 for b in line.busy)
    assert sum(b.width + 0.02 for b in chunks.busy) == pytest.approx(work, rel=1e-6)  # the same work, the same scale
    assert sum(b.width for b in chunks.idle) < sum(b.width for b in line.idle)
    assert VGroup(*chunks.busy, *chunks.idle).get_corner([-1, 1, 0]) == pytest.approx(
        VGroup(*line.busy, *line.idle).get_corner([-1, 1, 0])
    )
