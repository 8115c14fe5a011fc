"""The voice's sentences kept for every project on the machine (dtfilm.voice.machine_tier): a
second project copies them instead of asking the voice, and nothing planted there, or in the
project's own cache, is followed or used."""

from __future__ import annotations

import io
import os
import wave
from pathlib import Path

import pytest

from dtfilm.voice import engine, machine_tier, track
from dtfilm.voice.engine import VoiceSpec
from tests.conftest import fake_wav

NARRATION = "Every card holds the whole model. Each takes its own slice of the batch."


@pytest.fixture
def spoken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the (fake) voice was asked to say; the machine's cache in tmp_path/machine."""
    asked: list[str] = []
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "machine"))
    monkeypatch.setattr(engine, "identity", lambda spec: "a test voice")
    monkeypatch.setattr(engine, "synthesize", lambda spec, text: asked.append(text) or fake_wav(text))
    return asked


def _machine(tmp_path: Path) -> Path:
    return tmp_path / "machine" / "dtfilm" / "voice"


def test_a_second_project_copies_the_sentences_and_the_voice_says_nothing(tmp_path: Path, spoken: list[str]):
    first = track.shot_audio(VoiceSpec(), NARRATION, tmp_path / "a" / track.CACHE_FOLDER)
    assert len(spoken) == 2 and len(list(_machine(tmp_path).glob("*.wav"))) == 2
    second = track.shot_audio(VoiceSpec(), NARRATION, tmp_path / "b" / track.CACHE_FOLDER)
    assert len(spoken) == 2, "the second project asked the voice again"
    assert second.path.read_bytes() == first.path.read_bytes() and second.sentences == first.sentences
    kept = sorted(p.name for p in (tmp_path / "b" / track.CACHE_FOLDER).glob("*.wav"))
    assert kept == sorted(p.name for p in _machine(tmp_path).glob("*.wav"))  # the project has its own copy


@pytest.mark.parametrize("planted", ["link", "not-wav", "stereo", "folder"])
def test_a_planted_sentence_on_the_machine_is_spoken_again(tmp_path: Path, spoken: list[str], planted: str):
    said = track.said_pieces("Every card holds the whole model.")[0]
    name = track.sentence_path(VoiceSpec(), said, Path(".")).name
    machine = _machine(tmp_path)
    machine.mkdir(parents=True)
    secret = tmp_path / "secret.wav"
    secret.write_bytes(fake_wav("a secret the link points at"))
    if planted == "link":
        (machine / name).symlink_to(secret)
    elif planted == "folder":
        (machine / name).mkdir()
    elif planted == "not-wav":
        (machine / name).write_bytes(b"RIFF not audio at all")
    else:
        out = io.BytesIO()
        with wave.open(out, "wb") as wav:
            wav.setnchannels(2)
            wav.setsampwidth(2)
            wav.setframerate(22050)
            wav.writeframes(b"\x00" * 400)
        (machine / name).write_bytes(out.getvalue())
    frames, _ = track.sentence_frames(VoiceSpec(), said, tmp_path / "p" / track.CACHE_FOLDER)
    assert spoken == [said] and frames == fake_wav(said)[44:]
    assert secret.read_bytes() == fake_wav("a secret the link points at")  # never written through


def test_a_planted_link_in_the_projects_cache_is_not_followed(tmp_path: Path, spoken: list[str]):
    said = track.said_pieces("Every card holds the whole model.")[0]
    folder = tmp_path / "p" / track.CACHE_FOLDER
    folder.mkdir(parents=True)
    secret = tmp_path / "secret.wav"
    secret.write_bytes(fake_wav("someone else's audio"))
    (folder / track.sentence_path(VoiceSpec(), said, folder).name).symlink_to(secret)
    frames, _ = track.sentence_frames(VoiceSpec(), said, folder)
    assert spoken == [said] and frames == fake_wav(said)[44:]
    assert secret.read_bytes() == fake_wav("someone else's audio")


def test_a_linked_machine_folder_is_not_used(tmp_path: Path, spoken: list[str]):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "machine" / "dtfilm").mkdir(parents=True)
    _machine(tmp_path).symlink_to(elsewhere)
    track.shot_audio(VoiceSpec(), NARRATION, tmp_path / "a" / track.CACHE_FOLDER)
    track.shot_audio(VoiceSpec(), NARRATION, tmp_path / "b" / track.CACHE_FOLDER)
    assert len(spoken) == 4 and not list(elsewhere.iterdir())  # spoken for each; nothing written through


def test_the_machine_folder_keeps_the_sentences_used_last_within_its_bound(tmp_path: Path):
    folder = tmp_path / "voice"
    folder.mkdir()
    names = [f"{k:024x}.wav" for k in range(5)]
    for age, name in enumerate(names):
        (folder / name).write_bytes(b"x" * 1000)
        os.utime(folder / name, ns=(10**18 + age * 10**9,) * 2)  # the first written is the oldest
    (folder / "notes.txt").write_bytes(b"y" * 5000)  # not a sentence: neither counted nor removed
    target = tmp_path / "kept.wav"
    target.write_bytes(b"z" * 5000)
    (folder / f"{9:024x}.wav").symlink_to(target)  # a link: neither counted nor followed
    assert machine_tier.trim(folder, 3000) == names[:2]
    assert sorted(p.name for p in folder.iterdir()) == sorted([*names[2:], "notes.txt", f"{9:024x}.wav"])
    assert target.read_bytes() == b"z" * 5000
