"""The shot-kind gallery (docs/reference/kinds.md, dtfilm.storyboard.gallery): every kind's tables
come from its spec, and every minimal storyboard it shows passes `dtfilm check`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from dtfilm.storyboard.gallery import example_yaml, kind_example, kind_section, marks_table, needs_table
from dtfilm.storyboard.kinds import KINDS
from dtfilm.storyboard.load import load_film
from tests.conftest import ROOT

FILM = ROOT / "storyboard"
CHAPTERS = list(load_film(FILM / "film.yaml").chapters)


def test_each_kinds_tables_are_its_spec():
    ring = KINDS["ring_allreduce"]
    assert marks_table(ring)[2:] == [f"| `[{m}]` | {what} |" for m, what in ring.marks.items()]
    assert needs_table(ring)[2:] == ["| `zero` | 2 at most |"]
    section = kind_section("ring_allreduce", FILM, CHAPTERS)
    assert "| `caption` | no |" in section and "`dp:ring` (storyboard/dp.yaml:" in section
    for name, spec in KINDS.items():
        section = kind_section(name, FILM, CHAPTERS)
        assert all(f"`{key}`" in section for key in spec.keys), name
        assert all(f"`[{mark}]`" in section for mark in spec.marks), name
        assert all(f"| `{setting}` |" in section for setting in [*spec.needs, *spec.at_most]), name


def test_every_minimal_storyboard_in_the_gallery_passes_check(tmp_path: Path):
    project = tmp_path / "film"
    shutil.copytree(FILM, project / "storyboard")  # the film the examples merge with
    (project / "talk").mkdir()
    paths = []
    for name in KINDS:
        example = kind_example(name, FILM, CHAPTERS)
        if example is None:
            continue
        assert yaml.safe_load(example_yaml(example)) == example  # the block shown is the storyboard
        path = project / "talk" / f"{example['id']}.yaml"
        path.write_text(example_yaml(example))
        paths.append(str(path.relative_to(project)))
    assert len(paths) >= len(KINDS) - 2, "most kinds have an example from the film"
    done = subprocess.run(
        [sys.executable, "-m", "dtfilm", "check", "--voice", "none", *paths],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert done.stdout.count(": clean;") == len(paths), done.stdout
