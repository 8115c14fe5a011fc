"""The memory ledger drawn two ways: bytes per parameter as a stack of blocks, and one card's
gigabytes as a bar against its capacity."""

from __future__ import annotations

from manim import RIGHT, UP, DashedLine, Rectangle, VGroup

from dtfilm.cost.memory import MEMORY_PARTS, STATE_PARTS
from dtfilm.phrases import Phrase
from dtfilm.visuals.text import clamp_x, label
from dtfilm.visuals.theme import Theme

# The state parts as the byte stack names them (the number format goes in front).
STACK_NAMES = {
    "weights": "weights",
    "gradients": "gradients",
    "master_weights": "master copy of the weights",
    "adam_m": "Adam momentum m",
    "adam_v": "Adam variance v",
}
HIDDEN = 1e-3  # a part of 0 bytes keeps a flat block, so stacks of every precision morph


def stacked_blocks(theme: Theme, sizes: list[float], unit: float, width: float, edge: float) -> VGroup:
    """One block per state part, bottom up, `unit` tall per unit of size; a part of size 0
    keeps a flat, invisible block, so that stacks of every precision morph into each other."""
    blocks = VGroup()
    y = 0.0
    for part, size in zip(STATE_PARTS, sizes, strict=True):
        height = max(size * unit, HIDDEN)
        block = Rectangle(
            width=width,
            height=height,
            fill_color=theme.memory[part],
            fill_opacity=1 if size else 0,
            stroke_color=theme.background,
            stroke_width=edge if size else 0,
        )
        block.move_to([0, y + height / 2, 0])
        y += height if size else 0
        blocks.add(block)
    return blocks


class ByteStack(VGroup):
    """Bytes per parameter, one block per state part from the bottom up, each named beside it:
    `sizes` and `names` are by state part (a part of no bytes is neither drawn nor named)."""

    def __init__(
        self,
        theme: Theme,
        sizes: dict[str, float],
        names: dict[str, Phrase],
        byte_height: float = 0.26,
        width: float = 1.0,
    ) -> None:
        super().__init__()
        self.blocks = stacked_blocks(theme, [sizes[part] for part in STATE_PARTS], byte_height, width, edge=3)
        self.names = VGroup()
        for part, block in zip(STATE_PARTS, self.blocks, strict=True):
            if sizes[part]:
                name = label(theme, names[part], theme.small_size, theme.text)
                name.next_to(block, RIGHT, buff=0.25)
                name.part = part
                self.names.add(name)
        self.add(self.blocks, self.names)

    def block(self, part: str) -> Rectangle:
        return self.blocks[STATE_PARTS.index(part)]


def state_scale(totals: list[float], capacity: float, capacity_height: float, most_height: float) -> float:
    """Units per byte for bars that share one scale: the card's capacity at `capacity_height`
    unless the largest total would pass `most_height`, then shrunk to fit (honest, not capped)."""
    return min(capacity_height / capacity, most_height / max(max(totals), 1.0))


class StateColumn(VGroup):
    """The whole model's training state (bytes by state part, bottom up) as a column, with the
    card's capacity dashed and named (`card`), and the total over it."""

    def __init__(
        self,
        theme: Theme,
        sizes: list[float],
        capacity: float,
        card: Phrase,
        total: Phrase,
        scale: float,
        width: float = 1.1,
    ) -> None:
        super().__init__()
        self.blocks = stacked_blocks(theme, sizes, scale, width, edge=2)
        line_y = capacity * scale
        self.line = DashedLine([-width / 2 - 0.45, line_y, 0], [width / 2 + 0.45, line_y, 0], color=theme.accent)
        self.line.set_stroke(width=4)
        self.card = label(theme, card, theme.small_size, theme.accent)
        self.card.next_to(self.line, RIGHT, buff=0.15)
        over = sum(sizes) > capacity
        self.total = label(theme, total, theme.stat_value_size, theme.oom if over else theme.text, "BOLD")
        self.total.next_to(self.blocks, UP, buff=0.2)
        if self.total.get_bottom()[1] < self.line.get_top()[1] + 0.1:
            self.total.shift(UP * (self.line.get_top()[1] + 0.1 - self.total.get_bottom()[1]))
        self.add(self.blocks, self.line, self.card, self.total)


class LedgerBar(VGroup):
    """One card's ledger left to right (`sizes` by memory part: state parts, then activations)
    on a shared scale, with its capacity as a dashed line and the total at the end."""

    def __init__(
        self,
        theme: Theme,
        sizes: dict[str, float],
        capacity: float,
        total: Phrase,
        scale: float,
        height: float = 0.7,
    ) -> None:
        super().__init__()
        self.segments = VGroup()
        x = 0.0
        for part in MEMORY_PARTS:
            size = sizes[part]
            width = max(size * scale, HIDDEN)
            segment = Rectangle(
                width=width,
                height=height,
                fill_color=theme.memory[part],
                fill_opacity=1 if size else 0,
                stroke_color=theme.background,
                stroke_width=2 if size * scale > 0.03 else 0,
            )
            segment.move_to([x + width / 2, 0, 0])
            x += width if size else 0
            self.segments.add(segment)
        cap_x = capacity * scale
        self.line = DashedLine([cap_x, -height / 2 - 0.3, 0], [cap_x, height / 2 + 0.3, 0], color=theme.accent)
        self.line.set_stroke(width=4)
        fits = sum(sizes.values()) <= capacity
        self.total = label(theme, total, theme.stat_value_size * 0.8, theme.text if fits else theme.oom, "BOLD")
        self.total.next_to(self.segments, RIGHT, buff=0.2)
        if crosses(self.total, self.line):  # a total just short of the capacity: past the line, not through it
            self.total.next_to(self.line, RIGHT, buff=LINE_CLEARANCE)
        self.add(self.segments, self.line, self.total)

    @property
    def activations(self) -> Rectangle:
        return self.segments[MEMORY_PARTS.index("activations")]


LINE_CLEARANCE = 0.12  # between the capacity line and a text moved off it


def crosses(text: VGroup, line: VGroup, clearance: float = LINE_CLEARANCE) -> bool:
    """Whether a vertical `line` runs through `text` (or within `clearance` of its sides): the
    capacity line drawn through a label (issue 58, finding 7: 3d's knobs at 75 and 83 s)."""
    x = line.get_center()[0]
    beside = text.get_left()[0] - clearance < x < text.get_right()[0] + clearance
    return beside and text.get_bottom()[1] < line.get_top()[1] and text.get_top()[1] > line.get_bottom()[1]


def clear_of_line(text: VGroup, line: VGroup, left_bound: float) -> VGroup:
    """`text` moved sideways off a vertical `line` it crosses: left of it when it fits there
    (not past `left_bound`), else right of it."""
    if crosses(text, line):
        x = line.get_center()[0]
        if x - LINE_CLEARANCE - text.width >= left_bound:
            text.shift(RIGHT * (x - LINE_CLEARANCE - text.get_right()[0]))
        else:
            text.shift(RIGHT * (x + LINE_CLEARANCE - text.get_left()[0]))
    return text


def capacity_note(theme: Theme, bar: LedgerBar, words: Phrase) -> VGroup:
    """Above the dashed line: which card, and what it holds (`words`)."""
    note = label(theme, words, theme.small_size, theme.accent)
    note.next_to(bar.line, UP, buff=0.08)
    return clamp_x(note)
