"""The memory ledger: `manim -ql scenes/ledger.py MemoryLedger` or `dtfilm render ledger`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.scene import ChapterScene
from dtfilm.scene_brief import SceneBrief
from dtfilm.shots.plays import SHOTS


class MemoryLedger(ChapterScene):
    default_brief = SceneBrief("ledger", SHOTS, Path(__file__).resolve().parent.parent)
