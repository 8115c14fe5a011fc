"""Objects kept on disk for other processes (typeset labels, dtfilm.visuals.text; scene states,
dtfilm.onscreen.scene_state): pickled, compressed, signed with this user's key, written atomically, and
read back only when the signature holds.

Unpickling runs whatever code a file names, so a pickle is only as trusted as whoever wrote it.
These files live in renders/cache/ and .dtfilm-cache/, which are restored from CI caches,
downloaded as artifacts and shared between users: nothing there is trusted. Each file therefore
carries an HMAC-SHA256 under a key that lives outside every project and cache (signing_key:
$XDG_CONFIG_HOME/dtfilm/cache-key when that is an absolute path, else ~/.config/dtfilm/cache-key;
32 random bytes, mode 0600, made on first use). The tag covers what the file is as well as its
bytes: its role (a scene state, a typeset label, a glyph template), its file name (which names
what it holds: a state's key, a label's look) and the key's id. So a file whose tag does not
verify (planted, damaged, signed on another machine or by another user, or a validly signed file
copied over another's name) is treated as missing and made again: its bytes never reach pickle.
A key that others could read or write, that is not a regular file, or that lies inside a project
or a cache (where whoever writes the project could plant one) is not used: then nothing is kept.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import hmac
import os
import pickle
import secrets
import stat
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dtfilm.system.atomic import atomic_path
from dtfilm.userfile import read_back

MAGIC = b"dtfilm-signed-pickle-2\n"  # 2: the tag binds the role, the file's name and the key's id
TAG_BYTES = 32  # HMAC-SHA256
KEY_BYTES = 32
KEY_VARIABLE = "XDG_CONFIG_HOME"
MAX_STORED_BYTES = 512 * 2**20  # a kept scene state is a few MB; anything larger is not ours
# What a signed file may be: its role is signed with it, so one role's file is never read as another's.
ROLES = ("scene state", "typeset label", "glyph template")


def _config_home() -> tuple[Path, str | None]:
    """The folder of the user's configuration, and why $XDG_CONFIG_HOME was passed over (None
    when it was not). A relative value is ignored, as the XDG specification says: it names a
    folder under wherever dtfilm runs, a project, where anyone who writes to it plants a key."""
    value = os.environ.get(KEY_VARIABLE)
    default = Path.home() / ".config"
    if not value:
        return default, None
    if not os.path.isabs(value):
        return default, f"${KEY_VARIABLE}={value[:80]!r} is not an absolute path; ignored (the key is in {default})"
    return Path(value), None


def key_file() -> Path:
    """Where this user's signing key lives: outside every project and every cache."""
    return _config_home()[0] / "dtfilm" / "cache-key"


def _inside_project_or_cache(path: Path) -> str | None:
    """What project or cache folder `path` (links followed) lies in; None when it lies in none.
    A project is a folder holding storyboard/film.yaml; a cache, a folder named .dtfilm-cache
    or the machine cache ($XDG_CACHE_HOME, else ~/.cache)."""
    where = path.parent.resolve()
    caches = [Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").resolve()]
    for folder in (where, *where.parents):
        if (folder / "storyboard" / "film.yaml").is_file():
            return f"the project {folder}"
        if folder.name == ".dtfilm-cache":
            return f"the cache {folder}"
        if folder in caches:
            return f"the machine cache {folder}"
    return None


def _make_key(path: Path) -> None:
    """A new key, linked into place only if none is there (two processes may race here)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, secrets.token_bytes(KEY_BYTES))
    finally:
        os.close(fd)
    try:
        os.link(temp, path)
    except FileExistsError:
        pass  # (another process made it first: use theirs)
    finally:
        temp.unlink(missing_ok=True)


def _key_problem(info: os.stat_result) -> str | None:
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if info.st_uid != os.getuid():
        return "belongs to another user"
    if info.st_mode & 0o077:
        return f"is open to others (mode {stat.S_IMODE(info.st_mode):o}; chmod 600 it)"
    if info.st_size != KEY_BYTES:
        return f"is not a key ({info.st_size} bytes, not {KEY_BYTES})"
    return None


@functools.cache
def signing_key() -> bytes | None:
    """This user's key; None (with one warning) when it cannot be trusted or made, and then no
    pickle is kept or read back."""
    config, passed_over = _config_home()
    if passed_over is not None:
        print(f"dtfilm: warning: {passed_over}", file=sys.stderr)
    path = config / "dtfilm" / "cache-key"
    key = b""
    problem = _inside_project_or_cache(path)
    if problem is not None:
        problem = f"lies inside {problem}, where anyone who writes there could plant one"
    else:
        try:
            if not os.path.lexists(path):
                _make_key(path)
            # O_NONBLOCK: a FIFO planted as the key is refused by the check below, not waited on
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC)
            try:
                problem = _key_problem(os.fstat(fd))
                key = os.read(fd, KEY_BYTES + 1) if problem is None else b""
            finally:
                os.close(fd)
        except OSError as error:
            problem = f"cannot be read or made ({error.strerror or error})"
    if problem is None and len(key) == KEY_BYTES:
        return key
    print(
        f"dtfilm: warning: {path}: the key that signs kept scene states and typeset labels {problem}; "
        "they are not kept or reused this run",
        file=sys.stderr,
    )
    return None


@contextlib.contextmanager
def _no_collection() -> Iterator[None]:
    """The garbage collector paused: pickling a screen of glyphs makes or walks tens of
    thousands of objects, and a full collection in the middle cost up to 0.3 s."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def key_id(key: bytes) -> bytes:
    """A key's id: signed into every tag, so a file names the key that signed it."""
    return hashlib.sha256(b"dtfilm cache-key id\0" + key).digest()[:16]


def _tag(key: bytes, role: str, name: str, body: bytes) -> bytes:
    """The HMAC of what a file is (its role and name: neither holds a NUL) and its bytes."""
    if role not in ROLES:
        raise ValueError(f"{role!r} is not a role of a signed file; valid: {', '.join(ROLES)}")
    head = MAGIC + key_id(key) + role.encode() + b"\0" + name.encode("utf-8", "surrogateescape") + b"\0"
    return hmac.new(key, head + body, hashlib.sha256).digest()


def write_pickled(path: Path, value: Any, role: str) -> None:
    """Keep `value` at `path` as a file of `role` (ROLES), signed with its role and name;
    nothing is written without a trusted key."""
    key = signing_key()
    if key is None:
        return
    with _no_collection():
        body = zlib.compress(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), 1)
    tag = _tag(key, role, path.name, body)
    with atomic_path(path) as temp:
        temp.write_bytes(MAGIC + tag + body)


def verified_body(path: Path, key: bytes, role: str) -> bytes | None:
    """The signed bytes kept at `path`, or None when it is missing, not a regular file, too
    large, or its tag does not verify under `key` for a file of `role` of this name."""
    blob = read_back(path, MAX_STORED_BYTES, follow_links=False)
    if blob is None:
        return None
    head = len(MAGIC) + TAG_BYTES
    if len(blob) < head or not blob.startswith(MAGIC):
        return None
    body = blob[head:]
    return body if hmac.compare_digest(blob[len(MAGIC) : head], _tag(key, role, path.name, body)) else None


def read_pickled(path: Path, role: str) -> Any | None:
    """What `path` holds; None when it is missing, unsigned, signed with another key, for
    another role or another name, or cannot be read (then whoever asked makes it again). Only
    bytes this user's key signed for this role and name are unpickled."""
    key = signing_key()
    body = verified_body(path, key, role) if key is not None else None
    if body is None:
        return None
    try:
        with _no_collection():
            return pickle.loads(zlib.decompress(body))
    except Exception:  # signed by us but written by other code (an older dtfilm): made again
        return None
