"""The film's own pieces held to the design check (issue 58, item 3): the pipeline timeline's
micro-batch numbers (1.0:1 where a row's blocks were drawn over them, 12 px), the decision tree's
branches off the path (2.4:1 in the faint grey, figures at 12.8 px), and fsdp's block names (dark
on the faint forward blocks, 3.0:1)."""

from __future__ import annotations

import pytest
from manim import Rectangle, Scene, Text, VGroup

from dtfilm.onscreen.design import MIN_CONTRAST, MIN_TEXT_PX, contrast, text_px
from dtfilm.onscreen.layout import LayoutCheck
from dtfilm.phrases import plain
from dtfilm.shots.decision_tree.draw import _node
from dtfilm.shots.overlap.draw import lane_colours
from dtfilm.visuals.text import ink_on, label
from dtfilm.visuals.theme import DARK, THEMES
from dtfilm.visuals.timeline import Timeline, TimelineWords


class _Planted(Scene):
    def construct(self) -> None:
        pass


def _design(*pieces, added_after=(), theme=DARK) -> list[str]:
    """The design findings on a scene holding `pieces`, then `added_after` added to it."""
    scene = _Planted()
    scene.camera.background_color = theme.background
    scene.add(*pieces)
    scene.add(*added_after)
    check = LayoutCheck()
    check(scene, "planted")
    assert check.problems == []
    return check.design


def _rgb(colour: str):
    from manim import color_to_rgb

    return color_to_rgb(colour)


@pytest.mark.parametrize("name", sorted(THEMES))
def test_the_theme_dims_text_legibly_and_its_least_size_is_the_floor(name):
    theme = THEMES[name]
    assert contrast(_rgb(theme.dimmed), _rgb(theme.background)) >= MIN_CONTRAST
    assert contrast(_rgb(theme.faint), _rgb(theme.background)) < MIN_CONTRAST  # (why faint is not for text)
    assert text_px(Text("x", font_size=theme.least_size)) >= MIN_TEXT_PX


@pytest.mark.parametrize("name", sorted(THEMES))
def test_the_timeline_numbers_stay_over_their_blocks_and_are_read(name):
    theme = THEMES[name]  # (the light theme's forward blocks are light: its numbers dark)
    words = TimelineWords(stage=lambda s: plain(f"GPU {s}"), block=lambda kind, m: plain(f"{kind}{m + 1}"))
    line = Timeline(theme, 4, 4, "1f1b", words, width=10.4, height=1.6).move_to([0, 0, 0])
    assert len(line.marks) > 0
    first_row = VGroup(*[b for b in line.busy if b.kind == "F"][:4])
    # a shot's Indicate on a row adds its blocks to the scene again, after the numbers
    assert _design(line, added_after=[first_row], theme=theme) == []


@pytest.mark.parametrize(("pp", "height"), [(16, 3.4), (32, 3.4), (8, 1.6)])
def test_a_timeline_of_many_cards_names_every_few_at_full_size(pp, height):
    """At pp 16 a row is too low for a name, and the names were scaled to the rows: 'GPU 0' was
    10.3 px at 480p (`dtfilm check pp --pp 16 --cards 16`: 29 design findings). Every few rows
    and the last are named at full size, no two names touching."""
    words = TimelineWords(stage=lambda s: plain(f"GPU {s}"), block=lambda kind, m: plain(f"{kind}{m + 1}"))
    line = Timeline(DARK, pp, 8, "1f1b", words, width=10.0, height=height).move_to([0, 0, 0])
    names = [t for t in line.names if t.original_text.startswith("GPU")]
    assert names[0].original_text == "GPU 0" and names[-1].original_text == f"GPU {pp - 1}"
    assert all(text_px(name) >= MIN_TEXT_PX for name in names)
    assert _design(line) == []


def test_the_tree_sets_back_a_branch_off_the_path_legibly_without_its_figures():
    words, figures, answer = plain("Too many layers?"), plain("25.2 GB a card on 64 cards"), plain("No")
    off = _node(DARK, words, figures, answer, lit=False, width=2.45)
    assert _design(off) == []
    assert "25.2" not in " ".join(t.original_text for t in off.get_family() if isinstance(t, Text))
    on = _node(DARK, words, figures, answer, lit=True, width=2.45)
    assert _design(on) == []


@pytest.mark.parametrize("kind", ["forward", "backward", "gather", "scatter"])
def test_a_name_on_an_overlap_block_takes_the_ink_that_reads(kind):
    # (the zoom names the forward's layers and the gathers; no name is written on a wait)
    colour, opacity = lane_colours(DARK)[kind]
    block = Rectangle(width=2.0, height=0.5, fill_color=colour, fill_opacity=opacity, stroke_width=0)
    name = label(DARK, plain("layer 1"), DARK.small_size, ink_on(DARK, colour, opacity)).move_to(block)
    assert _design(block, name) == []


@pytest.mark.parametrize(
    ("chapter_id", "flags", "beats"),
    [
        ("pp", {"pp": 2}, ("title", "stages")),
        ("pp", {"pp": 8, "cards": 8}, ("title", "stages")),
        ("pp", {"model": "llama3.1-405b", "cards": 16384}, ("title", "traffic")),
        ("tp", {"tp": 16, "cards": 16}, ("matrices", "stalls")),
    ],
)
def test_shots_read_at_the_numbers_a_user_tries(chapter_id, flags, beats):
    """Each failed `check` at these numbers, as at 85d2585: pp:stages at pp 2 squeezed its legend
    beside the verdict under two centred cards (10.8 px at 480p), and at pp 8 scaled "layers
    29–32" to a card's width (13.2 px); pp:traffic at 405B on 16,384 cards scaled "Pipeline, 4
    stages, 4,096 copies, on InfiniBand NDR" to 13.3 px (now two lines); tp 16's B reached down
    to the all-reduce's words, and its scale note stood under them (now it goes first)."""
    import dataclasses

    from dtfilm.check.inspect import dry_run
    from dtfilm.storyboard import load_chapter

    chapter = load_chapter(chapter_id, flags)
    chapter = dataclasses.replace(chapter, shots=tuple(s for s in chapter.shots if s.beat in beats))
    check = LayoutCheck()
    dry_run(chapter, None, [check], moments=[check.moment])
    assert check.problems == [] and check.design == []
