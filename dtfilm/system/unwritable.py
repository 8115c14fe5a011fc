"""A write that failed because the folder cannot take it (read-only, no permission, a full
disk or quota), found however deep a library wrapped it: Manim's video encoder reports a full
disk as `RuntimeError: Failed to finish video segment ... [Errno 28]`, and a drawing process's
exception crosses to the render without its cause. Such a failure is one line naming where."""

from __future__ import annotations

import errno
from pathlib import Path

UNWRITABLE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT})
FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


def unwritable_cause(error: BaseException) -> OSError | None:
    """The OSError of an unwritable folder that `error` is, or was raised from, else None."""
    seen: set[int] = set()
    found: BaseException | None = error
    while found is not None and id(found) not in seen:
        seen.add(id(found))
        if isinstance(found, OSError) and found.errno in UNWRITABLE:
            return found
        found = found.__cause__ or found.__context__
    return None


def as_plain_oserror(error: BaseException) -> BaseException:
    """`error` as the OSError it was raised from, where it was an unwritable folder's: what a
    drawing process hands back (an exception crosses processes without its cause)."""
    cause = unwritable_cause(error)
    if cause is None or cause is error:
        return error
    return OSError(cause.errno, cause.strerror, cause.filename)


def where_unwritable(error: OSError) -> str:
    """Where to name: the folder that is full (every file in it fails alike), else the file."""
    if error.filename is None:
        return "a file"
    return str(Path(error.filename).parent) if error.errno in FULL else str(error.filename)
