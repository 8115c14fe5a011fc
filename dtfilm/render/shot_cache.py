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
subtitles' cues, how long it took to draw, and its clip's size, time and digest (a clip that
does not match them is missing: dtfilm.system.records). Nothing here imports manim.
"""

from __future__ import annotations

import dataclasses
import json
import math
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
from dtfilm.system.records import Record, matches, record_of
from dtfilm.system.video import write_text_atomic
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


PROBE_MAX_BYTES = 128  # a probe holds a key: a hex digest


def read_probe(path: Path) -> str | None:
    """The key a probe holds, read back (dtfilm.userfile.read_back: a link, a FIFO or a file
    larger than a key counts as missing); None when there is none."""
    data = read_back(path, PROBE_MAX_BYTES)
    if data is None:
        return None
    return data.decode("ascii", "replace").strip()


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
    try:
        entry = parse_entry(entry_path(out_dir, key).read_text())
    except (OSError, ValueError, TypeError):  # (none, or not an entry dtfilm wrote: drawn again)
        return None
    return entry if entry.key == key and matches(clip_path(out_dir, key), entry.record, verify) else None


def parse_entry(text: str) -> CachedShot:
    """A cache entry from its JSON (as write_entry wrote it, here or on a cluster's worker)."""
    data = json.loads(text)
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("key", "chapter", "beat")):
        raise ValueError("not a cache entry")
    data["cues"] = [tuple(c) for c in data.get("cues", [])]
    entry = CachedShot(**data)
    if not _entry_shaped(entry):
        raise ValueError("not a cache entry")
    return entry


def _entry_shaped(entry: CachedShot) -> bool:
    """Whether an entry read back has the types dtfilm writes (its cues timed, its parts text)."""
    return (
        isinstance(entry.seconds, (int, float))
        and math.isfinite(entry.seconds)
        and all(
            len(cue) == 3 and isinstance(cue[0], str) and all(isinstance(t, (int, float)) for t in cue[1:])
            for cue in entry.cues
        )
        and isinstance(entry.parts, dict)
        and all(isinstance(v, str) for v in entry.parts.values())
        and isinstance(entry.end_screen, str)
    )


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
        reasons.append("what it shows changed (its numbers)")
    if not reasons and old.get("start") != key.parts["start"]:
        reasons.append("the screen it starts from changed (what the shot before leaves)")
    return reasons or ["its clip is missing from the cache"]
