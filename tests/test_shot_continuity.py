"""Objects that stay in the story transform into their next form (issue 58, finding 2): tp's
matrices are cut and their pieces land on the cards; dp's sweep arrives as the ring goes, so
the frame is never left empty between the two shots. Each plays two shots without frames."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from manim import Rectangle, Scene

from dtfilm.check.inspect import dry_run
from dtfilm.onscreen.layout import pieces_on_screen
from dtfilm.storyboard import load_chapter
from dtfilm.visuals.card import CardBox
from tests.conftest import ROOT


def _played(chapter_id: str, beats: tuple[str, ...], observer) -> None:
    chapter = load_chapter(chapter_id, {}, ROOT)
    dry_run(replace(chapter, shots=tuple(s for s in chapter.shots if s.beat in beats)), None, [observer])


def _inside(piece, box) -> bool:
    x, y = piece.get_center()[:2]
    return box.get_left()[0] <= x <= box.get_right()[0] and box.get_bottom()[1] <= y <= box.get_top()[1]


def test_tp_matrices_are_cut_onto_the_cards_each_card_holding_its_pieces_and_the_output():
    last: dict[str, list] = {}

    def observe(scene: Scene, beat: str) -> None:
        if beat == "matrices":  # what is on screen after the shot's last animation
            last["cards"] = pieces_on_screen(scene, (CardBox,))
            last["pieces"] = pieces_on_screen(scene, (Rectangle,))
            last["theme"] = scene.theme

    _played("tp", ("matrices",), observe)
    cards, pieces, theme = last["cards"], last["pieces"], last["theme"]
    assert len(cards) == 4  # tp 4: the cards the layer is cut across
    for i, card in enumerate(sorted(cards, key=lambda c: c.get_center()[0])):
        held = [p for p in pieces if p is not card.body and _inside(p, card.body) and p.get_fill_opacity() > 0.3]
        colours = {p.get_fill_color().to_hex().lower() for p in held}
        # its columns of A and rows of B in its own colour, and the joined output Z in the accent
        assert sum(c == str(theme.card_color(i)).lower() for c in colours) >= 1, (i, colours)
        assert str(theme.accent).lower() in colours, (i, colours)
        assert len(held) >= 3, (i, len(held))


def test_dp_the_frame_holds_a_picture_between_the_ring_and_the_sweep():
    seen: list[tuple[float, float]] = []

    def observe(scene: Scene, beat: str) -> None:
        if beat != "more-cards":
            return
        shapes = [
            p
            for p in pieces_on_screen(scene, (Rectangle,))
            if p.get_fill_opacity() > 0.3 and p.width * p.height > 0.3 and abs(p.get_center()[1]) < 2.6
        ]
        seen.append((scene.time, float(np.sum([p.width * p.height for p in shapes]))))

    _played("dp", ("ring", "more-cards"), observe)
    assert seen
    empty = [t for t, area in seen if area <= 0.0]
    assert not empty, f"the stage is empty after an animation at {empty} s"
