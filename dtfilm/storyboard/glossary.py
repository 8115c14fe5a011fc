"""The film's glossary: each term with its forms, a one-line definition and the beat that defines
it; the check that no chapter uses a term before the film, in film order, has defined it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dtfilm.errors import DtfilmError, Where
from dtfilm.inside import CHAPTER_ID
from dtfilm.storyboard import Chapter
from dtfilm.storyboard.film import shown_path
from dtfilm.storyboard.load import spoken_and_written
from dtfilm.system.yamlsrc import KeyPath, Located, dotted, load_yaml

TERM_KEYS = ("term", "forms", "means", "defined", "flags_move_it_to", "flags_may_drop_it")


@dataclass(frozen=True)
class Term:
    """A glossary entry: `forms` are the words that name it in narration or on screen (a form
    with a capital letter matches only as written, MFU; one without matches any case, and its
    plural); `defined` is the chapter and beat whose narration or screen text defines it at the
    film's defaults. `moved` (the glossary's `flags_move_it_to`) are other beats of the same
    chapter that define it instead where the flags move its first naming there (ledger's
    sixteen-bytes names bf16 only when the weights are in bf16; at --precision fp32 the precision
    switch is the first to say it): the first of them, in the film's order, whose text names it
    under the flags defines it. The only tolerance the check allows, and only there. `droppable`
    (`flags_may_drop_it: true`): a term the defining beat names only under some flags (tp:stalls
    names Transformer Engine only where its overlap runs); where the flags leave it unnamed there,
    the chapter must name it nowhere else either."""

    term: str
    forms: tuple[str, ...]
    means: str
    chapter: str
    beat: str
    where: Where
    moved: tuple[str, ...] = ()
    droppable: bool = False

    def pattern(self) -> re.Pattern[str]:
        parts = []
        for form in sorted(self.forms, key=len, reverse=True):
            body = re.escape(form).replace(r"\ ", r"[\s-]+")
            if form.lower() == form:  # a word: any case, and its plural
                parts.append(f"(?i:{body}(?:e?s)?)")
            else:
                parts.append(body)
        return re.compile(r"(?<![\w-])(?:" + "|".join(parts) + r")(?![\w-])")


def _place(doc: Located, here: KeyPath, raw: Any) -> tuple[str, str]:
    """A CHAPTER:BEAT place, split; anything else is a one-line error at its line."""
    chapter, _, beat = raw.partition(":") if isinstance(raw, str) else ("", "", "")
    if not (CHAPTER_ID.match(chapter) and CHAPTER_ID.match(beat)):
        raise DtfilmError(
            f"{raw!r} is not a place; valid: CHAPTER:BEAT (why:wont-finish)", doc.where(here), dotted(here)
        )
    return chapter, beat


def _entry(doc: Located, i: int, raw: Any) -> Term:
    here = (i,)
    if not isinstance(raw, dict):
        raise DtfilmError("expected a mapping with keys " + ", ".join(TERM_KEYS), doc.where(here), f"[{i}]")
    for key in raw:
        if key not in TERM_KEYS:
            raise DtfilmError(
                f"unknown key {key!r}; valid: {', '.join(TERM_KEYS)}", doc.where((*here, key)), dotted((*here, key))
            )
    for key in ("term", "means", "defined"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise DtfilmError(f"expected text for {key!r}", doc.where((*here, key)), dotted((*here, key)))
    forms = raw.get("forms", [raw["term"]])
    if not isinstance(forms, list) or not forms or not all(isinstance(f, str) and f.strip() for f in forms):
        raise DtfilmError("expected a list of words", doc.where((*here, "forms")), dotted((*here, "forms")))
    chapter, beat = _place(doc, (*here, "defined"), raw["defined"])
    moved = raw.get("flags_move_it_to", [])
    if not isinstance(moved, list):
        raise DtfilmError(
            "expected a list of CHAPTER:BEAT places",
            doc.where((*here, "flags_move_it_to")),
            dotted((*here, "flags_move_it_to")),
        )
    beats = []
    for j, place in enumerate(moved):
        other, later = _place(doc, (*here, "flags_move_it_to", j), place)
        if other != chapter:
            where = (*here, "flags_move_it_to", j)
            raise DtfilmError(
                f"{place!r} is not in {chapter}; valid: another beat of the chapter that defines it ({chapter}:BEAT)",
                doc.where(where),
                dotted(where),
            )
        beats.append(later)
    droppable = raw.get("flags_may_drop_it", False)
    if not isinstance(droppable, bool):
        flag = (*here, "flags_may_drop_it")
        raise DtfilmError("expected true or false", doc.where(flag), dotted(flag))
    defined = doc.where((*here, "defined"))
    return Term(raw["term"], tuple(forms), raw["means"], chapter, beat, defined, tuple(beats), droppable)


def load_glossary(path: Path) -> tuple[Term, ...]:
    """The glossary's terms, in the file's order; a bad entry is a one-line error at its line."""
    doc = load_yaml(path, shown_path(path), "a glossary")
    if not isinstance(doc.data, list) or not doc.data:
        raise DtfilmError("expected a list of terms (term, forms, means, defined)", doc.where(()))
    return tuple(_entry(doc, i, raw) for i, raw in enumerate(doc.data))


def film_glossary(chapter: Chapter) -> tuple[Term, ...]:
    """The glossary the chapter's film opted into (film.yaml's `glossary:`), or none."""
    if not chapter.film.glossary:
        return ()
    path = chapter.film.path.parent / chapter.film.glossary
    if not path.is_file():
        raise DtfilmError(
            f"no glossary {shown_path(path)}; valid: a .yaml file beside film.yaml, or no `glossary:` key",
            Where(shown_path(chapter.film.path)),
            "glossary",
        )
    return load_glossary(path)


# A term defined in passing: its first use followed at once by a gloss in brackets,
# "MFU (the share of the card's peak kept busy)".
_PASSING = re.compile(r"\s*\(")


def _written(chapter: Chapter) -> list[tuple[int, str, str, str]]:
    """Every text the storyboard gives, in film order: (shot index, beat, key, text)."""
    beats = {shot.beat: shot.index for shot in chapter.shots}
    return [(beats.get(beat, -1), beat, which, phrase.text) for beat, which, phrase in spoken_and_written(chapter)]


def _line(chapter: Chapter, beat: str, which: str, match: str) -> str:
    """file:line of the storyboard line that says `match` in the beat's `which` (else the beat's)."""
    shown = shown_path(chapter.path)
    shot = next((s for s in chapter.shots if s.beat == beat), None)
    start = shot.where.line or 1 if shot is not None else 1
    lines = chapter.path.read_text(encoding="utf-8").splitlines()
    following = (s.where.line for s in chapter.shots if shot and s.index == shot.index + 1)
    end = next((line for line in following if line is not None), len(lines) + 1)
    words = match.split()
    for number in range(start, min(end, len(lines) + 1)):
        if words and words[0] in lines[number - 1]:
            return f"{shown}:{number}"
    return f"{shown}:{start}"


def glossary_problems(chapter: Chapter, drawn: Iterable[tuple[str, str]] = ()) -> list[str]:
    """Each use of a glossary term before it is defined, one line naming file:line. A term may be
    used from the beat that defines it on (the glossary's `defined`), in every later chapter of
    the film's order, and anywhere in a chapter that defines it in passing at its first use (the
    term, then a gloss in brackets): a chapter shown alone says what it means once. `drawn` are
    the texts the shots draw themselves, (beat, text), each checked at its shot."""
    terms = film_glossary(chapter)
    if not terms:
        return []
    order = {c: i for i, c in enumerate(chapter.film.chapters)}
    here = order.get(chapter.id)  # None: a chapter outside the film's order stands alone
    beats = {shot.beat: shot.index for shot in chapter.shots}
    texts = _written(chapter) + [(beats.get(beat, -1), beat, "drawn", text) for beat, text in drawn]
    texts.sort(key=lambda t: (t[0], t[2] == "drawn"))
    # The film's order is the film's own storyboards': a chapter written elsewhere (a draft beside
    # the film, `dtfilm check talk/cp.yaml`, even one with a film chapter's id) has no place in it,
    # and the legends its kinds draw ("activations", "all-gather") are not its words to define.
    own = chapter.path.resolve() == (chapter.film.path.parent / f"{chapter.id}.yaml").resolve()
    if not own:
        return []
    problems = []
    for term in terms:
        if term.chapter not in order:  # defined by a chapter this film does not hold: not its to check
            continue
        pattern = term.pattern()
        if term.chapter == chapter.id:
            # the first, in the film's order, of the defining beat and the beats the flags may
            # move it to whose text names it under these flags
            places = {term.beat, *term.moved}
            defining = next((t for t in texts if t[1] in places and pattern.search(t[3])), None)
            if defining is None and term.droppable and not any(pattern.search(t[3]) for t in texts):
                continue  # these flags leave it unsaid: defined nowhere, used nowhere
            if defining is None:
                problems.append(
                    f"{term.where}: glossary: {term.term!r} is defined in {term.chapter}:{term.beat},"
                    f" whose text does not name it (forms: {', '.join(term.forms)})"
                )
                continue
            from_shot = beats[defining[1]]
        elif here is not None and order.get(term.chapter, len(order)) < here:
            continue  # defined earlier in the film
        else:
            from_shot = None
        passing = False
        for index, beat, which, text in texts:
            for match in pattern.finditer(text):
                if from_shot is not None and index >= from_shot:
                    break
                if not passing and _PASSING.match(text, match.end()):
                    passing = True  # glossed where first used: the chapter defines it itself
                if passing:
                    break
                where = _line(chapter, beat, which, match.group(0) if which != "drawn" else "")
                problems.append(
                    f"{where}: {beat}: {which}: {match.group(0)!r} is used before the film defines it"
                    f" ({term.term}: defined in {term.chapter}:{term.beat}; define it here in passing,"
                    f" '{match.group(0)} (...)', or use it later)"
                )
                break  # one line per term and text
    return problems


def glossary_size(path: Path) -> int:
    """The number of terms in a glossary file."""
    return len(load_glossary(path))
