"""Data parallelism: `manim -ql scenes/dp.py DataParallel` or `dtfilm render dp`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.draw_plan import DrawPlan
from dtfilm.scene import ChapterScene
from dtfilm.shots.plays import SHOTS


class DataParallel(ChapterScene):
    default_plan = DrawPlan("dp", SHOTS, Path(__file__).resolve().parent.parent)
