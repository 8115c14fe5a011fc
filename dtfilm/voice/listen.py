"""Hearing without ears: where speech is in a clip's sound (decoded by
dtfilm.system.sound.decoded_audio), and the subtitle cues beside it (benchmarks/voice_track.py prints
these; the render test asserts them)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

WINDOW_SECONDS = 0.05
SPEECH_DBFS = -40.0  # a window louder than this holds speech
MIN_GAP_SECONDS = 0.25  # quieter stretches shorter than this are inside a sentence


def speech_spans(samples: np.ndarray, rate: int) -> list[tuple[float, float]]:
    size = max(1, int(WINDOW_SECONDS * rate))
    windows = samples[: len(samples) // size * size].reshape(-1, size)
    loud = 20 * np.log10(np.sqrt((windows**2).mean(axis=1)) + 1e-12) > SPEECH_DBFS
    spans: list[tuple[float, float]] = []
    for i, on in enumerate(loud):
        t = i * WINDOW_SECONDS
        if on and spans and t - spans[-1][1] <= MIN_GAP_SECONDS:
            spans[-1] = (spans[-1][0], t + WINDOW_SECONDS)
        elif on:
            spans.append((t, t + WINDOW_SECONDS))
    return spans


def cues(path: Path) -> list[tuple[float, float, str]]:
    srt = path.with_suffix(".srt")
    if not srt.is_file():
        return []

    def seconds(stamp: str) -> float:
        h, m, s = stamp.replace(",", ".").split(":")
        return int(h) * 3600 + int(m) * 60 + float(s)

    found = re.findall(r"(\d\d:\d\d:\d\d,\d+) --> (\d\d:\d\d:\d\d,\d+)\n(.+?)(?:\n\n|\Z)", srt.read_text(), re.S)
    return [(seconds(a), seconds(b), text.replace("\n", " ")) for a, b, text in found]
