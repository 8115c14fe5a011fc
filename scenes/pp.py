"""Pipeline parallelism: `manim -ql scenes/pp.py PipelineParallel` or `dtfilm render pp`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.scene import ChapterScene
from dtfilm.scene_brief import SceneBrief
from dtfilm.shots.plays import SHOTS


class PipelineParallel(ChapterScene):
    default_brief = SceneBrief("pp", SHOTS, Path(__file__).resolve().parent.parent)
