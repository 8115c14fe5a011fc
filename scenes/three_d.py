"""3D parallelism: `manim -ql scenes/three_d.py ThreeD` or `dtfilm render 3d`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.scene import ChapterScene
from dtfilm.scene_brief import SceneBrief
from dtfilm.shots.plays import SHOTS


class ThreeD(ChapterScene):
    default_brief = SceneBrief("3d", SHOTS, Path(__file__).resolve().parent.parent)
