"""`dtfilm check`: a dry run of chapters that draws no frames and runs the layout, numbers,
drawn-values and words checks, one line per problem (chapter: beat: what is wrong)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dtfilm.storyboard import Chapter, load_chapter
from dtfilm.storyboard.claims import chapter_claims
from dtfilm.storyboard.glossary import glossary_problems
from dtfilm.storyboard.load import spoken_and_written
from dtfilm.textcheck import excerpt, false_claims, text_problems, unclaimed_conclusions


@dataclass
class ChapterCheck:
    """What `check` found in one chapter."""

    chapter: Chapter
    problems: list[str] = field(default_factory=list)
    texts: int = 0
    facts: int = 0
    seconds: float = 0.0
    duration: float = 0.0

    @property
    def film_yaml(self) -> Path:
        return self.chapter.film.path


def check_loaded(chapter: Chapter, theme: str | None = None) -> ChapterCheck:
    """Run every check on a loaded chapter (its dry run included)."""
    # (here: it loads Manim, which only drawing needs)
    from dtfilm.check.inspect import inspect_loaded

    started = time.perf_counter()
    result = ChapterCheck(chapter)
    written = set()
    for beat, which, phrase in spoken_and_written(chapter):
        written.add(phrase.text)
        result.problems += [f"{beat}: {which}: {p}" for p in text_problems(phrase.text, phrase)]
        result.problems += [f"{beat}: {which}: {p}" for p in unclaimed_conclusions(phrase.text, phrase)]
    result.problems += claim_problems(chapter)
    inspection = inspect_loaded(chapter, theme)
    result.problems += inspection.layout.problems
    result.problems += inspection.drawn.problems()
    for (text, _), (beat, phrase) in inspection.texts.shown.items():
        result.texts += 1
        result.facts += len(phrase.facts) if phrase else 0
        result.problems += [f"{beat}: {p}" for p in text_problems(text, phrase)]
        if phrase is not None and text not in written:  # what a shot draws itself (the planner's reasons)
            result.problems += [f"{beat}: {excerpt(text)}: {p}" for p in false_claims(phrase)]
    drawn = [(beat, text) for (text, _), (beat, _) in inspection.texts.shown.items()]
    result.problems += glossary_problems(chapter, drawn)
    result.problems = list(dict.fromkeys(result.problems))
    result.duration = inspection.duration
    result.seconds = time.perf_counter() - started
    return result


def claim_problems(chapter: Chapter) -> list[str]:
    """Each false claim of the storyboard's texts, one line with its file:line and values."""
    return [record.problem() for record in chapter_claims(chapter) if not record.holds]


def check_chapter(
    spec: str | Path, overrides: dict[str, Any] | None = None, theme: str | None = None, root: Path | None = None
) -> ChapterCheck:
    """Load a chapter (an id in the project, or a storyboard file anywhere) and check it."""
    return check_loaded(load_chapter(spec, overrides, root), theme)
