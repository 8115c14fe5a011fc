"""Data parallelism: `manim -ql scenes/dp.py DataParallel` or `dtfilm render dp`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.scene import ChapterScene
from dtfilm.scene_brief import SceneBrief
from dtfilm.shots.plays import SHOTS


class DataParallel(ChapterScene):
    default_brief = SceneBrief("dp", SHOTS, Path(__file__).resolve().parent.parent)
