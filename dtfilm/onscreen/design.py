"""The design check, beside the layout check: after every animation each text is large enough to
read at the 854×480 preview, stands out from what lies behind it (WCAG AA's 4.5:1), and a frame
holds at most three layers of text besides the title (issue 58: five layers, dimmed branches at
2.4:1 in letters about 6 px high, were unreadable at 480p).

A text's size is its font size (the em, not a letter's ink) in pixels at 480 rows: Manim's
font_size counts 72 to a scene unit, and the 8-unit frame is 480 pixels tall. What lies behind a
text is the background with every filled shape drawn before it (in the order the camera draws
them) whose box holds the centre of the text's box, each blended at its opacity; a text's own
opacity blends it with that.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from manim import Mobject, Scene, Text, VMobject, color_to_rgb, config

from dtfilm.engine.bounds import font_size_at_height
from dtfilm.onscreen.boxes import Box, first_drawn
from dtfilm.visuals.palette import MIN_TEXT_CONTRAST, contrast, luminance  # noqa: F401  (the design check's measure)
from dtfilm.visuals.theme import FRAME_HEIGHT

PREVIEW_ROWS = 480
MIN_TEXT_PX = 14.0  # a text carrying a number or a label, its font size at the preview
MIN_CONTRAST = MIN_TEXT_CONTRAST  # WCAG 2 AA for body text
MAX_TEXT_LAYERS = 3  # besides the title
UNITS_PER_FONT_SIZE = 1 / 72  # Manim: a font_size of 72 is one scene unit to the em
PX_PER_UNIT = PREVIEW_ROWS / FRAME_HEIGHT
SEEN_OPACITY = 0.05  # fainter than this is not drawn (layout.visible's bound)
# The layers a text belongs to, by the `text_layer` its top-level piece is tagged with (the
# header, the counters, the legend, the caption); a text untagged is a label on the picture.
TITLE, LABELS = "title", "labels"


def text_px(text: Text, height: float | None = None) -> float:
    """A text's font size in pixels at the 854×480 preview (scaled with it). `height`: its box's
    height where measured already (the font size is read from it, as Manim reads it)."""
    size = text.font_size if height is None or not math.isfinite(height) else font_size_at_height(text, height)
    return float(size) * UNITS_PER_FONT_SIZE * PX_PER_UNIT


def drawn_order(scene: Scene) -> list[tuple[Mobject, str]]:
    """Every member the camera draws, in its order (each top-level piece's family, parent
    first; a higher z_index later), with the text layer of the piece it belongs to."""
    out: list[tuple[Mobject, str]] = []
    seen: set[int] = set()

    def walk(mob: Mobject, layer: str) -> None:
        if id(mob) in seen:
            return
        seen.add(id(mob))
        layer = getattr(mob, "text_layer", layer)
        out.append((mob, layer))
        if isinstance(mob, Text):
            return  # (its glyphs are the text)
        for sub in mob.submobjects:
            walk(sub, layer)

    for top in scene.mobjects:
        walk(top, LABELS)
    return sorted(out, key=lambda pair: pair[0].z_index)  # (stable: as drawn within one z)


def _fill(mob: Mobject) -> tuple[np.ndarray, float] | None:
    """A member's fill as (rgb, opacity), None where it draws no fill."""
    if isinstance(mob, Text) or not mob.has_points():
        return None
    rgb, opacity = _first_fill(mob)
    return None if opacity <= SEEN_OPACITY else (rgb, opacity)


def _first_fill(mob: Mobject) -> tuple[np.ndarray, float]:
    """Its first fill colour and opacity (`get_fill_color`, `get_fill_opacity`). A VMobject's
    are the first row of its fill's colours (`get_fill_rgbas`), read as they are: Manim's
    `get_fill_color` makes a colour object of every row to return the first, which a frame of
    several hundred members paid after every animation."""
    if isinstance(mob, VMobject):
        first = mob.get_fill_rgbas()[0]
        return np.array(first[:3], dtype=float), float(first[3])
    return np.array(color_to_rgb(mob.get_fill_color())), float(mob.get_fill_opacity())


def _text_colour(text: Text) -> tuple[np.ndarray, float] | None:
    """A text's colour and opacity, from its first glyph drawn (boxes.first_drawn)."""
    glyph = first_drawn(text)
    return None if glyph is None else _first_fill(glyph)


@dataclass(frozen=True)
class Measured:
    """One text on screen as the design check sees it."""

    text: Text
    layer: str
    px: float  # font size at the preview
    contrast: float | None  # against what lies behind it; None when it draws no glyph


def measured_texts(scene: Scene, texts: list[Text], text_boxes: dict[int, Box] | None = None) -> list[Measured]:
    """Each visible text (layout.texts_on_screen) with its layer, size and contrast. A text's
    centre is its box's, and its size is read from its box's height (`text_boxes`, by id, where
    the caller has measured them already)."""
    order = drawn_order(scene)
    position = {id(mob): k for k, (mob, _) in enumerate(order)}
    layer_of = {id(mob): layer for mob, layer in order}
    fills = [(k, mob, fill) for k, (mob, _) in enumerate(order) if (fill := _fill(mob)) is not None]
    boxes = {id(mob): _box(mob) for _, mob, _ in fills}
    # (a scene of planted pieces, as tests build, has no camera: Manim's configured background)
    camera = getattr(scene, "camera", None)
    background = np.array(color_to_rgb(camera.background_color if camera is not None else config.background_color))
    out = []
    for text in texts:
        colour = _text_colour(text)
        ratio = None
        if colour is not None:
            centre = (text_boxes[id(text)] if text_boxes is not None else Box.of(text)).centre
            behind = background
            at = position.get(id(text), len(order))
            for k, mob, (rgb, opacity) in fills:
                if k >= at:
                    break
                left, right, bottom, top = boxes[id(mob)]
                if left <= centre[0] <= right and bottom <= centre[1] <= top:
                    behind = rgb * opacity + behind * (1 - opacity)
            rgb, opacity = colour
            ratio = _contrast(tuple((rgb * opacity + behind * (1 - opacity)).tolist()), tuple(behind.tolist()))
        height = text_boxes[id(text)].height if text_boxes is not None else None
        out.append(Measured(text, layer_of.get(id(text), LABELS), text_px(text, height), ratio))
    return out


@functools.lru_cache(maxsize=4096)
def _contrast(text: tuple[float, ...], behind: tuple[float, ...]) -> float:
    """`palette.contrast` of two colours, kept: a frame's texts stand on a few colours, and the
    check measures them again after every animation."""
    return contrast(np.array(text), np.array(behind))


def design_findings(
    scene: Scene,
    texts: list[Text],
    name: Callable[[Mobject], str],
    text_boxes: dict[int, Box] | None = None,
) -> list[str]:
    """The design problems on screen now: small texts, texts of low contrast, too many layers.
    `texts` are the visible texts (layout.texts_on_screen); `name` names one in a problem;
    `text_boxes` their boxes by id, where known."""
    problems: list[str] = []
    measured = measured_texts(scene, texts, text_boxes)
    for m in measured:
        if m.px < MIN_TEXT_PX - 0.05:
            problems.append(
                f"text {name(m.text)} is {m.px:.1f} px at 854×480 (its font size); at least {MIN_TEXT_PX:g}"
            )
        if m.contrast is not None and m.contrast < MIN_CONTRAST - 0.005:
            problems.append(
                f"text {name(m.text)} has contrast {m.contrast:.1f}:1 against what lies behind it;"
                f" at least {MIN_CONTRAST:g}:1"
            )
    layers = sorted({m.layer for m in measured} - {TITLE})
    if len(layers) > MAX_TEXT_LAYERS:
        problems.append(
            f"{len(layers)} layers of text besides the title ({', '.join(layers)}); at most {MAX_TEXT_LAYERS}"
        )
    return problems


def _box(mob: Mobject) -> tuple[float, float, float, float]:
    points = mob.points
    return float(points[:, 0].min()), float(points[:, 0].max()), float(points[:, 1].min()), float(points[:, 1].max())
