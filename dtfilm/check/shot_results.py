"""What `check`'s dry run finds in one shot, as plain data: kept between runs (dtfilm.check.kept) and
merged, shot by shot, into the chapter's result exactly as one dry run of the whole chapter gives it.

A shot's findings are its layout problems, the numbers it draws (with the values its facts
show), and each distinct text it shows with that text's own problems. Texts are told apart as
the dry run's TextLog does (the text and its phrase's repr), and a text shown by two shots is
counted, and its problems said, at the first: so merging keeps the first shot's.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dtfilm.phrases import Phrase
from dtfilm.textcheck import excerpt, false_claims, text_problems

if TYPE_CHECKING:  # (types only: the observers load Manim, which `dtfilm` commands but check do without)
    from dtfilm.onscreen.drawn import DrawnValues
    from dtfilm.onscreen.layout import LayoutCheck


@dataclass(frozen=True)
class ShownText:
    """One distinct text a shot shows: `phrase_id` tells apart texts of the same words drawn for
    other facts; `problems` its own, `claims` its false claims (said only when the storyboard
    does not write the same words itself: the caller knows what it writes)."""

    text: str
    phrase_id: str
    facts: int
    problems: tuple[str, ...]
    claims: tuple[str, ...]


@dataclass(frozen=True)
class ShotResult:
    """One shot's dry run: its findings, its length (the chapter's last shot's holds the scene's
    tail after it), and the digest of the screen it leaves (the next shot's start)."""

    beat: str
    end_screen: str
    seconds: float
    layout: tuple[str, ...]
    texts: tuple[ShownText, ...]
    facts: tuple[tuple[float, float], ...]  # the values its facts show (DrawnValues.facts)
    loose: tuple[tuple[str, str], ...]  # drawn numbers no fact claims, with their text
    design: tuple[str, ...] = ()  # the design check's findings (LayoutCheck.design)


def phrase_id(phrase: Phrase | None) -> str:
    return hashlib.sha256(repr(phrase).encode()).hexdigest()[:16]


@dataclass
class ShotObservers:
    """The dry run's observers, one set per shot: called with the beat after each animation
    (and at moments inside it, `moment`), they keep each shot's findings apart."""

    layouts: dict[str, LayoutCheck] = field(default_factory=dict)
    texts: dict[str, dict[tuple[str, str], Phrase | None]] = field(default_factory=dict)
    drawn: dict[str, DrawnValues] = field(default_factory=dict)

    def __call__(self, scene: Any, beat: str) -> None:
        # (here: it loads Manim, which `dtfilm` commands but check do without)
        from dtfilm.onscreen.layout import LayoutCheck, texts_on_screen

        self.layouts.setdefault(beat, LayoutCheck())(scene, beat)
        shown = self.texts.setdefault(beat, {})
        for text in texts_on_screen(scene):
            phrase = getattr(text, "phrase", None)
            shown.setdefault((text.original_text, repr(phrase)), phrase)
        self._drawn(scene, beat)

    def moment(self, scene: Any, beat: str) -> None:
        """At a moment inside an animation: the numbers drawn, and the texts stacked by a cross-fade."""
        # (here: it loads Manim, which `dtfilm` commands but check do without)
        from dtfilm.onscreen.layout import LayoutCheck

        self._drawn(scene, beat)
        self.layouts.setdefault(beat, LayoutCheck()).moment(scene, beat)

    def _drawn(self, scene: Any, beat: str) -> None:
        # (here: it loads Manim, which `dtfilm` commands but check do without)
        from dtfilm.onscreen.drawn import DrawnValues

        self.drawn.setdefault(beat, DrawnValues())(scene, beat)

    def result(self, beat: str, end_screen: str, seconds: float) -> ShotResult:
        """The shot's findings, as kept."""
        drawn = self.drawn.get(beat)
        texts = tuple(
            ShownText(
                text,
                phrase_id(phrase),
                len(phrase.facts) if phrase is not None else 0,
                tuple(text_problems(text, phrase)),
                tuple(false_claims(phrase)) if phrase is not None else (),
            )
            for (text, _), phrase in self.texts.get(beat, {}).items()
        )
        return ShotResult(
            beat,
            end_screen,
            seconds,
            tuple(self.layouts[beat].problems) if beat in self.layouts else (),
            texts,
            tuple(drawn.facts.get(beat, [])) if drawn else (),
            tuple(drawn.loose.get(beat, {}).items()) if drawn else (),
            tuple(self.layouts[beat].design) if beat in self.layouts else (),
        )


@dataclass
class Merged:
    """The chapter's findings from its shots' (in the order `check` says them)."""

    problems: list[str] = field(default_factory=list)
    design: list[str] = field(default_factory=list)  # the design check's findings, reported
    texts: int = 0
    facts: int = 0
    drawn: list[tuple[str, str]] = field(default_factory=list)  # (beat, text) each text drawn
    duration: float = 0.0


def merged(results: list[ShotResult], written: set[str]) -> Merged:
    """Every shot's findings as one dry run of the chapter gives them: layout problems, then
    drawn values, then each distinct text's problems, at the first shot to show it."""
    # (here: it loads Manim, which `dtfilm` commands but check do without)
    from dtfilm.onscreen.drawn import DrawnValues

    out = Merged()
    drawn = DrawnValues()
    seen: dict[tuple[str, str], str] = {}
    for result in results:
        out.problems += result.layout
        out.design += result.design
        out.duration += result.seconds
        drawn.facts[result.beat] = list(result.facts)
        if result.loose:
            drawn.loose[result.beat] = dict(result.loose)
        for shown in result.texts:
            seen.setdefault((shown.text, shown.phrase_id), result.beat)
    out.problems += drawn.problems()
    first = {(r.beat, (t.text, t.phrase_id)): t for r in results for t in r.texts}
    for (text, pid), beat in seen.items():
        shown = first[(beat, (text, pid))]
        out.texts += 1
        out.facts += shown.facts
        out.problems += [f"{beat}: {p}" for p in shown.problems]
        if text not in written:  # what a shot draws itself (the planner's reasons)
            out.problems += [f"{beat}: {excerpt(text)}: {p}" for p in shown.claims]
        out.drawn.append((beat, text))
    return out
