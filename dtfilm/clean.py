"""`dtfilm clean`: evict what no current storyboard uses, and say what was freed.

- the audio cache (`.dtfilm-cache/voice/`): sentences no narration of the film says with the
  film's voice, and joined shot narrations no shot has;
- the renders folder: the clips, sidecars, shot clips and manifest entries of chapters the film
  no longer has, and single shots and stills (`renders/one/`) of shots that no longer exist.

Nothing that a render of the current storyboards would use is removed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from dtfilm.cache import outputs, read_manifest, write_manifest
from dtfilm.storyboard import find_root, load_chapter, load_film
from dtfilm.voice.engine import VOICE_VARIABLE, VoiceSpec, parse_voice


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


def _remove(path: Path, kind: str, freed: Freed) -> None:
    size = path.stat().st_size
    path.unlink()
    freed.files.setdefault(kind, []).append((path, size))


def used_audio(root: Path, spec: VoiceSpec) -> tuple[set[Path], set[Path]]:
    """The sentence and shot files of the audio cache that the film's narrations use."""
    from dtfilm.voice.cues import sentences_of
    from dtfilm.voice.speech import SpeechError, spoken
    from dtfilm.voice.track import CACHE_FOLDER, joined_wav, sentence_path, shot_path

    folder = root / CACHE_FOLDER
    sentences, shots = set(), set()
    for chapter_id in load_film(root / "storyboard" / "film.yaml").chapters:
        for shot in load_chapter(chapter_id, {}, root).shots:
            if shot.narration is None:
                continue
            try:
                paths = [sentence_path(spec, spoken(s), folder) for s in sentences_of(shot.narration.text)]
            except SpeechError:
                continue
            sentences.update(paths)
            if all(p.is_file() for p in paths):  # (then joining them synthesises nothing)
                shots.add(shot_path(joined_wav(spec, shot.narration.text, folder)[0], folder))
    return sentences, shots


def clean(out_dir: Path | None = None) -> Freed:
    """Remove the cached audio and the renders no current storyboard uses."""
    from dtfilm.voice.track import CACHE_FOLDER

    root = find_root()
    film = load_film(root / "storyboard" / "film.yaml")
    spec = parse_voice(os.environ[VOICE_VARIABLE]) if os.environ.get(VOICE_VARIABLE) else film.voice
    freed = Freed()
    if not spec.silent:
        sentences, shots = used_audio(root, spec)
        folder = root / CACHE_FOLDER
        for wav in sorted(folder.glob("*.wav")):
            if wav not in sentences:
                _remove(wav, "spoken sentences", freed)
        for wav in sorted((folder / "shots").glob("*.wav")):
            if wav not in shots:
                _remove(wav, "shot narrations", freed)
    renders = out_dir or root / "renders"
    manifest = read_manifest(renders)
    gone = [c for c in manifest["chapters"] if c not in film.chapters]
    for chapter in gone:  # chapters the film no longer has
        for name in [*outputs(chapter), f"{chapter}.gif", f"{chapter}.webm"]:
            if (renders / name).is_file():
                _remove(renders / name, "clips of chapters no longer in the film", freed)
        for clip in sorted((renders / "shots" / chapter).glob("*")):
            _remove(clip, "clips of chapters no longer in the film", freed)
        del manifest["chapters"][chapter]
    if gone:
        write_manifest(renders, manifest)
    beats = {f"{c}-{shot.beat}" for c in film.chapters for shot in load_chapter(c, {}, root).shots}
    for single in sorted((renders / "one").glob("*")):
        shot = re.sub(r"-[0-9.]+s$", "", single.stem)  # a still: chapter-beat-4.5s
        if shot not in beats:
            _remove(single, "single shots and stills of shots no longer there", freed)
    return freed
