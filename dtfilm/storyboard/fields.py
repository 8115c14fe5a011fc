"""A storyboard's YAML values checked where they are written: known keys, visible text, one-line titles."""

from __future__ import annotations

import re
from typing import Any

from dtfilm.errors import DtfilmError, did_you_mean
from dtfilm.system.fonts import FONTS, missing_glyph
from dtfilm.system.yamlsrc import KeyPath, Located, dotted
from dtfilm.textcheck import character_name, hidden_character


def require_mapping(doc: Located, path: KeyPath, value: Any, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DtfilmError(f"expected a mapping with keys {', '.join(allowed)}", doc.where(path), dotted(path))
    for key in value:
        if key not in allowed:
            raise DtfilmError(
                f"unknown key {key!r}{did_you_mean(key, allowed)}; valid: {', '.join(allowed)}",
                doc.where((*path, key)),
                dotted((*path, key)),
            )
    return value


def short_repr(value: object, width: int = 60) -> str:
    """A value as an error quotes it, shortened past `width` characters (a 300-character id)."""
    text = repr(value)
    return text if len(text) <= width else f"{text[: width - 1]}… ({len(str(value)):,} characters)"


def checked_text(doc: Located, path: KeyPath, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DtfilmError(
            f"expected text, got {value!r}; valid: words in quotes, a number in them named by a template"
            ' ("{params:si} parameters")',
            doc.where(path),
            dotted(path),
        )
    if (hidden := hidden_character(value)) is not None:
        raise DtfilmError(
            f"text holds {character_name(hidden)}, which changes what is shown without being seen;"
            " valid: visible text (write the words as they should read)",
            doc.where(path),
            dotted(path),
        )
    if path[-1] != "narration" and (missing := missing_glyph(value)) is not None:  # narration is heard
        raise DtfilmError(
            f"text holds {missing!r} ({character_name(missing)}), which the film's fonts"
            f" ({', '.join(FONTS)}) cannot draw; valid: characters they have (fc-list shows them)",
            doc.where(path),
            dotted(path),
        )
    return value


# A line break or control character in a title: the chapter markers (film.chapters.vtt), the
# gallery's headings and the terminal show a title as one line, and a title that was
# "x\n00:00:00.000 --> 09:00:00.000" became a forged cue of its own there.
_NOT_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(doc: Located, path: KeyPath, value: Any) -> str:
    """Text (as checked_text) of one line: a title, shown on one line wherever it goes."""
    text = checked_text(doc, path, value)
    found = _NOT_ONE_LINE.search(text)
    if found is not None:
        raise DtfilmError(
            f"a line break or control character ({found.group()!r}) in a title; valid: one line of text",
            doc.where(path),
            dotted(path),
        )
    return text
