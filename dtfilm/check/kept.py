"""`check` keeps each shot's dry run (dtfilm.check.shot_results) by its key, and the scene's state
at each shot's start, in the project's `.dtfilm-cache/check/`, so that a check after one caption
changed plays that shot alone (issue 55: dp's check took 5.3 s of CPU for any edit).

A shot's key holds all its dry run is made of: its storyboard entry (kind, options, caption and
narration as phrases with their facts, marks, duration), the chapter's words and every number
the chapter's shots are computed from, its inputs, the film's title (and its chapters' titles
for a chapter map), its spoken narration's sound, the theme, dtfilm's code and Manim's version,
and the screen it starts from: the digest (dtfilm.onscreen.screen) of what the shot before
left, which that shot's kept result records. So a chain of keys from the chapter's first shot
finds every shot whose dry run would come out the same.

Nothing kept is trusted (docs/security.md): a result is opened without following a link, as
a regular file of at most MAX_RESULT_BYTES (userfile.read_back), and used only when it carries
this user's signature over its role, its name and its bytes (dtfilm.system.pickled's key) and
every field matches the schema (`parse_result`); anything else is ignored and the shot plays.
A kept state is a signed pickle (dtfilm.system.pickled). The folder itself is used only when it
and `.dtfilm-cache` are real folders, never links.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import math
import os
import re
import stat
from collections.abc import Callable
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

from dtfilm.check.shot_results import ShotResult, ShownText
from dtfilm.inside import is_hex_name
from dtfilm.numbers import Numbers
from dtfilm.onscreen.scene_state import STATE_SUFFIX
from dtfilm.onscreen.screen import EMPTY as EMPTY_SCREEN
from dtfilm.shots.registry import KINDS
from dtfilm.storyboard import Chapter, Shot
from dtfilm.storyboard.load import chapter_title_phrases
from dtfilm.system.atomic import write_text_atomic
from dtfilm.system.pickled import signing_key
from dtfilm.userfile import read_back

KEPT_FOLDER = Path(".dtfilm-cache") / "check"  # in the project's root
FORMAT = 2  # of a kept result; another one is not read
MAX_RESULT_BYTES = 2 * 2**20  # dp's largest shot keeps about 20 kB
ROLE = b"dtfilm-check-result-1\n"
PACKAGE = Path(__file__).resolve().parents[1]
SCREEN = re.compile(r"^[0-9a-f]{32}$")
# Control characters other than a newline or a tab: no finding dtfilm writes holds one
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=repr, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@functools.cache
def code_digest() -> str:
    """dtfilm's code (every module: the checks are code too) and the Manim it runs on."""
    h = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        h.update(str(path.relative_to(PACKAGE)).encode())
        h.update(path.read_bytes())
    h.update(metadata.version("manim").encode())
    return h.hexdigest()[:32]


def _placeless(data: dict[str, Any]) -> dict[str, Any]:
    """An estimate without where each input was written (shown relative to the working folder)."""
    inputs = {name: {k: v for k, v in value.items() if k != "where"} for name, value in data["inputs"].items()}
    return {**data, "inputs": inputs}


def _described(value: Any) -> Any:
    """Options as data; a row's numbers are in the chapter's numbers."""
    if isinstance(value, Numbers):
        return _placeless(value.data)
    if isinstance(value, dict):
        return {str(k): _described(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_described(v) for v in value]
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


def chapter_part(chapter: Chapter, theme: str, said: Callable[[Shot], str]) -> str:
    """What every shot's key holds of its chapter and film (not the other shots' words)."""
    film = chapter.film
    numbers = [_placeless(chapter.numbers.data)]
    for shot in chapter.shots:
        numbers += [_placeless(n.data) for n in (shot.numbers, *shot.steps, *shot.also_steps)]
    drawn: dict[str, Any] = {"title": film.title, "subtitle": film.subtitle, "small_print": film.small_print}
    if any("chapters" in KINDS[shot.kind].reads for shot in chapter.shots):
        drawn["chapters"] = {c: repr(t) for c, t in chapter_title_phrases(film, chapter.overrides).items()}
    return digest(
        {
            "format": FORMAT,
            "code": code_digest(),
            "theme": theme,
            "film": drawn,
            "chapter": [chapter.id, repr(chapter.title), repr(chapter.subtitle)],
            "inputs": {name: repr(value.value) for name, value in sorted(chapter.values.items())},
            "numbers": numbers,
            "voice": sorted((s.beat, said(s)) for s in chapter.shots),
        }
    )


def shot_key(chapter_part: str, shot: Shot, start_screen: str, said: str) -> str:
    """A shot's key: its chapter's part, its own storyboard entry and sound, and its start."""
    return digest(
        {
            "chapter": chapter_part,
            "index": shot.index,
            "kind": shot.kind,
            "beat": shot.beat,
            "options": _described(shot.options),
            "caption": repr(shot.caption),
            "narration": repr(shot.narration),
            "marks": repr(shot.marks),
            "duration": shot.duration,
            "said": said,
            "start": start_screen,
        }
    )


def state_key(chapter_part: str, index: int, start_screen: str) -> str:
    """The key of the scene's state at a shot's start: what the chapter is made of and the screen
    the shot starts from (the pieces on it are drawn from numbers; every shot takes its words
    away as it ends). Not the shots before: a caption changed early leaves later states usable."""
    return digest({"format": FORMAT, "chapter": chapter_part, "index": index, "start": start_screen})


def kept_folder(root: Path) -> Path | None:
    """The project's folder of kept results, made if missing; None when it, or `.dtfilm-cache`,
    is a link or not a folder (nothing is then kept or read back), or cannot be made."""
    folder = root
    for part in KEPT_FOLDER.parts:
        folder = folder / part
        try:
            info = os.lstat(folder)
        except FileNotFoundError:
            try:
                folder.mkdir(mode=0o755)
            except OSError:
                return None
            continue
        except OSError:
            return None
        if not stat.S_ISDIR(info.st_mode):  # (a link, even to a folder, is never followed)
            return None
    return folder


def _tag(key: bytes, name: str, body: bytes) -> str:
    return hmac.new(key, ROLE + name.encode() + b"\n" + body, hashlib.sha256).hexdigest()


def write_result(folder: Path, key: str, result: ShotResult) -> None:
    """Keep a shot's result under its key, signed; nothing is kept without a trusted key."""
    secret = signing_key()
    if secret is None:
        return
    name = f"{key}.json"
    body = json.dumps({"format": FORMAT, "key": key, **asdict(result)}, separators=(",", ":")).encode()
    write_text_atomic(folder / name, _tag(secret, name, body) + "\n" + body.decode())


def read_result(folder: Path, key: str, beat: str) -> ShotResult | None:
    """The result kept for `key`, when it is a regular file (no link followed) of at most
    MAX_RESULT_BYTES, signed by this user for this name, and matches the schema; else None."""
    secret = signing_key()
    if secret is None or not is_hex_name(key):
        return None
    name = f"{key}.json"
    blob = read_back(folder / name, MAX_RESULT_BYTES, follow_links=False)
    if blob is None or b"\n" not in blob:
        return None
    tag, body = blob.split(b"\n", 1)
    if not hmac.compare_digest(tag, _tag(secret, name, body).encode()):
        return None
    try:
        return parse_result(json.loads(body), key, beat)
    except (ValueError, TypeError, RecursionError):
        return None


def _text(value: Any) -> str:
    if not isinstance(value, str) or CONTROL.search(value):
        raise ValueError("not a text")
    return value


def _texts(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValueError("not a list")
    return tuple(_text(v) for v in value)


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError("not a number")
    return float(value)


def parse_result(data: Any, key: str, beat: str) -> ShotResult:
    """A kept result, every field checked; ValueError when one is not as dtfilm writes it."""
    expected = {"format", "key", "beat", "end_screen", "seconds", "layout", "texts", "facts", "loose", "design"}
    if not isinstance(data, dict) or set(data) != expected:
        raise ValueError("not a kept result")
    if data["format"] != FORMAT or data["key"] != key or data["beat"] != beat:
        raise ValueError("another shot's result")
    if not isinstance(data["end_screen"], str) or not SCREEN.match(data["end_screen"]):
        raise ValueError("not a screen")
    seconds = _number(data["seconds"])
    if seconds < 0:
        raise ValueError("not a length")
    texts = []
    for item in data["texts"] if isinstance(data["texts"], list) else [None]:
        if not isinstance(item, dict) or set(item) != {"text", "phrase_id", "facts", "problems", "claims"}:
            raise ValueError("not a text shown")
        facts = item["facts"]
        if isinstance(facts, bool) or not isinstance(facts, int) or facts < 0 or not is_hex_name(item["phrase_id"]):
            raise ValueError("not a text shown")
        texts.append(
            ShownText(_text(item["text"]), item["phrase_id"], facts, _texts(item["problems"]), _texts(item["claims"]))
        )
    pairs = []
    for name, kind in (("facts", _number), ("loose", _text)):
        items = data[name] if isinstance(data[name], list) else [None]
        if not all(isinstance(p, list) and len(p) == 2 for p in items):
            raise ValueError(f"not {name}")
        pairs.append(tuple((kind(a), kind(b)) for a, b in items))
    layout, design = _texts(data["layout"]), _texts(data["design"])
    return ShotResult(beat, data["end_screen"], seconds, layout, tuple(texts), *pairs, design)


def state_path(folder: Path, key: str) -> Path:
    return folder / f"{key}{STATE_SUFFIX}"


def chain_names(folder: Path, chapter: Chapter, theme: str, said: Callable[[Shot], str]) -> set[str]:
    """The names of the kept files a check of `chapter` as it now is would read (`dtfilm clean`
    keeps these and removes the rest): each shot's result, chained from the first shot's key by
    the screen each kept result says its shot left, and the scene state kept at each shot's start
    on that chain, up to and including the first shot that has no result kept."""
    part = chapter_part(chapter, theme, said)
    names, screen = set(), EMPTY_SCREEN
    for position, shot in enumerate(chapter.shots):
        key = shot_key(part, shot, screen, said(shot))
        names.add(f"{key}.json")
        if position:
            names.add(state_path(folder, state_key(part, position, screen)).name)
        found = read_result(folder, key, shot.beat)
        if found is None:
            break
        screen = found.end_screen
    return names
