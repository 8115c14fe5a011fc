"""Stats at the top right ("Per card", "Comm / step" ...): values that change by a cross-fade."""

from __future__ import annotations

from manim import DOWN, RIGHT, UP, Animation, Rectangle, VGroup, rate_functions

from dtfilm.phrases import Phrase
from dtfilm.visuals.regions import regions
from dtfilm.visuals.text import Label, label, relabel
from dtfilm.visuals.theme import Theme


class Stat(VGroup):
    """A muted name over a large value."""

    def __init__(
        self,
        theme: Theme,
        name: str | Phrase,
        value: Phrase,
        emphasis: bool = False,
        reserve: tuple[Phrase, ...] = (),
    ) -> None:
        super().__init__()
        self.theme = theme
        self.emphasis = emphasis
        self.name = label(theme, name, theme.stat_label_size, theme.muted)
        self.value = self._value_label(value)
        # An invisible slot as wide as the widest value this stat will count to, so that
        # counting never pushes into its neighbour.
        widest = max([self.value.width, *(self._value_label(p).width for p in reserve)])
        self.slot = Rectangle(
            width=max(widest, self.name.width), height=self.value.height, stroke_width=0, fill_opacity=0
        )
        self.add(self.name, self.slot, self.value)
        self.slot.next_to(self.name, DOWN, buff=0.08, aligned_edge=RIGHT)
        self.value.move_to(self.slot, aligned_edge=RIGHT)

    def _value_label(self, value: Phrase | str) -> Label:
        size = self.theme.stat_value_size * (1.25 if self.emphasis else 1.0)
        color = self.theme.accent if self.emphasis else self.theme.text
        if isinstance(value, Phrase) and value.over:  # past the card's capacity: bad, whatever its place
            color = self.theme.bad
        return label(self.theme, value, size, color, weight="BOLD")


class StatsPanel(VGroup):
    """A row of stats pinned to the top right corner of the frame."""

    def __init__(self, theme: Theme, stats: list[Stat]) -> None:
        super().__init__(*stats)
        self.theme = theme
        self.text_layer = "counters"  # (the design check's layers: dtfilm.onscreen.design)
        self.stats = stats
        self.arrange(RIGHT, buff=0.55, aligned_edge=UP)
        self.pin()

    def pin(self) -> None:
        """Top right, in the stats region, whatever the row's width."""
        regions(self.theme).stats.place(self, UP + RIGHT)

    def clear_of(self, left_x: float, gap: float = 0.35) -> None:
        """Shrink the row (about its top right corner) so that it starts right of `left_x`: long
        values at huge settings must not run into the chapter's title."""
        room = regions(self.theme).stats.right - left_x - gap
        if self.get_left()[0] < left_x + gap and room > 0:
            self.scale(room / self.width, about_edge=UP + RIGHT)


class CountTo(Animation):
    """A stat's value changing from its shown Phrase to a new one: the old fades out, the new
    fades in, and nothing between is ever shown. Counting through the numbers between two
    settings would show states no setting has ("m = 1, 14 sequences each, 71.9%" on the way
    from 60% to 15.8%), so every frame shows one of the two true values (issue 44)."""

    def __init__(self, stat: Stat, target: Phrase, run_time: float = 1.2) -> None:
        self.stat = stat
        self.target = target
        self.start_phrase = stat.value.phrase
        self.anchor = stat.value.get_right()
        super().__init__(stat.value, run_time=run_time, rate_func=rate_functions.smooth)

    def interpolate_mobject(self, alpha: float) -> None:
        # the old value fades out over the first half, the new fades in over the second
        text: Phrase | str = self.target if alpha >= 0.5 or self.start_phrase is None else self.start_phrase
        fresh = self.stat._value_label(text)
        fresh.move_to(self.anchor, aligned_edge=RIGHT)
        if alpha < 1:
            fresh.set_fill(opacity=min(1.0, abs(2 * alpha - 1)))
        relabel(self.mobject, fresh, as_typeset=alpha >= 1)
