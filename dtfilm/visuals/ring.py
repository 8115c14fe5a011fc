"""A ring all-reduce: reduce-scatter then all-gather, n-1 steps each, between neighbours.

The drawing follows `simulate_ring`, a step-by-step run of the algorithm on real numbers
(NCCL's ring: at reduce-scatter step s card i sends chunk (i - s) mod n to card i+1, which
adds it; at all-gather step s it sends chunk (i + 1 - s) mod n, which the neighbour copies).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    TAU,
    UP,
    AnimationGroup,
    ArcBetweenPoints,
    Ellipse,
    FadeOut,
    Rectangle,
    Square,
    Transform,
    VGroup,
    VMobject,
    rate_functions,
)

from dtfilm.phrases import Phrase
from dtfilm.visuals.card import card_body
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import Theme
from dtfilm.visuals.travel import Travel

MAX_RING = 8
# The ring drawn wide (an ellipse, the frame being wide) with wide cards, so that a chunk is a
# column that reads at 480p (8 cards: 12 px wide, was 8) and a packet in flight is seen.
RING_RADIUS, RING_STRETCH = 1.95, 1.6
RING_BOX_WIDTH, RING_BOX_HEIGHT = 2.1, 0.95
PACKET_SIZE = 0.3


@dataclass(frozen=True)
class RingStep:
    phase: str  # "reduce-scatter" or "all-gather"
    sends: tuple[tuple[int, int, int], ...]  # (from card, to card, chunk)
    counts: np.ndarray  # after the step: how many cards' gradients each (card, chunk) holds


def simulate_ring(buffers: np.ndarray) -> tuple[np.ndarray, list[RingStep]]:
    """Run a ring all-reduce on `buffers` (n cards x n chunks). Returns every card's final
    buffer (the element-wise sum) and the steps, with contribution counts after each."""
    values = np.array(buffers, dtype=float)
    n = values.shape[0]
    counts = np.ones((n, n), dtype=int)
    steps: list[RingStep] = []
    for s in range(n - 1):
        sends = tuple((i, (i + 1) % n, (i - s) % n) for i in range(n))
        before_values, before_counts = values.copy(), counts.copy()
        for src, dst, chunk in sends:
            values[dst, chunk] += before_values[src, chunk]
            counts[dst, chunk] += before_counts[src, chunk]
        steps.append(RingStep("reduce-scatter", sends, counts.copy()))
    for s in range(n - 1):
        sends = tuple((i, (i + 1) % n, (i + 1 - s) % n) for i in range(n))
        before_values, before_counts = values.copy(), counts.copy()
        for src, dst, chunk in sends:
            values[dst, chunk] = before_values[src, chunk]
            counts[dst, chunk] = before_counts[src, chunk]
        steps.append(RingStep("all-gather", sends, counts.copy()))
    return values, steps


def drawn_ranks(cards: int, max_ring: int = MAX_RING) -> list[int]:
    """The cards drawn on the ring: all of them, or the first few and the last."""
    if cards <= max_ring:
        return list(range(cards))
    return [*range(max_ring - 1), cards - 1]


class Ring(VGroup):
    """Cards on a circle, each with its gradient buffer cut into chunks (one colour each)."""

    def __init__(
        self,
        theme: Theme,
        cards: int,
        card_name: Callable[[int], Phrase],
        radius: float = RING_RADIUS,
        box_width: float = RING_BOX_WIDTH,
        stretch: float = RING_STRETCH,
        box_height: float = RING_BOX_HEIGHT,
    ) -> None:
        super().__init__()
        self.theme = theme
        self._shapes: dict[tuple[str, int], VMobject] = {}  # (what, chunk) -> its first, to copy
        self.ranks = drawn_ranks(cards)
        k = len(self.ranks)
        self.k = k
        self.radius = radius
        self.nodes = VGroup()
        self.cells: list[list[VGroup]] = []
        self.fills: list[list[Rectangle]] = []
        self.cell_height = box_height - 0.24
        track = Ellipse(width=2 * radius * stretch, height=2 * radius, stroke_color=theme.faint, stroke_width=3)
        track.set_z_index(-1)
        self.add(track)
        for position, rank in enumerate(self.ranks):
            self._add_node(position, card_name(rank), (box_width, box_height), stretch)
        self.add(self.nodes)
        self.gap_label = None

    def _add_node(self, position: int, card: Phrase, size: tuple[float, float], stretch: float) -> None:
        """The `position`-th card on the ring: its box, its buffer's chunks (an outline each,
        filled with its own gradient), and its name, over or under it on a wide ring."""
        theme, radius, k = self.theme, self.radius, self.k
        box_width, box_height = size
        angle = math.pi / 2 - position * TAU / k
        center = np.array([radius * stretch * math.cos(angle), radius * math.sin(angle), 0.0])
        box = card_body(theme, box_width, box_height).move_to(center)
        cell_width = (box_width - 0.2) / k
        row_cells, row_fills = [], []
        outlines = VGroup()
        for chunk in range(k):
            x = box.get_left()[0] + 0.1 + cell_width * (chunk + 0.5)
            outline = Rectangle(
                width=cell_width * 0.86,
                height=self.cell_height,
                stroke_color=theme.card_color(chunk),
                stroke_width=1.5,
                fill_opacity=0,
            ).move_to([x, center[1], 0])
            fill = self._fill(outline, chunk, 1)
            outlines.add(outline)
            row_cells.append(outline)
            row_fills.append(fill)
        name = label(theme, card, theme.small_size, theme.muted)
        dx, dy = math.cos(angle), math.sin(angle)
        if stretch > 1 or abs(dy) >= 0.9:  # a wide ring: every name over or under its card
            name.next_to(box, UP if dy > 0.1 else DOWN, buff=0.08)
        else:
            name.next_to(box, RIGHT if dx > 0 else LEFT, buff=0.1)
        node = VGroup(box, outlines, *row_fills, name)
        node.box = box
        self.nodes.add(node)
        self.cells.append(row_cells)
        self.fills.append(row_fills)

    def _copied(self, what: str, chunk: int, make: Callable[[], VMobject]) -> VMobject:
        """A copy of the first shape of its kind made for this ring: copying one took 0.16 ms
        where making a rectangle took 0.41 ms and an arc 0.69 ms, and every step of the ring
        (drawn, or played without frames before a later part of the shot) makes one of each for
        every card."""
        shape = self._shapes.get((what, chunk))
        if shape is None:
            shape = self._shapes[(what, chunk)] = make()
        return shape.copy()

    def _fill(self, outline: Rectangle, chunk: int, count: int) -> Rectangle:
        height = max(self.cell_height * count / self.k, 0.01)
        colour = self.theme.card_color(chunk)
        unit = partial(Rectangle, width=1.0, height=1.0, fill_color=colour, fill_opacity=0.9, stroke_width=0)
        fill = self._copied("fill", chunk, unit)
        fill.stretch_to_fit_width(outline.width).stretch_to_fit_height(height)
        fill.move_to(outline.get_bottom() + UP * height / 2)
        return fill

    def step_animation(self, step: RingStep, run_time: float) -> list[AnimationGroup]:
        """Chunks travelling to the next card, then the receiving chunks filling up."""
        travel, settle, packets = [], [], []
        for src, dst, chunk in step.sends:
            packet = self._copied(
                "packet",
                chunk,
                partial(
                    Square,
                    PACKET_SIZE,
                    fill_color=self.theme.card_color(chunk),
                    fill_opacity=1,
                    stroke_color=self.theme.text,
                    stroke_width=1.5,
                ),
            )
            packet.move_to(self.cells[src][chunk]).set_z_index(3)
            path = self._copied("path", 0, partial(ArcBetweenPoints, LEFT, RIGHT, angle=-TAU / self.k))
            path.put_start_and_end_on(self.cells[src][chunk].get_center(), self.cells[dst][chunk].get_center())
            packets.append(packet)
            travel.append(Travel(packet, path, rate_func=rate_functions.smooth))
            target = self._fill(self.cells[dst][chunk], chunk, int(step.counts[dst, chunk]))
            settle.append(Transform(self.fills[dst][chunk], target))
        settle += [FadeOut(p) for p in packets]
        return [
            AnimationGroup(*travel, run_time=run_time * 0.65),
            AnimationGroup(*settle, run_time=run_time * 0.35),
        ]
