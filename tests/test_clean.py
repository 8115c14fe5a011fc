"""`dtfilm clean` (issue 17): it evicts the cached audio and the renders no current storyboard
uses, reports what it freed, and keeps everything a render of the current storyboards needs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dtfilm.storyboard import load_chapter
from dtfilm.voice import engine
from dtfilm.voice.track import CACHE_FOLDER, chapter_track
from tests.conftest import run_dtfilm

FILM = """\
title: Clean film
defaults:
  model: {preset: llama-7b, params: 7e9}
chapters: [alpha]
"""
CHAPTER = """\
id: alpha
title: Alpha
shots:
  - kind: title
    beat: opening
    narration: "{said}"
"""


def _project(root: Path, said: str) -> None:
    (root / "storyboard").mkdir(exist_ok=True)
    (root / "storyboard" / "film.yaml").write_text(FILM)
    (root / "storyboard" / "alpha.yaml").write_text(CHAPTER.format(said=said))


def _cached(root: Path) -> set[str]:
    folder = root / CACHE_FOLDER
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*.wav")}


def _speak(root: Path) -> None:
    chapter = load_chapter("alpha", {}, root)
    chapter_track(chapter, chapter.film.voice, root)


@pytest.mark.skipif(not engine.available(), reason="the voice extra (dtfilm[voice]) is not installed")
def test_clean_evicts_the_narration_no_storyboard_says_and_keeps_the_rest(tmp_path: Path):
    _project(tmp_path, "Cards hold memory. Links move bytes.")
    _speak(tmp_path)
    first = _cached(tmp_path)  # two sentences and the shot's joined narration
    _project(tmp_path, "Cards hold memory. Rings average.")  # the second sentence changed
    _speak(tmp_path)
    new = _cached(tmp_path) - first  # the new sentence and the new joined narration
    assert len(first) == 3 and len(new) == 2
    done = run_dtfilm("clean", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "spoken sentences: 1 file" in done.stdout and "shot narrations: 1 file" in done.stdout
    assert "freed 2 files" in done.stdout
    kept = _cached(tmp_path)
    assert new <= kept and len(kept & first) == 1  # of the first narration, only the sentence still said
    _speak(tmp_path)  # what the storyboard says now is all there: nothing is synthesised again
    assert _cached(tmp_path) == kept
    again = run_dtfilm("clean", cwd=tmp_path)
    assert "nothing to free" in again.stdout


def test_clean_evicts_the_renders_of_chapters_and_shots_that_are_gone(tmp_path: Path):
    _project(tmp_path, "Cards hold memory.")
    renders = tmp_path / "renders"
    (renders / "shots" / "gone").mkdir(parents=True)
    (renders / "one").mkdir()
    for name in ("gone.mp4", "gone.png", "gone.vtt", "shots/gone/01-x.mp4", "alpha.mp4"):
        (renders / name).write_bytes(b"x" * 1000)
    for name in (
        "alpha-opening.mp4",
        "alpha-opening-2.5s.png",
        "alpha-closing.mp4",
        "alpha-closing-1s.png",
        # named with their quality (issue 59)
        "alpha-opening-final.mp4",
        "alpha-opening-2.5s-preview.png",
        "alpha-closing-4k.mp4",
        "alpha-closing-1s-final.png",
    ):
        (renders / "one" / name).write_bytes(b"x" * 10)
    manifest = {"version": 1, "film": {}, "chapters": {"alpha": {"key": "a"}, "gone": {"key": "g"}}}
    (renders / "manifest.json").write_text(json.dumps(manifest))
    done = run_dtfilm("clean", "--voice", "none", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "clips of chapters no longer in the film: 4 files" in done.stdout
    assert "single shots and stills of shots no longer there: 4 files" in done.stdout
    left = sorted(p.relative_to(renders).as_posix() for p in renders.rglob("[!.]*") if p.is_file())
    assert left == [
        "alpha.mp4",
        "manifest.json",
        "one/alpha-opening-2.5s-preview.png",
        "one/alpha-opening-2.5s.png",
        "one/alpha-opening-final.mp4",
        "one/alpha-opening.mp4",
    ]
    assert set(json.loads((renders / "manifest.json").read_text())["chapters"]) == {"alpha"}
