"""The film's palette, a meaning per colour, and the check that keeps it so.

Each colour group of the theme means one thing across the film:

- memory: the parts of a card's memory (weights, gradients, the optimizer's three, activations,
  buffers), in every gauge, ledger and legend;
- cards: whose a thing is: a card's shard, its column of a layer, its ring chunk, the stage it
  runs (a pipeline stage is its card's);
- passes: a micro-batch's forward and backward work in the pipeline's timeline (its number,
  written on the block, says which micro-batch);
- bad: over capacity (a spill, a counter past the card) and time exposed (waiting, the bubble),
  and nothing else;
- accent: the number to remember (a counter) and what the voice points at.

Compute time and traffic take no meaning colour: they are drawn in the neutral inks
(`palette_inks`: compute in the text's ink, traffic in the muted ink, a collective told by its
fill), so that no parallel group borrows a card's colour and no collective a memory part's.

`palette_clashes` reports two colours of different meanings, or of one group, that a viewer
could take for each other at 480p (CIE76 distance in Lab below a floor), any colour used for
two meanings, and an ink with a hue (it would be read as a meaning) or near the bad colour. A
test holds both themes to it.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from dtfilm.visuals.theme import Theme

# Least CIE76 distance between two colours a viewer must tell apart (about 2.3 is "just
# noticeable"; the floors are for small swatches at 480p, side by side in one frame).
WITHIN_MEMORY = 30.0  # the optimizer's three greens were 18 apart: one colour at 480p
WITHIN_CARDS = 25.0
BETWEEN_GROUPS = 20.0
FROM_BAD = 40.0  # red says "bad" alone: nothing else may be taken for it
NEUTRAL_CHROMA = 12.0  # an ink's most chroma (Lab): a grey, no hue to be taken for a meaning


def _lab(colour: str) -> tuple[float, float, float]:
    """sRGB hex to CIE Lab (D65)."""
    value = colour.lstrip("#")
    rgb = [int(value[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    x = (0.4124 * lin[0] + 0.3576 * lin[1] + 0.1805 * lin[2]) / 0.95047
    y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    z = (0.0193 * lin[0] + 0.1192 * lin[1] + 0.9505 * lin[2]) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def delta_e(a: str, b: str) -> float:
    """CIE76 distance between two colours."""
    return math.dist(_lab(a), _lab(b))


def palette_groups(theme: Theme) -> dict[str, dict[str, str]]:
    """The theme's colours by meaning: group -> name -> colour."""
    return {
        "memory": dict(theme.memory),
        "cards": {f"card {i}": c for i, c in enumerate(theme.cards)},
        "passes": dict(theme.passes),
        "bad": {"bad": theme.bad},
        "accent": {"accent": theme.accent},
    }


def palette_inks(theme: Theme) -> dict[str, str]:
    """What the neutral inks draw besides words: compute time and traffic (no meaning colour)."""
    return {"compute": theme.compute_ink, "traffic": theme.traffic_ink}


def _ink_clashes(theme: Theme) -> list[str]:
    """An ink with a hue, one that is a meaning's colour, or one near the bad colour."""
    meanings = {colour.upper() for items in palette_groups(theme).values() for colour in items.values()}
    problems = []
    for name, colour in palette_inks(theme).items():
        _, a, b = _lab(colour)
        if math.hypot(a, b) > NEUTRAL_CHROMA or colour.upper() in meanings:
            problems.append(f"{theme.name}: the {name} ink {colour.upper()} is not neutral: it would read as a meaning")
        if delta_e(colour, theme.bad) < FROM_BAD:
            problems.append(f"{theme.name}: the {name} ink {colour.upper()} is near the bad colour")
    return problems


def palette_clashes(theme: Theme) -> list[str]:
    """Pairs of colours too close for their meanings (or one colour with two), and inks that
    are not neutral, as sentences."""
    named = [(g, name, colour.upper()) for g, items in palette_groups(theme).items() for name, colour in items.items()]
    problems = []
    for (g1, n1, c1), (g2, n2, c2) in itertools.combinations(named, 2):
        if g1 == g2 == "memory":
            floor = WITHIN_MEMORY
        elif g1 == g2 == "cards":
            floor = WITHIN_CARDS
        elif "bad" in (g1, g2):
            floor = FROM_BAD
        elif g1 == g2:
            floor = BETWEEN_GROUPS
        elif "accent" in (g1, g2) and "memory" not in (g1, g2):
            continue  # the accent is text and a highlight's wash, never a card's or a block's fill
        else:
            floor = BETWEEN_GROUPS
        distance = delta_e(c1, c2)
        if distance < floor:
            pair = f"{g1} {n1} {c1} and {g2} {n2} {c2}"
            problems.append(f"{theme.name}: {pair} are {distance:.0f} apart (at least {floor:.0f})")
    return problems + _ink_clashes(theme)


def luminance(rgb: np.ndarray) -> float:
    """WCAG 2 relative luminance of an sRGB colour (channels 0 to 1)."""
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return float(linear @ np.array([0.2126, 0.7152, 0.0722]))


def contrast(a: np.ndarray, b: np.ndarray) -> float:
    """WCAG 2 contrast ratio of two colours: from 1 (the same) to 21 (black on white)."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


MIN_TEXT_CONTRAST = 4.5  # WCAG 2 AA for body text: the design check's floor (dtfilm.onscreen.design)


def _rgb(colour: str) -> np.ndarray:
    value = colour.lstrip("#")
    return np.array([int(value[i : i + 2], 16) / 255 for i in (0, 2, 4)])


def _hex(rgb: np.ndarray) -> str:
    return "#" + "".join(f"{round(float(c) * 255):02X}" for c in np.clip(rgb, 0, 1))


def legible(colour: str, behind: str, floor: float = MIN_TEXT_CONTRAST) -> str:
    """`colour` for text that stands on `behind`: itself where it already reads at `floor`:1,
    else the least shade of it toward black or white (whichever stands further from `behind`)
    that does, so a group's or a card's words keep their hue (the light theme's lime and
    lavender read at 3:1 on white)."""
    rgb, ground = _rgb(colour), _rgb(behind)
    if contrast(rgb, ground) >= floor:
        return colour
    black, white = np.zeros(3), np.ones(3)
    toward = black if contrast(black, ground) >= contrast(white, ground) else white
    for step in range(1, 21):
        shade = rgb + (toward - rgb) * step / 20
        if contrast(shade, ground) >= floor:
            return _hex(shade)
    return _hex(toward)
