"""The shot-kind gallery (docs/reference/kinds.md, dtfilm.storyboard.gallery): every kind's tables
come from its spec, and every minimal storyboard it shows passes `dtfilm check`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dtfilm.shots.registry import KINDS
from dtfilm.storyboard.gallery import example_yaml, kind_example, kind_section, marks_table, needs_table
from dtfilm.storyboard.load import load_film
from tests.conftest import ROOT, seed_caches
from tests.sampling import sampled

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


GALLERY_GROUPS = 4  # the kinds with an example, dealt in order into this many checks
GALLERY_BUDGET = 2  # of them checked in CI, drawn by tests.sampling's fixed seed (about 35 s of CPU saved)


def gallery_examples() -> list[tuple[str, dict]]:
    """(kind, its minimal storyboard) for every kind the gallery shows an example of."""
    found = [(name, kind_example(name, FILM, CHAPTERS)) for name in KINDS]
    return [(name, example) for name, example in found if example is not None]


def test_most_kinds_have_an_example_and_each_block_shown_is_its_storyboard():
    examples = gallery_examples()
    assert len(examples) >= len(KINDS) - 2, "most kinds have an example from the film"
    for _, example in examples:
        assert yaml.safe_load(example_yaml(example)) == example  # the block shown is the storyboard


@pytest.mark.parametrize(
    "group",
    sampled([pytest.param(g, id=f"group{g}") for g in range(GALLERY_GROUPS)], GALLERY_BUDGET, "kind gallery examples"),
)
def test_every_minimal_storyboard_in_the_gallery_passes_check(tmp_path: Path, group: int):
    project = tmp_path / "film"
    shutil.copytree(FILM, project / "storyboard")  # the film the examples merge with
    seed_caches(project, "typeset")  # the film's labels as the test run has typeset them so far
    (project / "talk").mkdir()
    paths = []
    for _, example in gallery_examples()[group::GALLERY_GROUPS]:
        path = project / "talk" / f"{example['id']}.yaml"
        path.write_text(example_yaml(example))
        paths.append(str(path.relative_to(project)))
    assert paths, "every group holds some examples"
    done = subprocess.run(
        [sys.executable, "-m", "dtfilm", "check", "--voice", "none", *paths],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert done.stdout.count(": clean;") == len(paths), done.stdout


def test_a_still_is_copied_into_the_site_only_from_beneath_the_renders_folder(tmp_path: Path):
    # the manifest names each shot's still; the manifest is read back, not trusted
    from dtfilm.publish.kind_stills import copy_stills, still_url

    renders, site = tmp_path / "renders", tmp_path / "site"
    (renders / "shots" / "dp").mkdir(parents=True)
    (renders / "shots" / "dp" / "03-ring.png").write_bytes(b"\x89PNG kept")
    (tmp_path / "secret.png").write_bytes(b"not the render's")
    (renders / "shots" / "dp" / "04-link.png").symlink_to(tmp_path / "secret.png")
    warnings = copy_stills(
        renders,
        {
            "ring_allreduce": ("shots/dp/03-ring.png", "dp:ring"),
            "sweep": ("shots/dp/04-link.png", "dp:more-cards"),
            "title": ("../secret.png", "dp:title"),
        },
        site,
    )
    assert (site / still_url("ring_allreduce")).read_bytes() == b"\x89PNG kept"
    assert not (site / still_url("sweep")).exists() and not (site / still_url("title")).exists()
    assert len(warnings) == 2 and all("not copied into the site" in w for w in warnings), warnings
