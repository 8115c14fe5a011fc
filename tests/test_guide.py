"""docs/adding-a-chapter.md followed from scratch: the kind in a folder of its own in a copy of
the package, its storyboard in an empty project, the chapter's id in film.yaml; nothing else."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

GUIDE = ROOT / "docs" / "adding-a-chapter.md"
BLOCK = re.compile(r"```(\w+)\n# guide: (\w+)\n(.*?)```", re.S)


def guide_blocks() -> dict[str, str]:
    return {name: body for _, name, body in BLOCK.findall(GUIDE.read_text())}


def test_the_guide_has_a_kind_and_a_storyboard():
    assert set(guide_blocks()) == {"specs", "draw", "storyboard"}


def follow_the_guide(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the package with the guide's kind in its own folder, and a project whose
    film.yaml lists the guide's storyboard: (the copy's folder, the project)."""
    blocks = guide_blocks()
    source = tmp_path / "source"
    shutil.copytree(ROOT / "dtfilm", source / "dtfilm", ignore=shutil.ignore_patterns("__pycache__"))
    kind = source / "dtfilm" / "shots" / "token_split"  # the kind's own folder, and nothing else of the package
    kind.mkdir()
    (kind / "__init__.py").write_text("")
    (kind / "specs.py").write_text(blocks["specs"])
    (kind / "draw.py").write_text(blocks["draw"])
    assert not (ROOT / "storyboard" / "tokens.yaml").exists()
    project = tmp_path / "project"
    (project / "storyboard").mkdir(parents=True)
    film = (ROOT / "storyboard" / "film.yaml").read_text()
    film = re.sub(r"(?m)^chapters: .*$", "chapters: [tokens]", film)  # the guide: add the id to chapters
    (project / "storyboard" / "film.yaml").write_text(film)
    glossary = ROOT / "storyboard" / "glossary.yaml"  # the film opts in to its glossary: it comes along
    (project / "storyboard" / "glossary.yaml").write_text(glossary.read_text())
    (project / "storyboard" / "tokens.yaml").write_text(blocks["storyboard"])
    return source, project


def dtfilm(source: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(source)}
    command = [sys.executable, "-m", "dtfilm", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=project, env=environment)


@pytest.mark.xdist_group("guide")
def test_the_guide_followed_from_scratch(tmp_path: Path):
    """The guide's kind, a folder of its own, is found by itself: `dtfilm kinds` lists it and
    `dtfilm check` plays its storyboard (using it beside a film kind) clean; a broken spec in
    that folder is then one line naming the kind and its file."""
    source, project = follow_the_guide(tmp_path)
    listed = dtfilm(source, project, "kinds")
    assert listed.returncode == 0 and listed.stdout.splitlines()[-1].startswith("token_split "), listed.stderr
    done = dtfilm(source, project, "check", "tokens", "--fresh")
    assert done.returncode == 0, done.stderr
    summary = re.search(r"tokens: clean; .* (\d+) texts .* \(2 of 2 shots played", done.stdout)
    assert summary and int(summary.group(1)) >= 10, done.stdout  # the bar's title, its cards' names, the stats ...

    folder = source / "dtfilm" / "shots" / "token_split"
    draw = (folder / "draw.py").read_text()
    (folder / "draw.py").write_text(draw.replace("def play_token_split(", "def play_token_spilt("))
    astray = dtfilm(source, project, "check", "tokens", "--fresh")
    assert astray.returncode == 2 and "Traceback" not in astray.stderr, astray.stderr
    assert astray.stderr.strip() == (
        "dtfilm: error: dtfilm/shots/token_split/draw.py: dtfilm.shots.token_split.draw.play_token_spilt"
        " draws no kind: no spec names 'token_spilt'"
    )
    (folder / "draw.py").write_text(draw)
    specs = folder / "specs.py"
    specs.write_text(specs.read_text().replace("draw_seconds_per_second=0.2", "draw_seconds_per_second=None"))
    broken = dtfilm(source, project, "check", "tokens", "--fresh")
    assert broken.returncode == 2 and "Traceback" not in broken.stderr, broken.stderr
    assert broken.stderr.strip() == (
        "dtfilm: error: dtfilm/shots/token_split/specs.py: shot kind 'token_split': draw_seconds_per_second"
        " None is no positive number of seconds"
    )
