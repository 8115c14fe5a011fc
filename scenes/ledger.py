"""The memory ledger: `manim -ql scenes/ledger.py MemoryLedger` or `dtfilm render ledger`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.scene import ChapterScene


class MemoryLedger(ChapterScene):
    chapter_id = "ledger"
    project_root = Path(__file__).resolve().parent.parent
