"""Why distributed training: `manim -ql scenes/why.py WhyDistributed` or `dtfilm render why`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.scene import ChapterScene


class WhyDistributed(ChapterScene):
    chapter_id = "why"
    project_root = Path(__file__).resolve().parent.parent
