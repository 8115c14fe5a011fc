"""The loaf sliced along a strategy's axis, with a cut the viewer sees, and its pieces carried
onto the cards they belong to.

- Tensor parallelism cuts lengthwise: one stroke down through every layer; card i takes the
  i-th column of every slice.
- Pipeline parallelism cuts across, between layers: card i takes whole slices, a run of them.
- FSDP cuts every layer into a sliver per card: card i takes the i-th sliver of every slice.

A `Cut` is geometry only (the pieces and the knife's lines, where they lie); `play_cut` draws
the knife, swaps the slices for their pieces (drawn where the slices were, in the loaf's
colours, so the swap is not seen) and parts them in their owners' colours; `carry` moves the
pieces onto their cards. Every chapter that slices the loaf uses these, so a cut means the
same thing everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from manim import RIGHT, UP, Animation, Create, Line, Rectangle, ReplacementTransform, Transform, VGroup, VMobject

from dtfilm.visuals.fade import vanish
from dtfilm.visuals.loaf import Loaf
from dtfilm.visuals.theme import Theme

LENGTHWISE, ACROSS, SLIVERS = "lengthwise", "across", "slivers"
KNIFE_OVERHANG = 0.18  # the knife's line runs this far past the loaf on both sides
KNIFE_WIDTH = 5.0
PART_GAP = 0.12  # how far the pieces move apart once cut


@dataclass
class Cut:
    """The loaf cut along `axis`: `pieces[i]` is what owner i (a card, a stage) takes, each
    piece a Rectangle with `.slice_index`; `knives` the lines the knife draws, in order."""

    axis: str
    pieces: list[VGroup]
    knives: VGroup


def _piece(theme: Theme, width: float, height: float, center: np.ndarray, slice_index: int) -> Rectangle:
    piece = Rectangle(
        width=width,
        height=height,
        fill_color=theme.loaf,
        fill_opacity=1,
        stroke_color=theme.loaf_crust,
        stroke_width=1.5,
    ).move_to(center)
    piece.slice_index = slice_index
    return piece


def knife_line(theme: Theme, start: np.ndarray, end: np.ndarray) -> Line:
    """A knife's line from `start` to `end`: every cut the film draws (a loaf's, a matrix's, a sequence's)."""
    return Line(start, end, stroke_color=theme.text, stroke_width=KNIFE_WIDTH)


def cut_lengthwise(theme: Theme, loaf: Loaf, parts: int) -> Cut:
    """Every slice cut into `parts` equal columns by one stroke down through the whole loaf."""
    slices = loaf.slices
    left, width = slices.get_left()[0], slices.width
    pieces = [VGroup() for _ in range(parts)]
    for index, piece in enumerate(slices):
        y, height = piece.get_center()[1], piece.height
        for i in range(parts):
            x = left + (i + 0.5) * width / parts
            pieces[i].add(_piece(theme, width / parts, height, np.array([x, y, 0.0]), index))
    top, bottom = slices.get_top()[1] + KNIFE_OVERHANG, slices.get_bottom()[1] - KNIFE_OVERHANG
    xs = [left + i * width / parts for i in range(1, parts)]
    knives = VGroup(*[knife_line(theme, np.array([x, top, 0.0]), np.array([x, bottom, 0.0])) for x in xs])
    return Cut(LENGTHWISE, pieces, knives)


def cut_across(theme: Theme, loaf: Loaf, shares: Sequence[Sequence[int]]) -> Cut:
    """The loaf cut between slices: owner i takes the slices `shares[i]` (indices, each share a
    run of consecutive slices), whole; a knife across the gap after each share but the last."""
    slices = loaf.slices
    pieces = [
        VGroup(*[_piece(theme, slices[j].width, slices[j].height, slices[j].get_center(), j) for j in share])
        for share in shares
    ]
    left, right = slices.get_left()[0] - KNIFE_OVERHANG / 2, slices.get_right()[0] + KNIFE_OVERHANG / 2
    knives = VGroup()
    for share in shares[:-1]:
        if not share or max(share) + 1 >= len(slices):
            continue
        below, above = slices[max(share)], slices[max(share) + 1]
        y = (below.get_top()[1] + above.get_bottom()[1]) / 2
        knives.add(knife_line(theme, np.array([left, y, 0.0]), np.array([right, y, 0.0])))
    return Cut(ACROSS, pieces, knives)


def cut_slivers(theme: Theme, loaf: Loaf, parts: int) -> Cut:
    """Every slice cut into `parts` thin slivers, one per card, stacked within the slice (as a
    layer's parameters are split into equal flat shards): card i takes the i-th of every slice."""
    slices = loaf.slices
    pieces = [VGroup() for _ in range(parts)]
    knives = VGroup()
    for index, piece in enumerate(slices):
        bottom, height, x = piece.get_bottom()[1], piece.height, piece.get_center()[0]
        for i in range(parts):
            y = bottom + (i + 0.5) * height / parts
            pieces[i].add(_piece(theme, piece.width, height / parts, np.array([x, y, 0.0]), index))
        for i in range(1, parts):
            y = bottom + i * height / parts
            knives.add(
                knife_line(theme, np.array([piece.get_left()[0], y, 0.0]), np.array([piece.get_right()[0], y, 0.0]))
            )
    for knife in knives:
        knife.set_stroke(width=KNIFE_WIDTH / 2)
    return Cut(SLIVERS, pieces, knives)


def part_offsets(cut: Cut) -> list[np.ndarray]:
    """How far each owner's pieces move once cut: apart along the cut's axis, centred."""
    n = len(cut.pieces)
    if cut.axis == LENGTHWISE:  # apart, but never past the loaf's sides by more than a gap
        gap = min(PART_GAP, 2 * PART_GAP / max(1, n - 1))
        return [RIGHT * gap * (i - (n - 1) / 2) for i in range(n)]
    if cut.axis == ACROSS:
        return [UP * PART_GAP * 1.5 * i for i in range(n)]
    return [UP * 0.0 for _ in range(n)]  # slivers stay in their slice: the colours show them


def play_cut(scene, loaf: Loaf, cut: Cut, colours: Sequence[str], run_time: float = 1.6) -> VGroup:
    """The knife draws its lines; the slices become their pieces (where they were); the pieces
    part along the cut and take their owners' colours. Returns the owners' groups, each on the
    scene by itself (the slices a share does not take stay in the loaf)."""
    knives = cut.knives
    scene.play(Create(knives, lag_ratio=0.15 if cut.axis == SLIVERS else 0.35), run_time=run_time * 0.5)
    taken = VGroup(*[loaf.slices[i] for i in sorted({p.slice_index for owner in cut.pieces for p in owner})])
    every = VGroup(*cut.pieces)  # each owner's group on the scene: a transform of one moves it
    every.set_z_index(2)
    knives.set_z_index(4)
    scene.add(*cut.pieces)
    # the slices taken stay behind, faint: the whole model, as a place the pieces came from
    moves: list[Animation] = [vanish(knives), taken.animate.set_fill(opacity=0.12).set_stroke(opacity=0.35)]
    for owner, offset, colour in zip(cut.pieces, part_offsets(cut), colours, strict=False):
        moves.append(owner.animate.shift(offset).set_fill(colour, opacity=1).set_stroke(colour, opacity=0.4))
    scene.play(*moves, run_time=run_time * 0.5)
    return every


def carry(pieces: VGroup, into: VMobject, fill: float = 0.8, align: Callable | None = None) -> Animation:
    """The pieces fly onto a card, scaled to fit within `into` (its body or a slot), keeping their
    arrangement, and laid over it."""
    target = pieces.copy()
    target.scale_to_fit_width(min(into.width * fill, target.width * into.height * fill / max(target.height, 1e-6)))
    if target.height > into.height * fill:
        target.scale_to_fit_height(into.height * fill)
    target.move_to(into)
    if align is not None:
        align(target)
    pieces.set_z_index(3)
    return Transform(pieces, target)


def become(pieces: VMobject, gauge: VMobject, run_time: float = 1.0) -> Animation:
    """A card's pieces turn into what they cost: its gauge (the stack into its gauge), which
    then stands in their place."""
    return ReplacementTransform(pieces, gauge, run_time=run_time)
