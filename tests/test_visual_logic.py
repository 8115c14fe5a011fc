"""The logic behind the drawings: the ring algorithm, the rack's elision, the shot registry."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dtfilm.shots.plays import SHOTS
from dtfilm.shots.registry import KINDS
from dtfilm.visuals.cells import Calendar, CardWaffle, cell_pours
from dtfilm.visuals.rack import cards_shown
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
    small = cards_shown(8, 8)
    assert [v.ranks for v in small.nodes] == [tuple(range(8))] and small.hidden_nodes == 0
    two = cards_shown(16, 8)
    assert [v.node for v in two.nodes] == [0, 1]
    assert two.nodes[1].ranks[-1] == 15 and all(v.elided for v in two.nodes)
    huge = cards_shown(16384, 8)
    assert sum(len(v.ranks) for v in huge.nodes) <= 8
    assert huge.hidden_nodes == 2046 and huge.nodes[-1].ranks[-1] == 16383
    assert drawn_ranks(16384) == [0, 1, 2, 3, 4, 5, 6, 16383]


def test_every_storyboard_kind_has_a_shot_function():
    assert set(KINDS) == set(SHOTS)


def test_gauge_heights_follow_the_bytes():
    from dtfilm.cost.memory import MEMORY_PARTS
    from dtfilm.phrases import plain
    from dtfilm.visuals.card import GAUGE_INSET, SPILL_CAP, CardBox
    from dtfilm.visuals.theme import DARK

    card = CardBox(DARK, plain("GPU"), width=1.0, height=2.0)
    ledger = {
        "weights": 14e9,
        "gradients": 14e9,
        "master_weights": 3.5e9,
        "adam_m": 3.5e9,
        "adam_v": 3.5e9,
        "activations": 16.25e9,
        "buffers": 2e9,  # the complete ledger's other terms (issue 57): drawn too, in grey
    }
    gauge = card.gauge(ledger, 80e9)
    inner = 2.0 - 2 * GAUGE_INSET  # a full card fills the body exactly, inside its edges
    for segment in gauge.segments:
        assert segment.height == pytest.approx(ledger[segment.part] * inner / 80e9, rel=1e-6)
    assert [s.part for s in gauge.segments] == list(MEMORY_PARTS)
    assert sum(s.height for s in gauge.segments) == pytest.approx(56.75e9 * inner / 80e9, rel=1e-6)  # the total
    assert gauge.spill is None
    # 130 GB on an 80 GB card: a spill above the card, to scale up to the cap
    over = card.gauge({**ledger, "master_weights": 28e9, "adam_m": 28e9, "adam_v": 28e9}, 80e9)
    assert over.spill is not None
    drawn = sum(s.height for s in over.segments)
    assert drawn == pytest.approx(min(130.25e9 / 80e9, 1 + SPILL_CAP) * inner, rel=1e-6)
    # 97.5% to 100% of the card stays inside it (issue 15)
    full = card.gauge({**ledger, "activations": 80e9 - 38.5e9 - 2e9}, 80e9)
    assert full.spill is None
    assert full.segments.get_top()[1] <= card.body.get_top()[1] + 1e-9
    # far past the card (3.68x): every part still shows, compressed above the card line
    huge = card.gauge({**ledger, "weights": 140e9, "gradients": 140e9}, 80e9)
    assert {s.part for s in huge.segments} == set(ledger)
    assert sum(s.height for s in huge.segments) == pytest.approx((1 + SPILL_CAP) * inner, rel=1e-6)
    # 405B on one card: capped, so the gauge stays in frame
    huge = card.gauge({k: v * 60 for k, v in ledger.items()}, 80e9)
    assert sum(s.height for s in huge.segments) == pytest.approx((1 + SPILL_CAP) * inner)
    # a ZeRO shard is edged in its card's colour
    edged = card.gauge(ledger, 80e9, outline={"adam_m": "#FF0000"})
    assert [s.get_stroke_width() > 0 for s in edged.segments] == [s.part == "adam_m" for s in edged.segments]


@pytest.mark.parametrize("schedule", ["1f1b", "gpipe"])
@pytest.mark.parametrize(("pp", "m"), [(2, 1), (4, 4), (4, 8), (4, 16), (8, 3)])
def test_drawn_timeline_has_the_bubble_of_the_formula(schedule, pp, m):
    # Measured from the drawn blocks (widths on screen), compared with (p-1)/(m+p-1). The
    # timeline takes plain values: no estimate needed to draw it.
    from dtfilm.cost.pipeline import bubble_fraction
    from dtfilm.phrases import plain
    from dtfilm.visuals.theme import DARK
    from dtfilm.visuals.timeline import Timeline, TimelineWords

    words = TimelineWords(stage=lambda stage: plain(f"GPU {stage}"), block=lambda kind, micro: plain(f"{kind}{micro}"))
    line = Timeline(DARK, pp, m, schedule, words, width=10.0)
    assert line.idle_fraction() == pytest.approx(bubble_fraction(pp, m, 1), abs=1e-6)
    assert len(line.busy) == 2 * m * pp  # a forward and a backward per micro-batch per stage
    assert line.idle_fraction() == pytest.approx((pp - 1) / (m + pp - 1), abs=1e-6)
    assert line.span_slots == 3 * (m + pp - 1)  # forward 1 slot, backward 2


@pytest.mark.parametrize(("pp", "m"), [(4, 2), (4, 4), (4, 8), (8, 16)])
def test_schedules_keep_the_micro_batches_the_cost_model_counts(pp, m):
    # From the simulated schedule: the most micro-batches stage 0 holds between a forward and
    # its backward is min(m, p) under 1F1B and m under GPipe (the cost model's in-flight count).
    from dtfilm.cost.pipeline import micro_batches_in_flight, simulate_schedule

    for schedule in ("1f1b", "gpipe"):
        blocks = simulate_schedule(pp, m, schedule)[0]
        held, most = 0, 0
        for kind, _, _, _ in blocks:
            held += 1 if kind == "F" else -1
            most = max(most, held)
        assert most == micro_batches_in_flight(0, pp, m, schedule)


def test_slider_knob_stays_on_its_track_after_the_slider_moves():
    from dtfilm.shots.pipeline.draw import _Slider
    from dtfilm.storyboard import load_chapter
    from tests.conftest import ROOT

    chapter = load_chapter("pp", root=ROOT)
    shot = next(s for s in chapter.shots if s.kind == "pipeline_slider")

    class _Ctx:
        theme = __import__("dtfilm.visuals.theme", fromlist=["DARK"]).DARK

    slider = _Slider(_Ctx(), shot.steps, "micro-batches")
    slider.move_to([-1.5, 2.35, 0])
    last = slider.stop(len(shot.steps) - 1)
    assert last[1] == pytest.approx(slider.track.get_center()[1])
    assert last[0] == pytest.approx(slider.track.get_right()[0])


def test_split_matrices_follow_the_model_shapes():
    # Each shard's width is its share of the matrix; A is h x ffn, B is ffn x h, to one scale.
    from dtfilm.phrases import plain
    from dtfilm.shots.tensor.draw import _matrix, matrix_scale
    from dtfilm.storyboard import load_chapter
    from dtfilm.visuals.theme import DARK
    from tests.conftest import ROOT

    numbers = load_chapter("tp", {"tp": 4, "cards": 4}, ROOT).numbers
    k = matrix_scale(numbers)
    hidden, ffn = numbers.get("model.hidden"), numbers.get("model.ffn")
    a = _matrix(DARK, ffn * k, hidden * k, 4, True, plain("A"))
    widths = [s.width for s in a.shards]
    assert widths == pytest.approx([ffn * k / 4] * 4)
    assert sum(widths) == pytest.approx(a.shards.width) and a.shards.height == pytest.approx(hidden * k)
    assert a.shards.width / a.shards.height == pytest.approx(ffn / hidden)
    b = _matrix(DARK, hidden * k, ffn * k, 4, False, plain("B"))
    assert [s.height for s in b.shards] == pytest.approx([ffn * k / 4] * 4)


def test_captions_wrap_without_orphans():
    from dtfilm.phrases import plain
    from dtfilm.visuals.text import wrapped
    from dtfilm.visuals.theme import DARK

    text = "Four all-reduces per layer, on the critical path: fine on NVLink, crippling across nodes"
    lines = wrapped(DARK, plain(text), 24, 12.6)
    assert len(lines) == 2
    words = [len(line.phrase.text.split()) for line in lines]
    assert min(words) >= 4


def test_waffle_pours_the_state_into_card_squares():
    from dtfilm.numbers import Numbers
    from dtfilm.shots.why.draw import state_pour
    from dtfilm.visuals.theme import DARK
    from tests.test_cost_reference import run

    # 7B: 112 GB into 80 GB cards. The first card holds the weights (0..14 GB), the gradients
    # (14..28), the fp32 master copy (28..56) and 24 GB of Adam m; the second the rest of m and
    # Adam v, 40% full. (Each square was painted in the part filling most of it: the first all
    # master copy, so 7B's row showed no weights and no gradients.)

    capacity, part_bytes, _ = state_pour(Numbers(run(params="7e9", cards=1)))
    pours = cell_pours(capacity, part_bytes, 2)
    assert [p for p, _ in pours[0]] == ["weights", "gradients", "master_weights", "adam_m"]
    assert [p for p, _ in pours[1]] == ["adam_m", "adam_v"]
    assert sum(share for _, share in pours[0]) == pytest.approx(1.0)
    assert sum(share for _, share in pours[1]) == pytest.approx(0.4)
    shown = {p: 0.0 for p, _ in part_bytes}
    for cell in pours:
        for part, share in cell:
            shown[part] += share * capacity
    assert shown == pytest.approx(dict(part_bytes))  # every part, to scale
    waffle = CardWaffle(DARK, capacity, part_bytes, 2)
    assert [s.part for s in waffle.fills[0]] == ["weights", "gradients", "master_weights", "adam_m"]
    assert waffle.fills[0][0].height == pytest.approx(0.22 * part_bytes[0][1] / capacity)


def test_calendar_fills_the_fraction_it_is_given():
    from dtfilm.visuals.theme import DARK

    days = Calendar(DARK, 5, 7, 9.6, 0.3, 0.06, DARK.accent)
    assert len(days.cells) == 35
    assert len(days.fills) == 10
    assert days.fills[-1].height == pytest.approx(0.3 * 0.6)


def test_plan_grid_coordinates_and_neighbours():
    from dtfilm.numbers import Numbers
    from dtfilm.shots.three_d.draw import _connections, coordinates_phrase, plan_grid
    from dtfilm.visuals.theme import DARK
    from tests.test_cost_reference import run

    # Rank order tp fastest, then pp, then dp (seed 000's layout): GPU 13 of tp 2 x pp 4 x dp 2
    # is replica 1, stage 2, second tensor slice, written in the contract's order (dp, tp, pp).
    numbers = Numbers(run(params="7e9", cards=16, tp=2, pp=4))
    assert coordinates_phrase(numbers, 13).text == "(1, 1, 2)"
    grid = plan_grid(DARK, numbers)
    assert grid.maps[13].own.stage_piece == (2, 1)
    assert len(_connections(grid, numbers, "tp")) == 8  # pairs
    assert len(_connections(grid, numbers, "pp")) == 2 * 2 * 3  # each replica and slice: 3 boundaries
    assert sorted(_connections(grid, numbers, "dp")) == [(r, r + 8) for r in range(8)]
    # With nodes left out, replicas join the first drawn node to the last, across the words
    # that say which nodes and replicas are left out between.
    big = Numbers(run(params="7e9", cards=64, tp=2, pp=4))
    wide = plan_grid(DARK, big)
    assert wide.gap_after[0].phrase.text == "⋯ nodes 1 to 6: replicas 1 to 6 ⋯"
    assert sorted(_connections(wide, big, "dp")) == [(r, r + 56) for r in range(8)]


def test_visuals_take_plain_values_never_the_estimate():
    # The shot reads the cost model and hands a visual floats, counts and Phrases; no visual
    # imports Numbers or the estimate, so each can be drawn (and tested) on its own.
    from pathlib import Path

    import dtfilm

    folder = Path(dtfilm.__file__).parent / "visuals"
    readers = [
        p.name
        for p in folder.glob("*.py")
        if "dtfilm.numbers" in p.read_text() or "dtfilm.cost.estimate" in p.read_text()
    ]
    assert readers == []


@pytest.mark.parametrize(
    ("text", "size", "width", "left"),
    [
        ("Four all-reduces per layer, on the critical path: fine on NVLink, crippling across nodes", 24, 12.6, False),
        ("The ring sends each card's gradients in chunks to its neighbour, then sums them", 30, 9.0, False),
        ("fp32 master weights, 4 bytes a parameter", 18, 3.2, True),
        ("one-word", 24, 0.3, False),  # fits nowhere: scaled down
    ],
)
def test_a_wrap_chosen_by_measure_is_the_wrap_typesetting_every_candidate_finds(text, size, width, left):
    from manim import DOWN, LEFT, ORIGIN, VGroup

    from dtfilm.phrases import plain
    from dtfilm.visuals import text as texts
    from dtfilm.visuals.theme import DARK

    assert texts._wrap_measure(texts.label(DARK, text, size), text) is not None  # (no fallback here)
    measured = texts.wrapped(DARK, plain(text), size, width, left_aligned=left)

    def typeset(max_chars: int):
        lines = texts.wrap_words(text, max_chars)
        group = VGroup(*texts._lines(DARK, plain(text), lines, size, None))
        return group.arrange(DOWN, buff=0.12, aligned_edge=LEFT if left else ORIGIN)

    whole = texts.label(DARK, text, size).width
    every = texts._wrapped_by_typesetting(text, len(text), whole, width, typeset)
    assert [line.text for line in measured] == [line.text for line in every]
    assert measured.width == pytest.approx(every.width)
    assert measured.width <= width + 1e-9


def test_one_card_has_no_ring_but_the_voice_telling_of_one_sees_it_drawn():
    # one copy of the model: the ring shot says there is no ring, and while the voice tells how a
    # ring averages, a small ring of other copies plays it (before, the shot stood still 16.7 s)
    from dtfilm.check.inspect import inspect_chapter
    from tests.conftest import ROOT

    seen = inspect_chapter("dp", ROOT, {"cards": 1})
    start, end = next((a, b) for beat, a, b in seen.shot_times if beat == "ring")
    moving = next(seconds for beat, _, seconds in seen.drawn_times if beat == "ring")
    assert moving >= 0.75 * (end - start), (moving, end - start)
    shown = {text for text, _ in seen.texts.shown}
    assert "1 copy of the model: no ring" in shown and "with more copies, a ring" in shown


def test_labels_placed_from_pangos_glyphs_are_manims_text(monkeypatch: pytest.MonkeyPatch):
    # dtfilm.engine.glyphs reads Pango's SVG itself and parses each glyph once: the same
    # glyphs as Manim's Text, point for point and colour for colour, and the fast path is taken
    # (after a look's first label, Manim's parse of the whole SVG never runs for a Label)
    from manim import SVGMobject, Text

    from dtfilm.visuals.text import Label
    from dtfilm.visuals.theme import DARK, LIGHT

    parses: list[type] = []
    parse = SVGMobject.generate_mobject
    monkeypatch.setattr(SVGMobject, "generate_mobject", lambda self: (parses.append(type(self)), parse(self))[1])
    texts = ["Per card: 130 GB", "GPU 0 · NVLink 4 · 8 cards", "4.2 × 10²³ FLOPs ≤ 1.63×", "two  spaces", "112 GB"]
    looks = ((DARK.font, 24.0, DARK.text, "NORMAL"), (LIGHT.font, 30.0, LIGHT.accent, "BOLD"))
    for font, size, colour, weight in looks:
        for index, text in enumerate(texts):
            parsed_before = parses.count(Label)
            ours = Label(text, font=font, font_size=size, color=colour, weight=weight)
            assert index == 0 or parses.count(Label) == parsed_before  # (its style known: placed, not parsed)
            theirs = Text(text, font=font, font_size=size, color=colour, weight=weight)
            mine, manims = ours.family_members_with_points(), theirs.family_members_with_points()
            assert len(mine) == len(manims) == len(text.replace(" ", ""))
            for a, b in zip(mine, manims, strict=True):
                assert np.allclose(a.points, b.points, atol=1e-9)
                assert np.array_equal(a.fill_rgbas, b.fill_rgbas) and np.array_equal(a.stroke_rgbas, b.stroke_rgbas)
    assert Text in parses  # (the patch sees Manim's parse)


def test_a_labels_points_do_not_depend_on_what_the_process_typeset_before():
    # a shot's key digests what it draws: a label typeset first in one process (its style new)
    # and after another of its style in the next must be the same to the last bit
    code = (
        "import sys, numpy as np; from dtfilm.visuals.text import Label; from dtfilm.visuals.theme import DARK\n"
        "for text in sys.argv[1:]:\n"
        "    label = Label(text, font=DARK.font, font_size=24.0, color=DARK.text)\n"
        "sys.stdout.buffer.write(np.concatenate([m.points for m in label.family_members_with_points()]).tobytes())"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code, *texts], capture_output=True, check=True).stdout
        for texts in (["Per card: 130 GB"], ["Card holds", "Per card: 130 GB"])
    ]
    assert runs[0] and runs[0] == runs[1]


def test_a_new_label_of_a_style_kept_on_disk_is_placed_without_manims_parse(tmp_path: Path):
    # a drawing process reads every label from the typeset store but a new caption: its style's
    # template is read from the store too, where Manim's parse of the whole caption took 0.2 s;
    # the label is the same to the last bit as one whose style came from Manim's parse
    code = (
        "import sys, numpy as np, pathlib\n"
        "from manim import SVGMobject\n"
        "from dtfilm.visuals.text import label, keep_typeset_in\n"
        "from dtfilm.visuals.theme import DARK\n"
        "parses, parse = [], SVGMobject.generate_mobject\n"
        "SVGMobject.generate_mobject = lambda self: (parses.append(1), parse(self))[1]\n"
        "keep_typeset_in(pathlib.Path(sys.argv[1]) if sys.argv[1] != '-' else None)\n"
        "for text in sys.argv[2:]:\n"
        "    made = label(DARK, text, 24.0)\n"
        "members = made.family_members_with_points()\n"
        "sys.stdout.buffer.write(bytes([len(parses)]) + b''.join(\n"
        "    np.ascontiguousarray(a).tobytes() for m in members for a in (m.points, m.fill_rgbas, m.stroke_rgbas)))"
    )

    def typeset(store: str, *texts: str) -> tuple[int, bytes]:
        done = subprocess.run([sys.executable, "-c", code, store, *texts], capture_output=True)
        assert done.returncode == 0, done.stderr.decode()[-3000:]
        return done.stdout[0], done.stdout[1:]

    assert typeset(str(tmp_path), "Per card: 130 GB")[0] == 1  # its style new: Manim parses it, once
    caption = "The ring averages 13 GB of gradients"
    parses, kept = typeset(str(tmp_path), caption)
    assert parses == 0
    assert kept == typeset("-", caption)[1]  # (without the store: Manim's parse gives the style)


def test_processes_typesetting_one_new_caption_at_once_all_finish(tmp_path: Path):
    # Manim's Text reads an SVG another process is halfway through writing, rewrites it in place
    # and parses a copy beside it that the first to finish deletes: six processes typesetting one
    # new caption in one folder at once failed three or more of the six on every try, with
    # FileNotFoundError (a CI run lost a test to it); each now writes and reads files of its own
    caption = "A caption typeset by six at once"
    code = (
        "from dtfilm.visuals.text import label\n"
        "from dtfilm.visuals.theme import DARK\n"
        f"print(len(label(DARK, {caption!r}, 24.0).submobjects))"
    )
    processes = [
        subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(6)
    ]
    finished = [(p.wait(), *p.communicate()) for p in processes]
    assert [(status, err.decode()[-300:]) for status, _, err in finished] == [(0, "")] * 6
    assert {out for _, out, _ in finished} == {f"{len(caption.replace(' ', ''))}\n".encode()}  # every glyph
    assert [p.name for p in (tmp_path / "media" / "texts").iterdir()] == [
        p.name for p in (tmp_path / "media" / "texts").glob("[!.]*.svg")
    ]  # nothing private left behind


@pytest.mark.parametrize(("layers", "pp"), [(32, 4), (32, 8), (32, 16), (32, 32), (126, 4), (126, 64), (80, 3)])
def test_every_stage_card_drawn_takes_exactly_its_own_layers_of_the_loaf(layers: int, pp: int):
    # the loaf is cut between stages: every stage drawn takes whole slices, at least one, and
    # their layers are exactly the stage's range (126 over 4: 31, 32, 32, 31), no slice on two cards
    from dtfilm.shots.pipeline.draw import MAX_STAGES_DRAWN, stage_breaks, stage_slices
    from dtfilm.visuals.loaf import Loaf
    from dtfilm.visuals.theme import DARK

    sizes = [layers // pp + (1 if s < layers % pp else 0) for s in range(pp)]
    ranges, first = [], 1
    for size in sizes:
        ranges.append((first, first + size - 1))
        first += size
    shown = list(range(pp)) if pp <= MAX_STAGES_DRAWN else [*range(MAX_STAGES_DRAWN - 1), pp - 1]
    loaf = Loaf(DARK, layers, breaks=stage_breaks(ranges, shown))
    shares = stage_slices(loaf, ranges, shown)
    assert len(shares) == len(shown) and all(shares)
    for stage, share in zip(shown, shares, strict=True):
        covered = [layer for i in share for layer in range(loaf.groups[i][0] + 1, sum(loaf.groups[i]) + 1)]
        assert covered == list(range(ranges[stage][0], ranges[stage][1] + 1))
    indices = [i for share in shares for i in share]
    assert len(indices) == len(set(indices))


@pytest.mark.parametrize(
    ("width", "height", "scale"), [(3.5, 0.2, 1.2), (0.4, 0.3, 1.2), (9.0, 3.0, 1.05), (1.0, 1.2, 1.3)]
)
def test_a_piece_the_voice_names_swells_at_most_a_little_past_its_edges(width, height, scale):
    from manim import Rectangle

    from dtfilm.scene import SWELL_UNITS, swell

    piece = Rectangle(width=width, height=height)
    factor = swell(piece, scale)
    assert 1.0 < factor <= scale
    reach = (factor - 1.0) * max(width, height) / 2  # past each edge, as Indicate grows about the centre
    assert reach <= SWELL_UNITS + 1e-9
    if (scale - 1.0) * max(width, height) / 2 <= SWELL_UNITS:  # small enough: the swell asked for
        assert factor == scale


def test_calendar_cells_are_the_squares_made_in_place() -> None:
    """A calendar's cells and fills are copies of one square and one fill, moved: each is what a
    square or fill made in its place would be, point for point and colour for colour."""
    from manim import Rectangle, Square

    from dtfilm.engine.drawing import drawing
    from dtfilm.visuals.theme import DARK

    theme = DARK
    size, gap, color = 0.12, 0.02, "#ff8800"
    with drawing():
        calendar = Calendar(theme, 3, 7, 17.4, size, gap, color)
    for i, cell in enumerate(calendar.cells):
        column, row = divmod(i, 7)
        made = Square(size, stroke_color=theme.faint, stroke_width=1.2, fill_opacity=0)
        made.move_to([column * (size + gap), -row * (size + gap), 0])
        assert cell.points.tobytes() == made.points.tobytes()
        assert cell.stroke_rgbas.tobytes() == made.stroke_rgbas.tobytes() and cell.stroke_width == made.stroke_width
        assert cell.fill_rgbas.tobytes() == made.fill_rgbas.tobytes()
    assert len(calendar.fills) == 18
    for i, fill in enumerate(calendar.fills):
        share = min(1.0, 17.4 - i)
        made = Rectangle(width=size, height=size * share, fill_color=color, fill_opacity=0.9, stroke_width=0)
        made.align_to(calendar.cells[i], direction=[0, 1, 0]).set_x(calendar.cells[i].get_x())
        assert fill.points.tobytes() == made.points.tobytes() and fill.fill_rgbas.tobytes() == made.fill_rgbas.tobytes()
