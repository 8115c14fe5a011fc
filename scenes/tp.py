"""Tensor parallelism: `manim -ql scenes/tp.py TensorParallel` or `dtfilm render tp`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.scene import ChapterScene
from dtfilm.scene_brief import SceneBrief
from dtfilm.shots.plays import SHOTS


class TensorParallel(ChapterScene):
    default_brief = SceneBrief("tp", SHOTS, Path(__file__).resolve().parent.parent)
