"""Files beneath a root folder that a stranger may have written (renders/, the caches): opened,
read, written, renamed, listed and removed without following a link at any component.

renders/ may come from a CI cache, an artifact or another user, so any name in it may be a link
to a file outside, a FIFO or a device. Every operation here starts from a descriptor of the root
and opens each component below it with O_NOFOLLOW (and O_DIRECTORY for a folder), so a link is
refused where it stands instead of being followed; the leaf is opened O_NOFOLLOW | O_NONBLOCK
and checked with fstat (a regular file, and at most its role's size) before a byte is read.
This is the portable path (POSIX openat semantics, through Python's dir_fd), which macOS has as
well as Linux. The root itself is the folder the user named and may be a link (renders/ kept on
another disk); nothing below it may.

A renders folder is marked (MARK) when dtfilm makes it or first writes into an empty one, so a
command given `--out DIR` can tell a renders folder from a folder of the user's own
(`check_renders_folder`); and its fixed subpaths (FIXED) must be what dtfilm makes them, not a
link or another kind of file: refused in one line, except the scratch folder, which is made
again (nothing in it is kept).
"""

# Over 400 lines: one security boundary (opens beneath untrusted folders), audited whole (STYLE 18)

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from dtfilm.errors import DtfilmError, Where

MARK = ".dtfilm-renders"  # an empty file: this folder is one dtfilm renders into
MANIFEST = "manifest.json"  # (dtfilm.render.cache.MANIFEST: a renders folder from before the mark)
SCRATCH = ".dtfilm-tmp"
LOCK = ".dtfilm.lock"
# What a renders folder's fixed subpaths must be: a link, or the other kind, is refused.
FIXED = {
    LOCK: "file",
    SCRATCH: "folder",
    "cache": "folder",
    "shots": "folder",
    "one": "folder",
    "reveal": "folder",
    "explore": "folder",
    "logs": "folder",
}

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIR_FLAGS = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
# O_NONBLOCK: a FIFO is opened at once (then refused by fstat) instead of waiting for a writer.
_FILE_FLAGS = _NOFOLLOW | _NONBLOCK | _CLOEXEC


class Refused(OSError):
    """A path beneath a root that is a link, or not the kind of file asked for: never followed."""

    def __init__(self, shown: str, what: str) -> None:
        super().__init__(errno.ELOOP, what, shown)
        self.shown, self.what = shown, what

    def line_error(self, valid: str) -> DtfilmError:
        return DtfilmError(f"{self.what}; valid: {valid}", Where(self.shown))


def kind(mode: int) -> str:
    """What a file is, in words."""
    if stat.S_ISLNK(mode):
        return "a link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def parts_of(rel: str | Path) -> list[str]:
    """The components of a relative path; an absolute one, or one that climbs, is refused."""
    text = os.fspath(rel)
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if text.startswith("/") or ".." in parts:
        raise Refused(text, "is not a path beneath the folder")
    return parts


def open_root(root: Path) -> int:
    """A descriptor of the root folder (the one name here that may be a link)."""
    return os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)


def _why_not_folder(dir_fd: int, name: str, shown: str) -> Refused:
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return Refused(shown, "cannot be opened as a folder")
    return Refused(shown, f"is {kind(info.st_mode)}, not a folder dtfilm made (never followed)")


def open_dir_at(dir_fd: int, parts: list[str], create: bool = False, shown: str = "") -> int:
    """A descriptor of the folder `parts` beneath `dir_fd`, no link followed at any component;
    missing folders are made with `create`. Raises Refused for a link or a file on the way."""
    fd = os.dup(dir_fd)
    try:
        for index, name in enumerate(parts):
            here = "/".join([shown, *parts[: index + 1]]) if shown else "/".join(parts[: index + 1])
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError as error:
                    if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                        raise _why_not_folder(fd, name, here) from None
                    raise
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise _why_not_folder(fd, name, here) from None
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def folder(root: Path, rel: str | Path = "", create: bool = False) -> Iterator[int]:
    """A descriptor of the folder `rel` beneath `root` (made with `create`), closed after."""
    root_fd = open_root(root) if not create else _open_or_make_root(root)
    try:
        fd = open_dir_at(root_fd, parts_of(rel), create, str(root))
    finally:
        os.close(root_fd)
    try:
        yield fd
    finally:
        os.close(fd)


def _open_or_make_root(root: Path) -> int:
    try:
        return open_root(root)
    except FileNotFoundError:
        root.mkdir(parents=True, exist_ok=True)
        return open_root(root)


def open_regular_at(dir_fd: int, name: str, shown: str, limit_bytes: int | None = None) -> int:
    """A read descriptor of the regular file `name` in `dir_fd` (a link is not followed, a FIFO
    not waited on), of at most `limit_bytes`; else Refused (or OSError: missing, unreadable)."""
    fd = os.open(name, os.O_RDONLY | _FILE_FLAGS, dir_fd=dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(shown, f"is {kind(info.st_mode)}, not a regular file")
        if limit_bytes is not None and info.st_size > limit_bytes:
            raise Refused(shown, f"is {info.st_size:,} bytes, more than the {limit_bytes:,} of its kind")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _opening_error(error: OSError, dir_fd: int, name: str, shown: str) -> OSError:
    if error.errno in (errno.ELOOP, errno.EMLINK):
        return Refused(shown, "is a link (never followed)")
    return error


def read_fd(fd: int, limit_bytes: int, shown: str) -> bytes:
    """At most `limit_bytes` of `fd` (a file that grows while it is read is refused)."""
    chunks, size = [], 0
    while size <= limit_bytes and (chunk := os.read(fd, limit_bytes + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
    if size > limit_bytes:
        raise Refused(shown, f"is more than the {limit_bytes:,} bytes of its kind")
    return b"".join(chunks)


def _open_regular(root: Path, rel: str | Path, limit_bytes: int) -> tuple[int, str]:
    """A descriptor of the regular file `rel` beneath `root` (no link followed, at most
    `limit_bytes`) and its path as errors show it; raises Refused or OSError."""
    parts = parts_of(rel)
    if not parts:
        raise Refused(str(root), "is a folder, not a regular file")
    shown = str(root / "/".join(parts))
    with folder(root, "/".join(parts[:-1])) as dir_fd:
        try:
            return open_regular_at(dir_fd, parts[-1], shown, limit_bytes), shown
        except Refused:
            raise
        except OSError as error:
            raise _opening_error(error, dir_fd, parts[-1], shown) from None


def open_append(root: Path, rel: str | Path, limit_bytes: int) -> int:
    """A descriptor appending to the regular file `rel` beneath `root` (made, with its folders,
    when missing; no link followed, a FIFO not waited on): a log several processes write a line
    at a time. One grown past `limit_bytes` is emptied first, so it never fills the disk."""
    parts = parts_of(rel)
    if not parts:
        raise Refused(str(root), "is a folder, not a regular file")
    shown = str(root / "/".join(parts))
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _FILE_FLAGS
    with folder(root, "/".join(parts[:-1]), create=True) as dir_fd:
        try:
            fd = os.open(parts[-1], flags, 0o644, dir_fd=dir_fd)
            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                # a hard link to a file elsewhere (planted): this name gets a file of its own
                os.close(fd)
                os.unlink(parts[-1], dir_fd=dir_fd)
                fd = os.open(parts[-1], flags | os.O_EXCL, 0o644, dir_fd=dir_fd)
        except OSError as error:
            raise _opening_error(error, dir_fd, parts[-1], shown) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(shown, f"is {kind(info.st_mode)}, not a regular file")
        if info.st_size > limit_bytes:
            os.ftruncate(fd, 0)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read(root: Path, rel: str | Path, limit_bytes: int) -> bytes:
    """The bytes of the regular file `rel` beneath `root`, at most `limit_bytes`, no link
    followed; raises Refused or OSError."""
    fd, shown = _open_regular(root, rel, limit_bytes)
    try:
        return read_fd(fd, limit_bytes, shown)
    finally:
        os.close(fd)


def entries(root: Path, rel: str | Path = "") -> list[tuple[str, str]]:
    """The names in folder `rel` beneath `root`, each with what it is (kind, links not
    followed), sorted; [] when the folder is missing."""
    try:
        with folder(root, rel) as fd:
            out = []
            for name in sorted(os.listdir(fd)):
                with contextlib.suppress(FileNotFoundError):
                    out.append((name, kind(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)))
            return out
    except FileNotFoundError:
        return []


def remove_at(dir_fd: int, name: str) -> None:
    """Remove `name` from `dir_fd`: a link or a file is unlinked (never what a link points at);
    a folder is emptied the same way, beneath its own descriptor, then removed."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=dir_fd)
        return
    try:
        child = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError:  # (replaced by a link meanwhile: unlink that)
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dir_fd)
        return
    try:
        for inner in os.listdir(child):
            remove_at(child, inner)
    finally:
        os.close(child)
    with contextlib.suppress(FileNotFoundError, OSError):
        os.rmdir(name, dir_fd=dir_fd)


def unlink(root: Path, rel: str | Path) -> None:
    """Remove the file (or link: not what it points at) `rel` beneath `root`, if it is there."""
    parts = parts_of(rel)
    try:
        with folder(root, "/".join(parts[:-1])) as fd:
            info = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
            if not stat.S_ISDIR(info.st_mode):
                os.unlink(parts[-1], dir_fd=fd)
    except FileNotFoundError:
        pass


def mkdirs(root: Path, rel: str | Path) -> None:
    """Make folder `rel` beneath `root` (and the root), no link followed: Refused for a link."""
    with folder(root, rel, create=True):
        pass


def scratch_fd(root: Path) -> int:
    """A descriptor of `root`'s scratch folder, made if missing, and made again if what is
    there is a link or not a folder (the link is removed, never followed: nothing in scratch is
    kept, so replacing it loses nothing)."""
    root_fd = _open_or_make_root(root)
    try:
        try:
            return open_dir_at(root_fd, [SCRATCH], create=True, shown=str(root))
        except Refused:
            remove_at(root_fd, SCRATCH)
            return open_dir_at(root_fd, [SCRATCH], create=True, shown=str(root))
    finally:
        os.close(root_fd)


# The renders folders this process works in (registered by check_renders_folder and the render
# lock): atomic writes and reads back under one of them go beneath it.
_roots: dict[str, bool] = {}  # each root, as named and resolved: whether it has a scratch folder


def register(root: Path, scratch: bool = True) -> None:
    """Note `root` as a renders folder (or, without `scratch`, a cache: its temporary files are
    kept beside their targets): files under it (as named: absolute, links not resolved, and
    resolved) are written and read beneath it."""
    _roots[os.path.abspath(root)] = scratch
    with contextlib.suppress(OSError):
        _roots[os.path.realpath(root)] = scratch


def root_of(path: Path) -> tuple[Path, str] | None:
    """The registered folder `path` lies under (the deepest), and `path` relative to it."""
    text = os.path.abspath(path)
    best = None
    for root in _roots:
        if text.startswith(root.rstrip("/") + "/") and (best is None or len(root) > len(best)):
            best = root
    return (Path(best), text[len(best.rstrip("/")) + 1 :]) if best else None


def has_scratch(root: Path) -> bool:
    """Whether the registered `root` keeps temporary files in a scratch folder (a renders folder)."""
    return _roots.get(os.fspath(root), False)


def is_marked(root: Path) -> bool:
    """Whether `root` is a renders folder dtfilm made or wrote: its mark, or a manifest (from
    before the mark), as regular files beneath it."""
    for name in (MARK, MANIFEST):
        try:
            info = os.stat(root / name, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            return True
    return False


def mark(root: Path) -> None:
    """Mark `root` as a renders folder (made if missing)."""
    with folder(root, "", create=True) as fd:
        try:
            os.close(os.open(MARK, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644, dir_fd=fd))
        except FileExistsError:
            pass


def check_renders_folder(root: Path, given: bool, may_make: bool, writes: bool, where: Where) -> None:
    """Refuse, in one line and before anything is made, a folder that is not a renders folder.

    `given`: named with --out (the project's own renders/ is dtfilm's by its name). Then a
    folder that is missing is one only for a command that `may_make` it (render), an empty one
    for that or a command that only reads (status); a folder holding anything else must carry
    the mark or a manifest. In any renders folder
    the fixed subpaths (FIXED) must be what dtfilm makes: a link or the wrong kind is refused,
    save the scratch folder, made again by a command that `writes`."""
    try:
        info = os.stat(root)
    except FileNotFoundError:
        if given and not may_make:
            raise DtfilmError(
                f"{root} does not exist; valid: a renders folder dtfilm rendered into (dtfilm render --out)", where
            ) from None
        register(root)
        return
    if not stat.S_ISDIR(info.st_mode):
        raise DtfilmError(f"{root} is not a folder; valid: a folder (made if missing)", where)
    if given and not is_marked(root):
        try:
            empty = not os.listdir(root)
        except OSError as error:
            raise DtfilmError(f"{root}: cannot list it ({error.strerror})", where) from None
        if not (empty and (may_make or not writes)):  # (reading an empty folder harms nothing)
            valid = (
                "an empty or missing folder, or one dtfilm rendered into"
                if may_make
                else "a folder dtfilm rendered into"
            )
            raise DtfilmError(
                f"{root} is not a dtfilm renders folder (no {MARK} or {MANIFEST} in it)"
                f"{'' if empty else ' and holds other files'}; valid: {valid}",
                where,
            )
    for name, wanted in FIXED.items():
        try:
            info = os.stat(root / name, follow_symlinks=False)
        except OSError:
            continue
        right = stat.S_ISDIR(info.st_mode) if wanted == "folder" else stat.S_ISREG(info.st_mode)
        if right:
            continue
        if name == SCRATCH:
            if writes:
                os.close(scratch_fd(root))
            continue
        raise DtfilmError(
            f"is {kind(info.st_mode)}, not the {wanted} dtfilm keeps there, and is never followed;"
            f" valid: remove it (dtfilm makes it again)",
            Where(str(root / name)),
        )
    register(root)


def copy_out(root: Path, rel: str | Path, target: Path, limit_bytes: int) -> int:
    """Copy the regular file `rel` beneath `root` (no link followed, at most `limit_bytes`) to
    `target`, outside (a docs site): written as a new file, a link at `target` replaced, not
    written through. Returns its bytes; raises Refused or OSError."""
    source, shown = _open_regular(root, rel, limit_bytes)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target)
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644)
        try:
            copied = 0
            while chunk := os.read(source, 1 << 20):
                copied += len(chunk)
                if copied > limit_bytes:
                    raise Refused(shown, f"is more than the {limit_bytes:,} bytes of its kind")
                os.write(out, chunk)
        except BaseException:
            os.close(out)
            os.unlink(target)
            raise
        os.close(out)
        return copied
    finally:
        os.close(source)


def clear_for_writing(path: Path) -> None:
    """Remove whatever is at `path` (a link: not what it points at) before a library that takes
    a name (PyAV) makes a new file there; under a registered folder, beneath it, no link
    followed on the way (Refused for one), else with its parent as it is."""
    found = root_of(path)
    root, rel = found if found is not None else (path.parent, path.name)
    parts = parts_of(rel)
    with folder(root, "/".join(parts[:-1]), create=True) as fd:
        with contextlib.suppress(FileNotFoundError):
            info = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                raise Refused(str(path), "is a folder, not a file dtfilm writes")
            os.unlink(parts[-1], dir_fd=fd)
