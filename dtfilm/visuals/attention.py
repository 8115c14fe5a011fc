"""Ring attention drawn: cards in a ring, each keeping its queries while key/value blocks travel,
and the attention matrix in blocks filling as each card computes.

Plain values in: chunk counts, colours and the Phrases to show; the caller decides which block
each card computes (dtfilm.cost.context).
"""

from __future__ import annotations

from manim import (
    LEFT,
    PI,
    RIGHT,
    UP,
    Animation,
    ArcBetweenPoints,
    Arrow,
    CurvedArrow,
    ManimColor,
    Polygon,
    Rectangle,
    RoundedRectangle,
    Square,
    VGroup,
    interpolate_color,
    rate_functions,
)

from dtfilm.phrases import Phrase
from dtfilm.visuals.palette import legible
from dtfilm.visuals.text import ink_on, label
from dtfilm.visuals.theme import Theme
from dtfilm.visuals.travel import Travel


class BlockGrid(VGroup):
    """The attention matrix cut into chunks x chunks blocks: row q holds query chunk q's scores
    against every key chunk. A causal mask leaves the blocks below the diagonal and half of each
    diagonal block; the masked ones are drawn faint. `fills[(q, k)]` is the shape a computed
    block fills (a square, or the lower triangle on the diagonal), empty until filled."""

    def __init__(self, theme: Theme, chunks: int, size: float, row_names: list[Phrase] | None = None) -> None:
        super().__init__()
        self.theme = theme
        cell = size / chunks
        self.cell = cell
        self.outlines, self.masked = VGroup(), VGroup()
        self.fills: dict[tuple[int, int], Polygon | Square] = {}
        for q in range(chunks):
            for k in range(chunks):
                x, y = (k + 0.5) * cell, -(q + 0.5) * cell
                outline = Square(cell, stroke_color=theme.faint, stroke_width=1.2, fill_opacity=0).move_to([x, y, 0])
                if k > q:
                    outline.set_stroke(opacity=0.35)
                    self.masked.add(outline)
                    continue
                self.outlines.add(outline)
                inset = cell * 0.06
                left, right = x - cell / 2 + inset, x + cell / 2 - inset
                top, bottom = y + cell / 2 - inset, y - cell / 2 + inset
                if k == q:  # the diagonal: a query sees the keys at or before it, half the block
                    shape = Polygon([left, top, 0], [left, bottom, 0], [right, bottom, 0])
                else:
                    shape = Square(cell - 2 * inset).move_to([x, y, 0])
                shape.set_fill(theme.faint, opacity=0).set_stroke(width=0)
                self.fills[(q, k)] = shape
        self.add(self.masked, self.outlines, *self.fills.values())
        self.row_names = VGroup()
        for q, name in enumerate(row_names or []):
            text = label(theme, name, theme.small_size, theme.muted)
            if text.height > cell * 0.9:
                text.scale_to_fit_height(cell * 0.9)
            self.row_names.add(text.move_to([-0.15, -(q + 0.5) * cell, 0], aligned_edge=RIGHT))
        self.add(self.row_names)

    def column_keys(self, colours: list[str]) -> VGroup:
        """Above each column, a swatch in the colour of the key/value block it stands for."""
        corner = VGroup(self.outlines, self.masked).get_corner(UP + LEFT)
        keys = VGroup()
        for k, colour in enumerate(colours):
            swatch = Rectangle(width=self.cell * 0.7, height=0.14, fill_color=colour, fill_opacity=0.9)
            swatch.set_stroke(width=0).move_to(corner + RIGHT * (k + 0.5) * self.cell + UP * 0.15)
            keys.add(swatch)
        return keys

    def fill(self, query: int, key: int, colour: str) -> Animation:
        return self.fills[(query, key)].animate.set_fill(colour, opacity=0.9)

    def recolour_row(self, query: int, colour: str) -> list[Animation]:
        """Every block of row `query` already filled, in `colour` (a row dealt to another card)."""
        return [
            shape.animate.set_fill(colour, opacity=shape.get_fill_opacity())
            for (q, _), shape in self.fills.items()
            if q == query
        ]


class RingRow(VGroup):
    """c cards in a row joined as a ring (the last one's link curves back under the row). Each
    card keeps its query block `queries[i]`; `blocks[i]` is the key/value block it holds now."""

    def __init__(
        self, theme: Theme, names: list[Phrase], colours: list[str], width: float, query_text: str = "Q"
    ) -> None:
        super().__init__()
        self.theme = theme
        count = len(names)
        pitch = width / count
        card_width = min(1.5, pitch * 0.8)
        self.cards, self.queries, self.slots, self.names = VGroup(), VGroup(), VGroup(), VGroup()
        self.blocks: list[VGroup] = []
        for i, (name, colour) in enumerate(zip(names, colours, strict=True)):
            x = (i + 0.5) * pitch
            body = RoundedRectangle(
                corner_radius=0.08, width=card_width, height=1.2, fill_color=theme.card_fill, fill_opacity=1
            ).set_stroke(theme.card_edge, width=2)
            body.move_to([x, 0, 0])
            middle = body.get_center() + UP * 0.17
            query = self._block(query_text, colour, card_width * 0.38, filled=False)
            query.move_to(middle + LEFT * card_width * 0.22)
            slot = Rectangle(width=card_width * 0.38, height=0.5, stroke_color=theme.faint, stroke_width=1)
            slot.move_to(middle + RIGHT * card_width * 0.22)
            kv = self._block("K/V", colour, card_width * 0.38, filled=True).move_to(slot)
            text = label(theme, name, theme.small_size, theme.muted)
            text.move_to(body.get_bottom() + UP * 0.22)
            self.cards.add(body)
            self.queries.add(query)
            self.slots.add(slot)
            self.names.add(text)
            self.blocks.append(kv)
        links = VGroup()
        for a, b in zip(self.cards[:-1], self.cards[1:], strict=True):
            links.add(Arrow(a.get_right(), b.get_left(), buff=0.04, max_tip_length_to_length_ratio=0.4))
        if count > 1:
            back = CurvedArrow(
                self.cards[-1].get_bottom() + LEFT * 0.2, self.cards[0].get_bottom() + RIGHT * 0.2, angle=-PI / 5
            )
            links.add(back)
        for link in links:
            link.set_color(theme.faint).set_stroke(width=2)
        self.links = links
        self.add(links, self.cards, self.slots, self.queries, *self.blocks, self.names)

    def _block(self, text: str, colour: str, width: float, filled: bool) -> VGroup:
        box = Rectangle(
            width=width,
            height=0.5,
            fill_color=colour,
            fill_opacity=0.9 if filled else 0.15,
            stroke_color=colour,
            stroke_width=2,
        )
        # words that read on the block: the text or background colour on a filled one, the
        # block's own colour (shaded where it must be) on its faint wash over the card
        wash = interpolate_color(ManimColor(self.theme.card_fill), ManimColor(colour), box.get_fill_opacity())
        ink = ink_on(self.theme, colour, box.get_fill_opacity()) if filled else legible(colour, wash.to_hex())
        name = label(self.theme, text, self.theme.least_size, ink)
        if name.width > width * 0.9:
            name.scale_to_fit_width(width * 0.9)
        return VGroup(box, name.move_to(box))

    def pass_on(self, run_time: float) -> list[Animation]:
        """Every key/value block moves to the next card, the last one round under the row to the
        first; `blocks` follows."""
        count = len(self.blocks)
        moves = []
        for i, block in enumerate(self.blocks):
            target = self.slots[(i + 1) % count].get_center()
            if i == count - 1 and count > 1:
                path = ArcBetweenPoints(block.get_center(), target, angle=-PI / 2.5)
            else:
                path = ArcBetweenPoints(block.get_center(), target, angle=-PI / 4)
            moves.append(Travel(block, path, rate_func=rate_functions.smooth, run_time=run_time))
        self.blocks = [self.blocks[-1], *self.blocks[:-1]]
        return moves
