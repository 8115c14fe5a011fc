"""RenderJob: what a render is asked to make, as one frozen value handed down whole, from the run
that read the user's flags and film.yaml (render.stale.find_work) to every process drawing its
shots (render.schedule, render.shot_render, render.cluster and its workers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dtfilm.voice.engine import VoiceSpec

if TYPE_CHECKING:
    from dtfilm.storyboard import Film


@dataclass(frozen=True)
class RenderRequest:
    """What a command asks to render, as its flags give it and before film.yaml fills it in: the
    input flags, the quality, the renders folder (None: the project's renders/) and the theme
    (None: film.yaml's). Handed whole from the command line to render, status, a single shot, a
    still and --watch; `job` resolves it into the RenderJob every drawing process is handed."""

    overrides: dict[str, Any] = field(default_factory=dict)
    quality: str = "preview"
    out_dir: Path | None = None
    theme: str | None = None

    def job(self, root: Path, film: Film) -> RenderJob:
        """The job this request asks for in the project `root`, whose film is `film`."""
        return RenderJob(
            root, dict(self.overrides), self.quality, self.renders(root), self.theme or film.theme, film.voice
        )

    def renders(self, root: Path) -> Path:
        """The renders folder: the one asked for, else the project's renders/."""
        return self.out_dir or root / "renders"


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

    def request(self) -> RenderRequest:
        """The request that resolves to this job (its theme and folder as resolved)."""
        return RenderRequest(self.overrides, self.quality, self.out_dir, self.theme)
