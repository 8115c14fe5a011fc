"""SceneBrief: everything a ChapterScene is told about one drawing, frozen and handed to it whole."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (types only: the brief is made where Manim need not be loaded)
    from dtfilm.onscreen.scene_state import ShotStart
    from dtfilm.scene import ChapterScene, ShotContext
    from dtfilm.storyboard import Chapter, Shot
    from dtfilm.system.quality import Quality
    from dtfilm.voice.engine import VoiceSpec

Observer = Callable[["ChapterScene", str], None]
ShotFunction = Callable[["ShotContext", "Shot"], None]


@dataclass(frozen=True)
class SceneBrief:
    """Which chapter a scene plays, with which shot kinds, look and voice; which of its shots it
    draws, in which windows, from which kept state; and who watches. Made once by whoever draws
    (dtfilm.render.shot_render, dtfilm.check.inspect, dtfilm.render.one_shot, a scenes/ file) and read, never
    changed, by the scene: `ChapterScene(brief)`."""

    chapter_id: str
    # The kinds' draw functions by kind (dtfilm.shots.SHOTS), handed in: the scene imports no shot.
    shots: Mapping[str, ShotFunction]
    project_root: Path | None = None  # None: the storyboard found from the working folder
    overrides: Mapping[str, Any] = field(default_factory=dict)  # the input flags
    loaded: Chapter | None = None  # the chapter already loaded (dtfilm render, dry runs); None: load it
    theme_name: str | None = None  # None: film.yaml's theme
    # The quality drawn at (its Manim settings are the drawing's config; its name is the keys'
    # `quality` part). None: Manim's config as it stands (a scenes/ file under `manim -ql`).
    quality: Quality | None = None
    # The voice the narration is spoken with, handed on from the process that read the user's
    # choice (--voice, DTFILM_VOICE or film.yaml). None: the loaded chapter's film's.
    voice: VoiceSpec | None = None
    # Called after every animation with the scene and the beat (the layout and numbers checks).
    observers: tuple[Observer, ...] = ()
    # Observers of a dry run's moments inside each animation (dtfilm.onscreen.drawn.MOMENTS), besides its
    # end: what a counter shows on the way between two values. Drawing renders leave it empty.
    moment_observers: tuple[Observer, ...] = ()
    # Draw only these beats (a shot cache's stale shots; dtfilm render dp:ring): the others play
    # with their animations skipped, so each drawn shot starts from what they leave; the shots
    # after the last drawn one do not play. None: every beat.
    draw_beats: frozenset[str] | None = None
    # Decides at each shot's start, from the digest of the screen it starts from, whether to draw
    # it (the shot cache's probes: the shots they miss); every shot plays. None: draw_beats decides.
    choose_drawn: Callable[[ChapterScene, Shot, str], bool] | None = None
    chapter_parts: Mapping[str, str] = field(default_factory=dict)  # the chapter's key's parts (what probes hold)
    # Called after each shot with the next shot's index and the screen it would start from:
    # True when the cache holds every shot from there on (their probes, chained through the
    # screens each leaves), so the scene stops. None: every shot plays.
    rest_known: Callable[[ChapterScene, int, str], bool] | None = None
    # With one beat drawn: stop drawing frames this many seconds into it (a still needs no more).
    stop_after: float | None = None
    # With one beat drawn: draw only the animations that start within this window (seconds into
    # the shot); the ones before play without frames, and the scene stops at the window's end
    # (WindowDrawn) unless it is the last. Processes drawing a shot's windows in parallel make
    # the shot's clip between them (dtfilm.render.schedule joins the parts).
    draw_window: tuple[float, float] | None = None
    # Called at a drawing scene's start: the state to start from (dtfilm.onscreen.scene_state), kept by an
    # earlier render at a later shot's start and checked against the screen it must show; the
    # shots before it do not play. None: from the first shot.
    start_from: Callable[[ChapterScene], ShotStart | None] | None = None
    # Called at every shot's start but the first with its index and a function making the state
    # there, for the shot cache to keep (dtfilm.onscreen.scene_state). None: nothing is kept.
    keep_start: Callable[[ChapterScene, int, Callable[[], ShotStart]], None] | None = None
    # The narration track already made for this chapter and voice (a check's keys needed it
    # first: dtfilm.check.reuse); None: the scene makes it.
    track: Mapping[str, Any] | None = None
    # Called with the scene and the beat when a shot has shown everything, before its caption
    # leaves (dtfilm preview draws that moment's frame). None: nobody is told.
    at_shot_end: Observer | None = None
    digests: bool = False  # record what each shot draws (ShotRecord: the shot cache's keys)
    with_sound: bool = True  # Manim mixes the narration in (dtfilm render joins its own)


def chapter_brief(
    chapter: Chapter, shots: Mapping[str, ShotFunction], theme: str | None = None, **fields: Any
) -> SceneBrief:
    """The brief for playing an already loaded chapter (what `dtfilm render` plays), with `fields` set."""
    return SceneBrief(chapter.id, shots, loaded=chapter, theme_name=theme, **fields)
