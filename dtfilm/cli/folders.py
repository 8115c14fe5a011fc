"""The folder a command reads or writes, checked before work starts, and the errors a full disk gives."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from dtfilm import beneath
from dtfilm.errors import DtfilmError, Where
from dtfilm.storyboard.film import find_root
from dtfilm.system.unwritable import where_unwritable

# Commands that write into their --out folder (renders/ of the project by default).
WRITING = frozenset({"render", "still", "clean", "page", "slides", "validate", "preview"})


NAME_TEXT = "names of at most 255 bytes, paths of at most 4,096"


def shown_name(name: object) -> str:
    """A path an error names, shortened past 120 characters (a 300-byte name is the error)."""
    text = str(name) if name else "a path"
    return text if len(text) <= 120 else f"{text[:60]}…{text[-40:]} ({len(text.encode()):,} bytes)"


# Those that may make their --out folder, or take an empty one, and mark it a renders folder;
# every other command refuses a folder without the mark or a manifest (dtfilm.beneath).
MAKING = frozenset({"render", "still", "validate", "preview"})


def check_out(args: argparse.Namespace) -> None:
    """The folder a command reads or writes: a folder if it is there (not /etc/passwd), and one
    it can write in for a command that writes; refused in one line before any work starts."""
    given = getattr(args, "out", None)
    if given:
        folder, where = Path(given), Where(flag="--out")
    elif args.command in WRITING or hasattr(args, "out"):  # (every command with a renders folder)
        try:
            folder = find_root() / "renders"
        except DtfilmError:
            return  # (the command says so itself)
        where = Where(str(folder))
    else:
        return
    if folder.exists() and not folder.is_dir():
        raise DtfilmError(f"{folder} is not a folder; valid: a folder (made if missing)", where)
    # (a folder given that is not a renders folder is refused here, before anything is made in it)
    beneath.check_renders_folder(
        folder, given=bool(given), may_make=args.command in MAKING, writes=args.command in WRITING, where=where
    )
    if args.command in WRITING and folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
        raise DtfilmError("cannot write here (read-only); valid: a folder you can write", Where(str(folder)))


def unwritable(error: OSError) -> int:
    """A folder made read-only, or a disk that filled, under a command that had begun: one line
    naming it (a full disk's folder, as every file in it fails alike), exit status 2."""
    print(
        f"dtfilm: error: {where_unwritable(error)}: {error.strerror or error}; valid: a folder you can write,"
        " with room",
        file=sys.stderr,
    )
    return 2


def note_caches() -> None:
    """The project's cache (.dtfilm-cache/: spoken sentences, typeset labels) is read and
    written beneath itself, no link followed, as renders/ is (dtfilm.beneath)."""
    with contextlib.suppress(DtfilmError):
        beneath.register(find_root() / ".dtfilm-cache", scratch=False)
