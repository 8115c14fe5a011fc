"""Why distributed training: `manim -ql scenes/why.py WhyDistributed` or `dtfilm render why`."""

from __future__ import annotations

from pathlib import Path

from dtfilm.scene import ChapterScene
from dtfilm.scene_brief import SceneBrief
from dtfilm.shots.plays import SHOTS


class WhyDistributed(ChapterScene):
    default_brief = SceneBrief("why", SHOTS, Path(__file__).resolve().parent.parent)
