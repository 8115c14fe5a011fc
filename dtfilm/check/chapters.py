"""`dtfilm check`: a dry run of chapters that draws no frames and runs the layout, numbers,
drawn-values and words checks, one line per problem (chapter: beat: what is wrong)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dtfilm.check.speech import speech_problems
from dtfilm.storyboard import Chapter, load_chapter
from dtfilm.storyboard.claims import chapter_claims
from dtfilm.storyboard.glossary import glossary_problems
from dtfilm.storyboard.load import spoken_and_written
from dtfilm.textcheck import text_problems, unclaimed_conclusions
from dtfilm.voice.pace import Pace


@dataclass
class ChapterCheck:
    """What `check` found in one chapter."""

    chapter: Chapter
    problems: list[str] = field(default_factory=list)
    design: list[str] = field(default_factory=list)  # the design check's (dtfilm.onscreen.layout)
    texts: int = 0
    facts: int = 0
    seconds: float = 0.0
    duration: float = 0.0
    played: int = 0  # shots whose dry run played (the others' kept results were reused)
    pace: Pace | None = None  # its speech: words a minute, quantities a sentence

    @property
    def failed(self) -> bool:
        """Whether `check` fails the chapter: a problem, or a design finding (every chapter meets
        the design check in both themes since issue 58, so a new finding is a regression)."""
        return bool(self.problems or self.design)

    @property
    def film_yaml(self) -> Path:
        return self.chapter.film.path


def check_loaded(chapter: Chapter, theme: str | None = None, reuse: bool = False) -> ChapterCheck:
    """Run every check on a loaded chapter (its dry run included). With `reuse`, each shot's dry
    run kept in the project's `.dtfilm-cache/check/` is reused while its key holds
    (dtfilm.check.kept), and labels typeset before are read back (dtfilm.visuals.text)."""
    # (here: they load what only a check needs; Manim, only when a shot plays)
    from dtfilm.check.kept import kept_folder
    from dtfilm.check.reuse import kept_results
    from dtfilm.check.shot_results import merged

    started = time.perf_counter()
    result = ChapterCheck(chapter)
    written = set()
    # the film's title and subtitle are templates too, under this chapter's numbers (a title card
    # draws the title; the gallery and the deck show both): "256 H100s" typed is refused
    film_texts = [
        ("film", which, p) for which, p in (("title", chapter.film_title), ("subtitle", chapter.film_subtitle))
    ]
    for beat, which, phrase in [*spoken_and_written(chapter), *((b, w, p) for b, w, p in film_texts if p is not None)]:
        written.add(phrase.text)
        result.problems += [f"{beat}: {which}: {p}" for p in text_problems(phrase.text, phrase)]
        result.problems += [f"{beat}: {which}: {p}" for p in unclaimed_conclusions(phrase.text, phrase)]
    result.problems += claim_problems(chapter)
    result.pace, said_too_fast = speech_problems(chapter)
    result.problems += said_too_fast
    root = chapter.film.path.parent.parent
    folder = kept_folder(root) if reuse else None
    shots, result.played = kept_results(chapter, theme, folder, root if folder is not None else None)
    found = merged(shots, written)
    result.problems += found.problems
    result.design = list(dict.fromkeys(found.design))
    result.texts, result.facts = found.texts, found.facts
    result.problems += glossary_problems(chapter, found.drawn)
    result.problems = list(dict.fromkeys(result.problems))
    result.duration = found.duration
    result.seconds = time.perf_counter() - started
    return result


def claim_problems(chapter: Chapter) -> list[str]:
    """Each false claim of the storyboard's texts, one line with its file:line and values."""
    return [record.problem() for record in chapter_claims(chapter) if not record.holds]


def check_chapter(
    spec: str | Path,
    overrides: dict[str, Any] | None = None,
    theme: str | None = None,
    root: Path | None = None,
    reuse: bool = False,
) -> ChapterCheck:
    """Load a chapter (an id in the project, or a storyboard file anywhere) and check it (with
    `reuse`, as `dtfilm check` does: each unchanged shot's kept dry run reused, check_loaded)."""
    return check_loaded(load_chapter(spec, overrides, root), theme, reuse)
