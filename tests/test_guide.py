"""docs/adding-a-chapter.md followed from scratch: its kind and its storyboard, in an empty folder."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

GUIDE = ROOT / "docs" / "adding-a-chapter.md"
BLOCK = re.compile(r"```(\w+)\n# guide: (\w+)\n(.*?)```", re.S)

RUN = """
import sys
from pathlib import Path
sys.path.insert(0, {folder!r})
import scratch_kind  # registers token_split, as the guide's block does
from dtfilm.check.chapters import check_chapter
from dtfilm.check.inspect import inspect_chapter

result = check_chapter({storyboard!r}, root=Path({root!r}))
print("problems:", result.problems)
print("texts:", result.texts)
print("beats:", [beat for beat, _, _ in inspect_chapter({storyboard!r}, Path({root!r})).shot_times])
"""


def guide_blocks() -> dict[str, str]:
    return {name: body for _, name, body in BLOCK.findall(GUIDE.read_text())}


def test_the_guide_has_a_kind_and_a_storyboard():
    assert set(guide_blocks()) == {"kind", "storyboard"}


@pytest.mark.xdist_group("guide")
def test_the_guide_followed_from_scratch(tmp_path: Path):
    """The guide's kind registers and its storyboard (using it beside a film kind) loads, plays
    and passes every check, written into a folder of its own beside the project's film.yaml."""
    blocks = guide_blocks()
    (tmp_path / "scratch_kind.py").write_text(blocks["kind"])
    storyboard = ROOT / "storyboard" / "tokens.yaml"
    assert not storyboard.exists()
    # the storyboard sits beside a copy of the film's defaults, in a project of its own
    project = tmp_path / "project"
    (project / "storyboard").mkdir(parents=True)
    film = (ROOT / "storyboard" / "film.yaml").read_text()
    film = re.sub(r"(?m)^chapters: .*$", "chapters: [tokens]", film)  # the guide: add the id to chapters
    (project / "storyboard" / "film.yaml").write_text(film)
    glossary = ROOT / "storyboard" / "glossary.yaml"  # the film opts in to its glossary: it comes along
    (project / "storyboard" / "glossary.yaml").write_text(glossary.read_text())
    (project / "storyboard" / "tokens.yaml").write_text(blocks["storyboard"])
    script = RUN.format(folder=str(tmp_path), storyboard="tokens", root=str(project))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "problems: []" in done.stdout, done.stdout
    assert "beats: ['split', 'degrees']" in done.stdout, done.stdout
    texts = int(re.search(r"texts: (\d+)", done.stdout).group(1))
    assert texts >= 10  # the bar's title, its cards' names, the stats, the columns ...
