"""Pipeline parallelism: `manim -ql scenes/pp.py PipelineParallel` or `dtfilm render pp`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.draw_plan import DrawPlan
from dtfilm.scene import ChapterScene
from dtfilm.shots.plays import SHOTS


class PipelineParallel(ChapterScene):
    default_plan = DrawPlan("pp", SHOTS, Path(__file__).resolve().parent.parent)
