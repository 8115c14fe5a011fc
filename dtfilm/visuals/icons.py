"""Small loaves, each sliced the way one strategy slices the model (the table and the map)."""

from __future__ import annotations

from manim import RIGHT, UP, Circle, Rectangle, VGroup

from dtfilm.visuals.theme import Theme

SLICES = 4


def _piece(theme: Theme, width: float, height: float, color: str | None = None) -> Rectangle:
    return Rectangle(
        width=width,
        height=height,
        fill_color=color or theme.loaf,
        fill_opacity=1,
        stroke_color=theme.loaf_crust if color is None else theme.background,
        stroke_width=1.5,
    )


def strategy_icon(theme: Theme, slicing: str, width: float = 0.8, slice_height: float = 0.11) -> VGroup:
    """copy: two whole loaves; shard: every slice in card-coloured pieces; columns: every slice
    cut down the middle; rows: the slices in stages; tokens: the sequence cut in pieces; experts:
    every other slice a row of experts, each coloured by the card that holds it; whole: one loaf, uncut."""
    gap = slice_height * 0.35
    if slicing == "whole":
        return VGroup(*[_piece(theme, width, slice_height) for _ in range(SLICES)]).arrange(UP, buff=gap)
    if slicing == "tokens":
        dots = VGroup(
            *[
                Circle(radius=width / 18, fill_color=theme.card_color(i // 4), fill_opacity=1, stroke_width=0)
                for i in range(8)
            ]
        ).arrange(RIGHT, buff=width / 24)
        loaf = VGroup(*[_piece(theme, width, slice_height) for _ in range(SLICES)]).arrange(UP, buff=gap)
        return VGroup(loaf, dots).arrange(UP, buff=0.1)
    if slicing == "copy":
        one = VGroup(*[_piece(theme, width * 0.46, slice_height) for _ in range(SLICES)]).arrange(UP, buff=gap)
        return VGroup(one, one.copy()).arrange(RIGHT, buff=width * 0.08)
    if slicing == "experts":  # attention whole, every other slice its experts, each on its card
        rows = VGroup()
        for layer in range(SLICES):
            if layer % 2:
                experts = [_piece(theme, width / 5, slice_height, theme.card_color(i // 2)) for i in range(4)]
                rows.add(VGroup(*experts).arrange(RIGHT, buff=width / 15))
            else:
                rows.add(_piece(theme, width, slice_height))
        return rows.arrange(UP, buff=gap)
    rows = VGroup()
    for layer in range(SLICES):
        if slicing == "shard":
            parts = [_piece(theme, width / 4, slice_height, theme.card_color(i)) for i in range(4)]
        elif slicing == "columns":
            parts = [_piece(theme, width / 2, slice_height, theme.card_color(i)) for i in range(2)]
        elif slicing == "rows":
            parts = [_piece(theme, width, slice_height, theme.card_color(layer // 2))]
        else:
            raise ValueError(f"unknown slicing {slicing!r}")
        rows.add(VGroup(*parts).arrange(RIGHT, buff=0))
    return rows.arrange(UP, buff=gap * (2.5 if slicing == "rows" else 1))
