"""3D parallelism: `manim -ql scenes/three_d.py ThreeD` or `dtfilm render 3d`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.scene import ChapterScene


class ThreeD(ChapterScene):
    chapter_id = "3d"
    project_root = Path(__file__).resolve().parent.parent
