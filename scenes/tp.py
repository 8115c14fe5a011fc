"""Tensor parallelism: `manim -ql scenes/tp.py TensorParallel` or `dtfilm render tp`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.scene import ChapterScene


class TensorParallel(ChapterScene):
    chapter_id = "tp"
    project_root = Path(__file__).resolve().parent.parent
