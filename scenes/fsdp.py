"""FSDP: `manim -ql scenes/fsdp.py FullySharded` or `dtfilm render fsdp`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.scene import ChapterScene


class FullySharded(ChapterScene):
    chapter_id = "fsdp"
    project_root = Path(__file__).resolve().parent.parent
