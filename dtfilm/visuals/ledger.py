"""The memory ledger drawn two ways: bytes per parameter as a stack of blocks, and one card's
gigabytes as a bar against its capacity."""

from __future__ import annotations

from manim import RIGHT, UP, DashedLine, Rectangle, VGroup

from dtfilm.cost.estimate import MEMORY_PARTS
from dtfilm.cost.memory import STATE_PARTS
from dtfilm.numbers import Numbers
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


def part_name(numbers: Numbers, part: str) -> Phrase:
    """A state part with the number format it is kept in, from the cost model: "fp32 Adam m"."""
    return numbers(f"{{formats.{part}}} {STACK_NAMES[part]}")


class ByteStack(VGroup):
    """Bytes per parameter, one block per state part from the bottom up, each named beside it."""

    def __init__(self, theme: Theme, numbers: Numbers, byte_height: float = 0.26, width: float = 1.0) -> None:
        super().__init__()
        sizes = [float(numbers.get(f"bytes_per_param.{part}")) for part in STATE_PARTS]
        self.blocks = stacked_blocks(theme, sizes, byte_height, width, edge=3)
        self.names = VGroup()
        for part, size, block in zip(STATE_PARTS, sizes, self.blocks, strict=True):
            if size:
                noun = " byte" if size == 1 else " bytes"
                phrase = numbers(f"{{bytes_per_param.{part}:int}}") + noun + " · " + part_name(numbers, part)
                name = label(theme, phrase, theme.small_size, theme.text)
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
    """The whole model's training state in GB as a column, with the card's capacity dashed."""

    def __init__(self, theme: Theme, numbers: Numbers, scale: float, width: float = 1.1) -> None:
        super().__init__()
        params = float(numbers.get("params"))
        sizes = [params * float(numbers.get(f"bytes_per_param.{part}")) for part in STATE_PARTS]
        self.blocks = stacked_blocks(theme, sizes, scale, width, edge=2)
        capacity = float(numbers.get("memory.capacity"))
        line_y = capacity * scale
        self.line = DashedLine([-width / 2 - 0.45, line_y, 0], [width / 2 + 0.45, line_y, 0], color=theme.accent)
        self.line.set_stroke(width=4)
        self.card = label(theme, numbers("{~one} card: {memory.capacity:GB}"), theme.small_size, theme.accent)
        self.card.next_to(self.line, RIGHT, buff=0.15)
        over = float(numbers.get("state.total")) > capacity
        self.total = label(
            theme, numbers("{state.total:GB}"), theme.stat_value_size, theme.oom if over else theme.text, "BOLD"
        )
        self.total.next_to(self.blocks, UP, buff=0.2)
        if self.total.get_bottom()[1] < self.line.get_top()[1] + 0.1:
            self.total.shift(UP * (self.line.get_top()[1] + 0.1 - self.total.get_bottom()[1]))
        self.add(self.blocks, self.line, self.card, self.total)


class LedgerBar(VGroup):
    """One card's ledger left to right (state parts, then activations) on a shared scale,
    with its capacity as a dashed line and the total at the end."""

    def __init__(self, theme: Theme, numbers: Numbers, scale: float, height: float = 0.7) -> None:
        super().__init__()
        self.segments = VGroup()
        x = 0.0
        for part in MEMORY_PARTS:
            size = float(numbers.get(f"memory.{part}"))
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
        capacity = float(numbers.get("memory.capacity"))
        cap_x = capacity * scale
        self.line = DashedLine([cap_x, -height / 2 - 0.3, 0], [cap_x, height / 2 + 0.3, 0], color=theme.accent)
        self.line.set_stroke(width=4)
        fits = bool(numbers.get("memory.fits"))
        self.total = label(
            theme, numbers("{memory.total:GB}"), theme.stat_value_size * 0.8, theme.text if fits else theme.oom, "BOLD"
        )
        self.total.next_to(self.segments, RIGHT, buff=0.2)
        self.add(self.segments, self.line, self.total)

    @property
    def activations(self) -> Rectangle:
        return self.segments[MEMORY_PARTS.index("activations")]


def capacity_note(theme: Theme, bar: LedgerBar, numbers: Numbers) -> VGroup:
    """Above the dashed line: which card, and what it holds."""
    note = label(theme, numbers("{cluster.gpu_label} holds {memory.capacity:GB}"), theme.small_size, theme.accent)
    note.next_to(bar.line, UP, buff=0.08)
    return clamp_x(note)
