"""The light theme held to the design check (issue 58): a card's colour written as text read at
2.7 to 3.7:1 on white (traffic's 'data parallel' and 'DP 24.5 GB' wore one, cp's 'Q' and 'K/V'
on the ring, 3d's 'stage 2'), and `check` fails on a design finding now that every chapter meets
it in both themes."""

from __future__ import annotations

import numpy as np
from manim import color_to_rgb

from dtfilm.check.chapters import ChapterCheck
from dtfilm.numbers import Numbers
from dtfilm.onscreen.design import MIN_CONTRAST, contrast
from dtfilm.phrases import plain
from dtfilm.shots.compare.draw import group_line, pieces_key
from dtfilm.visuals.attention import RingRow
from dtfilm.visuals.palette import legible
from dtfilm.visuals.theme import LIGHT, THEMES
from tests.test_cost_reference import run
from tests.test_design_fixes import _design


def _ratio(a: str, b: str) -> float:
    return contrast(np.array(color_to_rgb(a)), np.array(color_to_rgb(b)))


def test_legible_keeps_a_colour_that_reads_and_shades_one_that_does_not():
    assert legible("#111827", "#FFFFFF") == "#111827"
    lavender = "#A78BFA"  # the light theme's card 5: 2.7:1 on white
    assert _ratio(lavender, "#FFFFFF") < MIN_CONTRAST
    shaded = legible(lavender, "#FFFFFF")
    assert _ratio(shaded, "#FFFFFF") >= MIN_CONTRAST
    # shaded toward black, so its hue stays: still more blue than red or green
    r, g, b = color_to_rgb(shaded)
    assert b > r > g
    # on a dark ground it is lightened instead
    assert _ratio(legible("#475569", "#0E1117"), "#0E1117") >= MIN_CONTRAST


def test_traffic_words_read_in_the_light_theme():
    numbers = Numbers(run(params="7e9", cards=16, tp=2, pp=2, micro_batches=4))
    line = group_line(LIGHT, numbers)
    assert len(line) >= 3  # TP, PP and DP each said
    key, _ = pieces_key(LIGHT, ["all-reduce", "reduce-scatter", "all-gather"])
    assert _design(line, theme=LIGHT) == []
    assert _design(key, theme=LIGHT) == []


def test_the_ring_s_query_and_key_value_blocks_read_on_every_card_colour():
    names = [plain(f"GPU {i}") for i in range(len(LIGHT.cards))]
    for theme in THEMES.values():
        ring = RingRow(theme, names, list(theme.cards), width=13).move_to([0, 0, 0])
        assert _design(ring, theme=theme) == []


def test_a_design_finding_fails_check(monkeypatch, capsys):
    import dtfilm.cli as cli
    import dtfilm.cli.authoring as authoring

    real = authoring.check_chapter

    def planted(target, overrides, theme, reuse):
        result = real(target, overrides, theme, reuse=reuse)
        assert not result.failed  # (tp is clean in both themes)
        finding = "title: text 'x' is 8.3 px at 854×480 (its font size); at least 14"
        return ChapterCheck(result.chapter, design=[finding])

    monkeypatch.setattr(authoring, "check_chapter", planted)
    assert cli.main(["check", "tp"]) == 1
    out = capsys.readouterr().out
    assert "tp: design: title: text 'x' is 8.3 px" in out
    assert "tp: 1 design finding;" in out
