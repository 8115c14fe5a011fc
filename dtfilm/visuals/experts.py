"""Expert parallelism drawn: the expert-parallel group's cards side by side, each with its tokens
at the top and its share of the experts below; routed copies travel out and come back.

Plain values in (counts, colours, Phrases): `route_copies` decides, for the tokens drawn, which
card each of a token's k copies goes to, with the busiest card taking `imbalance` times the mean
(the cost model's routing imbalance), so the drawing and the estimate tell one story.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, ArcBetweenPoints, Rectangle, RoundedRectangle, Square, VGroup

from dtfilm.phrases import Phrase
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import Theme
from dtfilm.visuals.travel import Travel

MOST_CARDS = 8  # the cards drawn: all of them, or the first few and the last
MOST_EXPERTS = 4  # experts drawn a card: its share, or this many and the rest implied
MOST_COPIES = 8  # routed copies a card sends in the drawing: tokens drawn = this // k
BAR_HEIGHT = 0.3


@dataclass(frozen=True)
class Copy:
    """One routed copy of a drawn token: from (card, token) to (card, expert drawn there)."""

    card: int  # the drawn card it starts on
    token: int  # the token's place on that card
    to_card: int
    to_expert: int


def drawn_cards(ep: int, most: int = MOST_CARDS) -> list[int]:
    """The ranks of the expert-parallel group drawn: all, or the first few and the last."""
    return list(range(ep)) if ep <= most else [*range(most - 1), ep - 1]


def route_copies(cards: int, tokens: int, k: int, experts: int, imbalance: float, busiest: int = 0) -> list[Copy]:
    """Where each of the drawn tokens' k copies goes. Every card receives the same number of
    copies, except card `busiest`, which receives `imbalance` times the mean (rounded, at most
    all the copies there are); a token's copies go to different cards while there are cards to
    spare. Deterministic: the same drawing every render."""
    total = cards * tokens * k
    mean = total / cards
    busy = min(total, max(1, round(imbalance * mean))) if cards > 1 else total
    rest = total - busy
    quota = [rest // (cards - 1) + (1 if i < rest % (cards - 1) else 0) for i in range(cards - 1)] if cards > 1 else []
    quota.insert(busiest, busy)
    received = [0] * cards
    copies: list[Copy] = []
    for card in range(cards):
        for token in range(tokens):
            used: set[int] = set()
            for _ in range(k):
                # the card with the most quota left, preferring another card than the token's own
                order = sorted(range(cards), key=lambda c: (c in used, -(quota[c] - received[c]), (c - card) % cards))
                to = order[0]
                used.add(to)
                copies.append(Copy(card, token, to, received[to] % experts))
                received[to] += 1
    return copies


class ExpertCards(VGroup):
    """The group's cards in a row: a name over each, its tokens in its colour, its experts, and
    under them a bar for the experts' work (empty until `work` fills it)."""

    def __init__(
        self,
        theme: Theme,
        names: list[Phrase],
        colours: list[str],
        tokens: int,
        experts: int,
        width: float,
        height: float,
        gap: Phrase | None = None,
    ) -> None:
        super().__init__()
        self.theme, self.colours = theme, colours
        n = len(names)
        slot = width / n
        box_width = min(slot - 0.14, 1.8)
        # sizes from the room: the tokens in rows of two or four across the card, an expert about
        # half of it; a routed copy large enough to be seen travelling at 480p
        across = tokens if tokens <= 2 else (2 if tokens <= 4 else 4)
        self.token_size = min(0.34, (box_width - 0.16) / across - 0.06)
        shown = min(experts, MOST_EXPERTS)
        per_row = 1 if shown == 1 else 2
        expert_size = min(0.85, (box_width - 0.2) / per_row - 0.08, 0.3 * height / max(1, (shown + 1) // 2))
        self.expert_size = expert_size
        # a routed copy large enough to be seen travelling, small enough to pile on its expert
        self.copy_size = min(0.26, max(0.2, self.token_size * 0.75), 0.45 * expert_size)
        self.cards, self.names, self.tokens, self.experts, self.bars = VGroup(), VGroup(), [], [], []
        for i, (name, colour) in enumerate(zip(names, colours, strict=True)):
            box = RoundedRectangle(
                corner_radius=0.08, width=box_width, height=height, fill_color=theme.card_fill, fill_opacity=1
            ).set_stroke(theme.faint, 2)
            box.move_to([-width / 2 + slot * (i + 0.5), 0, 0])
            self._add_card(box, (box_width, height), name, colour, tokens=tokens, grid=(across, shown, per_row))
        self._add_words(gap if n > 1 else None)

    def _add_card(
        self,
        box: RoundedRectangle,
        size: tuple[float, float],
        name: Phrase,
        colour: str,
        *,
        tokens: int,
        grid: tuple[int, int, int],
    ) -> None:
        """One card in `box` (its `size`, width and height): its name over it, its tokens at its
        top (`across` a row), its `shown` experts (`per_row` a row) and its empty work bar."""
        theme, (box_width, height), (across, shown, per_row) = self.theme, size, grid
        title = label(theme, name, theme.least_size, theme.muted).next_to(box, UP, buff=0.1)
        row = VGroup(
            *[
                Square(side_length=self.token_size, fill_color=colour, fill_opacity=0.95, stroke_width=0)
                for _ in range(tokens)
            ]
        ).arrange_in_grid(cols=across, buff=0.06)
        row.move_to(box.get_top() + DOWN * (0.15 + row.height / 2))
        boxes = VGroup(
            *[
                Square(side_length=self.expert_size, fill_color=theme.panel, fill_opacity=1).set_stroke(colour, 3)
                for _ in range(shown)
            ]
        )
        boxes.arrange_in_grid(cols=per_row, buff=0.08)
        boxes.move_to(box.get_center() + DOWN * 0.05 * height)
        track = Rectangle(width=box_width - 0.2, height=BAR_HEIGHT, stroke_color=theme.faint, stroke_width=1.5)
        track.move_to(box.get_bottom() + UP * (0.15 + BAR_HEIGHT / 2))
        self.cards.add(box)
        self.names.add(title)
        self.tokens.append(row)
        self.experts.append(boxes)
        self.bars.append(track)
        self.add(box, title, row, boxes, track)

    def _add_words(self, gap: Phrase | None) -> None:
        """The cards not drawn (`gap`), under the last card, and the word `experts` beside the
        first card's experts (left of the card where there is no room inside it)."""
        theme = self.theme
        self.gap = None
        if gap is not None:  # the cards not drawn, between the last two
            self.gap = label(theme, gap, theme.least_size, theme.muted)
            self.gap.next_to(self.cards[-1], DOWN, buff=0.12).align_to(self.cards[-1], RIGHT)
            self.add(self.gap)
        self.expert_word = label(theme, "experts", theme.least_size, theme.muted)
        self.expert_word.next_to(self.experts[0], LEFT, buff=0.1)
        if self.expert_word.get_left()[0] < self.cards[0].get_left()[0]:
            self.expert_word.next_to(self.cards[0], LEFT, buff=0.12).set_y(self.experts[0].get_y())
        self.add(self.expert_word)

    def token_point(self, card: int, token: int) -> np.ndarray:
        return self.tokens[card][token].get_center()

    def expert_point(self, card: int, expert: int) -> np.ndarray:
        boxes = self.experts[card]
        return boxes[expert % len(boxes)].get_center()

    def copy_piece(self, copy: Copy) -> Square:
        """A routed copy: a small token in its home card's colour, at its token."""
        piece = Square(side_length=self.copy_size, fill_color=self.colours[copy.card], fill_opacity=1)
        return piece.set_stroke(self.theme.background, 1).move_to(self.token_point(copy.card, copy.token))

    def journey(self, piece: Square, start: np.ndarray, end: np.ndarray, lift: float) -> Travel:
        """A copy travelling on an arc (above the cards going out, below coming back)."""
        path = ArcBetweenPoints(start, end, angle=lift)
        return Travel(piece, path)

    def slot_point(self, card: int, place: int, places: int) -> np.ndarray:
        """Where the `place`-th copy a card's experts have worked on lies in its work bar, of
        `places` (the busiest card's count: its bar full)."""
        track = self.bars[card]
        width = track.width / max(places, 1)
        return track.get_left() + RIGHT * (width * (place + 0.5))

    def slot_width(self, places: int) -> float:
        return self.bars[0].width / max(places, 1)

    def work_bar(self, card: int, share: float, colour: str) -> Rectangle:
        """The card's experts' work as a bar in its track, `share` of the longest."""
        track = self.bars[card]
        bar = Rectangle(width=max(track.width * share, 0.02), height=BAR_HEIGHT, stroke_width=0)
        bar.set_fill(colour, opacity=0.9)
        return bar.move_to(track.get_left(), aligned_edge=LEFT)
