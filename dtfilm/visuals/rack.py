"""A rack: cards in nodes, the intra-node link (NVLink, Infinity Fabric) drawn thick, the inter-node link thin.

Many cards collapse to a few drawn cards and counts: at most MAX_DRAWN cards are drawn,
from the first and the last node, with a "⋯" where cards or nodes are left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

from manim import DOWN, LEFT, RIGHT, Line, RoundedRectangle, VGroup

from dtfilm.phrases import Phrase
from dtfilm.visuals.card import CardBox
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import FRAME_WIDTH, Theme

MAX_DRAWN = 8


@dataclass(frozen=True)
class NodeView:
    node: int
    ranks: tuple[int, ...]  # the cards drawn, by global rank
    cards_in_node: int

    @property
    def elided(self) -> bool:
        return len(self.ranks) < self.cards_in_node


@dataclass(frozen=True)
class CardsShown:
    """Which cards a rack draws: the nodes drawn, each with its cards, and how many are left out."""

    nodes: tuple[NodeView, ...]
    hidden_nodes: int  # nodes between the drawn ones, left out


def cards_shown(cards: int, cards_per_node: int, max_drawn: int = MAX_DRAWN) -> CardsShown:
    """Which cards to draw. All of them when they fit; else the first and the last node,
    each showing its first cards and its last one."""
    nodes = -(-cards // cards_per_node)

    def members(node: int) -> list[int]:
        return list(range(node * cards_per_node, min(cards, (node + 1) * cards_per_node)))

    if cards <= max_drawn:
        return CardsShown(tuple(NodeView(n, tuple(members(n)), len(members(n))) for n in range(nodes)), 0)
    shown_nodes = [0] if nodes == 1 else [0, nodes - 1]
    per_node = max_drawn // len(shown_nodes)
    views = []
    for n in shown_nodes:
        ranks = members(n)
        drawn = ranks if len(ranks) <= per_node else [*ranks[: per_node - 1], ranks[-1]]
        views.append(NodeView(n, tuple(drawn), len(ranks)))
    return CardsShown(tuple(views), max(0, nodes - len(shown_nodes)))


@dataclass(frozen=True)
class RackWords:
    """What a rack writes: each card's and node's name, the link inside a node and between
    nodes, and the counts said where cards or nodes are left out."""

    card: Callable[[int], Phrase]  # rank -> "GPU 3"
    node: Callable[[int], Phrase]  # node -> "Node 1"
    intra_link: Phrase  # "NVLink 4"
    cards_per_node: Phrase  # "8 cards"
    inter_link: Phrase  # "InfiniBand NDR"
    nodes: Phrase  # "128 nodes"


# A card's slot in the row (the card and the gap after it) at most, and the card's share of it:
# a few cards are drawn wide, so that their gauges read at 480p (a 2-card rack's were 59 px).
SLOT_MOST = 2.1
CARD_SHARE = 0.76


class Rack(VGroup):
    """Cards grouped in node boxes. `cards[rank]` is each drawn CardBox."""

    def __init__(
        self,
        theme: Theme,
        cards: int,
        cards_per_node: int,
        words: RackWords,
        card_height: float = 2.0,
        max_width: float = 12.6,
        max_drawn: int = MAX_DRAWN,
    ) -> None:
        super().__init__()
        self.words = words
        self.shown = cards_shown(cards, cards_per_node, max_drawn)
        drawn = sum(len(v.ranks) for v in self.shown.nodes)
        gaps = sum(1 for v in self.shown.nodes if v.elided) + (1 if self.shown.hidden_nodes else 0)
        slot = min(SLOT_MOST, max_width / (drawn + 0.8 * gaps + 0.6 * len(self.shown.nodes)))
        self.cards: dict[int, CardBox] = {}
        node_groups = VGroup()
        for view in self.shown.nodes:
            row = VGroup()
            for i, rank in enumerate(view.ranks):
                if view.elided and i == len(view.ranks) - 1:
                    row.add(label(theme, "⋯", theme.label_size, theme.muted))
                card = CardBox(theme, words.card(rank), width=slot * CARD_SHARE, height=card_height)
                self.cards[rank] = card
                row.add(card)
            row.arrange(RIGHT, buff=slot * (1 - CARD_SHARE))
            node_groups.add(self._node_box(theme, view, row))
        self.node_boxes = node_groups
        if self.shown.hidden_nodes:
            dots = label(theme, "⋯", theme.title_size, theme.muted)
            node_groups.submobjects.insert(1, dots)
        node_groups.arrange(RIGHT, buff=0.45)
        # Nodes of one card (--cards-per-node 1): each caption, wider than its card, sets the width
        # the slots did not allow for, and the rack ran off the frame; only a rack that would is
        # shrunk, so every rack that fitted is drawn as it was.
        if node_groups.width > FRAME_WIDTH - 0.5:
            node_groups.scale_to_fit_width(max_width)
        self.add(node_groups)
        self._add_links(theme)

    def _node_box(self, theme: Theme, view: NodeView, row: VGroup) -> VGroup:
        box = RoundedRectangle(
            corner_radius=0.15,
            width=row.width + 0.3,
            height=row.height + 0.45,
            stroke_color=theme.faint,
            stroke_width=2,
            fill_opacity=0,
        ).move_to(row)
        box.shift(DOWN * 0.05)
        # the intra-node link (NVLink, Infinity Fabric): a thick bar along the bottom of the node's cards.
        bodies = [m.body for m in row if isinstance(m, CardBox)]
        bus = Line(
            bodies[0].get_bottom() + LEFT * 0.2 + DOWN * 0.02,
            bodies[-1].get_bottom() + RIGHT * 0.2 + DOWN * 0.02,
            stroke_width=theme.link_widths["nvlink"],
            stroke_color=theme.faint,
        )
        bus.set_z_index(-1)
        name = self.words.node(view.node) + " · " + self.words.intra_link
        if view.elided or self.shown.hidden_nodes:
            name = name + " · " + self.words.cards_per_node
        caption = label(theme, name, theme.small_size, theme.muted)
        caption.next_to(box, DOWN, buff=0.1).align_to(box, LEFT)
        group = VGroup(box, bus, row, caption)
        group.box, group.row, group.caption = box, row, caption
        return group

    def _add_links(self, theme: Theme) -> None:
        boxes = [g for g in self.node_boxes if hasattr(g, "box")]
        self.inter_label = None
        notes = VGroup()
        if len(boxes) > 1:
            for a, b in pairwise(boxes):
                wire = Line(
                    a.box.get_right(),
                    b.box.get_left(),
                    stroke_width=theme.link_widths["infiniband"],
                    stroke_color=theme.muted,
                )
                wire.set_z_index(-1)
                self.add(wire)
            link = "between nodes: " + self.words.inter_link
            if self.shown.hidden_nodes:
                link = link + " · " + self.words.nodes
            self.inter_label = label(theme, link, theme.small_size, theme.muted)
            notes.add(self.inter_label)
        if notes:
            notes.next_to(self.node_boxes, DOWN, buff=0.12)
            self.add(notes)
