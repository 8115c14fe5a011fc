"""A mistake in a shot kind is one line naming the kind and what it got wrong, with exit status
2, as a storyboard's mistake is: never a traceback, nor an `assert` that `python -O` drops."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import ROOT

# A scratch kind (registered as docs/adding-a-chapter.md's is) whose code waits for a mark its spec
# does not declare: the spec names [soon], the code waits for [later].
KIND = """
from dtfilm.shots.plays import register
from dtfilm.storyboard.kinds import KindSpec


def play_waits(ctx, shot):
    ctx.open_shot(shot.caption)
    ctx.until("later")


register(
    KindSpec("waits", "waits for a mark", {}, marks={"soon": "what shows soon"}, draw_seconds_per_second=0.2),
    play_waits,
)
"""

STORYBOARD = """\
id: waits
title: Waiting
shots:
  - kind: waits
    beat: wait
    narration: "One sentence, then [soon] another."
"""

RUN = """
import sys
sys.path.insert(0, {folder!r})
import scratch_waits
from dtfilm.cli import main
sys.exit(main(["check", "waits", "--fresh"]))
"""


def test_a_kind_waiting_for_an_undeclared_mark_is_one_line_at_check(tmp_path: Path):
    (tmp_path / "scratch_waits.py").write_text(textwrap.dedent(KIND))
    project = tmp_path / "project"
    (project / "storyboard").mkdir(parents=True)
    film = (ROOT / "storyboard" / "film.yaml").read_text()
    (project / "storyboard" / "film.yaml").write_text(re.sub(r"(?m)^chapters: .*$", "chapters: [waits]", film))
    glossary = ROOT / "storyboard" / "glossary.yaml"  # the film opts in to its glossary: it comes along
    (project / "storyboard" / "glossary.yaml").write_text(glossary.read_text())
    (project / "storyboard" / "waits.yaml").write_text(STORYBOARD)
    command = [sys.executable, "-O", "-c", RUN.format(folder=str(tmp_path))]  # -O: no assert would catch it
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=project)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("dtfilm: error: ") and "waits.yaml:4" in lines[0]
    assert "shot kind 'waits' waits for [later], a mark its spec does not declare; declared: [soon]" in lines[0]
