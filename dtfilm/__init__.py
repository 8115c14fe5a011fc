"""dtfilm: explainer films about distributed training, rendered from YAML storyboards."""

from __future__ import annotations

from dtfilm import manim_start

__version__ = "0.1.0"

manim_start.install()  # Manim's import without scipy, wherever dtfilm imports it first
