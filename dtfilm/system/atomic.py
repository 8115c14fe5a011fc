"""Files written whole or not at all: each output is written to a temporary file in the renders
folder's scratch folder (or beside it) and renamed into place, beneath the renders folder with no
link followed; and the scratch a killed run left, swept. No video here: `dtfilm.system.video`
(PyAV) builds on it, and the voice's track, the check's kept runs and the caches write through it
without loading PyAV (0.2 s of every `dtfilm` command's start)."""

from __future__ import annotations

import contextlib
import fnmatch
import os
import secrets
import tempfile
from collections.abc import Iterator
from pathlib import Path

from dtfilm import beneath

# A renders folder's temporary files: everything written under it is written here first and
# renamed into place, and files and folders are named by the process that made them ("<pid>.").
# A render sweeps, under its lock, those whose process has ended (sweep_scratch): a run killed
# mid-write leaves nothing behind for long, wherever it was writing. Under a renders folder
# (dtfilm.beneath.register) everything is done beneath it, no link followed: a scratch
# folder planted as a link is made again, never followed into.
SCRATCH = beneath.SCRATCH


def scratch_folder(out_dir: Path) -> Path:
    """A renders folder's scratch folder, made if need be (made again if a link or a file was
    planted in its place)."""
    os.close(beneath.scratch_fd(out_dir))
    return out_dir / SCRATCH


def scratch_name(name: str) -> str:
    """A name in the scratch folder, for this process."""
    return f"{os.getpid()}.{name}"


def _alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        return True
    try:  # (Linux: a killed render's drawing processes wait as zombies until their new parent reaps them)
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def sweep_scratch(out_dir: Path) -> None:
    """Remove what runs that ended left in `out_dir`'s scratch folder (and the temporary files
    an older dtfilm left beside their targets); called under the render lock. Entries are
    unlinked beneath their folder's descriptor: a link is removed, never followed, and a folder
    is emptied without leaving it (dtfilm.beneath.remove_at)."""
    fd = beneath.scratch_fd(out_dir)
    try:
        for name in os.listdir(fd):
            pid = name.split(".", 1)[0]
            if pid.isdigit() and (int(pid) == os.getpid() or _alive(int(pid))):
                continue
            beneath.remove_at(fd, name)
    finally:
        os.close(fd)
    for folder in ("", "cache"):
        with contextlib.suppress(OSError):  # (a link or a file there: refused where it is used)
            for name, _ in beneath.entries(out_dir, folder):
                if fnmatch.fnmatchcase(name, ".*.tmp*"):
                    beneath.unlink(out_dir, f"{folder}/{name}" if folder else name)


def _mode_for_serving() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask  # mkstemp makes 0600; renders are for serving


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """A temporary path, renamed over `target` only if the block succeeds: in the scratch folder
    of the renders folder `target` is written in (SCRATCH), else beside `target`. Under a
    renders folder, `target`'s folders are opened (made) beneath it with no link followed, and
    the rename is made between those descriptors: a link planted on the way is refused, and one
    planted at `target` is replaced, never written through."""
    found = beneath.root_of(target)
    if found is None:
        with _beside(target) as temp:
            yield temp
        return
    root, rel = found
    parts = beneath.parts_of(rel)
    try:
        with beneath.folder(root, "/".join(parts[:-1]), create=True) as parent_fd:
            # (a cache has no scratch folder; one on another disk cannot be renamed from)
            scratch = beneath.scratch_fd(root) if beneath.has_scratch(root) else os.dup(parent_fd)
            try:
                in_scratch = beneath.has_scratch(root) and os.fstat(scratch).st_dev == os.fstat(parent_fd).st_dev
                here = scratch if in_scratch else parent_fd
                prefix = scratch_name(f"{target.name}.") if in_scratch else f".{target.name}."
                name = f"{prefix}{secrets.token_hex(4)}.tmp{target.suffix}"
                fd = os.open(
                    name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=here
                )
                os.close(fd)
                folder = root / SCRATCH if in_scratch else target.parent
                try:
                    yield folder / name
                    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=here)
                    try:
                        os.fchmod(fd, _mode_for_serving())
                    finally:
                        os.close(fd)
                    os.replace(name, parts[-1], src_dir_fd=here, dst_dir_fd=parent_fd)
                finally:
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=here)
            finally:
                os.close(scratch)
    except beneath.Refused as refused:
        raise refused.line_error("a folder dtfilm makes, not a link (remove it)") from None


@contextlib.contextmanager
def _beside(target: Path) -> Iterator[Path]:
    """atomic_path for a file outside any renders folder: the temporary file beside it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp" + target.suffix, dir=target.parent)
    os.close(fd)
    temp = Path(name)
    try:
        yield temp
        os.chmod(temp, _mode_for_serving())
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)


def write_text_atomic(target: Path, text: str) -> None:
    with atomic_path(target) as temp:
        temp.write_text(text, encoding="utf-8")
