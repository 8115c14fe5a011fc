"""`check`'s speech bounds (issue 58): a chapter's words a minute and quantities a sentence
(dtfilm.voice.pace), and no title card held past its sentence. What the voice says needs no
frame, so these are checked on the dry run's narration track; speech over stills needs the
rendered frames, and `dtfilm pacing` measures it on the render (dtfilm.render.look)."""

from __future__ import annotations

from dtfilm.shots.registry import KINDS
from dtfilm.storyboard import Chapter
from dtfilm.voice.cues import sentences_of
from dtfilm.voice.pace import Pace, chapter_cues, pace_of, pace_problems
from dtfilm.voice.track import narration_track


def chapter_pace(chapter: Chapter) -> Pace:
    """The chapter's pace, its cues timed to the sentences its voice speaks (the track is
    cached: the dry run spoke it already)."""
    track = narration_track(chapter, chapter.film.voice)
    narrated = []
    for shot in chapter.shots:
        if shot.narration is None:
            continue
        audio = track.get(shot.beat)
        spoken = [(s.written, s.start, s.end) for s in audio.sentences] if audio else None
        narrated.append((shot.narration.text, spoken))
    return pace_of(chapter_cues(narrated), [text for text, _ in narrated])


def held_card_problems(chapter: Chapter) -> list[str]:
    """A card whose narration runs past its kind's most sentences (`most_sentences`: the title
    card's one) holds the card while the voice goes on (9 to 12 s in the film issue 58 reviewed)."""
    return [
        f"{shot.beat}: narration: the {shot.kind} card is held past its sentence ({count} sentences); at most {most}"
        for shot in chapter.shots
        if (most := KINDS[shot.kind].most_sentences) and shot.narration is not None
        if (count := len(sentences_of(shot.narration.text))) > most
    ]


def speech_problems(chapter: Chapter) -> tuple[Pace, list[str]]:
    """The chapter's pace, and each speech bound it is past."""
    pace = chapter_pace(chapter)
    return pace, pace_problems(pace) + held_card_problems(chapter)
