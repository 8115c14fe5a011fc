"""The model drawn as a loaf: a stack of layer slices, grouped when there are many.

A slice stands for a run of consecutive layers (`Slice.first`, `Slice.count`), its height in
proportion to its count, so a loaf of 32 layers drawn as 8 slices reads "4 layers a slice" and
not "12 slices are 32 layers". A loaf built with `breaks` (the first layers of pipeline stages)
never lets a slice straddle one, so a cut between stages falls between slices.

The cuts (`dtfilm.visuals.slicing`) work on the slices' geometry: lengthwise (tensor
parallelism), across (pipeline) and into slivers (FSDP).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from manim import RIGHT, UP, RoundedRectangle, VGroup

from dtfilm.phrases import Phrase
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import Theme

MAX_SLICES = 12


def group_size(layers: int, max_slices: int = MAX_SLICES) -> int:
    """Layers a slice stands for: the smallest that keeps the loaf to `max_slices` slices,
    moved up to a divisor of `layers` when one is near (32 layers: 4 a slice, 8 slices), so
    that every slice stands for as many layers as the others."""
    least = max(1, -(-layers // max(1, max_slices)))
    for size in range(least, 2 * least + 1):
        if layers % size == 0 and layers // size >= max(1, max_slices // 2):
            return size
    return least


def layer_groups(layers: int, max_slices: int = MAX_SLICES, breaks: Sequence[int] = ()) -> list[tuple[int, int]]:
    """(first layer, 0-based; count) of every slice, input end first. A slice never straddles a
    break (a layer that must begin a slice: the first layer of a pipeline stage)."""
    size = group_size(layers, max_slices)
    edges = sorted({0, layers, *[b for b in breaks if 0 < b < layers]})
    groups = []
    for start, end in itertools.pairwise(edges):
        for first in range(start, end, size):
            groups.append((first, min(size, end - first)))
    return groups


def slice_count(layers: int, max_slices: int = MAX_SLICES) -> int:
    """How many slices are drawn for `layers` layers (each then stands for several)."""
    return len(layer_groups(layers, max_slices))


class Slice(RoundedRectangle):
    """One slice of the loaf: the layers first .. first + count - 1 (0-based)."""

    first: int
    count: int


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
        breaks: Sequence[int] = (),
    ) -> None:
        super().__init__()
        self.theme = theme
        self.layers = int(layers)
        self.groups = layer_groups(self.layers, max_slices, breaks)
        self.per_slice = group_size(self.layers, max_slices)
        slices = []
        for first, count in self.groups:
            height = slice_height * count / self.per_slice
            piece = Slice(
                corner_radius=min(0.05, height / 2.5),
                width=width,
                height=height,
                fill_color=theme.loaf,
                fill_opacity=1,
                stroke_color=theme.loaf_crust,
                stroke_width=2,
            )
            piece.first, piece.count = first, count
            slices.append(piece)
        self.slices = VGroup(*slices).arrange(UP, buff=gap)
        self.add(self.slices)
        self.caption = None
        if caption is not None:
            self.caption = label(theme, caption, theme.label_size, theme.muted)
            self.caption.next_to(self.slices, RIGHT, buff=0.25)
            self.add(self.caption)

    def bare_copy(self) -> VGroup:
        """The slices alone, for copies that fly onto cards."""
        return self.slices.copy()

    def layer_span(self, index: int) -> tuple[int, int]:
        """First and last layer (1-based) of slice `index`: what a label beside it may say."""
        first, count = self.groups[index]
        return first + 1, first + count
