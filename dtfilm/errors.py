"""One error type for bad input: a one-line message that names where and what is valid."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Where:
    """Where a value came from: a file and line, a command-line flag, or a built-in default."""

    file: str | None = None
    line: int | None = None
    flag: str | None = None

    def __str__(self) -> str:
        if self.flag:
            return self.flag
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or "default"


class DtfilmError(Exception):
    """Bad input. `str(error)` is the single line the command prints before exiting with 2."""

    def __init__(self, message: str, where: Where | None = None, key: str | None = None) -> None:
        self.message = message
        self.where = where
        self.key = key
        super().__init__(self.line())

    def line(self) -> str:
        parts = []
        if self.where is not None:
            parts.append(str(self.where))
        if self.key and not (self.where and self.where.flag):
            parts.append(self.key)
        parts.append(self.message)
        return ": ".join(parts)


def did_you_mean(word: object, options: Iterable[str]) -> str:
    """' (did you mean 'x'?)' for the option `word` most likely meant (the same but for case, or
    one close in spelling), else ''; what an error puts before its list of valid values."""
    if not isinstance(word, str):
        return ""
    choices = list(options)
    same = [option for option in choices if option.lower() == word.lower()]
    # a short name people say ('h100', 'mi300x') begins only the catalog's full one
    begun = [option for option in choices if word and option.lower().startswith(word.lower())]
    same = same or (begun if len(begun) == 1 else [])
    close = same or difflib.get_close_matches(word.lower(), [c.lower() for c in choices], n=1, cutoff=0.6)
    if not close:
        return ""
    meant = next(c for c in choices if c.lower() == close[0].lower())
    return f" (did you mean {meant!r}?)" if meant != word else ""
