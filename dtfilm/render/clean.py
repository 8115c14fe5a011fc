"""`dtfilm clean`: evict what no current storyboard uses, and say what was freed.

- the audio cache (`.dtfilm-cache/voice/`): sentences no narration of the film says with the
  film's voice, and joined shot narrations no shot has;
- the renders folder: the clips, sidecars, shot clips and manifest entries of chapters the film
  no longer has, and single shots and stills (`renders/one/`) of shots that no longer exist;
- the shot cache (`renders/cache/`): clips and their entries that no chapter's last render
  joined (a caption changed, then changed again) with the subtitle lines kept beside them
  (dtfilm.render.placed_cues), probes that point at none of those, and the
  scene states kept at shots' starts (dtfilm.onscreen.scene_state) that no last render's shots lead to, the
  sound kept of chapters' tracks that no chapter's clip is now made of; and
  the slide clips of `renders/shots/` that the manifest no longer lists (a beat renamed);
- check's kept dry runs (`.dtfilm-cache/check/`, dtfilm.check.kept): the shots' results and scene
  states that a check of the film's chapters as they now are (no flags, the film's theme and
  voice) would not read: those of captions since changed, of other flags or the other theme.

Nothing that the current renders use is removed: a shot's clip stays while the manifest lists it,
so `dtfilm render` after `dtfilm clean` draws nothing that it would not have drawn before. The
render lock is held, so a render running meanwhile loses nothing. The typeset labels
(`.dtfilm-cache/typeset/`) stay: which a chapter uses is known only by playing it; they are
small, and any that are removed are typeset again.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dtfilm.check.kept import KEPT_FOLDER, chain_names
from dtfilm.errors import Where
from dtfilm.inside import within
from dtfilm.onscreen.scene_state import STATE_SUFFIX
from dtfilm.render.assemble import SOUND_SUFFIX, sound_name
from dtfilm.render.cache import outputs, read_manifest, write_manifest
from dtfilm.render.derived import SINGLES
from dtfilm.render.lock import render_lock
from dtfilm.render.placed_cues import LINES_SUFFIX
from dtfilm.render.shot_cache import cache_folder, read_probe, state_key
from dtfilm.storyboard import Chapter, Film, Shot, find_root, load_chapter, load_film
from dtfilm.system.quality import QUALITY_NAMES
from dtfilm.system.video import clip_comment
from dtfilm.voice import engine
from dtfilm.voice.engine import VOICE_VARIABLE, VoiceSpec, parse_voice, voice_source
from dtfilm.voice.speech import SpeechError
from dtfilm.voice.track import CACHE_FOLDER, joined_wav, sentence_paths, shot_path


@dataclass
class Freed:
    """What clean removed, by kind: each file and its size in bytes."""

    files: dict[str, list[tuple[Path, int]]] = field(default_factory=dict)

    def lines(self) -> list[str]:
        if not self.files:
            return ["nothing to free: every cached file is used by the current storyboards"]
        out = [f"{kind}: {_count(removed)}, {_megabytes(removed):.1f} MB" for kind, removed in self.files.items()]
        every = [item for removed in self.files.values() for item in removed]
        out.append(f"freed {_count(every)}, {_megabytes(every):.1f} MB")
        return out


def _count(removed: list[tuple[Path, int]]) -> str:
    return f"{len(removed)} file{'s' if len(removed) != 1 else ''}"


def _megabytes(removed: list[tuple[Path, int]]) -> float:
    return sum(size for _, size in removed) / 1e6


def _remove(path: Path, kind: str, freed: Freed, folder: Path) -> None:
    """Remove `path` (a link itself, never what it points at) if its folder, every link
    followed, lies inside `folder`: the renders folder or the project's audio cache. What the
    manifest or a link would take elsewhere is left alone."""
    if not within(folder, path.parent) or not (path.is_file() or path.is_symlink()):
        return
    size = path.lstat().st_size
    path.unlink()
    freed.files.setdefault(kind, []).append((path, size))


def used_audio(root: Path, spec: VoiceSpec, chapters: list[Chapter]) -> tuple[set[Path], set[Path]]:
    """The sentence and shot files of the audio cache that the film's narrations use."""
    folder = root / CACHE_FOLDER
    sentences, shots = set(), set()
    for chapter in chapters:
        for shot in chapter.shots:
            if shot.narration is None:
                continue
            try:
                paths = sentence_paths(spec, shot.narration.text, folder)
            except SpeechError:
                continue
            sentences.update(paths)
            if all(p.is_file() for p in paths):  # (then joining them synthesises nothing)
                shots.add(shot_path(joined_wav(spec, shot.narration.text, folder)[0], folder))
    return sentences, shots


def clean(out_dir: Path | None = None) -> Freed:
    """Remove the cached audio and the renders no current storyboard uses."""
    root = find_root()
    film = load_film(root / "storyboard" / "film.yaml")
    chosen = os.environ.get(VOICE_VARIABLE)
    spec = parse_voice(chosen, Where(flag=voice_source(chosen)), voice_source(chosen)) if chosen else film.voice
    freed = Freed()
    # each chapter at its storyboard's settings, loaded once (its numbers are the cost model's)
    chapters = [load_chapter(chapter_id, {}, root) for chapter_id in film.chapters]
    if not spec.silent:
        sentences, shots = used_audio(root, spec, chapters)
        folder = root / CACHE_FOLDER
        for wav in sorted(folder.glob("*.wav")):
            if wav not in sentences:
                _remove(wav, "spoken sentences", freed, folder)
        for wav in sorted((folder / "shots").glob("*.wav")):
            if wav not in shots:
                _remove(wav, "shot narrations", freed, folder)
    renders = out_dir or root / "renders"
    with render_lock(renders):
        _clean_renders(film, chapters, renders, freed)
    _clean_check(root, film, chapters, freed)
    return freed


def _clean_check(root: Path, film: Film, chapters: list[Chapter], freed: Freed) -> None:
    """Check's kept results and states that no check of the current storyboards reads
    (kept.chain_names), when `.dtfilm-cache/check` is a real folder (a link is never followed)."""
    folder = root / KEPT_FOLDER
    if not all(p.is_dir() and not p.is_symlink() for p in (folder.parent, folder)):
        return
    used: set[str] = set()
    for chapter in chapters:
        said = _said_cached(chapter, root)
        if said is not None:  # (else no check of it can have kept a result: its voice is not cached)
            used |= chain_names(folder, chapter, film.theme, said)
    for path in sorted(folder.iterdir()):
        if path.suffix in (".json", STATE_SUFFIX) and path.name not in used:
            _remove(path, "check's kept dry runs no check reads", freed, folder)


def _said_cached(chapter: Chapter, root: Path) -> Callable[[Shot], str] | None:
    """What each shot says, as a check names it (dtfilm.check.reuse.kept_results: its joined
    narration's file name, or "silent"), from the audio cache alone (nothing is synthesised);
    None when a narration's sentences are not all cached."""
    spec = chapter.film.voice
    if spec.silent or not engine.available():
        return lambda shot: "silent"
    folder = root / CACHE_FOLDER
    names = {}
    for shot in chapter.shots:
        if shot.narration is None:
            continue
        try:
            if not all(p.is_file() for p in sentence_paths(spec, shot.narration.text, folder)):
                return None
        except SpeechError:
            return None
        names[shot.beat] = shot_path(joined_wav(spec, shot.narration.text, folder)[0], folder).stem
    return lambda shot: names.get(shot.beat, "silent")


def _clean_renders(film: Film, chapters: list[Chapter], renders: Path, freed: Freed) -> None:
    manifest = read_manifest(renders)
    gone = [c for c in manifest["chapters"] if c not in film.chapters]
    for chapter in gone:  # chapters the film no longer has
        for name in [*outputs(chapter), f"{chapter}.gif", f"{chapter}.webm"]:
            if (renders / name).is_file():
                _remove(renders / name, "clips of chapters no longer in the film", freed, renders)
        for clip in sorted((renders / "shots" / chapter).glob("*")):
            _remove(clip, "clips of chapters no longer in the film", freed, renders)
        del manifest["chapters"][chapter]
    if gone:
        write_manifest(renders, manifest)
    beats = {f"{chapter.id}-{shot.beat}" for chapter in chapters for shot in chapter.shots}
    qualities = "|".join(map(re.escape, QUALITY_NAMES))
    for single in sorted((renders / "one").glob("*")):
        shot = re.sub(f"-(?:{qualities})$", "", single.stem)  # named with its quality: chapter-beat-preview
        shot = re.sub(r"-[0-9.]+s$", "", shot)  # a still: chapter-beat-4.5s
        if shot not in beats:
            _remove(single, "single shots and stills of shots no longer there", freed, renders)
    records = manifest.get(SINGLES)
    if isinstance(records, dict):  # the records of files no longer there go with them
        kept = {name: r for name, r in records.items() if isinstance(name, str) and (renders / "one" / name).is_file()}
        if kept != records:
            manifest[SINGLES] = kept
            write_manifest(renders, manifest)
    _clean_shot_cache(renders, manifest, freed)


def _clean_shot_cache(renders: Path, manifest: dict[str, Any], freed: Freed) -> None:
    """Shot clips no chapter's last render joined, probes pointing at none, and slide clips the
    manifest does not list."""
    shots = [shot for entry in manifest["chapters"].values() for shot in entry.get("shots", [])]
    used = {shot["key"] for shot in shots}
    states = {  # the scene's state at each shot's start but the first, as each last render left it
        state_key(entry["parts"], [shot["key"] for shot in entry["shots"][:index]])
        for entry in manifest["chapters"].values()
        if "parts" in entry
        for index in range(1, len(entry.get("shots", [])))
    }
    sounds = {  # what each chapter's sound track was encoded from, kept for the film's join
        sound_name(clip_comment(renders / f"{chapter}.mp4") or "") for chapter in manifest["chapters"]
    }
    folder = cache_folder(renders)
    for path in sorted(folder.glob("*")):
        if not path.is_file():
            continue
        if path.name.endswith(SOUND_SUFFIX):
            if path.name not in sounds:
                _remove(path, "chapters' sound no chapter is made of", freed, renders)
            continue
        if path.suffix in (".mp4", ".json", LINES_SUFFIX) and path.stem not in used:
            _remove(path, "cached shots no render uses", freed, renders)
        elif path.suffix == ".probe" and read_probe(path) not in used:
            _remove(path, "probes of those shots", freed, renders)
        elif path.suffix == STATE_SUFFIX and path.stem not in states:
            _remove(path, "scene states kept at those shots' starts", freed, renders)
    listed = {renders / name for shot in shots for name in (shot["clip"], shot["still"])}
    for path in sorted((renders / "shots").glob("*/*")):
        if path.is_file() and path not in listed:
            _remove(path, "slide clips of shots no longer there", freed, renders)
