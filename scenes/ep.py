"""Expert parallelism: `manim -ql scenes/ep.py ExpertParallel` or `dtfilm render ep`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.scene import ChapterScene
from dtfilm.scene_brief import SceneBrief
from dtfilm.shots.plays import SHOTS


class ExpertParallel(ChapterScene):
    default_brief = SceneBrief("ep", SHOTS, Path(__file__).resolve().parent.parent)
