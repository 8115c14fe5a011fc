"""Sequence and context parallelism: `manim -ql scenes/cp.py ContextParallel` or `dtfilm render cp`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.scene import ChapterScene
from dtfilm.scene_brief import SceneBrief
from dtfilm.shots.plays import SHOTS


class ContextParallel(ChapterScene):
    default_brief = SceneBrief("cp", SHOTS, Path(__file__).resolve().parent.parent)
