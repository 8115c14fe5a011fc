"""RenderJob: what a render is asked to make, as one frozen value handed down whole, from the run
that read the user's flags and film.yaml (render.stale.find_work) to every process drawing its
shots (render.schedule, render.shot_render, render.cluster and its workers)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dtfilm.voice.engine import VoiceSpec


@dataclass(frozen=True)
class RenderJob:
    """The project, the input flags, the quality, where the renders go, the theme and the voice."""

    root: Path  # the project (its storyboard/)
    overrides: dict[str, Any]  # the input flags
    quality: str
    out_dir: Path  # where the clips, the manifest and the shot cache go
    theme: str  # the theme drawn in (the user's --theme, else film.yaml's)
    # The voice the render speaks with, as the run read the user's choice (--voice, DTFILM_VOICE,
    # film.yaml) at the command's start: handed to every drawing process. None: the film's, as
    # loaded where it draws.
    voice: VoiceSpec | None = None
