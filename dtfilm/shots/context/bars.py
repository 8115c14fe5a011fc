"""The sequence chapter's bars and bands: the ring's time against the attention it could hide
behind, the attention work per card under a layout, and a highlighter's band over a row."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, Rectangle, SurroundingRectangle, VGroup

from dtfilm.cost import context
from dtfilm.numbers import Numbers
from dtfilm.scene import HIGHLIGHT_OPACITY, HIGHLIGHT_Z, ShotContext
from dtfilm.shots.common.draw import group_gpu
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import Theme


def time_bars(ctx: ShotContext, numbers: Numbers) -> VGroup:
    """The ring's time per step against the attention it could hide behind, as bars: the
    slowest card's, with the sequence dealt in order as the ring's picture deals it (every ring
    step waits for that card; the zig-zag shot after it brings the figure down to the average)."""
    theme = ctx.theme
    rows = [
        ("ring, no overlap", "comm.seconds_by_group.cp", theme.accent),
        ("slowest card's attention", "compute.attention_seconds_per_step_contiguous", theme.card_color(0)),
    ]
    longest = max(float(numbers.get(path)) for _, path, _ in rows) or 1.0
    width = ctx.regions.side.width * 0.7
    bars = VGroup()
    for name, path, colour in rows:
        bar = Rectangle(width=max(width * float(numbers.get(path)) / longest, 0.03), height=0.22)
        bar.set_fill(colour, opacity=0.9).set_stroke(width=0)
        text = label(theme, name, theme.small_size, theme.muted)
        value = label(theme, numbers(f"{{{path}:time}}"), theme.small_size, theme.text)
        value.next_to(bar, RIGHT, buff=0.12)
        text.next_to(bar, UP, buff=0.06, aligned_edge=LEFT)
        bars.add(VGroup(text, bar, value))
    return bars.arrange(DOWN, aligned_edge=LEFT, buff=0.15)


BAR_WIDTH = 3.0  # the busiest card's work, dealt in order


def owner_colours(theme_colours: list[str], cp: int, layout: str) -> list[str]:
    """Each chunk of the sequence in the colour of the card that holds it under `layout`."""
    return [theme_colours[card] for card in context.chunk_owners(cp, layout)]


def work_bars(ctx: ShotContext, numbers: Numbers, cp: int, layout: str) -> VGroup:
    """One bar per card, as long as its share of the attention work under `layout`."""
    theme = ctx.theme
    works = context.work_per_card(cp, layout)
    most = max(context.work_per_card(cp, "contiguous"))
    bars = VGroup()
    for card, work in enumerate(works):
        name = label(theme, group_gpu(numbers, "cp", card), theme.small_size, theme.muted)
        bar = Rectangle(
            width=BAR_WIDTH * work / most, height=0.26, fill_color=theme.card_color(card), fill_opacity=0.9
        ).set_stroke(width=0)
        bar.next_to(name, RIGHT, buff=0.15)
        bars.add(VGroup(name, bar))
    bars.arrange(DOWN, aligned_edge=LEFT, buff=0.12)
    return bars


def band(theme: Theme, piece: VGroup) -> SurroundingRectangle:
    """A highlighter's band over `piece`, as ShotContext.highlight draws it (to fade in and out)."""
    shape = SurroundingRectangle(piece, buff=0.06, corner_radius=0.04, stroke_width=0)
    return shape.set_fill(theme.accent, opacity=HIGHLIGHT_OPACITY).set_z_index(HIGHLIGHT_Z)
