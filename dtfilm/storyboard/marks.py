"""Marks in a narration: `[name]` before the words a shot's motion waits for.

    narration: >-
      Each card keeps its queries. [pass] The key and value blocks travel the ring.

The mark is not spoken, shown or subtitled; the shot code's `ctx.until("pass")` waits until
the voice reaches "The key and value blocks". A kind declares the marks it waits for
(`KindSpec.marks`, listed by `dtfilm kinds`); a narration without one of them gets that step
spread over its narration in order.
"""

from __future__ import annotations

import re

from dtfilm.voice.cues import sentences_of

MARK = re.compile(r"\s*\[([a-z0-9][a-z0-9_]*)\]\s*")
WORDS_PER_SECOND = 150 / 60  # a narration's pace without a voice

Marks = tuple[tuple[str, int], ...]  # (name, character offset in the narration without marks)


def split_marks(text: str) -> tuple[str, Marks]:
    """The narration as spoken and shown, and each mark with the offset of the word after it."""
    clean, marks, cursor = [], [], 0
    length = 0
    for match in MARK.finditer(text):
        before = text[cursor : match.start()]
        clean.append(before)
        length += len(before)
        joiner = " " if before and match.end() < len(text) else ""
        clean.append(joiner)
        length += len(joiner)
        marks.append((match.group(1), length))
        cursor = match.end()
    clean.append(text[cursor:])
    return "".join(clean), tuple(marks)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Where each of the narration's sentences starts and ends in it (as sentences_of cuts it)."""
    spans, cursor = [], 0
    for sentence in sentences_of(text):
        start = text.index(sentence, cursor)
        spans.append((start, start + len(sentence)))
        cursor = start + len(sentence)
    return spans


def mark_seconds(text: str, marks: Marks, spoken: list[tuple[float, float]] | None) -> dict[str, float]:
    """Seconds from the start of the narration's audio to each mark: inside a sentence by its
    share of the sentence's characters, at a sentence's start when it falls between two; with no
    voice (`spoken` None), by the words before it at 150 a minute."""
    times: dict[str, float] = {}
    spans = sentence_spans(text)
    for name, offset in marks:
        if spoken is None:
            times[name] = len(text[:offset].split()) / WORDS_PER_SECOND
            continue
        times[name] = spoken[-1][1] if spoken else 0.0
        for (start, end), (begins, ends) in zip(spans, spoken, strict=True):
            if offset < end:
                share = max(0, offset - start) / max(end - start, 1)
                times[name] = begins + share * (ends - begins)
                break
    return times
