"""ChapterScene: a Manim Scene that plays a chapter's storyboard, shot by shot.

`manim -ql scenes/dp.py DataParallel` and `dtfilm render dp` both run this. Observers (the
layout and numbers checks) are called after every animation with the scene.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from manim import LEFT, RIGHT, UP, FadeIn, FadeOut, Indicate, Mobject, SurroundingRectangle, VGroup, config

from dtfilm.errors import DtfilmError
from dtfilm.numbers import Numbers
from dtfilm.onscreen.scene_state import ShotStart
from dtfilm.onscreen.screen import EMPTY, play_digest, screen_digest
from dtfilm.phrases import Phrase, TemplateError
from dtfilm.storyboard import Chapter, Shot, load_chapter
from dtfilm.storyboard.kinds import KINDS
from dtfilm.storyboard.marks import mark_seconds
from dtfilm.storyboard.timing import (
    CAPTION_EXIT_SECONDS,
    HOLD_SECONDS,
    LEAD_IN_SECONDS,
    TAIL_SECONDS,
    beat_seconds,
    narration_seconds,
)
from dtfilm.system.quiet_workers import stop_if_interrupted
from dtfilm.visuals import copying, family, paths
from dtfilm.visuals.fade import appear, vanish
from dtfilm.visuals.layers import StillLayerScene
from dtfilm.visuals.regions import regions
from dtfilm.visuals.stats import CountTo, Stat, StatsPanel
from dtfilm.visuals.text import label, wrapped
from dtfilm.visuals.theme import THEMES, Theme
from dtfilm.voice.cues import escaped, narration_cues
from dtfilm.voice.engine import VoiceSpec
from dtfilm.voice.track import ShotAudio, narration_track

copying.install()  # every copy a chapter makes (labels, transforms) is the quick one
paths.install()  # every outline's Cairo path is built once, then replayed
family.install()  # every family listed without generators

SLIDE_UNITS = 0.8  # what the voice names slides this far into place (ShotContext.reveal)
HIGHLIGHT_OPACITY = 0.28  # a highlighter's band (ShotContext.highlight): tints, never hides
HIGHLIGHT_Z = 10  # over the pieces it marks (opaque blocks would hide a band behind them)
# How far (scene units) a piece the voice names may swell past its edges (ShotContext.point_at):
# at 1.2x, dp's traffic bar (3.5 units wide) reached 0.35 units past its end, over its own name.
# At 0.12 the swell of wide pieces fell under what the eye (and pacing.py) sees move: pp's and
# cp's longest stills grew from 7.7 and 7.5 s to 9.7 and 10.3 s; at 0.18 they are 7.7 and 7.6 s
SWELL_UNITS = 0.18

Observer = Callable[["ChapterScene", str], None]
Facts = tuple[tuple[str, Any], ...]  # (name, value) pairs a handed-on piece was drawn for


@dataclass
class ShotRecord:
    """One shot as played: when, its subtitles' cues, and (with digests on) what it drew."""

    beat: str
    start: float  # seconds into the chapter
    start_screen: str = EMPTY  # the digest of the screen it starts from
    end_screen: str = EMPTY  # the digest of the screen it leaves (the next one's start)
    drawn: Any = field(default_factory=lambda: hashlib.blake2b(digest_size=16))  # every state it reaches
    end: float = 0.0
    cues: list[tuple[str, float, float]] = field(default_factory=list)  # text, start, end from its start
    wall_seconds: float = 0.0  # how long playing it took
    drawn_frames: bool = True  # False: played with its animations skipped
    # A shot drawn in parts (ChapterScene.draw_window): the digest of what it drew before each
    # animation, and whether it stopped at its window's end (a part but the last: its key and
    # cues are the last part's to tell, and join_parts checks its frames by these digests).
    prefixes: list[str] = field(default_factory=list)
    stopped: bool = False

    @property
    def drawn_digest(self) -> str:
        return str(self.drawn.hexdigest())


class WindowDrawn(Exception):
    """A shot's part but the last has drawn the animations that start in its window: the rest
    of the shot is the later parts' to draw, so this part plays no further."""


def swell(piece: Mobject, scale: float) -> float:
    """`scale`, or less for a piece so large that it would reach more than SWELL_UNITS past its edges."""
    span = max(piece.width, piece.height)
    return min(scale, 1.0 + 2.0 * SWELL_UNITS / span) if span > 0 else scale


class ShotContext:
    """What shot functions draw with: the scene, the theme, the chapter, shared furniture."""

    def __init__(self, scene: ChapterScene, chapter: Chapter, theme: Theme) -> None:
        self.scene = scene
        self.chapter = chapter
        self.numbers = chapter.numbers
        self.theme = theme
        self.regions = regions(theme)
        self.caption: VGroup | None = None
        self.header: Mobject | None = None
        self.stats: StatsPanel | None = None
        self.stage: dict[str, Mobject] = {}  # named pieces on screen, cleared by the next shot
        # pieces a later shot may take and keep, with the values each was drawn for
        self.handed: dict[str, Facts] = {}
        self.taken: set[str] = set()  # pieces this shot took (checked against its kind)
        self.track: dict[str, ShotAudio] = getattr(scene, "track", {})  # each shot's narration, spoken
        self.shot: Shot | None = None  # the shot playing, since when, and when its marks are said
        self.shot_start = 0.0
        self._mark_times: dict[str, float] | None = None

    # -- furniture -----------------------------------------------------------------------
    def open_shot(self, caption: Phrase | None, keep: tuple[str, ...] = (), clear_stats: bool = False) -> None:
        """How a shot starts: the last shot's pieces go (but `keep`), the header shows, the
        caption changes; `clear_stats` takes the stats away too."""
        self.clear_stage(keep=keep)
        self.show_header()
        if clear_stats:
            self.clear_stats()
        self.set_caption(caption)

    def show_header(self) -> None:
        if self.header is None:
            self.header = label(self.theme, self.chapter.title, self.theme.title_size, weight="BOLD")
            self.regions.header.place(self.header, UP + LEFT)
            self.scene.play(appear(self.header), run_time=0.6)

    def set_caption(self, phrase: Phrase | None, run_time: float = 0.6) -> None:
        """Swap the caption at the bottom (at most two lines)."""
        outgoing = [vanish(self.caption)] if self.caption is not None else []
        self.caption = None
        incoming = []
        if phrase is not None:
            self.caption = wrapped(self.theme, phrase, self.theme.caption_size, self.regions.caption.width)
            self.regions.caption.place(self.caption)
            incoming = [appear(self.caption, shift=UP * 0.1)]
        if outgoing or incoming:
            self.scene.play(*outgoing, *incoming, run_time=run_time)

    def set_stats(
        self, entries: list[tuple[str, Phrase, bool]], reserve: list[tuple[Phrase, ...]] | None = None
    ) -> None:
        """Show a new row of stats (name, value, emphasis), replacing any shown. `reserve`
        lists, per stat, the values it will count to later (their room is kept)."""
        reserve = reserve or [() for _ in entries]
        panel = StatsPanel(
            self.theme, [Stat(self.theme, n, v, e, r) for (n, v, e), r in zip(entries, reserve, strict=True)]
        )
        if self.header is not None:
            panel.clear_of(self.header.get_right()[0])
        if self.stats is not None:
            self.scene.play(vanish(self.stats), appear(panel), run_time=0.6)
        else:
            self.scene.play(appear(panel), run_time=0.6)
        self.stats = panel

    def set_sweep_stats(
        self, names: list[tuple[str, bool]], values: Callable[[Numbers], list[Phrase]], steps: tuple[Numbers, ...]
    ) -> None:
        """Stats for a sweep: the first step's values, with room kept for every step's."""
        every = [values(n) for n in steps]
        self.set_stats(
            [(name, every[0][i], emphasis) for i, (name, emphasis) in enumerate(names)],
            reserve=[tuple(v[i] for v in every) for i in range(len(names))],
        )

    def clear_stats(self) -> None:
        if self.stats is not None:
            self.scene.play(vanish(self.stats), run_time=0.4)
            self.stats = None

    def count_stats(self, values: list[Phrase], run_time: float = 1.2) -> list[CountTo]:
        """Animations counting each shown stat to its new value."""
        assert self.stats is not None
        return [CountTo(stat, v, run_time) for stat, v in zip(self.stats.stats, values, strict=True)]

    def clear_stage(self, keep: tuple[str, ...] = ()) -> None:
        going = [m for k, m in self.stage.items() if k not in keep]
        self.stage = {k: m for k, m in self.stage.items() if k in keep}
        self.handed = {k: f for k, f in self.handed.items() if k in keep}
        if going:
            self.scene.play(*[vanish(m) for m in going], run_time=0.6)

    # -- time ------------------------------------------------------------------------------------
    def spoken_seconds(self, shot: Shot) -> float:
        """How long the shot is spoken: its narration's audio (with the lead-in and the pause
        after), or without a voice its words at 150 a minute; at least its `duration`."""
        audio = self.track.get(shot.beat)
        said = LEAD_IN_SECONDS + audio.seconds + TAIL_SECONDS if audio else narration_seconds(shot.narration)
        return max(shot.duration or 0.0, said)

    def mark_seconds(self, name: str, share: float | None = None) -> float:
        """When the voice reaches the current shot's mark `name`, in seconds from the shot's start.
        A mark the narration lacks is at `share` of the narration, or placed by its kind's order
        of marks, spread evenly over it (one mark of two at its middle)."""
        shot = self.shot
        audio = self.track.get(shot.beat)
        lead = LEAD_IN_SECONDS if audio else 0.0
        if self._mark_times is None:
            spoken = [(s.start, s.end) for s in audio.sentences] if audio else None
            text = shot.narration.text if shot.narration else ""
            self._mark_times = mark_seconds(text, shot.marks, spoken)
        if name in self._mark_times:
            return lead + self._mark_times[name]
        order = list(KINDS[shot.kind].marks)
        assert name in order, f"shot kind {shot.kind!r} waits for [{name}] without declaring it in KINDS"
        said = audio.seconds if audio else narration_seconds(shot.narration)
        return lead + said * (share if share is not None else (order.index(name) + 1) / (len(order) + 1))

    def seconds_until(self, name: str) -> float:
        """How long until the voice reaches mark `name` (0 when it has already)."""
        return max(0.0, self.shot_start + self.mark_seconds(name) - self.scene.time)

    def until(self, name: str, share: float | None = None) -> None:
        """Wait until the voice reaches mark `name`: what plays next moves as it is said. Without
        the mark, wait for `share` of the narration (default: by the kind's order of marks)."""
        self.until_second(self.mark_seconds(name, share))

    def said_seconds(self) -> float:
        """When the voice finishes the current shot's narration, in seconds from its start."""
        audio = self.track.get(self.shot.beat)
        return LEAD_IN_SECONDS + audio.seconds if audio else narration_seconds(self.shot.narration)

    def until_second(self, seconds: float) -> None:
        """Wait until `seconds` after the shot's start (between two marks, say)."""
        wait = self.shot_start + seconds - self.scene.time
        if wait > 1 / 30:
            self.scene.wait(wait)

    def spread(self, first: str | None, last: str | None, step: int, steps: int) -> None:
        """Wait for the `step`-th of `steps` items named between marks `first` and `last` (None:
        the narration's start or end), spread evenly between them."""
        begin = self.mark_seconds(first) if first else 0.0
        end = self.mark_seconds(last) if last else self.said_seconds()
        self.until_second(begin + (end - begin) * step / max(steps, 1))

    def point_at(self, *pieces: Mobject, run_time: float = 0.9, scale: float = 1.2) -> None:
        """Draw the eye to what the voice names now: each piece swells in the accent colour
        and settles back, by `scale` but never more than SWELL_UNITS past its edges (so a wide
        piece swells less, and does not cover what is laid out beside it)."""
        self.scene.play(
            *[Indicate(p, color=self.theme.accent, scale_factor=swell(p, scale)) for p in pieces], run_time=run_time
        )

    def has_mark(self, name: str) -> bool:
        """Whether the current shot's narration holds mark `name`."""
        return any(mark == name for mark, _ in self.shot.marks)

    def reveal(self, *pieces: Mobject, at: str | None = None, run_time: float = 0.8, direction: Any = RIGHT) -> None:
        """Bring in what the voice names (at mark `at`, when given): it slides SLIDE_UNITS into
        place as it fades in, which the eye follows where a fade alone barely registers."""
        if at is not None:
            self.until(at)
        self.scene.play(*[appear(p, shift=direction * SLIDE_UNITS) for p in pieces], run_time=run_time)

    def highlight(self, *pieces: Mobject, across: bool = False, hold: float = 0.35) -> None:
        """A highlighter's band over what the voice names: a translucent band fades in over the
        pieces and out again. `across`: it spans the stage's width, as a table row's highlight."""
        bands = []
        for piece in pieces:
            band = SurroundingRectangle(piece, buff=0.1, corner_radius=0.06, stroke_width=0)
            if across:
                stage = self.regions.stage
                band.stretch_to_fit_width(stage.width).set_x((stage.left + stage.right) / 2)
            band.set_fill(self.theme.accent, opacity=HIGHLIGHT_OPACITY).set_z_index(HIGHLIGHT_Z)
            bands.append(band)
        self.scene.play(*[FadeIn(b) for b in bands], run_time=0.3)
        self.scene.wait(hold)
        self.scene.play(*[FadeOut(b) for b in bands], run_time=0.4)

    def start_shot(self, shot: Shot) -> None:
        self.shot, self.shot_start, self._mark_times = shot, self.scene.time, None
        self.taken = set()

    def beat_seconds(self, shot: Shot, beats: int, fixed_seconds: float, least: float, most: float) -> float:
        """Seconds for each of `beats` repeated steps, spread over the shot's spoken length."""
        return beat_seconds(self.spoken_seconds(shot), beats, fixed_seconds, least, most)

    # -- the hand-off between shots --------------------------------------------------------
    def leave(self, **pieces: Mobject) -> None:
        """Pieces left on screen for the next shot to clear."""
        self.stage.update(pieces)
        for name in pieces:
            self.handed.pop(name, None)

    def hand_on(self, name: str, piece: Mobject, facts: Facts) -> None:
        """A piece a later shot may take and keep on screen: `facts` are the values it shows
        (cards, link names, gauge sizes), so a shot drawn for other values never keeps it."""
        self.stage[name] = piece
        self.handed[name] = facts

    def take(self, name: str, facts: Facts) -> Mobject | None:
        """The piece `name` an earlier shot handed on, if it was drawn for these `facts`;
        otherwise None (a piece drawn for other values goes, and the shot draws its own)."""
        piece = self.stage.get(name)
        if piece is None:
            return None
        if self.handed.get(name) != facts:
            self.stage.pop(name)
            self.handed.pop(name, None)
            self.scene.play(vanish(piece), run_time=0.4)
            return None
        self.taken.add(name)
        return piece


class ChapterScene(StillLayerScene):
    """Plays the storyboard `chapter_id` from the project's storyboard/ folder."""

    chapter_id: ClassVar[str] = ""
    project_root: ClassVar[Path | None] = None
    overrides: ClassVar[dict[str, Any]] = {}
    theme_name: ClassVar[str | None] = None
    observers: ClassVar[list[Observer]] = []
    # Observers of a dry run's moments inside each animation (dtfilm.drawn.MOMENTS), besides its
    # end: what a counter shows on the way between two values. Drawing renders leave it empty.
    moment_observers: ClassVar[list[Observer]] = []
    loaded: ClassVar[Chapter | None] = None  # a chapter already loaded (dtfilm render, dry runs)
    voice: ClassVar[VoiceSpec | None] = None  # None: film.yaml's voice
    # Draw only these beats (a shot cache's stale shots; dtfilm render dp:ring): the others play
    # with their animations skipped, so each drawn shot starts from what they leave; the shots
    # after the last drawn one do not play. None: every beat.
    draw_beats: ClassVar[frozenset[str] | None] = None
    # Decides at each shot's start, from the digest of the screen it starts from, whether to draw
    # it (the shot cache's probes: the shots they miss); every shot plays. None: draw_beats decides.
    choose_drawn: ClassVar[Callable[[Shot, str], bool] | None] = None
    chapter_parts: ClassVar[dict[str, str]] = {}  # the chapter's key's parts (what probes hold)
    # Called after each shot with the next shot's index and the screen it would start from:
    # True when the cache holds every shot from there on (their probes, chained through the
    # screens each leaves), so the scene stops. None: every shot plays.
    rest_known: ClassVar[Callable[[int, str], bool] | None] = None
    # With one beat drawn: stop drawing frames this many seconds into it (a still needs no more).
    stop_after: ClassVar[float | None] = None
    # With one beat drawn: draw only the animations that start within this window (seconds into
    # the shot); the ones before play without frames, and the scene stops at the window's end
    # (WindowDrawn) unless it is the last. Processes drawing a shot's windows in parallel make
    # the shot's clip between them (dtfilm.schedule joins the parts).
    draw_window: ClassVar[tuple[float, float] | None] = None
    # Called at a drawing scene's start: the state to start from (dtfilm.scene_state), kept by an
    # earlier render at a later shot's start and checked against the screen it must show; the
    # shots before it do not play. None: from the first shot.
    start_from: ClassVar[Callable[[ChapterScene], ShotStart | None] | None] = None
    # Called at every shot's start but the first with its index and a function making the state
    # there, for the shot cache to keep (dtfilm.scene_state). None: nothing is kept.
    keep_start: ClassVar[Callable[[ChapterScene, int, Callable[[], ShotStart]], None] | None] = None
    digests: ClassVar[bool] = False  # record what each shot draws (ShotRecord: the shot cache's keys)
    with_sound: ClassVar[bool] = True  # Manim mixes the narration in (dtfilm render joins its own)

    def setup(self) -> None:
        self.chapter = self.loaded or load_chapter(self.chapter_id, dict(self.overrides), self.project_root)
        self.theme = THEMES[self.theme_name or self.chapter.film.theme]
        self.camera.background_color = self.theme.background
        self.shot_times: list[tuple[str, float, float]] = []  # beat, start, end (seconds)
        # beat, kind, seconds its animations take before any hold: the shortest the shot can be
        self.drawn_times: list[tuple[str, str, float]] = []
        self.current_beat = "setup"
        self.beat_start = 0.0
        self.records: dict[str, ShotRecord] = {}
        self.record: ShotRecord | None = None
        self.track = narration_track(self.chapter, self.voice or self.chapter.film.voice)
        self.draw_still_once()
        if self.draw_beats is not None or self.choose_drawn is not None:  # skipped shots need no pixels
            draw_frame = self.renderer.update_frame

            def update_frame(*args: Any, **kwargs: Any) -> None:
                if not self.renderer.skip_animations:
                    draw_frame(*args, **kwargs)

            self.renderer.update_frame = update_frame

    def play(self, *args: Any, **kwargs: Any) -> None:
        stop_if_interrupted()
        before = self.time
        if self.draw_window is not None and self.draw_beats == {self.current_beat}:
            first, last = self.draw_window
            if self.record is not None:
                self.record.prefixes.append(self.record.drawn_digest)
            if before - self.beat_start >= last:
                raise WindowDrawn
            self.renderer._original_skipping_status = before - self.beat_start < first
        super().play(*args, **kwargs)
        if self.renderer.skip_animations:  # skipped: advance the clock as drawing frames would
            self.renderer.time = before + self._drawn_clock()
        if self.digests and self.record is not None:
            self.record.drawn.update(play_digest(args, self.time - before))
            self.record.drawn.update(screen_digest(self.mobjects).encode())
        if self.stop_after is not None and self.draw_beats == {self.current_beat}:
            if self.time - self.beat_start >= self.stop_after:  # the rest plays without frames
                self.renderer._original_skipping_status = True
        for observer in self.observers:
            observer(self, self.current_beat)

    def play_internal(self, skip_rendering: bool = False) -> None:
        if self.moment_observers and self.renderer.skip_animations:
            from dtfilm.onscreen.drawn import MOMENTS

            # A skipped animation jumps to its end; step through the moments first (the
            # updaters' time adds up to the same run time, so the end is the same).
            run_time = self.get_run_time(self.animations)
            for share in MOMENTS:
                self.update_to_time(share * run_time)
                for observer in self.moment_observers:
                    observer(self, self.current_beat)
        super().play_internal(skip_rendering)

    def _drawn_clock(self) -> float:
        """How far drawing the last animation's frames moves the clock: Manim counts drawn time
        in whole frames (a wait's rounded down, an animation's up), skipped time exactly. So a
        shot skipped and the same shot drawn reach every moment at the same time, and the shots
        after them draw the same frames (and have the same keys)."""
        dt = 1 / self.camera.frame_rate
        if self.is_current_animation_frozen_frame():
            return int(self.duration / dt) * dt
        clock = 0.0
        for _ in np.arange(0, self.duration, 1 / config["frame_rate"]):
            clock += dt
        return clock

    def drawn_seconds(self) -> float:
        """Seconds of film drawn with frames so far (progress: skipped shots cost no frames)."""
        done = sum(r.end - r.start for r in self.records.values() if r.drawn_frames and r is not self.record)
        current = self.time - self.record.start if self.record is not None and self.record.drawn_frames else 0.0
        return done + current

    def construct(self) -> None:
        from dtfilm.shots import SHOTS

        ctx = ShotContext(self, self.chapter, self.theme)
        drawn = [s.beat for s in self.chapter.shots if self.draw_beats is None or s.beat in self.draw_beats]
        first = 0
        kept = self.start_from(self) if self.start_from is not None else None
        if kept is not None:
            first = kept.index
            self.resume(ctx, kept)
        start_screen = screen_digest(self.mobjects) if self.digests else EMPTY
        for shot in self.chapter.shots[first:]:
            if self.keep_start is not None and shot.index > 0:
                self.keep_start(self, shot.index, lambda index=shot.index: self.shot_start(ctx, index))
            draws = self.choose_drawn(shot, start_screen) if self.choose_drawn else shot.beat in drawn
            self.next_section(shot.beat, skip_animations=not draws)
            self.current_beat = shot.beat
            start = self.beat_start = self.time
            began = time.perf_counter()
            self.record = self.records[shot.beat] = ShotRecord(shot.beat, start, start_screen)
            self.record.drawn_frames = draws
            ctx.start_shot(shot)
            audio = self.track.get(shot.beat)
            if audio is not None and self.with_sound and self.draw_beats is None:
                self.add_sound(str(audio.path), time_offset=LEAD_IN_SECONDS)
            try:
                SHOTS[shot.kind](ctx, shot)
            except TemplateError as error:  # a template inside shot code: one line, naming the shot
                raise DtfilmError(f"shot kind {shot.kind!r}: {error}", shot.where, f"shots[{shot.index}]") from None
            except WindowDrawn:
                self.record.stopped = True
                self.record.wall_seconds = time.perf_counter() - began
                self._end_section()
                return
            check_handoff(shot.kind, ctx)
            self.drawn_times.append((shot.beat, shot.kind, self.time - start))
            hold = max(HOLD_SECONDS, ctx.spoken_seconds(shot) - (self.time - start))
            if ctx.caption is not None:  # the shot's own exit: its words go with it, so the
                # next shot starts from a screen that holds only pieces drawn from numbers
                self.wait(hold - CAPTION_EXIT_SECONDS)
                ctx.set_caption(None, run_time=CAPTION_EXIT_SECONDS)
            else:
                self.wait(hold)
            if shot.narration is not None:  # cues per sentence or phrase, as it is spoken
                spoken = [(s.written, s.start, s.end) for s in audio.sentences] if audio else None
                lead = LEAD_IN_SECONDS if audio else 0.0
                for cue in narration_cues(shot.narration.text, spoken, start + lead, self.time - start):
                    self.add_subcaption(escaped(cue.text), duration=cue.end - cue.start, offset=cue.start - self.time)
                    self.record.cues.append((escaped(cue.text), cue.start - start, cue.end - start))
            self.record.end = self.time
            start_screen = self.record.end_screen = screen_digest(self.mobjects) if self.digests else EMPTY
            self.record.wall_seconds = time.perf_counter() - began
            self.shot_times.append((shot.beat, start, self.time))
            if shot.beat == drawn[-1] and self.draw_beats is not None and self.choose_drawn is None:
                self._end_section()
                following = shot.index + 1
                # The state the next shot starts from, kept: drawn next, it needs no shot played
                # first. (Not by a window of a shot: pickling the dp ring's last screen took 0.2 s,
                # on the path of the render's wall time that windows are there to cut.)
                if self.keep_start is not None and self.draw_window is None and following < len(self.chapter.shots):
                    self.keep_start(self, following, lambda index=following: self.shot_start(ctx, index))
                return
            if self.rest_known is not None and self.rest_known(shot.index + 1, start_screen):
                return
        ctx.set_caption(None)

    def _end_section(self) -> None:
        """The last drawn shot's section is its clip; none when no animation started in its window."""
        section = self.renderer.file_writer.sections[-1]
        if not section.get_clean_partial_movie_files():
            section.video = None

    def shot_start(self, ctx: ShotContext, index: int) -> ShotStart:
        """The state shot `index` starts from: what is on screen, what the context keeps between
        shots, and the clock."""
        return ShotStart(
            index, self.time, list(self.mobjects), ctx.header, ctx.stats, ctx.caption, ctx.stage, ctx.handed
        )

    def resume(self, ctx: ShotContext, kept: ShotStart) -> None:
        """Start from a state kept at a shot's start instead of playing the shots before it."""
        self.add(*kept.mobjects)
        self.renderer.time = kept.time
        ctx.header, ctx.stats, ctx.caption = kept.header, kept.stats, kept.caption
        ctx.stage, ctx.handed = dict(kept.stage), dict(kept.handed)


def check_handoff(kind: str, ctx: ShotContext) -> None:
    """A shot takes and hands on only the pieces its kind declares (`dtfilm kinds` shows them)."""
    spec = KINDS[kind]
    undeclared = sorted(set(ctx.taken) - set(spec.takes)) + sorted(
        name for name in ctx.handed if name not in spec.hands_on and name not in ctx.taken
    )
    if undeclared:
        raise AssertionError(f"shot kind {kind!r} passes {undeclared} between shots without declaring it in KINDS")


def chapter_scene_class(chapter: Chapter, theme: str | None = None) -> type[ChapterScene]:
    """A ChapterScene subclass that plays an already loaded chapter (what `dtfilm render` plays)."""
    return type(
        f"Chapter_{chapter.id.replace('-', '_')}",
        (ChapterScene,),
        {"chapter_id": chapter.id, "loaded": chapter, "theme_name": theme, "observers": [], "moment_observers": []},
    )
