"""Sequence and context parallelism: `manim -ql scenes/cp.py ContextParallel` or `dtfilm render cp`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.scene import ChapterScene


class ContextParallel(ChapterScene):
    chapter_id = "cp"
    project_root = Path(__file__).resolve().parent.parent
