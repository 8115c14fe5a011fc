"""Data parallelism: `manim -ql scenes/dp.py DataParallel` or `dtfilm render dp`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.scene import ChapterScene


class DataParallel(ChapterScene):
    chapter_id = "dp"
    project_root = Path(__file__).resolve().parent.parent
