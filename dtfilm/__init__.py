"""dtfilm: explainer films about distributed training, rendered from YAML storyboards."""

from __future__ import annotations

from dtfilm.engine import start

__version__ = "0.1.0"

# Manim's import without scipy, wherever dtfilm imports it first: the engine's one import-time
# piece (dtfilm.engine.start), which must be in place before Manim is imported
start.install()
