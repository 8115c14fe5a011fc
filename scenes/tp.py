"""Tensor parallelism: `manim -ql scenes/tp.py TensorParallel` or `dtfilm render tp`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.draw_plan import DrawPlan
from dtfilm.scene import ChapterScene
from dtfilm.shots.plays import SHOTS


class TensorParallel(ChapterScene):
    default_plan = DrawPlan("tp", SHOTS, Path(__file__).resolve().parent.parent)
