"""The shot cache: each shot's picture, drawn once for its key, in renders/cache/<key>.mp4.

A shot's key hashes what its frames are made of:
- what the storyboard says of it: its kind, options, caption, narration (marks included) and
  duration;
- its narration as spoken (the joined WAV's content digest), which times it;
- the screen it starts from and every state its animations reach, with their kinds and
  lengths (dtfilm.onscreen.screen): the numbers it shows, whatever they are read from;
- the quality, the theme and dtfilm's drawing code.

Every shot fades out its own caption (its own exit), so a changed caption changes one shot; the
pieces a shot leaves for the next are drawn from numbers, and the next shot's key holds them as
the screen it starts from. Beside each clip, <key>.json keeps its length in seconds, its
subtitles' cues as drawn, how long it took to draw, and its clip's size, time and digest (a clip
that does not match them is missing: dtfilm.system.records). Nothing here imports manim.

The cache is read back from renders/, which is not trusted (docs/security.md): an entry or a
probe is read through `read_back` (a regular file, within its size limit: a FIFO is not waited
on, /dev/zero not read) and an entry must have the shape `write_entry` writes (`entry_problem`),
else it counts as missing and its shot is drawn again. Nothing an entry says reaches a viewer as
text: a chapter's subtitles are made from its storyboard (dtfilm.render.assemble.shot_cues).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dtfilm.inside import is_hex_name
from dtfilm.numbers import Numbers
from dtfilm.onscreen.scene_state import STATE_SUFFIX
from dtfilm.render.cache import _digest, code_digest
from dtfilm.storyboard import Chapter, Shot
from dtfilm.system.atomic import write_text_atomic
from dtfilm.system.records import Record, matches, record_of
from dtfilm.userfile import read_back

CACHE_FOLDER = "cache"  # in the renders folder


def _described(value: Any) -> Any:
    """Options as data: a row's numbers are drawn (and so in the key's screens), not named."""
    if isinstance(value, Numbers):
        return "numbers"
    if isinstance(value, dict):
        return {str(k): _described(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_described(v) for v in value]
    return value if isinstance(value, (str, int, float, bool, type(None))) else str(value)


def said_parts(shot: Shot) -> dict[str, str]:
    """The key's parts that the storyboard's words of a shot make."""
    return {
        "kind": shot.kind,
        "options": _digest(_described(shot.options)),
        "caption": _digest(shot.caption.text if shot.caption else None),
        "narration": _digest([shot.narration.text if shot.narration else None, list(shot.marks)]),
        "duration": str(shot.duration),
    }


@dataclass(frozen=True)
class ShotKey:
    chapter: str
    index: int
    beat: str
    parts: dict[str, str]

    @property
    def key(self) -> str:
        return _digest(self.parts)


def shot_key(
    chapter: Chapter, shot: Shot, start_screen: str, drawn: str, audio: str, quality: str, theme: str
) -> ShotKey:
    parts = {
        **said_parts(shot),
        "audio": audio,
        "start": start_screen,
        "drawn": drawn,
        "quality": quality,
        "theme": theme,
        "code": code_digest(),
    }
    return ShotKey(chapter.id, shot.index, shot.beat, parts)


NUMBER_PARTS = ("film", "inputs", "numbers")  # of a chapter's key: what its pictures are computed from


def numbers_changed(old_parts: dict[str, str], new_parts: dict[str, str]) -> bool:
    """Whether a chapter's numbers, inputs or what it takes from the film differ between two of
    its keys' parts: then its shots' probes all miss, and a dry run finds which shots show it."""
    return any(old_parts.get(part) != new_parts[part] for part in NUMBER_PARTS)


def chapter_words(chapter: Chapter) -> list[str | None]:
    """What a shot draws of its chapter's own words, not in its key's said parts: the chapter's
    id (its place on the ledger's map), title (every shot's header, the title card) and subtitle."""
    return [chapter.id, chapter.title, chapter.subtitle]


def shot_probe(key: ShotKey, chapter_parts: dict[str, str], words: list[str | None]) -> str:
    """What a shot's key is made of, less what it draws (known only once it has played), plus
    what its drawing is computed from: the chapter's numbers, its inputs, what it takes from
    the film, and the chapter's `words` (chapter_words). A render looks a shot's probe up at the
    shot's start, to skip drawing a shot the cache holds without a dry run of the chapter first;
    a chapter whose probes all hit is joined without playing, so the probe must hold all that
    the shot draws from (a renamed chapter kept its old title card, and two chapters with the
    same title card's words shared one, showing the other's title)."""
    own = {part: value for part, value in key.parts.items() if part != "drawn"}
    return _digest({**own, **{part: chapter_parts[part] for part in NUMBER_PARTS}, "chapter": words})


@dataclass(frozen=True)
class Prober:
    """Looks a chapter's shots up in the cache by their probes, with no scene played: what a
    shot's key holds of its spoken narration (`said`: the joined WAV's name, or "silent"), and
    the chapter's key's parts that probes hold."""

    out_dir: Path
    chapter: Chapter
    said: Callable[[Shot], str]
    quality: str
    theme: str
    chapter_parts: dict[str, str]

    def key(self, shot: Shot, screen: str, drawn: str) -> ShotKey:
        return shot_key(self.chapter, shot, screen, drawn, self.said(shot), self.quality, self.theme)

    def probe(self, shot: Shot, screen: str) -> str:
        """The shot's probe for a start from `screen` (shot_probe)."""
        return shot_probe(self.key(shot, screen, ""), self.chapter_parts, chapter_words(self.chapter))

    def found(self, shot: Shot, screen: str) -> tuple[ShotKey, CachedShot] | None:
        """The shot's key and cache entry when its probe, for a start from `screen`, finds it
        with the screen it leaves (entries from before screens were kept have none)."""
        entry = probed(self.out_dir, self.probe(shot, screen))
        if entry is None or not entry.end_screen or not entry.parts:
            return None
        drawn = self.key(shot, screen, entry.parts.get("drawn", ""))
        return (drawn, entry) if drawn.parts == entry.parts else None

    def chained_keys(self, first: int, screen: str, until: int | None = None) -> list[ShotKey] | None:
        """The keys of the chapter's shots from index `first` on (up to `until`, when given),
        when the cache holds every one: each found by its probe, starting from `screen`, then
        from the screen the shot before it leaves (as its entry records). None when one is
        missing: then they must play. So a render whose stale shots are behind it plays no
        further, one whose shots are all cached plays none, and one drawing a later shot can
        start from the state the shots before it leave (state_key)."""
        keys = []
        for shot in self.chapter.shots[first:until]:
            found = self.found(shot, screen)
            if found is None:
                return None
            keys.append(found[0])
            screen = found[1].end_screen
        return keys

    def missing_beats(self, screen: str, last_keys: dict[str, str]) -> tuple[str, ...] | None:
        """The shots the cache lacks, each shot starting from the screen the one before it
        leaves. A missing shot is taken to leave the screen that its last render (`last_keys`:
        beat to key) left, as a shot whose words changed does (every shot takes its caption away
        as it ends); the render checks this once they are drawn. None when a missing shot's last
        render is not in the cache."""
        missing = []
        for shot in self.chapter.shots:
            found = self.found(shot, screen)
            entry = found[1] if found is not None else cached(self.out_dir, last_keys.get(shot.beat, ""))
            if found is None:
                missing.append(shot.beat)
            if entry is None or not entry.end_screen:
                return None
            screen = entry.end_screen
        return tuple(missing)


def state_key(chapter_parts: dict[str, str], before: list[str]) -> str:
    """The key of a scene's state at a shot's start (dtfilm.onscreen.scene_state): what the chapter's
    pictures are computed from, and the keys of every shot before it, in order (each holds the
    screens it drew, its words and sound, the quality, the theme and the drawing code)."""
    return _digest({**{part: chapter_parts[part] for part in NUMBER_PARTS}, "before": before})


def state_path(out_dir: Path, key: str) -> Path:
    return cache_folder(out_dir) / f"{key}{STATE_SUFFIX}"


def probe_path(out_dir: Path, probe: str) -> Path:
    return cache_folder(out_dir) / f"{probe}.probe"


MAX_PROBE_BYTES = 128  # a probe holds one key: 16 hex digits
MAX_ENTRY_BYTES = 256 * 2**10  # an entry is 1-3 kB (a shot's cues, its key's parts)
MAX_SHOT_SECONDS = 3600.0  # a shot is seconds long; an entry saying more is not one dtfilm wrote


def read_probe(path: Path) -> str | None:
    """The key a probe holds, read back (dtfilm.userfile.read_back: a link, a FIFO or a file
    larger than a key counts as missing); None when there is none."""
    data = read_back(path, MAX_PROBE_BYTES)
    try:
        return data.decode("ascii").strip() if data is not None else None
    except UnicodeDecodeError:
        return None


def write_probe(out_dir: Path, probe: str, key: str) -> None:
    path = probe_path(out_dir, probe)
    if read_probe(path) != key:
        write_text_atomic(path, key)


def probed(out_dir: Path, probe: str) -> CachedShot | None:
    """The cached shot a probe found last time, if the cache still holds it."""
    key = read_probe(probe_path(out_dir, probe))
    return (
        cached(out_dir, key) if key is not None and is_hex_name(key) else None
    )  # (a name it holds stays in the cache)


@dataclass(frozen=True)
class CachedShot:
    """What the cache keeps beside a shot's clip."""

    key: str
    chapter: str
    beat: str
    seconds: float  # the scene's length of the shot (its clip's picture is within a frame of it)
    cues: list[tuple[str, float, float]] = field(default_factory=list)  # text, start, end (seconds in)
    render_seconds: float = 0.0  # how long drawing it took
    rendered_at: str = ""
    parts: dict[str, str] = field(default_factory=dict)  # its key's parts (ShotKey.parts)
    end_screen: str = ""  # the digest of the screen it leaves: the next shot's start
    # its clip's record (dtfilm.system.records), made as the entry is written: a clip that no longer
    # matches it (truncated, corrupted) is missing, and drawn again
    size: int = 0
    mtime_ns: int = 0
    sha256: str = ""

    @property
    def record(self) -> Record:
        return {"size": self.size, "mtime_ns": self.mtime_ns, "sha256": self.sha256}


def cache_folder(out_dir: Path) -> Path:
    return out_dir / CACHE_FOLDER


def clip_path(out_dir: Path, key: str) -> Path:
    return cache_folder(out_dir) / f"{key}.mp4"


def entry_path(out_dir: Path, key: str) -> Path:
    return cache_folder(out_dir) / f"{key}.json"


def write_entry(out_dir: Path, entry: CachedShot) -> CachedShot:
    """Written after its clip, with the clip's record as it is now (size, time, digest): an
    entry on disk means its clip was complete, and says what it was."""
    entry = dataclasses.replace(entry, **record_of(clip_path(out_dir, entry.key)))
    write_text_atomic(entry_path(out_dir, entry.key), json.dumps(asdict(entry), indent=1))
    return entry


def cached(out_dir: Path, key: str, verify: bool = False) -> CachedShot | None:
    """The shot drawn for `key`, if the cache holds it whole: its entry, and its clip as the
    entry records it (its size; its digest when its time differs, or with `verify`). A key read
    back (a probe's) that is not a digest names nothing."""
    if not is_hex_name(key):
        return None
    data = read_back(entry_path(out_dir, key), MAX_ENTRY_BYTES)
    try:
        entry = parse_entry(data) if data is not None else None
    except (ValueError, RecursionError):  # (not an entry dtfilm wrote: drawn again)
        return None
    return entry if entry and entry.key == key and matches(clip_path(out_dir, key), entry.record, verify) else None


def parse_entry(text: str | bytes) -> CachedShot:
    """A cache entry from its JSON (as write_entry wrote it, here or on a cluster's worker);
    ValueError, naming what is wrong, when it does not have that shape."""
    data = json.loads(text)
    problem = entry_problem(data)
    if problem is not None:
        raise ValueError(f"not a cache entry: {problem}")
    return CachedShot(**{**data, "cues": [tuple(cue) for cue in data.get("cues", [])]})


_FIELDS = {f.name for f in dataclasses.fields(CachedShot)}
_STAMP = re.compile(r"[0-9T:+\-]{0,40}")  # now_stamp's: 2026-12-04T19:05:51+0000
_MAX_TEXT_CHARS = 4_000  # a beat, a cue: a shot's narration is at most 4,000 characters


def _number(value: object, low: float, high: float) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high


def _text(value: object) -> bool:
    return isinstance(value, str) and len(value) <= _MAX_TEXT_CHARS


def entry_problem(data: object) -> str | None:
    """What is wrong with a parsed cache entry (None: it has the shape write_entry writes). Its
    names are digests and ids, its times within a shot, its cues text timed inside the shot."""
    if not isinstance(data, dict):
        return "not a JSON object"
    if not set(data) <= _FIELDS:
        return f"unknown fields {', '.join(sorted(str(k)[:40] for k in set(data) - _FIELDS))}"
    if not (is_hex_name(data.get("key")) and _text(data.get("chapter")) and _text(data.get("beat"))):
        return "its key, chapter and beat are not a digest and names"
    seconds = data.get("seconds")
    if not _number(seconds, 0.0, MAX_SHOT_SECONDS):
        return f"its seconds are not a shot's length (0 to {MAX_SHOT_SECONDS:g})"
    cues = data.get("cues", [])
    if not isinstance(cues, list) or not all(
        isinstance(cue, list)
        and len(cue) == 3
        and _text(cue[0])
        and _number(cue[1], 0.0, seconds + 1.0)
        and _number(cue[2], cue[1], seconds + 1.0)
        for cue in cues
    ):
        return "its cues are not text timed inside the shot"
    if not _number(data.get("render_seconds", 0.0), 0.0, math.inf) or not _STAMP.fullmatch(
        str(data.get("rendered_at", ""))
    ):
        return "its render_seconds and rendered_at are not a time taken and a time stamp"
    parts = data.get("parts", {})
    if not (isinstance(parts, dict) and all(_text(k) and _text(v) for k, v in parts.items())):
        return "its parts are not text"
    if not (data.get("end_screen", "") == "" or is_hex_name(data.get("end_screen"))):
        return "its end_screen is not a digest"
    if not (_number(data.get("size", 0), 0, math.inf) and _number(data.get("mtime_ns", 0), -math.inf, math.inf)):
        return "its clip's size and time are not numbers"
    if not (data.get("sha256", "") == "" or is_hex_name(data.get("sha256"))):
        return "its clip's digest is not a digest"
    return None


def now_stamp() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


PART_WORDS = (
    ("kind", "its kind changed"),
    ("options", "its options changed"),
    ("caption", "its caption changed"),
    ("narration", "its narration changed"),
    ("duration", "its duration changed"),
    ("audio", "its spoken narration changed (a number it says, or the voice)"),
    ("quality", "another quality"),
    ("theme", "another theme"),
    ("code", "dtfilm's drawing code changed"),
)


def shot_stale_reasons(key: ShotKey, previous: dict[str, Any] | None, out_dir: Path) -> list[str]:
    """Why a shot must be drawn again (empty when the cache holds it): compared with the shot of
    the same beat at the last render."""
    if cached(out_dir, key.key) is not None:
        return []
    old = (previous or {}).get("parts")
    if not old:
        return ["not drawn yet"]
    reasons = [words for part, words in PART_WORDS if old.get(part) != key.parts[part]]
    if not reasons and old.get("drawn") != key.parts["drawn"]:
        reasons.append("what it shows changed (its numbers or words)")  # a title is words, not numbers
    if not reasons and old.get("start") != key.parts["start"]:
        reasons.append("the screen it starts from changed (what the shot before leaves)")
    return reasons or ["its clip is missing from the cache"]
