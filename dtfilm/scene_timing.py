"""How long a shot lasts at least: its duration, or its narration read at 150 words a minute."""

from __future__ import annotations

from dtfilm.phrases import Phrase
from dtfilm.storyboard import Shot

WORDS_PER_SECOND = 150 / 60
HOLD_SECONDS = 1.0  # a short hold after each idea so it can be read


def narration_seconds(narration: Phrase | None) -> float:
    return len(narration.text.split()) / WORDS_PER_SECOND if narration else 0.0


def shot_floor_seconds(shot: Shot) -> float:
    return max(shot.duration or 0.0, narration_seconds(shot.narration), HOLD_SECONDS)
