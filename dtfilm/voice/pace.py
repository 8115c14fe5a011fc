"""The speech's pace, as a learner hears it (issue 58): words a minute, counted as the words of the
subtitle cues over their seconds on screen (each cue timed to its spoken sentence), and the
quantities a sentence, a quantity being a number with a unit of bytes, time, rate, FLOP/s or
percent, or a multiple written against its number ("1.5x"); a layout such as "tp 8 × pp 4" is
not one. Counted on the narration as templated, so `{memory.total:GB}` counts as the "73 GB" it
says.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from dtfilm.storyboard.timing import WORDS_PER_SECOND
from dtfilm.voice.cues import Cue, narration_cues, sentences_of

MAX_WORDS_A_MINUTE = 165
MAX_QUANTITIES = 2  # in one sentence
# the rate bound holds a chapter's speech, not a line: under this many words the rate is mostly
# the voice's lead-in and pauses (a three-word title card reads as 167 words a minute)
MIN_WORDS_FOR_RATE = 40

_NUMBER = r"(?<![\w.])\d[\d,]*(?:\.\d+)?"
_SPACE = r"[ \u00a0\u202f]?"
# Units: bytes, time, rates (anything a second), FLOP/s and percent, as the film writes them.
_UNIT = (
    r"(?:[kKMGTPE]i?B|bytes?|kB"
    r"|[kMGTPE]?FLOP/s|[kMGTPE]?FLOPs?"
    r"|[kMGT]?b(?:it)?/s|[kMGTPE]?B/s"
    r"|ms|µs|us|ns|s|seconds?|minutes?|min|hours?|h|days?|weeks?|months?|years?"
    r"|%|percent)"
)
_QUANTITY = re.compile(rf"{_NUMBER}{_SPACE}{_UNIT}(?![\w])")
# A multiple against its number ("1.5x", "6×", "2.5 times"), not a layout's "8 × pp 4".
_MULTIPLE = re.compile(rf"{_NUMBER}(?:[x×](?![\w])(?!\s*[a-z]+\s*\d)|{_SPACE}times\b)")


def quantities(sentence: str) -> list[str]:
    """The quantities a sentence says, in order."""
    found = [(m.start(), m.group()) for m in _QUANTITY.finditer(sentence)]
    found += [(m.start(), m.group()) for m in _MULTIPLE.finditer(sentence)]
    return [text for _, text in sorted(found)]


def words(text: str) -> int:
    """Words, as a reader of the subtitles counts them."""
    return len(text.split())


@dataclass(frozen=True)
class Pace:
    """A chapter's speech: words and seconds of its cues, and its sentences by their quantities."""

    words: int
    cue_seconds: float
    dense: tuple[tuple[str, tuple[str, ...]], ...]  # each sentence with quantities, and them

    @property
    def words_a_minute(self) -> float:
        return 60 * self.words / self.cue_seconds if self.cue_seconds > 0 else 0.0

    @property
    def most_quantities(self) -> int:
        return max((len(q) for _, q in self.dense), default=0)


def pace_of(cues: Iterable[Cue], narrations: Iterable[str]) -> Pace:
    """The pace of a chapter's cues and the narrations they were made from."""
    listed = list(cues)
    dense = tuple(
        (sentence, tuple(found))
        for narration in narrations
        for sentence in sentences_of(narration)
        if (found := quantities(sentence))
    )
    return Pace(sum(words(c.text) for c in listed), sum(c.end - c.start for c in listed), dense)


def chapter_cues(narrations: Iterable[tuple[str, list[tuple[str, float, float]] | None]]) -> list[Cue]:
    """The cues of each shot's narration, timed to its spoken sentences (text, start, end), or
    without a voice (None) by its words at the silent film's pace."""
    out: list[Cue] = []
    for text, spoken in narrations:
        out += narration_cues(text, spoken, 0.0, words(text) / WORDS_PER_SECOND)
    return out


def pace_problems(pace: Pace) -> list[str]:
    """Each bound the pace is past, one line each."""
    problems = []
    if pace.words >= MIN_WORDS_FOR_RATE and pace.words_a_minute > MAX_WORDS_A_MINUTE:
        problems.append(
            f"speech: {pace.words_a_minute:.0f} words a minute in the subtitle cues; at most {MAX_WORDS_A_MINUTE}"
        )
    for sentence, found in pace.dense:
        if len(found) > MAX_QUANTITIES:
            problems.append(
                f"speech: {len(found)} quantities in one sentence ({', '.join(found)}): {sentence[:90]!r};"
                f" at most {MAX_QUANTITIES}"
            )
    return problems
