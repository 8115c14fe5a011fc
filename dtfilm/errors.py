"""One error type for bad input: a one-line message that names where and what is valid."""

from __future__ import annotations

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
