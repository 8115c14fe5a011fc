"""FSDP: `manim -ql scenes/fsdp.py FullySharded` or `dtfilm render fsdp`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.scene import ChapterScene
from dtfilm.scene_brief import SceneBrief
from dtfilm.shots.plays import SHOTS


class FullySharded(ChapterScene):
    default_brief = SceneBrief("fsdp", SHOTS, Path(__file__).resolve().parent.parent)
