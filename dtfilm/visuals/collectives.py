"""How a collective is drawn wherever traffic is: in the theme's traffic ink, the collective told
by its fill (an all-gather solid, a reduce-scatter hollow, anything else half filled: an
all-reduce, an all-to-all, a send/recv), never by a colour (docs/look.md)."""

from __future__ import annotations

from dataclasses import dataclass

from manim import Rectangle

from dtfilm.visuals.theme import Theme


@dataclass(frozen=True)
class Look:
    """A collective's fill opacity and the width of its edge, in its own colour."""

    fill: float
    edge: float


ALL_GATHER = Look(0.95, 0.0)
REDUCE_SCATTER = Look(0.25, 2.0)
OTHER = Look(0.6, 1.0)
LOOKS = {"all-gather": ALL_GATHER, "reduce-scatter": REDUCE_SCATTER}


def look(name: str) -> Look:
    """The look of the collective `name` ("all-gather", "reduce-scatter", "all-to-all", ...)."""
    return LOOKS.get(name, OTHER)


def collective_piece(theme: Theme, name: str, width: float, height: float) -> Rectangle:
    """A block `width` by `height` drawn as the collective `name` is everywhere in the film."""
    drawn = look(name)
    ink = theme.traffic_ink
    return Rectangle(
        width=width,
        height=height,
        fill_color=ink,
        fill_opacity=drawn.fill,
        stroke_color=ink,
        stroke_width=drawn.edge,
    )
