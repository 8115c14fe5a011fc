"""Text on screen: every Text is made here and carries the Phrase (and facts) behind it."""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import manim
import numpy as np
from manim import DOWN, LEFT, ORIGIN, RIGHT, Mobject, Text, VGroup

from dtfilm.engine.glyphs import GlyphText, Style, keep_templates_by
from dtfilm.phrases import Fact, Phrase, plain
from dtfilm.system.pickled import read_pickled, write_pickled
from dtfilm.textcheck import find_shown
from dtfilm.visuals.palette import contrast, legible  # (the design check's measure, so ink and check agree)
from dtfilm.visuals.theme import FRAME_WIDTH, Theme


class Label(GlyphText):
    """A Text that remembers its Phrase, so tests can check every number it shows (its glyphs
    placed from Pango's SVG by dtfilm.engine.glyphs)."""

    phrase: Phrase


LabelLook = tuple[str, str, float, str, str]  # text, font, size, colour, weight
_PROTOTYPES: dict[LabelLook, Label] = {}
_MAX_PROTOTYPES = 4096
TYPESET_FOLDER = Path(".dtfilm-cache") / "typeset"  # in the project's root
_store: Path | None = None


def keep_typeset_in(folder: Path | None) -> None:
    """Keep each label typeset in `folder` too (about 15 kB each), so that a fresh process (a
    render's worker, the next render) reads it back in about 3 ms instead of typesetting it again
    through Pango and parsing its SVG (about 60 ms: a chapter's dry run spent 4 s on it)."""
    global _store
    _store = folder
    keep_templates_by(None if folder is None else lambda style: folder / ("template-" + _stored_name(style)))


@functools.cache
def _made_by() -> bytes:
    package = Path(__file__).parent.parent
    made_by = (package / "visuals" / "text.py", package / "engine" / "glyphs.py")
    return b"".join(path.read_bytes() for path in made_by) + manim.__version__.encode()


def _stored_name(look: LabelLook | Style) -> str:
    """Changes with the look, Manim's version and this file (which says how labels are made)."""
    return hashlib.sha256(repr(look).encode() + _made_by()).hexdigest()[:32] + ".pickle.z"


def _typeset(look: LabelLook) -> Label:
    text, font, size, color, weight = look
    path = _store / _stored_name(look) if _store is not None else None
    stored = read_pickled(path, "typeset label") if path is not None else None  # (damaged or outdated: typeset again)
    if isinstance(stored, Label):
        return stored
    prototype = Label(text, font=font, font_size=size, color=color, weight=weight)
    for part in prototype.get_family():  # each glyph's parsed SVG path: read once, to make its points
        if hasattr(part, "path_obj"):
            part.path_obj = None
    if path is not None:
        write_pickled(path, prototype, "typeset label")
    return prototype


def label(
    theme: Theme,
    phrase: Phrase | str,
    size: float | None = None,
    color: str | None = None,
    weight: str = "NORMAL",
) -> Label:
    """A Label for a phrase. Typesetting through Pango is slow, so each distinct look is
    typeset once and copied after that."""
    phrase = plain(phrase) if isinstance(phrase, str) else phrase
    key = (phrase.text, theme.font, float(size or theme.label_size), color or theme.text, weight)
    prototype = _PROTOTYPES.get(key)
    if prototype is None:
        if len(_PROTOTYPES) >= _MAX_PROTOTYPES:
            _PROTOTYPES.clear()
        prototype = _PROTOTYPES[key] = _typeset(key)
    mob = prototype.copy()
    mob.phrase = phrase
    return mob


HELD_SPACE = "\u2060"  # stands for a space inside a fact while a phrase is wrapped


# A layout's factor, its group and its degree ("pp 1", "ZeRO 3"): no line breaks inside one
# (issue 58, finding 7: the planner's pick wrapped as "pp / 1").
LAYOUT_FACTOR = re.compile(r"\b(dp|tp|pp|cp|ep|ZeRO) (?=\d)")
# A plan's whole shape, its factors joined by " × " and its ZeRO stage after them ("dp 64 × tp 1 ×
# pp 1, ZeRO 3", dtfilm.shots.decision_tree.draw._shape): held as one, so no line breaks inside it
# (issue 58: 3d's note on the tree's plan wrapped as "dp 64 × tp 1 / × pp 1, ZeRO 3").
_FACTOR = r"(?:dp|tp|pp|cp|ep) \d+(?:,\d{3})*"
LAYOUT_SHAPE = re.compile(rf"\b{_FACTOR}(?: × {_FACTOR})*(?:, ZeRO \d+)?|\bZeRO \d")


def hold_layout_factors(text: str) -> str:
    """`text` with the space inside each layout factor held (HELD_SPACE), so no wrap splits it;
    one character for one, as the wrap's measure needs."""
    return LAYOUT_FACTOR.sub(lambda m: m.group(1) + HELD_SPACE, text)


def hold_layout_shapes(text: str) -> str:
    """`text` with every space inside each plan's shape held (HELD_SPACE), so a wrap keeps the
    shape on one line; one character for one, as `hold_layout_factors`."""
    return LAYOUT_SHAPE.sub(lambda m: m.group(0).replace(" ", HELD_SPACE), text)


def wrap_words(text: str, max_chars: int) -> list[str]:
    """Greedy word wrap."""
    lines: list[str] = []
    current = ""
    for word in (w for w in text.split(" ") if w):
        candidate = f"{current} {word}".strip()
        if len(candidate) > max_chars and current:
            lines.append(current)
            current = word
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines


def wrapped(
    theme: Theme,
    phrase: Phrase,
    size: float,
    max_width: float,
    color: str | None = None,
    left_aligned: bool = False,
) -> VGroup:
    """A phrase in as few centred (or left-aligned) lines as fit `max_width`, balanced so that
    no line is left with a lone word. Each line is a Label carrying the facts it shows, in order.
    A plan's shape ("dp 64 × tp 1 × pp 1, ZeRO 3") stays on one line; only where it alone is
    wider than `max_width` does it break, between its factors (at " × ")."""

    # A fact's own spaces ("InfiniBand NDR") never break a line: its words stay together.
    held = phrase.text
    for fact in phrase.facts:
        if fact.kind == "claim":  # a claim's words are a sentence: they wrap like any other
            continue
        at = find_shown(held, fact.shown)
        if at >= 0:
            held = held[:at] + fact.shown.replace(" ", HELD_SPACE) + held[at + len(fact.shown) :]

    def typesetter(words: str) -> Callable[[int], VGroup]:
        def typeset(max_chars: int) -> VGroup:
            lines = [line.replace(HELD_SPACE, " ") for line in wrap_words(words, max_chars)]
            group = VGroup(*_lines(theme, phrase, lines, size, color))
            return group.arrange(DOWN, buff=0.12, aligned_edge=LEFT if left_aligned else ORIGIN)

        return typeset

    # Each candidate wrap is measured on the phrase typeset as one line (each line's width is its
    # glyphs' span there), and only the chosen wrap is typeset: typesetting every candidate
    # through Pango cost a cold film 17 s. Should a measure disagree with the typeset lines, or
    # the glyphs not match the characters one for one, every candidate is typeset instead.
    whole = label(theme, phrase.text, size, color)
    for words in (hold_layout_shapes(held), hold_layout_factors(held)):
        measure = _wrap_measure(whole, words)
        if measure is None:
            break
        chosen = _narrowest_fitting(words, len(phrase.text), whole.width, measure, max_width)
        if chosen is not None:
            group = typesetter(words)(chosen)
            if group.width <= max_width:
                return group
    return _wrapped_by_typesetting(words, len(phrase.text), whole.width, max_width, typesetter(words))


WidthOf = Callable[[list[str]], float]  # the width of a wrap's widest line


def _wrap_measure(whole: Label, held: str) -> WidthOf | None:
    """Widths of wraps of `held` (spaces within facts held as HELD_SPACE), measured on `whole`,
    the phrase typeset as one line; None where its glyphs are not one per non-space character
    (a ligature) or one has no outline."""
    glyphs = whole.submobjects
    if len(glyphs) != sum(1 for c in whole.original_text if not c.isspace()):
        return None
    if any(len(glyph.points) == 0 for glyph in glyphs):
        return None
    lefts = [float(glyph.points[:, 0].min()) for glyph in glyphs]
    rights = [float(glyph.points[:, 0].max()) for glyph in glyphs]
    word_starts = [0]  # each word's first glyph, and one past the last word's last
    for word in (w for w in held.split(" ") if w):
        word_starts.append(word_starts[-1] + sum(1 for c in word if not c.isspace() and c != HELD_SPACE))
    if word_starts[-1] != len(glyphs):
        return None

    def widest(lines: list[str]) -> float:
        width, word = 0.0, 0
        for line in lines:
            count = len(line.split(" "))
            first, last = word_starts[word], word_starts[word + count] - 1
            width = max(width, max(rights[first : last + 1]) - min(lefts[first : last + 1]))
            word += count
        return width

    return widest


def _widest_wraps(length: int, one_line_width: float, max_width: float) -> range:
    """Line lengths (in characters) to try, widest first: from a few steps above what the text's
    average glyph width says fits, down by 4."""
    per_char = one_line_width / max(length, 1)
    guess = int(max_width / per_char) + 12 if per_char > 0 else 96
    return range(96 - 4 * max(0, (96 - min(guess, 96)) // 4), 11, -4)


def _narrowest_fitting(held: str, length: int, one_line_width: float, widest: WidthOf, max_width: float) -> int | None:
    """The line length (in characters) of the wrap to typeset: the widest tried that fits
    `max_width`, then the narrowest with as many lines; None if none fits."""
    for max_chars in _widest_wraps(length, one_line_width, max_width):
        if widest(wrap_words(held, max_chars)) <= max_width:
            break
    else:
        return None
    count = len(wrap_words(held, max_chars))
    if count > 1:
        for narrower in range(-(-length // count), 97):
            lines = wrap_words(held, narrower)
            if len(lines) == count:
                return narrower if widest(lines) <= max_width else max_chars
    return max_chars


def _wrapped_by_typesetting(
    held: str, length: int, one_line_width: float, max_width: float, typeset: Callable[[int], VGroup]
) -> VGroup:
    """`wrapped` by typesetting each candidate wrap, for text whose glyphs cannot be measured."""
    group = VGroup()
    for max_chars in _widest_wraps(length, one_line_width, max_width):
        group = typeset(max_chars)
        if group.width <= max_width:
            break
    else:
        return group.scale_to_fit_width(max_width)
    count = len(group)
    if count > 1:
        # the narrowest wrap with the same number of lines
        for max_chars in range(-(-length // count), 97):
            if len(wrap_words(held, max_chars)) == count:
                balanced = typeset(max_chars)
                if balanced.width <= max_width:
                    return balanced
                break
    return group


def _lines(theme: Theme, phrase: Phrase, lines: list[str], size: float, color: str | None) -> list[Label]:
    remaining = [fact for fact in phrase.facts if fact.kind != "claim"]
    claims = _claim_lines(phrase, lines)
    out = []
    for i, line in enumerate(lines):
        facts, cursor = [], 0
        while remaining and (found := find_shown(line, remaining[0].shown, cursor)) >= 0:
            facts.append(remaining.pop(0))
            cursor = found + len(facts[-1].shown)
        facts += claims.get(i, [])
        out.append(label(theme, Phrase(line, tuple(facts)), size, color))
    return out


def _claim_lines(phrase: Phrase, lines: list[str]) -> dict[int, list[Fact]]:
    """Each claim of `phrase` on the line where its words begin (they may run on to the next):
    a claim is a sentence, not a figure, so it goes with the line, and the checks still see it."""
    starts, offset = [], 0
    for line in lines:  # the wrap keeps the text and drops only the spaces it breaks at
        offset = phrase.text.find(line, offset)
        starts.append(offset)
        offset += len(line)
    placed: dict[int, list[Fact]] = {}
    cursor = 0
    for fact in phrase.facts:
        if fact.kind != "claim":
            continue
        at = phrase.text.find(fact.shown, cursor) if fact.shown else -1
        if at < 0:
            continue
        cursor = at
        line = max((i for i, start in enumerate(starts) if 0 <= start <= at), default=0)
        placed.setdefault(line, []).append(fact)
    return placed


def left_column(*mobs: Text, buff: float = 0.08) -> VGroup:
    return VGroup(*mobs).arrange(DOWN, aligned_edge=LEFT, buff=buff)


def relabel(target: Label, fresh: Label, as_typeset: bool = True) -> None:
    """Make `target` show `fresh` in place: its glyphs, its text and the phrase behind it.
    `as_typeset` (the default, between animations) takes the new glyphs as they are: quick, and
    the same however many frames led there (a shot drawn and the same shot skipped end alike,
    and have one key). Otherwise Manim's `become` reshapes the glyphs shown into the new ones,
    so an animation's frames can morph them (a stat counting); it aligns every glyph's points,
    which cost the dp ring shot 0.7 s for its 42 step labels."""
    if as_typeset:
        z_index = target.z_index
        target.submobjects = fresh.submobjects
        target.points = fresh.points
        target.z_index = z_index
    else:
        target.become(fresh)
    target.original_text = fresh.original_text
    target.text = fresh.text
    target.phrase = fresh.phrase
    # A Text's font size is read from its height against the height it was typeset at: with the
    # old words' height kept, "614 GB" after "1,229 GB" (a comma's descender) read as 12.3 px, a
    # design finding (`dtfilm check pp --seq-len 131072`) of a label drawn at its full size
    target.initial_height = fresh.initial_height


def clamp_x(mob: Mobject, margin: float = 0.4) -> Mobject:
    """Slide a mobject sideways, if need be, so that it stays `margin` inside the frame."""
    half = FRAME_WIDTH / 2 - margin
    if mob.get_left()[0] < -half:
        mob.shift(RIGHT * (-half - mob.get_left()[0]))
    elif mob.get_right()[0] > half:
        mob.shift(LEFT * (mob.get_right()[0] - half))
    return mob


def ink_on(theme: Theme, fill: Any, opacity: float = 1.0) -> str:
    """The text colour that reads best on a block of `fill` at `opacity` over the background:
    the theme's text or its background, whichever stands further from the block (WCAG contrast).
    A fixed ink failed one shade or the other: dark names on fsdp's faint forward blocks, 3.0:1.
    Where neither reads at 4.5:1 it is shaded toward black or white until it does."""

    def rgb(colour: Any) -> np.ndarray:
        return np.array(manim.color_to_rgb(colour))

    block = rgb(fill) * opacity + rgb(theme.background) * (1 - opacity)
    ink = max((theme.text, theme.background), key=lambda ink: contrast(rgb(ink), block))
    # where neither reads (the light theme's pink card: 4:1 under either), taken toward black or white
    return legible(ink, manim.rgb_to_hex(block))
