"""dtfilm: explainer films about distributed training, rendered from YAML storyboards."""

from __future__ import annotations

__version__ = "0.1.0"
