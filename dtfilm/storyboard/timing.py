"""How long a shot lasts at least: its duration, or its narration read at 150 words a minute."""

from __future__ import annotations

from dtfilm.phrases import Phrase
from dtfilm.storyboard import Shot

WORDS_PER_SECOND = 150 / 60
LEAD_IN_SECONDS = 0.3  # a shot's narration starts this long after the shot
TAIL_SECONDS = 0.6  # and the shot holds this long after it ends
HOLD_SECONDS = 1.0  # a short hold after each idea so it can be read
CAPTION_EXIT_SECONDS = 0.5  # a shot's caption fades out over its last half second


def narration_seconds(narration: Phrase | None) -> float:
    return len(narration.text.split()) / WORDS_PER_SECOND if narration else 0.0


def beat_seconds(spoken_seconds: float, beats: int, fixed_seconds: float, least: float, most: float) -> float:
    """Seconds for each of a shot's `beats` repeated steps (a column, a ring step) so that its
    animation, with `fixed_seconds` besides, lasts about as long as it is spoken: between `least`
    and `most` a step, so the picture moves while the voice speaks instead of waiting at the end."""
    return min(most, max(least, (spoken_seconds - fixed_seconds) / max(beats, 1)))


def shot_floor_seconds(shot: Shot) -> float:
    return max(shot.duration or 0.0, narration_seconds(shot.narration), HOLD_SECONDS)
