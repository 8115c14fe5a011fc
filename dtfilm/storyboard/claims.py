"""Every claim a loaded chapter makes, where its storyboard writes it (file:line), at the numbers
of the setting it was loaded at: what `dtfilm claims` lists and `dtfilm check` fails on."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from dtfilm.claims import ClaimResult
from dtfilm.storyboard.film import shown_path
from dtfilm.storyboard.load import Chapter, spoken_and_written
from dtfilm.system.yamlsrc import KeyPath, load_yaml


@dataclass(frozen=True)
class ClaimRecord:
    """One claim of one text of a chapter, evaluated."""

    where: str  # file:line of the key that holds it
    beat: str
    which: str  # caption, narration, subtitle, rows[0].label, label[2] (a sweep's third value)
    result: ClaimResult

    @property
    def holds(self) -> bool:
        return self.result.holds

    def as_json(self) -> dict[str, Any]:
        return {"where": self.where, "beat": self.beat, "in": self.which, **self.result.as_json()}

    def line(self) -> str:
        """One line: where, which text, the words, and the condition with its values."""
        verdict = "holds" if self.holds else "is FALSE"
        words = _listed(self.result.text)
        return (
            f"{self.where}: {self.beat}: {self.which}: {words!r} ({self.result.quantity}) {verdict}:"
            f" {self.result.condition}; {self.result.contradiction()}"
        )

    def problem(self) -> str:
        """A false claim as `dtfilm check` reports it, in one line."""
        return (
            f"{self.where}: {self.beat}: {self.which}: false claim {_listed(self.result.text)!r}"
            f" ({self.result.quantity}): {self.result.condition} does not hold: {self.result.contradiction()}"
        )


def _plain(text: str) -> str:
    """The words as a terminal shows them (the screen's no-break spaces as spaces)."""
    return text.replace("\xa0", " ")


def _listed(text: str) -> str:
    """The words as a listing shows them: plain, and without the punctuation that joins a claim
    to the sentence before it (", fewer bytes than ..." reads as a fragment on a line of its own).
    Only the listing: the film says the words as they are."""
    return _plain(text).lstrip(" ,;:")


_INDEXED = re.compile(r"^(\w+)\[(\d+)\](?:\.(\w+))?$")


def _key_path(shot_index: int | None, which: str) -> KeyPath:
    """The YAML path of the text `which` names (rows[1].label, label[2], caption)."""
    if shot_index is None:
        return (which,)
    match = _INDEXED.match(which)
    if match is None:
        return ("shots", shot_index, which)
    key, i, leaf = match.group(1), int(match.group(2)), match.group(3)
    if leaf:  # rows[1].label
        return ("shots", shot_index, key, i, leaf)
    return ("shots", shot_index, key)  # a sweep's per-value key: one template for every value


def chapter_claims(chapter: Chapter) -> list[ClaimRecord]:
    """Every claim in the texts the storyboard gives (subtitle, captions, narration, labels),
    in order, with where it is written."""
    doc = load_yaml(chapter.path, shown_path(chapter.path))
    shot_of = {shot.beat: shot.index for shot in chapter.shots}
    records = []
    for beat, which, phrase in spoken_and_written(chapter):
        claims = [fact.value for fact in phrase.facts if fact.kind == "claim"]
        if not claims:
            continue
        shot_index = None if phrase in (chapter.title, chapter.subtitle) else shot_of.get(beat)
        place = str(doc.where(_key_path(shot_index, which)))
        records += [ClaimRecord(place, beat, which, result) for result in claims]
    return records
