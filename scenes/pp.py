"""Pipeline parallelism: `manim -ql scenes/pp.py PipelineParallel` or `dtfilm render pp`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.scene import ChapterScene


class PipelineParallel(ChapterScene):
    chapter_id = "pp"
    project_root = Path(__file__).resolve().parent.parent
