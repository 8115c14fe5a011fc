"""`dtfilm check` reuses each unchanged shot's kept dry run (issue 55): after one caption changed it
plays that shot alone and says exactly what a check of every shot says; a kept result that is
not what dtfilm wrote (edited, unsigned, of another shape, a link, a FIFO) is ignored and the
shot plays again, and a linked cache folder is never written through."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from dtfilm.check import kept
from dtfilm.check.chapters import check_chapter
from dtfilm.check.shot_results import ShotResult, ShownText
from dtfilm.voice.engine import VOICE_VARIABLE
from tests.conftest import ROOT

pytestmark = pytest.mark.xdist_group("check-reuse")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A copy of the project's storyboards whose dp check has kept every shot. Silent: timed by
    its words, as a check is without the voice (a fresh copy would speak every sentence again)."""
    root = tmp_path_factory.mktemp("project")
    shutil.copytree(ROOT / "storyboard", root / "storyboard")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(VOICE_VARIABLE, "none")
        first = check_chapter("dp", root=root, reuse=True)
        assert first.played == len(first.chapter.shots)
        yield root


def _said(result) -> tuple:
    return result.problems, result.texts, result.facts, round(result.duration, 6)


def _recaption(root: Path, words: str) -> None:
    """dp's memory shot (its second) says a bare number at its caption's end: a problem of its
    own words and of the text it draws."""
    path = root / "storyboard" / "dp.yaml"
    lines = path.read_text().splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.lstrip().startswith('caption: "')][1]
    lines[at] = lines[at].rstrip().removesuffix('"') + f' {words}"\n'
    path.write_text("".join(lines))


def test_a_changed_caption_plays_its_shot_alone_and_says_what_a_fresh_check_says(project: Path):
    again = check_chapter("dp", root=project, reuse=True)
    assert again.played == 0
    _recaption(project, "on 17 cards")
    reused = check_chapter("dp", root=project, reuse=True)
    fresh = check_chapter("dp", root=project)
    assert reused.played == 1
    assert fresh.played == len(fresh.chapter.shots)
    assert any("memory" in p and "17" in p for p in fresh.problems)
    assert _said(reused) == _said(fresh)


def _entries(root: Path) -> list[Path]:
    return sorted((root / kept.KEPT_FOLDER).glob("*.json"))


def _last_shots_entry(root: Path) -> Path:
    """The kept result of dp's last shot (the overlap timeline: the cheapest to play again)."""
    return next(e for e in _entries(root) if b'"beat":"overlap"' in e.read_bytes())


def _edited(entry: Path, tmp_path: Path) -> None:
    """Its findings dropped: the signature no longer holds."""
    tag, body = entry.read_bytes().split(b"\n", 1)
    data = json.loads(body)
    data["layout"], data["texts"] = [], []
    entry.write_bytes(tag + b"\n" + json.dumps(data).encode())


def _linked(entry: Path, tmp_path: Path) -> None:
    """A link to the same result, elsewhere."""
    outside = tmp_path / entry.name
    shutil.copy(entry, outside)
    entry.unlink()
    entry.symlink_to(outside)


def _fifo(entry: Path, tmp_path: Path) -> None:
    """A FIFO, which is not waited on."""
    entry.unlink()
    os.mkfifo(entry)


@pytest.mark.parametrize("planted", [_edited, _linked, _fifo])
def test_a_kept_result_not_as_dtfilm_wrote_it_is_ignored(project: Path, tmp_path: Path, planted):
    baseline = check_chapter("dp", root=project, reuse=True)
    assert baseline.played == 0
    planted(_last_shots_entry(project), tmp_path)
    result = check_chapter("dp", root=project, reuse=True)
    assert result.played == 1
    assert _said(result) == _said(baseline)
    assert _last_shots_entry(project).is_file() and not _last_shots_entry(project).is_symlink()


def test_the_schema_refuses_every_field_out_of_shape():
    good = ShotResult(
        "memory",
        "a" * 32,
        12.5,
        ("memory: x",),
        (ShownText("12 GB", "b" * 16, 1, (), ()),),
        ((1.0, 0.5),),
        (("3", "3 cards"),),
    )
    data = {"format": kept.FORMAT, "key": "c" * 32, **json.loads(json.dumps(asdict(good)))}
    assert kept.parse_result(data, "c" * 32, "memory") == good
    bad = [
        {**data, "format": 0},
        {**data, "key": "d" * 32},
        {**data, "beat": "ring"},
        {**data, "end_screen": "../x"},
        {**data, "seconds": float("nan")},
        {**data, "seconds": -1},
        {**data, "layout": "memory: x"},
        {**data, "layout": ["\x1b[2J forged"]},
        {**data, "texts": [{"text": "12 GB"}]},
        {**data, "texts": [{**data["texts"][0], "facts": True}]},
        {**data, "facts": [[1.0]]},
        {**data, "facts": [["1", 0.5]]},
        {**data, "loose": [[3, "3 cards"]]},
        {**data, "extra": 1},
        [],
    ]
    for item in bad:
        with pytest.raises((ValueError, TypeError)):
            kept.parse_result(item, "c" * 32, "memory")


def test_a_linked_cache_folder_is_never_used(tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / ".dtfilm-cache").symlink_to(outside)
    assert kept.kept_folder(tmp_path) is None
    (tmp_path / ".dtfilm-cache").unlink()
    (tmp_path / ".dtfilm-cache").mkdir()
    (tmp_path / ".dtfilm-cache" / "check").symlink_to(outside)
    assert kept.kept_folder(tmp_path) is None
    assert list(outside.iterdir()) == []


def test_a_chapter_holding_some_of_its_shots_is_looked_up_by_position():
    # A chapter cut to some of its shots (as the picture tests cut one) keeps each shot's
    # storyboard index: keys and results go by position in the chapter (an IndexError before).
    import dataclasses

    from dtfilm.check.reuse import ShotRun
    from dtfilm.onscreen.screen import EMPTY
    from dtfilm.storyboard import load_chapter

    chapter = load_chapter("dp", None, ROOT)
    cut = dataclasses.replace(chapter, shots=(chapter.shots[0], chapter.shots[-1]))
    assert cut.shots[1].index >= len(cut.shots)
    run = ShotRun(cut, None, "part", lambda shot: "silent")
    assert not run.look_up(1, EMPTY)
    assert run.keys[0] is None and run.keys[1] == kept.shot_key("part", cut.shots[1], EMPTY, "silent")
    assert run.starts == [None, EMPTY] and run.first_missing() == 0


def test_clean_removes_the_kept_dry_runs_no_check_reads_and_keeps_the_rest(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from dtfilm.render.clean import clean

    monkeypatch.setenv(VOICE_VARIABLE, "none")
    monkeypatch.chdir(project)
    _recaption(project, "twice over")  # the memory shot's result kept before is read no more
    assert check_chapter("dp", root=project, reuse=True).played == 1
    memory = [e for e in _entries(project) if b'"beat":"memory"' in e.read_bytes()]
    assert len(memory) >= 2
    stray = project / kept.KEPT_FOLDER / f"{'e' * 32}.json"
    stray.write_text("not a result")
    outside = tmp_path / "outside.json"
    outside.write_text("kept")
    (project / kept.KEPT_FOLDER / f"{'f' * 32}.json").symlink_to(outside)
    before = set(_entries(project))
    freed = clean().files["check's kept dry runs no check reads"]
    after = set(_entries(project))
    assert {path for path, _ in freed} == before - after
    assert stray in before - after and outside.read_text() == "kept"  # (the link removed, not its file)
    assert len([e for e in after if b'"beat":"memory"' in e.read_bytes()]) == 1
    assert check_chapter("dp", root=project, reuse=True).played == 0  # all a check reads is kept
    assert "check's kept" not in " ".join(clean().lines())
