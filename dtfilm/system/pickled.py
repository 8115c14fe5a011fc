"""Objects kept on disk for other processes (typeset labels, dtfilm.visuals.text; scene states,
dtfilm.onscreen.scene_state): pickled, compressed, signed with this user's key, written atomically, and
read back only when the signature holds.

Unpickling runs whatever code a file names, so a pickle is only as trusted as whoever wrote it.
These files live in renders/cache/ and .dtfilm-cache/, which are restored from CI caches,
downloaded as artifacts and shared between users: nothing there is trusted. Each file therefore
carries an HMAC-SHA256 of its contents under a key that lives outside every project and cache
(signing_key: $XDG_CONFIG_HOME/dtfilm/cache-key, else ~/.config/dtfilm/cache-key, 32 random
bytes, mode 0600, made on first use). A file whose tag does not verify (planted, damaged, or
signed on another machine or by another user) is treated as missing and made again: its bytes
never reach pickle. A key that others could read or write is not used: then nothing is kept.
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

from dtfilm.system.video import atomic_path
from dtfilm.userfile import read_back

MAGIC = b"dtfilm-signed-pickle-1\n"
TAG_BYTES = 32  # HMAC-SHA256
KEY_BYTES = 32
KEY_VARIABLE = "XDG_CONFIG_HOME"
MAX_STORED_BYTES = 512 * 2**20  # a kept scene state is a few MB; anything larger is not ours


def key_file() -> Path:
    """Where this user's signing key lives: outside every project and every cache."""
    return Path(os.environ.get(KEY_VARIABLE) or Path.home() / ".config") / "dtfilm" / "cache-key"


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
    path = key_file()
    try:
        if not path.exists():
            _make_key(path)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
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


def _tag(key: bytes, body: bytes) -> bytes:
    return hmac.new(key, MAGIC + body, hashlib.sha256).digest()


def write_pickled(path: Path, value: Any) -> None:
    """Keep `value` at `path`, signed; nothing is written without a trusted key."""
    key = signing_key()
    if key is None:
        return
    with _no_collection():
        body = zlib.compress(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), 1)
    with atomic_path(path) as temp:
        temp.write_bytes(MAGIC + _tag(key, body) + body)


def verified_body(path: Path, key: bytes) -> bytes | None:
    """The signed bytes kept at `path`, or None when it is missing, not a regular file, too
    large, or its tag does not verify under `key`."""
    blob = read_back(path, MAX_STORED_BYTES, follow_links=False)
    if blob is None:
        return None
    head = len(MAGIC) + TAG_BYTES
    if len(blob) < head or not blob.startswith(MAGIC):
        return None
    body = blob[head:]
    return body if hmac.compare_digest(blob[len(MAGIC) : head], _tag(key, body)) else None


def read_pickled(path: Path) -> Any | None:
    """What `path` holds; None when it is missing, unsigned, signed with another key, or cannot
    be read (then whoever asked makes it again). Only bytes this user's key signed are
    unpickled."""
    key = signing_key()
    body = verified_body(path, key) if key is not None else None
    if body is None:
        return None
    try:
        with _no_collection():
            return pickle.loads(zlib.decompress(body))
    except Exception:  # signed by us but written by other code (an older dtfilm): made again
        return None
