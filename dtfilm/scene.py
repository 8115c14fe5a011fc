"""ChapterScene: a Manim Scene that plays a chapter's storyboard, shot by shot.

`manim -ql scenes/dp.py DataParallel` and `dtfilm render dp` both run this. Observers (the
layout and numbers checks) are called after every animation with the scene.
"""

# Over 400 lines: ShotContext, the API every shot kind plays through; split it together with dtfilm/shots/

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from manim import (
    LEFT,
    RIGHT,
    UP,
    Animation,
    AnimationGroup,
    FadeIn,
    FadeOut,
    Indicate,
    Mobject,
    ReplacementTransform,
    Succession,
    SurroundingRectangle,
    VGroup,
)

from dtfilm.engine.scene import FilmScene
from dtfilm.errors import DtfilmError
from dtfilm.numbers import Numbers
from dtfilm.onscreen.drawn import MOMENTS
from dtfilm.onscreen.layout import texts_meet
from dtfilm.onscreen.scene_state import ShotStart
from dtfilm.onscreen.screen import EMPTY, play_digest, screen_digest
from dtfilm.phrases import Phrase, TemplateError
from dtfilm.scene_brief import SceneBrief
from dtfilm.shots.registry import KINDS
from dtfilm.storyboard import Chapter, Shot, load_chapter
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
from dtfilm.visuals.fade import appear, swap, vanish
from dtfilm.visuals.regions import Region, regions
from dtfilm.visuals.stats import CountTo, Stat, StatsPanel
from dtfilm.visuals.text import label, wrapped
from dtfilm.visuals.theme import THEMES, Theme
from dtfilm.voice.cues import escaped, narration_cues
from dtfilm.voice.track import ShotAudio, narration_track

SLIDE_UNITS = 0.8  # what the voice names slides this far into place (ShotContext.reveal)
HIGHLIGHT_OPACITY = 0.28  # a highlighter's band (ShotContext.highlight): tints, never hides
HIGHLIGHT_Z = 10  # over the pieces it marks (opaque blocks would hide a band behind them)
HIGHLIGHT_BUFF = 0.1  # a band's margin round what it marks, on every side
RELIGHT_SECONDS = 2.0  # a wait this long or longer for the next mark is split by a highlight (relight)
POINT_SECONDS = 1.0  # a piece's point (0.9 s) fits in this (point_in_turn)
POINT_AND_ROW_SECONDS = 1.8  # a piece's point (0.9 s) and its row's band (0.8 s) fit in this (point_in_turn)
# How far (scene units) a piece the voice names may swell past its edges (ShotContext.point_at):
# at 1.2x, dp's traffic bar (3.5 units wide) reached 0.35 units past its end, over its own name.
# At 0.12 the swell of wide pieces fell under what the eye (and pacing.py) sees move: pp's and
# cp's longest stills grew from 7.7 and 7.5 s to 9.7 and 10.3 s; at 0.18 they are 7.7 and 7.6 s
SWELL_UNITS = 0.18

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
    # A shot drawn in parts (SceneBrief.draw_window): the digest of what it drew before each
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


def highlight_band(piece: Mobject, colour: str, across: Region | None = None) -> SurroundingRectangle:
    """A highlighter's band over `piece`, HIGHLIGHT_BUFF round it on every side; `across`, it
    spans that region's width as well (a table row's band), and still reaches past a piece that
    ends at the region's edge: a band ending flush with the last letter reads as text cut off
    (issue 58: dp's 'exposed, 123 µs', right-aligned to the stage, looked cropped at its 's')."""
    band = SurroundingRectangle(piece, buff=HIGHLIGHT_BUFF, corner_radius=0.06, stroke_width=0)
    if across is not None:
        left = min(across.left, piece.get_left()[0] - HIGHLIGHT_BUFF)
        right = max(across.right, piece.get_right()[0] + HIGHLIGHT_BUFF)
        band.stretch_to_fit_width(right - left).set_x((left + right) / 2)
    band.set_fill(colour, opacity=HIGHLIGHT_OPACITY).set_z_index(HIGHLIGHT_Z)
    return band


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
    def open_shot(
        self, caption: Phrase | None, keep: tuple[str, ...] = (), clear_stats: bool = False, clear: bool = True
    ) -> None:
        """How a shot starts: the last shot's pieces go (but `keep`), the header shows, the
        caption changes; `clear_stats` takes the stats away too. `clear=False`: the shot clears
        the stage itself, its own pieces arriving as the last shot's go (`clear_stage`)."""
        if clear:
            self.clear_stage(keep=keep)
        self.show_header()
        if clear_stats:
            self.clear_stats()
        self.set_caption(caption)

    def show_header(self) -> None:
        if self.header is None:
            self.header = self._header_label()
            self.scene.play(appear(self.header), run_time=0.6)

    def header_from(self, title: Mobject, *entering: Animation, run_time: float = 1.2) -> None:
        """The title card's title becomes the header: it shrinks into the header's corner while
        `entering` (the chapter's first picture) plays, so the stage is the picture's as the voice
        goes on, where a title card held past its sentence stood on an empty stage (issue 58)."""
        header = self._header_label()
        self.scene.play(ReplacementTransform(title, header), *entering, run_time=run_time)
        self.header = header

    def _header_label(self) -> Mobject:
        header = label(self.theme, self.chapter.title, self.theme.title_size, weight="BOLD")
        header.text_layer = "title"  # (the design check's layers: dtfilm.onscreen.design)
        return self.regions.header.place(header, UP + LEFT)

    def set_caption(self, phrase: Phrase | None, *also: Animation, run_time: float = 0.6) -> None:
        """Swap the caption at the bottom (at most two lines), with the animations `also` (the
        picture the caption comes to describe)."""
        outgoing = [vanish(self.caption)] if self.caption is not None else []
        self.caption = None
        incoming = []
        if phrase is not None:
            self.caption = wrapped(self.theme, phrase, self.theme.caption_size, self.regions.caption.width)
            self.caption.text_layer = "caption"
            self.regions.caption.place(self.caption)
            incoming = [appear(self.caption, shift=UP * 0.1)]
        if outgoing or incoming or also:
            self.scene.play(*outgoing, *incoming, *also, run_time=run_time)

    def show_legend(self, legend: Mobject, *also: Any, run_time: float = 0.6) -> None:
        """The memory legend in (with the animations `also`), and the caption out: with the
        counters and the picture's labels the two made four layers of text, where issue 58 allows
        three besides the title. For a legend that comes late in a shot, once its caption has
        been read (pipeline's stages: the verdict on the busiest card, 15 s into the shot)."""
        going = [vanish(self.caption)] if self.caption is not None else []
        self.caption = None
        self.scene.play(appear(legend), *also, *going, run_time=run_time)

    def caption_after_legend(self, phrase: Phrase | None, legend: Mobject, *also: Any, run_time: float = 0.6) -> None:
        """The memory legend out and the caption in (with the animations `also`): the other order
        of `show_legend`, for a shot whose legend names the parts as they are drawn and whose
        caption is its verdict (dp's memory: the caption had 1.2 s before the legend came)."""
        self.caption = None
        incoming = []
        if phrase is not None:
            self.caption = wrapped(self.theme, phrase, self.theme.caption_size, self.regions.caption.width)
            self.caption.text_layer = "caption"
            self.regions.caption.place(self.caption)
            incoming = [appear(self.caption, shift=UP * 0.1)]
        self.scene.play(vanish(legend), *also, *incoming, run_time=run_time)

    def set_stats(
        self, entries: list[tuple[str | Phrase, Phrase, bool]], reserve: list[tuple[Phrase, ...]] | None = None
    ) -> None:
        """Show a new row of stats (name, value, emphasis), replacing any shown. `reserve`
        lists, per stat, the values it will count to later (their room is kept)."""
        reserve = reserve or [() for _ in entries]
        panel = StatsPanel(
            self.theme, [Stat(self.theme, n, v, e, r) for (n, v, e), r in zip(entries, reserve, strict=True)]
        )
        if self.header is not None:
            panel.clear_of(self.header.get_right()[0])
        # the old row gives way to the new, never both at once (a cross-fade stacked ep's "1.5× the
        # mean" over "58.7 MB": a lecturer's review)
        self.scene.play(swap(self.stats, panel), run_time=0.6)
        self.stats = panel

    def set_sweep_stats(
        self,
        names: list[tuple[str, bool]],
        values: Callable[[Numbers], list[Phrase]],
        steps: tuple[Numbers, ...],
        later: tuple[list[Phrase], ...] = (),
    ) -> None:
        """Stats for a sweep: the first step's values, with room kept for every step's (and for
        `later`'s, values counted to after the sweep)."""
        every = [values(n) for n in steps] + list(later)
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
        if self.stats is None:  # the kind's code counts before it set any: one line, not an assert -O drops
            raise DtfilmError(
                f"shot kind {self.shot.kind!r} counts its stats before it sets any (ctx.set_stats)",
                self.shot.where,
                f"shots[{self.shot.index}]",
            )
        return [CountTo(stat, v, run_time) for stat, v in zip(self.stats.stats, values, strict=True)]

    def clear_stage(self, keep: tuple[str, ...] = (), *entering: Animation, run_time: float = 0.6) -> None:
        """The last shot's pieces go (but `keep`); `entering`, the next pieces' arrival, plays
        with their exit, so the frame is never left empty between the two (issue 58: 2). Where a
        text going and a text coming stand in one place, the two would be drawn over each other
        halfway (a cross-fade's stack: fsdp's "… and back to layer 1 of 32" over "Data
        parallel"): then the last pieces go in the first half and the next come in the second."""
        going = [m for k, m in self.stage.items() if k not in keep]
        self.stage = {k: m for k, m in self.stage.items() if k in keep}
        self.handed = {k: f for k, f in self.handed.items() if k in keep}
        leaving = [vanish(m) for m in going]
        if leaving and entering and texts_meet(going, [a.mobject for a in entering]):
            self.scene.play(Succession(AnimationGroup(*leaving), AnimationGroup(*entering)), run_time=run_time)
        elif leaving or entering:
            self.scene.play(*leaving, *entering, run_time=run_time)

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
        if name not in order:  # the kind's code and its spec disagree: one line, not an assert -O drops
            declared = ", ".join(f"[{mark}]" for mark in order) or "none"
            raise DtfilmError(
                f"shot kind {shot.kind!r} waits for [{name}], a mark its spec does not declare; declared: {declared}",
                shot.where,
                f"shots[{shot.index}]",
            )
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

    def next_mark(self, mark: str) -> str | None:
        """The mark the current shot's narration reaches after `mark` (None: it is the last)."""
        names = [name for name, _ in sorted(self.shot.marks, key=lambda m: m[1])]
        after = names.index(mark) + 1
        return names[after] if after < len(names) else None

    def point_in_turn(self, pieces: Sequence[Mobject], mark: str, row: Mobject, scale: float = 1.2) -> None:
        """The voice names a row's pieces from mark `mark` to the next (or its end): each is
        pointed at in turn, spread over that span, the row lit with each where the voice leaves
        room (a piece alone can be a sliver at 480p), else lit once where the voice stays on it.
        Where the span leaves not even a point's time for each (many pieces said in one breath
        would run the next mark late), the pieces are not pointed at: the row is lit instead."""
        following = self.next_mark(mark)
        end = self.mark_seconds(following) if following else self.said_seconds()
        room = (end - self.mark_seconds(mark)) / max(len(pieces), 1)
        for j, piece in enumerate(pieces if room >= POINT_SECONDS else []):
            self.spread(mark, following, j, len(pieces))
            self.point_at(piece, scale=scale)
            if room >= POINT_AND_ROW_SECONDS:  # never past the next mark: the shot keeps its length
                self.highlight(row, across=True, hold=0.2)
        if room < POINT_AND_ROW_SECONDS:
            self.relight(row, across=True)

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
        stage = self.regions.stage if across else None
        bands = [highlight_band(piece, self.theme.accent, stage) for piece in pieces]
        self.scene.play(*[FadeIn(b) for b in bands], run_time=0.3)
        self.scene.wait(hold)
        self.scene.play(*[FadeOut(b) for b in bands], run_time=0.4)

    def relight(
        self, *pieces: Mobject, across: bool = False, least: float = RELIGHT_SECONDS, by: float | None = None
    ) -> None:
        """The voice stays on what was just lit until its next mark (or its end; `by`, seconds
        into the shot, where the shot moves on at a time of its own): where that leaves `least`
        seconds or more, the pieces are lit again halfway there, so the picture does not stand
        still while the voice is still on them (issue 58: speech over stills)."""
        elapsed = self.scene.time - self.shot_start
        after = [t for m, _ in self.shot.marks if (t := self.mark_seconds(m)) > elapsed + 0.05]
        until = by if by is not None else min(after, default=self.said_seconds())
        if until - elapsed >= least:
            self.until_second((elapsed + until) / 2)
            self.highlight(*pieces, across=across)

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


class ChapterScene(FilmScene):
    """Plays a chapter's storyboard as its SceneBrief says (dtfilm.scene_brief): the brief is handed
    to the scene, `ChapterScene(brief)`, or is a scenes/ file's `default_brief`."""

    # A scenes/ file's brief (`manim -ql scenes/dp.py DataParallel` makes the scene with none).
    default_brief: ClassVar[SceneBrief | None] = None

    def __init__(self, brief: SceneBrief | None = None, **kwargs: Any) -> None:
        chosen = brief if brief is not None else self.default_brief
        if chosen is None:
            raise TypeError(f"{type(self).__name__} needs a SceneBrief: ChapterScene(brief), or a default_brief")
        self.brief: SceneBrief = chosen
        super().__init__(**kwargs)

    def setup(self) -> None:
        brief = self.brief
        self.chapter = brief.loaded or load_chapter(brief.chapter_id, dict(brief.overrides), brief.project_root)
        self.theme = THEMES[brief.theme_name or self.chapter.film.theme]
        self.camera.background_color = self.theme.background
        self.shot_times: list[tuple[str, float, float]] = []  # beat, start, end (seconds)
        # beat, kind, seconds its animations take before any hold: the shortest the shot can be
        self.drawn_times: list[tuple[str, str, float]] = []
        self.current_beat = "setup"
        # which screen the observers are shown: one more each time they are called, so that what
        # they all ask of one screen is found once (dtfilm.onscreen.layout.pieces_on_screen)
        self.observed = 0
        self.beat_start = 0.0
        self.records: dict[str, ShotRecord] = {}
        self.record: ShotRecord | None = None
        made = brief.track
        self.track = (
            dict(made) if made is not None else narration_track(self.chapter, brief.voice or self.chapter.film.voice)
        )
        if brief.draw_beats is not None or brief.choose_drawn is not None:  # skipped shots need no pixels
            self.renderer.draw_no_pixels_when_skipped()

    def play(self, *args: Any, **kwargs: Any) -> None:
        stop_if_interrupted()
        before = self.time
        brief = self.brief
        if brief.draw_window is not None and brief.draw_beats == {self.current_beat}:
            first, last = brief.draw_window
            if self.record is not None:
                self.record.prefixes.append(self.record.drawn_digest)
            if before - self.beat_start >= last:
                raise WindowDrawn
            self.renderer.skip_frames(before - self.beat_start < first)
        super().play(*args, **kwargs)  # (a skipped animation's clock as drawn: FilmRenderer.play)
        if brief.digests and self.record is not None:
            self.record.drawn.update(play_digest(args, self.time - before))
            self.record.drawn.update(screen_digest(self.mobjects).encode())
        if brief.stop_after is not None and brief.draw_beats == {self.current_beat}:
            if self.time - self.beat_start >= brief.stop_after:  # the rest plays without frames
                self.renderer.skip_frames(True)
        self.observed += 1
        for observer in brief.observers:
            observer(self, self.current_beat)

    def moments(self) -> tuple[float, ...]:
        """A dry run's moments inside each skipped animation (dtfilm.onscreen.drawn.MOMENTS), when
        something observes them."""
        if not self.brief.moment_observers:
            return ()

        return tuple(MOMENTS)

    def at_moment(self) -> None:
        self.observed += 1
        for observer in self.brief.moment_observers:
            observer(self, self.current_beat)

    def drawn_seconds(self) -> float:
        """Seconds of film drawn with frames so far (progress: skipped shots cost no frames)."""
        done = sum(r.end - r.start for r in self.records.values() if r.drawn_frames and r is not self.record)
        current = self.time - self.record.start if self.record is not None and self.record.drawn_frames else 0.0
        return done + current

    def construct(self) -> None:
        brief = self.brief
        ctx = ShotContext(self, self.chapter, self.theme)
        drawn = [s.beat for s in self.chapter.shots if brief.draw_beats is None or s.beat in brief.draw_beats]
        first = self._resumed_at(ctx)
        start_screen = screen_digest(self.mobjects) if brief.digests else EMPTY
        # (`position`, not `shot.index`: the index names the shot's storyboard entry, and a
        # chapter handed here may hold some of its shots only; kept states and `rest_known`
        # count positions in `self.chapter.shots`)
        for position, shot in enumerate(self.chapter.shots[first:], start=first):
            if brief.keep_start is not None and position > 0:
                brief.keep_start(self, position, lambda index=position: self.shot_start(ctx, index))
            draws = brief.choose_drawn(self, shot, start_screen) if brief.choose_drawn else shot.beat in drawn
            start, began = self._begin_shot(ctx, shot, draws, start_screen)
            if not self._play_shot(ctx, shot, began):
                return  # (its window is drawn)
            self._hold_shot(ctx, shot, start)
            start_screen = self._close_record(shot, start, began)
            if shot.beat == drawn[-1] and brief.draw_beats is not None and brief.choose_drawn is None:
                self._stop_after_last_drawn(ctx, position + 1)
                return
            if brief.rest_known is not None and brief.rest_known(self, position + 1, start_screen):
                return
        ctx.set_caption(None)

    def _resumed_at(self, ctx: ShotContext) -> int:
        """The first shot to play: 0, or the one whose kept state the scene resumes from."""
        kept = self.brief.start_from(self) if self.brief.start_from is not None else None
        if kept is None:
            return 0
        self.resume(ctx, kept)
        return kept.index

    def _begin_shot(self, ctx: ShotContext, shot: Shot, draws: bool, start_screen: str) -> tuple[float, float]:
        """A shot's section, record and sound begun: (its start on the film's clock, on the wall's)."""
        self.next_section(shot.beat, skip_animations=not draws)
        self.current_beat = shot.beat
        start = self.beat_start = self.time
        began = time.perf_counter()
        self.record = self.records[shot.beat] = ShotRecord(shot.beat, start, start_screen)
        self.record.drawn_frames = draws
        ctx.start_shot(shot)
        audio = self.track.get(shot.beat)
        if audio is not None and self.brief.with_sound and self.brief.draw_beats is None:
            self.add_sound(str(audio.path), time_offset=LEAD_IN_SECONDS)
        return start, began

    def _play_shot(self, ctx: ShotContext, shot: Shot, began: float) -> bool:
        """Play the shot's kind, its mistakes one line each; False when it stopped at its window's
        end (WindowDrawn)."""
        play = self.brief.shots.get(shot.kind)
        if play is None:  # a kind whose spec loaded but whose function was not handed in: one line
            raise DtfilmError(f"shot kind {shot.kind!r} has no play function", shot.where, f"shots[{shot.index}]")
        try:
            play(ctx, shot)
        except TemplateError as error:  # a template inside shot code: one line, naming the shot
            raise DtfilmError(f"shot kind {shot.kind!r}: {error}", shot.where, f"shots[{shot.index}]") from None
        except WindowDrawn:
            assert self.record is not None
            self.record.stopped = True
            self.record.wall_seconds = time.perf_counter() - began
            self._end_section()
            return False
        check_handoff(shot.kind, ctx)
        return True

    def _hold_shot(self, ctx: ShotContext, shot: Shot, start: float) -> None:
        """Hold the shot until its narration is spoken, its caption leaving with it, and add its
        subtitles' cues, per sentence or phrase as it is spoken."""
        self.drawn_times.append((shot.beat, shot.kind, self.time - start))
        hold = max(HOLD_SECONDS, ctx.spoken_seconds(shot) - (self.time - start))
        if ctx.caption is not None:  # the shot's own exit: its words go with it, so the
            # next shot starts from a screen that holds only pieces drawn from numbers
            self.wait(hold - CAPTION_EXIT_SECONDS)
            self._shown_all(shot.beat)
            ctx.set_caption(None, run_time=CAPTION_EXIT_SECONDS)
        else:
            self.wait(hold)
            self._shown_all(shot.beat)
        if shot.narration is not None:
            audio = self.track.get(shot.beat)
            spoken = [(s.written, s.start, s.end) for s in audio.sentences] if audio else None
            lead = LEAD_IN_SECONDS if audio else 0.0
            for cue in narration_cues(shot.narration.text, spoken, start + lead, self.time - start):
                self.add_subcaption(escaped(cue.text), duration=cue.end - cue.start, offset=cue.start - self.time)
                self.record.cues.append((escaped(cue.text), cue.start - start, cue.end - start))

    def _close_record(self, shot: Shot, start: float, began: float) -> str:
        """The shot's record closed (its end, its wall time); the screen it leaves, the next shot's start."""
        self.record.end = self.time
        start_screen = self.record.end_screen = screen_digest(self.mobjects) if self.brief.digests else EMPTY
        self.record.wall_seconds = time.perf_counter() - began
        self.shot_times.append((shot.beat, start, self.time))
        return start_screen

    def _stop_after_last_drawn(self, ctx: ShotContext, following: int) -> None:
        """The last shot to draw is drawn: its section closed, and the state the next shot starts
        from kept, so that drawn next it needs no shot played first. (Not by a window of a shot:
        pickling the dp ring's last screen took 0.2 s, on the path of the render's wall time that
        windows are there to cut.)"""
        self._end_section()
        brief = self.brief
        if brief.keep_start is not None and brief.draw_window is None and following < len(self.chapter.shots):
            brief.keep_start(self, following, lambda index=following: self.shot_start(ctx, index))

    def _shown_all(self, beat: str) -> None:
        if self.brief.at_shot_end is not None:
            self.brief.at_shot_end(self, beat)

    def _end_section(self) -> None:
        """The last drawn shot's section is its clip; none when no animation started in its window."""
        self.renderer.drop_empty_section()

    def shot_start(self, ctx: ShotContext, index: int) -> ShotStart:
        """The state shot `index` starts from: what is on screen, what the context keeps between
        shots, and the clock."""
        return ShotStart(
            index, self.time, list(self.mobjects), ctx.header, ctx.stats, ctx.caption, ctx.stage, ctx.handed
        )

    def resume(self, ctx: ShotContext, kept: ShotStart) -> None:
        """Start from a state kept at a shot's start instead of playing the shots before it."""
        self.add(*kept.mobjects)
        self.renderer.set_clock(kept.time)
        ctx.header, ctx.stats, ctx.caption = kept.header, kept.stats, kept.caption
        ctx.stage, ctx.handed = dict(kept.stage), dict(kept.handed)


def check_handoff(kind: str, ctx: ShotContext) -> None:
    """A shot takes and hands on only the pieces its kind declares (`dtfilm kinds` shows them)."""
    spec = KINDS[kind]
    undeclared = sorted(set(ctx.taken) - set(spec.takes)) + sorted(
        name for name in ctx.handed if name not in spec.hands_on and name not in ctx.taken
    )
    if undeclared:
        raise DtfilmError(f"shot kind {kind!r} passes {undeclared} between shots without declaring it in its spec")
