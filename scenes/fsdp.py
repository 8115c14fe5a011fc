"""FSDP: `manim -ql scenes/fsdp.py FullySharded` or `dtfilm render fsdp`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.draw_plan import DrawPlan
from dtfilm.scene import ChapterScene
from dtfilm.shots.plays import SHOTS


class FullySharded(ChapterScene):
    default_plan = DrawPlan("fsdp", SHOTS, Path(__file__).resolve().parent.parent)
