"""A combined plan drawn: the loaf cut by pipeline stage (across) and tensor slice (down), and
the cards in their nodes, each with its coordinates and a map of the piece it holds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from manim import DOWN, LEFT, RIGHT, UP, Rectangle, RoundedRectangle, VGroup

from dtfilm.cost.comm import rank_coordinates
from dtfilm.phrases import Phrase
from dtfilm.visuals.rack import plan_rack
from dtfilm.visuals.text import label, left_column
from dtfilm.visuals.theme import Theme

GROUP_ORDER = ("dp", "tp", "pp", "cp")  # the contract's order of degrees; coordinates read (dp, tp, pp)
LABEL_MARGIN = 0.07  # a card's name and coordinates keep this far inside its edges
ARC_ROOM = 0.42  # inside a node's box, above its cards: room for the arcs between stages


def shown_groups(degrees: dict[str, int]) -> tuple[str, ...]:
    """The coordinates worth writing: dp, tp, pp always; cp when the plan uses it."""
    return tuple(g for g in GROUP_ORDER if g != "cp" or degrees["cp"] > 1)


def coordinates_key(degrees: dict[str, int]) -> str:
    return "(" + ", ".join(shown_groups(degrees)) + ")"


@dataclass(frozen=True)
class GridWords:
    """What a plan grid writes: each card's name and coordinates, each node's name, the link
    inside a node, and the node count said when nodes are left out."""

    card: Callable[[int], Phrase]  # rank -> "GPU 13"
    coordinates: Callable[[int], Phrase]  # rank -> "(1, 2, 1)"
    node: Callable[[int], Phrase]  # node -> "Node 1"
    intra_link: Phrase  # "NVLink 4"
    nodes_in_all: Phrase  # "⋯ 8 nodes in all ⋯"


def _cell(width: float, height: float, color: str, filled: bool, edge: str) -> Rectangle:
    return Rectangle(
        width=width,
        height=height,
        fill_color=color,
        fill_opacity=1 if filled else 0,
        stroke_color=edge,
        stroke_width=1.2,
    )


class SlicedLoaf(VGroup):
    """pp bands of layers, each cut into tp pieces; `pieces[(stage, slice)]`, coloured by stage."""

    def __init__(
        self, theme: Theme, pp: int, tp: int, width: float = 2.4, band_height: float = 0.42, gap: float = 0.1
    ) -> None:
        super().__init__()
        self.pieces: dict[tuple[int, int], Rectangle] = {}
        bands = VGroup()
        for stage in range(pp):
            band = VGroup(
                *[_cell(width / tp, band_height, theme.card_color(stage), True, theme.background) for _ in range(tp)]
            ).arrange(RIGHT, buff=0.06)
            for piece_index, piece in enumerate(band):
                self.pieces[(stage, piece_index)] = piece
            bands.add(band)
        bands.arrange(DOWN, buff=gap)  # stage 0 (the input end) on top, as the data flows down
        self.bands = bands
        self.add(bands)


class PieceMap(VGroup):
    """A card's map of the whole loaf, faint, with its own piece filled in its stage's colour."""

    def __init__(self, theme: Theme, pp: int, tp: int, stage: int, piece: int, width: float, height: float) -> None:
        super().__init__()
        cell_w, cell_h = width / tp, height / pp
        self.own: Rectangle | None = None
        for s in range(pp):
            for t in range(tp):
                mine = (s, t) == (stage, piece)
                cell = _cell(cell_w, cell_h, theme.card_color(stage), mine, theme.card_edge if mine else theme.faint)
                cell.move_to([t * cell_w, -s * cell_h, 0])
                if mine:
                    cell.stage_piece = (s, t)
                    self.own = cell
                self.add(cell)


class PlanGrid(VGroup):
    """The cluster's nodes, one row of cards each; every card shows its piece and coordinates.
    Many nodes collapse to the first and the last with a count between them."""

    def __init__(
        self,
        theme: Theme,
        degrees: dict[str, int],
        cards: int,
        cards_per_node: int,
        words: GridWords,
        card_width: float = 0.98,
        card_height: float = 1.3,
        arc_room: float = ARC_ROOM,
    ) -> None:
        super().__init__()
        self.words = words
        plan = plan_rack(cards, cards_per_node, max_drawn=2 * cards_per_node)
        self.cards: dict[int, VGroup] = {}
        self.maps: dict[int, PieceMap] = {}
        self.node_rows = VGroup()
        rows = VGroup()
        for view in plan.nodes:
            row = VGroup()
            for i, rank in enumerate(view.ranks):
                if view.elided and i == len(view.ranks) - 1:
                    row.add(label(theme, "⋯", theme.label_size, theme.muted))
                row.add(self._card(theme, rank, degrees, card_width, card_height))
            row.arrange(RIGHT, buff=0.12)
            box = RoundedRectangle(
                corner_radius=0.12, width=row.width + 0.3, height=row.height + arc_room + 0.3, stroke_color=theme.faint
            ).move_to(row.get_center() + UP * arc_room / 2)
            box.set_stroke(width=2)
            caption = VGroup(
                label(theme, words.node(view.node), theme.small_size, theme.muted),
                label(theme, words.intra_link, theme.small_size, theme.muted),
            ).arrange(DOWN, aligned_edge=RIGHT, buff=0.06)
            caption.next_to(box, LEFT, buff=0.15)
            node = VGroup(box, row, caption)
            node.box = box
            self.node_rows.add(node)
            rows.add(node)
        self.dots = None
        if plan.hidden_nodes:
            self.dots = label(theme, words.nodes_in_all, theme.small_size, theme.muted)
            rows.submobjects.insert(1, self.dots)
        rows.arrange(DOWN, buff=0.4)
        self.node_of = {rank: n for n, view in enumerate(plan.nodes) for rank in view.ranks}
        self.add(rows)

    def _card(self, theme: Theme, rank: int, degrees: dict[str, int], width: float, height: float) -> VGroup:
        place = rank_coordinates(rank, degrees["tp"], degrees["cp"], degrees["pp"])
        body = RoundedRectangle(
            corner_radius=0.07, width=width, height=height, fill_color=theme.card_fill, fill_opacity=1
        )
        body.set_stroke(theme.card_edge, width=2)
        piece_map = PieceMap(
            theme, degrees["pp"], degrees["tp"], place["pp"], place["tp"], width * 0.62, min(0.56, height * 0.38)
        )
        piece_map.move_to(body.get_top() + DOWN * (0.12 + piece_map.height / 2))
        name = label(theme, self.words.card(rank), theme.small_size, theme.muted)
        coords = label(theme, self.words.coordinates(rank), theme.small_size, theme.text)
        for text in (name, coords):  # six-digit ranks and long coordinates: inside the card, with
            if text.width > width - 2 * LABEL_MARGIN:  # its margins, so neighbours never run together
                text.scale_to_fit_width(width - 2 * LABEL_MARGIN)
        VGroup(name, coords).arrange(DOWN, buff=0.06).next_to(piece_map, DOWN, buff=0.1)
        card = VGroup(body, piece_map, name, coords)
        card.body = body
        self.cards[rank] = card
        self.maps[rank] = piece_map
        return card


def grid_key(theme: Theme, degrees: dict[str, int]) -> VGroup:
    """What a card's label means."""
    return left_column(
        label(theme, "on each card: its GPU,", theme.small_size, theme.muted),
        label(theme, "then " + coordinates_key(degrees), theme.small_size, theme.muted),
    )
