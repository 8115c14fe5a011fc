"""Drawn values are facts: every number a shot shows, at the end of each animation and at moments
during it, is a value the cost model gives for a setting the shot shows (issue 44).

A counter that counts from one setting's value to another's passes through numbers no setting
has ("m = 1, 14 sequences each, 71.9%" on the way from 60% to 15.8%). A dry run jumps to each
animation's end and never sees them; the scene shows this observer a few moments inside each
animation too (ChapterScene.moment_observers), and the check fails on a drawn number that is not
made from a fact and equals none of the values the shot's facts show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dtfilm.textcheck import NUMBER, SCIENTIFIC, excerpt, masked, parse_shown

if TYPE_CHECKING:  # (a check whose every shot is kept merges their values without Manim)
    from manim import DecimalNumber, Scene

# The share of an animation's run time at which a dry run looks inside it: once, halfway, since a
# counter counting through values shows one there, and each look costs the dry run about a fifth
# again (three looks took `dtfilm check` from 12 s to 22 s a chapter under load).
MOMENTS = (0.5,)


def drawn_numbers(text: str, phrase: object) -> list[str]:
    """The numbers in a drawn text that no fact of its phrase claims (all of them without one)."""
    rest = text
    if phrase is not None and getattr(phrase, "text", None) == text:
        rest, _ = masked(text, phrase)  # type: ignore[arg-type]
    return [m.group(0) for m in [*SCIENTIFIC.finditer(rest), *NUMBER.finditer(rest)]]


def _decimal_shown(number: DecimalNumber) -> str:
    places = int(getattr(number, "num_decimal_places", 0))
    return f"{number.get_value():.{places}f}"


@dataclass
class DrawnValues:
    """An observer (at animations' ends and moments inside them): per shot, the values its facts
    show, and the drawn numbers no fact claims, with the text each stood in."""

    facts: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # beat -> (value, rounding)
    loose: dict[str, dict[str, str]] = field(default_factory=dict)  # beat -> number shown -> its text
    _seen: set[tuple[str, str, int]] = field(default_factory=set)
    # each phrase seen, held: a phrase gone could leave its id to a new one, whose values were
    # then taken as seen (which of them depended on the memory a run was given)
    _held: list[object] = field(default_factory=list)

    def __call__(self, scene: Scene, beat: str) -> None:
        shown = self.facts.setdefault(beat, [])
        for text, phrase in _values_on_screen(scene):
            key = (beat, text, id(phrase))
            if key in self._seen:
                continue
            self._seen.add(key)
            self._held.append(phrase)
            for fact in getattr(phrase, "facts", ()):
                if fact.kind in ("cost", "index"):
                    shown += _values_of(fact.shown)
            for number in drawn_numbers(text, phrase):
                self.loose.setdefault(beat, {}).setdefault(number, text)

    def problems(self) -> list[str]:
        """One line per shot that drew numbers no setting it shows has: the shot and the values."""
        found = []
        for beat, numbers in self.loose.items():
            facts = self.facts.get(beat, [])
            wrong = [n for n in numbers if not _is_a_fact(n, facts)]
            if wrong:
                values = ", ".join(repr(n) for n in wrong[:6]) + (
                    f" and {len(wrong) - 6} more" if len(wrong) > 6 else ""
                )
                found.append(
                    f"{beat}: drawn value(s) {values} not a fact of the shot's settings"
                    f" (shown in {excerpt(numbers[wrong[0]], 120)}; a counter between two settings shows only theirs)"
                )
        return found


def _values_of(shown: str) -> list[tuple[float, float]]:
    """What a fact's shown string states, in base units and as its bare number too (a counter
    may draw "60.0" for the fact "60%")."""
    values = []
    parsed = parse_shown(shown)
    if parsed is not None:
        values.append(parsed)
    bare = NUMBER.search(shown)
    if bare is not None:
        frac = bare.group(2) or ""
        values.append((float(bare.group(1).replace(",", "") + ("." + frac if frac else "")), 0.5 * 10 ** -len(frac)))
    return values


def _is_a_fact(number: str, facts: list[tuple[float, float]]) -> bool:
    """Whether `number` shows one of the facts' values, within the rounding of either."""
    parsed = parse_shown(number)
    if parsed is None:
        return True
    value, rounding = parsed
    return any(abs(value - v) <= max(rounding, r) * (1 + 1e-9) for v, r in facts)


def _values_on_screen(scene: Scene) -> list[tuple[str, object]]:
    """Every visible text (with its phrase) and Manim number (as it reads) on screen."""
    from manim import DecimalNumber  # (here: only a dry run, which has Manim, looks)

    from dtfilm.onscreen.layout import NUMBERS_AND_TEXTS, pieces_on_screen

    return [
        (_decimal_shown(piece), None)
        if isinstance(piece, DecimalNumber)
        else (piece.original_text, getattr(piece, "phrase", None))
        for piece in pieces_on_screen(scene, NUMBERS_AND_TEXTS)
    ]
