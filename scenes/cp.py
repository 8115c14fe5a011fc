"""Sequence and context parallelism: `manim -ql scenes/cp.py ContextParallel` or `dtfilm render cp`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.draw_plan import DrawPlan
from dtfilm.scene import ChapterScene
from dtfilm.shots.plays import SHOTS


class ContextParallel(ChapterScene):
    default_plan = DrawPlan("cp", SHOTS, Path(__file__).resolve().parent.parent)
