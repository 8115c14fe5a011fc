"""A chapter's narration track: each shot's narration spoken sentence by sentence, joined with
short pauses, with the time each sentence starts and ends (the subtitles' cues).

Each sentence is synthesised once and kept in the audio cache (`.dtfilm-cache/voice/` in the
project, and for every project on the machine: dtfilm.voice.machine_tier), keyed by what the
voice is given to say (dtfilm.voice.speech), the voice and the engine version. When a number
changes, only the sentences that say it are spoken again. A sentence longer than one synthesis
may take (engine.MAX_SPOKEN_CHARS, the bound on the voice's memory) is spoken in pieces
(dtfilm.voice.pieces), each cached the same way, joined with a short pause.
"""

from __future__ import annotations

import hashlib
import io
import wave
from dataclasses import dataclass
from pathlib import Path

from dtfilm.errors import DtfilmError
from dtfilm.storyboard import Chapter
from dtfilm.system.atomic import atomic_path
from dtfilm.userfile import read_back
from dtfilm.voice import engine, machine_tier
from dtfilm.voice.cues import sentences_of
from dtfilm.voice.pieces import voice_pieces
from dtfilm.voice.speech import SpeechError, spoken

SENTENCE_PAUSE_SECONDS = 0.35  # between two sentences of a shot
PIECE_PAUSE_SECONDS = 0.15  # between two pieces of one long sentence: a comma's pause
CACHE_FOLDER = Path(".dtfilm-cache") / "voice"


@dataclass(frozen=True)
class Sentence:
    written: str  # as the subtitles show it
    start: float  # seconds from the start of the shot's audio
    end: float


@dataclass(frozen=True)
class ShotAudio:
    path: Path  # the shot's narration as one WAV file
    seconds: float
    sentences: tuple[Sentence, ...]


def _write_atomic(path: Path, data: bytes) -> None:
    with atomic_path(path) as temp:
        temp.write_bytes(data)


def sentence_path(spec: engine.VoiceSpec, said: str, folder: Path) -> Path:
    """Where the cache keeps a sentence: keyed by what is said, the voice and the engine."""
    key = hashlib.sha256(f"{engine.identity(spec)}\n{said}".encode()).hexdigest()[:24]
    return folder / f"{key}.wav"


def shot_path(data: bytes, folder: Path) -> Path:
    """Where the cache keeps a shot's joined narration: keyed by its bytes."""
    return folder / "shots" / f"{hashlib.sha256(data).hexdigest()[:24]}.wav"


def said_pieces(written: str) -> list[str]:
    """What the voice is given for one written sentence: its spoken text, in pieces one
    synthesis may take (one piece, the whole of it, for any ordinary sentence)."""
    return voice_pieces(spoken(written))


def sentence_paths(spec: engine.VoiceSpec, narration: str, folder: Path) -> list[Path]:
    """Every cached file a narration's sentences are spoken from (for clean, and the cluster)."""
    return [sentence_path(spec, piece, folder) for written in sentences_of(narration) for piece in said_pieces(written)]


def sentence_frames(spec: engine.VoiceSpec, said: str, folder: Path) -> tuple[bytes, int]:
    """One spoken sentence's frames and rate: from the project's cache, else from the machine's
    (dtfilm.voice.machine_tier), else synthesised; kept in both. A cached file is read with no
    link followed, bounded, and used only as a mono 16-bit WAV file: anything else is missing."""
    path = sentence_path(spec, said, folder)
    found = machine_tier.wav_frames(read_back(path, machine_tier.MAX_SENTENCE_BYTES))
    if found is not None:
        return found
    data = machine_tier.fetch(path.name)
    fresh = data is None
    if data is None:
        data = engine.synthesize(spec, said)
    spoken_now = machine_tier.wav_frames(data)
    if spoken_now is None:  # (a voice model of another format: refused before anything is kept)
        raise DtfilmError(f"{spec.name}: the voice's audio is not a mono 16-bit WAV file")
    _write_atomic(path, data)
    if fresh:
        machine_tier.keep(path.name, data)
    return spoken_now


def shot_audio(spec: engine.VoiceSpec, narration: str, folder: Path) -> ShotAudio:
    """A shot's narration spoken: its sentences joined with pauses into one WAV (cached too)."""
    data, sentences, seconds = joined_wav(spec, narration, folder)
    path = shot_path(data, folder)
    if not path.is_file():
        _write_atomic(path, data)
    return ShotAudio(path, seconds, tuple(sentences))


def joined_wav(spec: engine.VoiceSpec, narration: str, folder: Path) -> tuple[bytes, list[Sentence], float]:
    """The narration's sentences (synthesised on a miss) joined with pauses: the WAV file's
    bytes, each sentence's times, and the length in seconds."""
    pieces, sentences, cursor, rate = [], [], 0.0, 22050
    for i, written in enumerate(sentences_of(narration)):
        for j, said in enumerate(said_pieces(written)):
            frames, rate = sentence_frames(spec, said, folder)
            if i or j:
                pause = b"\x00\x00" * round((PIECE_PAUSE_SECONDS if j else SENTENCE_PAUSE_SECONDS) * rate)
                pieces.append(pause)
                cursor += len(pause) / 2 / rate
            if not j:
                begins = cursor
            pieces.append(frames)
            cursor += len(frames) / 2 / rate
        sentences.append(Sentence(written, begins, cursor))
    joined = b"".join(pieces)
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(joined)
    return out.getvalue(), sentences, len(joined) / 2 / rate


def check_speakable(chapter: Chapter, spec: engine.VoiceSpec) -> None:
    """Refuse, naming its shot, a narration the voice cannot say (when a voice speaks): what
    `status` and a render's plan check before any frame is drawn."""
    if spec.silent or not engine.available():
        return
    for shot in chapter.shots:
        if shot.narration is None:
            continue
        try:
            for written in sentences_of(shot.narration.text):
                said_pieces(written)
        except SpeechError as error:
            raise DtfilmError(str(error), shot.where, f"shots[{shot.index}].narration") from None


def chapter_track(chapter: Chapter, spec: engine.VoiceSpec, root: Path) -> dict[str, ShotAudio]:
    """Every narrated shot's audio, by beat. A narration the voice cannot say is an error
    naming its shot."""
    folder = root / CACHE_FOLDER
    track = {}
    for shot in chapter.shots:
        if shot.narration is None:
            continue
        try:
            track[shot.beat] = shot_audio(spec, shot.narration.text, folder)
        except SpeechError as error:
            raise DtfilmError(str(error), shot.where, f"shots[{shot.index}].narration") from None
    return track


def narration_track(chapter: Chapter, spec: engine.VoiceSpec) -> dict[str, ShotAudio]:
    """The chapter's narration spoken, by beat; empty (a silent film timed by its words) for
    `--voice none` or when the voice extra is not installed."""
    if spec.silent or not engine.available():
        return {}
    return chapter_track(chapter, spec, chapter.path.parent.parent)
