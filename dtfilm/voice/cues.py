"""Subtitle cues from the spoken sentences: at most two lines of at most 42 characters, shown
0.7 to 7.5 seconds each, cut at phrase ends where a sentence is too long for one cue.

A sentence's audio gives its start and end; a cue inside a sentence is timed by its share of
the sentence's characters (the joe voice gives no word alignments), which keeps each cue on
the words being said to within a fraction of a second.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LINE_CHARS = 42
CUE_CHARS = 2 * LINE_CHARS
MIN_SECONDS, MAX_SECONDS = 0.7, 7.5
_PHRASE_END = re.compile(r"(?<=[,;:—])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9“\"'(])")


@dataclass(frozen=True)
class Cue:
    text: str  # with "\n" between its lines
    start: float
    end: float


def sentences_of(text: str) -> list[str]:
    """A narration cut at its sentence ends ("7.39" and "e.g." do not end one)."""
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def narration_cues(text: str, spoken: list[tuple[str, float, float]] | None, start: float, seconds: float) -> list[Cue]:
    """A shot's cues: from each spoken sentence's (text, start, end) in the shot's audio, or
    without a voice from its sentences spread over `seconds` by their length."""
    if spoken is None:
        sentences = sentences_of(text)
        total = sum(len(s) for s in sentences) or 1
        spoken, cursor = [], 0.0
        for sentence in sentences:
            length = seconds * len(sentence) / total
            spoken.append((sentence, cursor, cursor + length))
            cursor += length
    cues = [cue for said, a, b in spoken for cue in sentence_cues(said, start + a, start + b)]
    # a short sentence stays up into the pause after it, to be read
    for i, cue in enumerate(cues):
        if cue.end - cue.start < MIN_SECONDS:
            until = cues[i + 1].start if i + 1 < len(cues) else cue.start + MIN_SECONDS
            cues[i] = Cue(cue.text, cue.start, min(cue.start + MIN_SECONDS, until))
    return cues


def escaped(text: str) -> str:
    """Text for Manim's own subcaption file and the cache entry's record of a shot's cues: `&`,
    `<` and the `-->` arrow written as entities. dtfilm's subtitles are not made from either:
    they are plain text in SubRip and escaped for WebVTT as they are written
    (dtfilm.render.assemble.shot_cues, dtfilm.system.webvtt.vtt_text)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace("-->", "--&gt;")


def lines_of(text: str) -> str:
    """A cue's text in at most two lines of LINE_CHARS, balanced."""
    if len(text) <= LINE_CHARS:
        return text
    words = text.split()
    best = None
    for cut in range(1, len(words)):
        first, second = " ".join(words[:cut]), " ".join(words[cut:])
        if len(first) <= LINE_CHARS and len(second) <= LINE_CHARS:
            score = abs(len(first) - len(second))
            if best is None or score < best[0]:
                best = (score, f"{first}\n{second}")
    return best[1] if best else text


def _fits(text: str, most_chars: int) -> bool:
    """Whether a cue's text fits two lines of LINE_CHARS (and `most_chars` in all)."""
    return len(text) <= most_chars and (len(text) <= LINE_CHARS or "\n" in lines_of(text))


def _balanced(words: list[str], most_chars: int) -> list[str]:
    """Words in as few pieces as fit, of about equal length: never a lone word left over."""
    for count in range(1, len(words) + 1):
        target = sum(len(w) + 1 for w in words) / count
        pieces: list[str] = []
        for word in words:
            if pieces and (len(pieces[-1]) + 1 + len(word) / 2 <= target or len(pieces) == count):
                pieces[-1] += " " + word
            else:
                pieces.append(word)
        if all(_fits(p, most_chars) for p in pieces):
            return pieces
    return words


def _pieces(sentence: str, most_chars: int) -> list[str]:
    """The sentence in pieces of at most `most_chars` that fit two lines, cut at phrase ends
    where it can be, else between words into pieces of about equal length."""
    pieces: list[str] = []
    for phrase in _PHRASE_END.split(sentence.strip()):
        pieces += _balanced(phrase.split(), most_chars)
    # join whole pieces back while they fit
    joined: list[str] = []
    for piece in pieces:
        if joined and _fits(joined[-1] + " " + piece, most_chars):
            joined[-1] += " " + piece
        else:
            joined.append(piece)
    return joined


def sentence_cues(sentence: str, start: float, end: float) -> list[Cue]:
    """The cues of one sentence spoken from `start` to `end` seconds."""
    seconds = max(end - start, 1e-6)
    most_chars = CUE_CHARS
    # a long sentence said slowly: smaller pieces, so none stays up longer than MAX_SECONDS
    while True:
        pieces = _pieces(sentence, most_chars)
        total = sum(len(p) for p in pieces)
        longest = max(len(p) for p in pieces) / total * seconds
        if longest <= MAX_SECONDS or most_chars <= LINE_CHARS // 2:
            break
        most_chars -= 8
    # a piece too short to read is joined to its neighbour
    merged: list[str] = []
    for piece in pieces:
        short = len(piece) / total * seconds < MIN_SECONDS
        if merged and (short or len(merged[-1]) / total * seconds < MIN_SECONDS):
            if _fits(merged[-1] + " " + piece, CUE_CHARS):
                merged[-1] += " " + piece
                continue
        merged.append(piece)
    cues, cursor = [], start
    for piece in merged:
        length = len(piece) / total * seconds
        cues.append(Cue(lines_of(piece), cursor, cursor + length))
        cursor += length
    return cues
