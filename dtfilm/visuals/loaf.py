"""The model drawn as a loaf: a stack of layer slices, grouped with a count when there are many."""

from __future__ import annotations

from manim import RIGHT, UP, RoundedRectangle, VGroup

from dtfilm.phrases import Phrase
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import Theme

MAX_SLICES = 12


def slice_count(layers: int, max_slices: int = MAX_SLICES) -> int:
    """How many slices are drawn for `layers` layers (each then stands for several)."""
    return max(1, min(layers, max_slices))


class Loaf(VGroup):
    """A stack of layer slices, input at the bottom. `caption` (a Phrase) sits to the right."""

    def __init__(
        self,
        theme: Theme,
        layers: int,
        caption: Phrase | None = None,
        width: float = 2.2,
        slice_height: float = 0.12,
        gap: float = 0.035,
        max_slices: int = MAX_SLICES,
    ) -> None:
        super().__init__()
        self.layers = layers
        self.slices = VGroup(
            *[
                RoundedRectangle(
                    corner_radius=min(0.05, slice_height / 2.5),
                    width=width,
                    height=slice_height,
                    fill_color=theme.loaf,
                    fill_opacity=1,
                    stroke_color=theme.loaf_crust,
                    stroke_width=2,
                )
                for _ in range(slice_count(layers, max_slices))
            ]
        ).arrange(UP, buff=gap)
        self.add(self.slices)
        self.caption = None
        if caption is not None:
            self.caption = label(theme, caption, theme.label_size, theme.muted)
            self.caption.next_to(self.slices, RIGHT, buff=0.25)
            self.add(self.caption)

    def bare_copy(self) -> VGroup:
        """The slices alone, for copies that fly onto cards."""
        return self.slices.copy()
