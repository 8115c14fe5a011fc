"""A combined plan drawn: the loaf cut by pipeline stage (across) and tensor slice (down), and
the cards in their nodes, each with its coordinates and a map of the piece it holds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

from manim import DOWN, LEFT, RIGHT, UP, Line, Rectangle, RoundedRectangle, VGroup

from dtfilm.cost.comm import rank_coordinates
from dtfilm.phrases import Phrase
from dtfilm.visuals.text import label, left_column
from dtfilm.visuals.theme import Theme

GROUP_ORDER = ("dp", "tp", "pp", "cp")  # the contract's order of degrees; coordinates read (dp, tp, pp)
LABEL_MARGIN = 0.07  # a card's name and coordinates keep this far inside its edges
ARC_ROOM = 0.42  # inside a node's box, above its cards: room for the arcs between stages
NAMED_CARD = 1.0  # a card this tall has room for its GPU's name over its coordinates
SHORTEST_CARD = 0.62  # a piece map and the coordinates, at the small size
CARD_GAP = 0.12  # between two cards in a node


def shown_groups(degrees: dict[str, int]) -> tuple[str, ...]:
    """The coordinates worth writing: dp, tp, pp always; cp when the plan uses it."""
    return tuple(g for g in GROUP_ORDER if g != "cp" or degrees["cp"] > 1)


def coordinates_key(degrees: dict[str, int]) -> str:
    return "(" + ", ".join(shown_groups(degrees)) + ")"


@dataclass(frozen=True)
class GridWords:
    """What a plan grid writes: each card's name and coordinates, each node's name and the
    replicas it holds, the link inside a node, and what a gap of nodes left out holds."""

    card: Callable[[int], Phrase]  # rank -> "GPU 13"
    coordinates: Callable[[int], Phrase]  # rank -> "(1, 2, 1)"
    node: Callable[[int], Phrase]  # node -> "Node 1"
    replicas: Callable[[int, int], Phrase]  # first, last -> "replica 3", "replicas 0 to 1"
    intra_link: Phrase  # "NVLink 4"
    gap: Callable[[NodeGap], Phrase]  # -> "⋯ nodes 4 to 30: replicas 1 to 6 ⋯"


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

    def cuts(self, direction: str, color: str, overhang: float = 0.12) -> VGroup:
        """The knife's lines, as the words say them: "across" between the stages (horizontal,
        in the gaps between the bands), "down" between the tensor slices (vertical, through
        every band); each a little past the loaf's edges. None where the loaf is not cut so."""
        lines = VGroup()
        left, right = self.bands.get_left()[0] - overhang, self.bands.get_right()[0] + overhang
        top, bottom = self.bands.get_top()[1] + overhang, self.bands.get_bottom()[1] - overhang
        if direction == "across":
            for upper, lower in pairwise(self.bands):
                y = (upper.get_bottom()[1] + lower.get_top()[1]) / 2
                lines.add(Line([left, y, 0], [right, y, 0], color=color, stroke_width=3))
        else:
            first = self.bands[0]
            for a, b in pairwise(first):
                x = (a.get_right()[0] + b.get_left()[0]) / 2
                lines.add(Line([x, top, 0], [x, bottom, 0], color=color, stroke_width=3))
        for line in lines:
            line.cut = direction
        return lines


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


ROW_GAP = 0.2  # between two drawn rows, or a row and a gap's words
NODE_PAD = 0.3  # a node's box around its cards
GRID_HEIGHT = 5.2  # the room a grid is given, top to bottom, unless told less
GRID_WIDTH = 10.3  # and side to side, the node's words at its left included
CAPTION_ROOM = 1.25  # the node's words at the left of its box, and the gap to it


@dataclass(frozen=True)
class NodeGap:
    """Nodes `first`..`last` left out between two drawn rows; where each drawn node around it
    holds whole stages of one replica, the replicas (or the stages of the first replica) that
    those nodes hold, so the words can say what is left out."""

    first: int
    last: int
    stages: tuple[int, int] | None = None  # the first replica's stages on the nodes left out
    replicas: tuple[int, int] | None = None  # the data-parallel replicas left out


def _stage_of(rank: int, degrees: dict[str, int]) -> int:
    return rank // (degrees["tp"] * degrees["cp"]) % degrees["pp"]


def drawn_nodes(cards: int, cards_per_node: int, degrees: dict[str, int], most_rows: int) -> tuple[int | NodeGap, ...]:
    """The nodes a plan grid draws, top to bottom, with the gaps between them. All of them
    when they fit in `most_rows`; else one whole pipeline replica (its first node, the nodes
    between as a gap, its last node) and then the data-parallel group of that last node's cards
    (a gap for the replicas between, then the node of the last replica's same cards),
    so every link a card has, inside its node and across nodes, is drawn at least once."""
    # At most three nodes when some are left out: the first replica's first and last, and the
    # node of the last replica's same cards; the gaps between say which nodes and replicas.
    nodes = -(-cards // cards_per_node)
    if nodes <= most_rows:
        return tuple(range(nodes))
    replica = degrees["tp"] * degrees["cp"] * degrees["pp"]
    last = (replica - 1) // cards_per_node  # the first replica's last node
    whole = replica % cards_per_node == 0  # every node holds whole stages of one replica
    rows: list[int | NodeGap] = [0]
    if last > 1:
        stages = (_stage_of(cards_per_node, degrees), _stage_of(last * cards_per_node - 1, degrees))
        rows.append(NodeGap(1, last - 1, stages if degrees["tp"] * degrees["cp"] <= cards_per_node else None))
    if last > 0:
        rows.append(last)
    first_card = last * cards_per_node
    partners = sorted({(first_card + k * replica) // cards_per_node for k in range(1, degrees["dp"])} - {last})
    if partners and partners[-1] > last + 1:
        # every replica with a node in the gap, the last one's but its last node, which is drawn (a
        # new user's trial: "nodes 8 to 30: replicas 1 to 2" where nodes 24 to 30 hold replica 3);
        # none named with two replicas (`dtfilm check 3d --cards-per-node 4` read past a list)
        between = None
        if whole and len(partners) > 1:
            between = ((last + 1) * cards_per_node // replica, (partners[-1] * cards_per_node - 1) // replica)
        rows.append(NodeGap(last + 1, partners[-1] - 1, replicas=between))
    if partners:
        rows.append(partners[-1])
    return tuple(rows)


def _per_row(room: float, card_width: float) -> int:
    """How many cards of `card_width` a node's row draws in `room` (the first, "⋯", the last at least)."""
    return max(3, int((room + CARD_GAP) // (card_width + CARD_GAP)))


class PlanGrid(VGroup):
    """The cluster's nodes, one row of cards each; every card shows its piece and coordinates.
    Many nodes collapse to one whole pipeline replica and one data-parallel group (see
    `drawn_nodes`), the nodes left out between them said in words. The cards shrink to fit the
    rows in `height` (below NAMED_CARD the GPU's name goes: the node's words say which node),
    and widen for long coordinates, fewer of them a row, so that no word is drawn smaller than
    the small size."""

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
        height: float = GRID_HEIGHT,
        width: float = GRID_WIDTH,
    ) -> None:
        super().__init__()
        self.words, self.degrees = words, degrees
        if degrees["tp"] * degrees["cp"] >= cards_per_node:  # no two stages or replicas share a node
            arc_room = 0.0
        layout = drawn_nodes(cards, cards_per_node, degrees, 3 if arc_room > 0 else 4)
        node_count = sum(isinstance(n, int) for n in layout)
        gap_height = label(theme, "⋯ (0)", theme.small_size).height
        room = (height - (len(layout) - node_count) * gap_height - (len(layout) - 1) * ROW_GAP) / node_count
        self.card_height = max(SHORTEST_CARD, min(card_height, room - arc_room - NODE_PAD))
        row_room = width - CAPTION_ROOM - NODE_PAD
        coordinates = label(theme, words.coordinates(cards - 1), theme.small_size).width  # the most digits
        name = label(theme, words.card(cards - 1), theme.small_size).width
        bare = max(card_width, coordinates + 2 * LABEL_MARGIN)
        named = max(bare, name + 2 * LABEL_MARGIN)
        # The GPU's name where the card is tall enough and naming it costs no card a row.
        self.named = self.card_height >= NAMED_CARD and _per_row(row_room, named) >= _per_row(row_room, bare)
        self.card_width = named if self.named else bare
        self.per_row = _per_row(row_room, self.card_width)
        self.cards: dict[int, VGroup] = {}
        self.maps: dict[int, PieceMap] = {}
        self.node_rows = VGroup()
        self.node_of: dict[int, int] = {}
        self.slot_of: dict[int, int] = {}  # a drawn card's place in its node's row
        self.gap_after: dict[int, VGroup] = {}  # a drawn node -> the words for the gap under it
        rows = VGroup()
        previous = 0
        for item in layout:
            if isinstance(item, NodeGap):
                gap = label(theme, words.gap(item), theme.small_size, theme.muted)
                gap.node_gap = item
                self.gap_after[previous] = gap
                rows.add(gap)
                continue
            node = self._node(theme, item, cards, cards_per_node, arc_room)
            self.node_rows.add(node)
            rows.add(node)
            previous = item
        rows.arrange(DOWN, buff=ROW_GAP, aligned_edge=RIGHT)  # the boxes one over the other, words at left
        for gap in self.gap_after.values():  # centred under the nodes' boxes, not their words
            gap.set_x(self.node_rows[0].box.get_x())
        self.layout = layout
        self.add(rows)

    def _node(self, theme: Theme, node: int, cards: int, cards_per_node: int, arc_room: float) -> VGroup:
        """One node's box: its cards in a row (the first ones, "⋯" and its last where they do
        not all fit), and at its left its name, the replicas it holds and (first row) its link."""
        ranks = list(range(node * cards_per_node, min(cards, (node + 1) * cards_per_node)))
        drawn = ranks if len(ranks) <= self.per_row else [*ranks[: self.per_row - 2], ranks[-1]]
        row = VGroup()
        for i, rank in enumerate(drawn):
            if len(drawn) < len(ranks) and i == len(drawn) - 1:
                row.add(label(theme, "⋯", theme.label_size, theme.muted))
            row.add(self._card(theme, rank))
            self.node_of[rank], self.slot_of[rank] = node, i
        row.arrange(RIGHT, buff=CARD_GAP)
        box = RoundedRectangle(
            corner_radius=0.12,
            width=row.width + NODE_PAD,
            height=row.height + arc_room + NODE_PAD,
            stroke_color=theme.faint,
        ).move_to(row.get_center() + UP * arc_room / 2)
        box.set_stroke(width=2)
        lines = [label(theme, self.words.node(node), theme.small_size, theme.muted)]
        replica = self.degrees["tp"] * self.degrees["cp"] * self.degrees["pp"]
        if self.degrees["dp"] > 1:
            held = self.words.replicas(ranks[0] // replica, ranks[-1] // replica)
            lines.append(label(theme, held, theme.small_size, theme.muted))
        if len(self.node_rows) == 0 or self.named:  # the same link in every node: said once
            lines.append(label(theme, self.words.intra_link, theme.small_size, theme.muted))
        while len(lines) > 1 and VGroup(*lines).arrange(DOWN, buff=0.04).height > box.height + 0.1:
            lines.pop()
        caption = VGroup(*lines).arrange(DOWN, aligned_edge=RIGHT, buff=0.04)
        caption.next_to(box, LEFT, buff=0.15)
        group = VGroup(box, row, caption)
        group.box, group.node, group.caption = box, node, caption
        return group

    def _card(self, theme: Theme, rank: int) -> VGroup:
        degrees, width, height = self.degrees, self.card_width, self.card_height
        place = rank_coordinates(rank, degrees["tp"], degrees["cp"], degrees["pp"])
        body = RoundedRectangle(
            corner_radius=0.07, width=width, height=height, fill_color=theme.card_fill, fill_opacity=1
        )
        body.set_stroke(theme.card_edge, width=2)
        words = [label(theme, self.words.coordinates(rank), theme.small_size, theme.text)]
        if self.named:
            words.insert(0, label(theme, self.words.card(rank), theme.small_size, theme.muted))
        text = VGroup(*words).arrange(DOWN, buff=0.06)
        map_height = min(0.56, height - text.height - 0.22)
        piece_map = PieceMap(
            theme, degrees["pp"], degrees["tp"], place["pp"], place["tp"], min(0.62 * width, 0.7), map_height
        )
        piece_map.move_to(body.get_top() + DOWN * (0.08 + piece_map.height / 2))
        text.next_to(piece_map, DOWN, buff=0.07)
        card = VGroup(body, piece_map, text)
        card.body = body
        self.cards[rank] = card
        self.maps[rank] = piece_map
        return card


def grid_key(theme: Theme, degrees: dict[str, int], named: bool = True) -> VGroup:
    """What a card's label means."""
    if not named:
        return label(theme, "on each card: " + coordinates_key(degrees), theme.small_size, theme.muted)
    return left_column(
        label(theme, "on each card: its GPU,", theme.small_size, theme.muted),
        label(theme, "then " + coordinates_key(degrees), theme.small_size, theme.muted),
    )
