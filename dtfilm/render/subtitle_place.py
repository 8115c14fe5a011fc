"""Where each WebVTT cue of a chapter is drawn (issue 58: the cues sat over the legend row): in
the free band of the picture under it, the lowest run of rows empty across the middle of the
frame (where a browser centres a cue) and tall enough for two lines of subtitles, read from the
chapter's rendered frames at the cue's start and middle: the burned-in caption, the legend and
the diagram are drawn there, so a band is clear of them all. Where no band is free the cue keeps
its place just above the caption band (video.SUBTITLE_BOTTOM_PERCENT). The frames are the clip
this render just wrote; what is read from them is a row number, nothing more."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from dtfilm.render.look import frames_at
from dtfilm.system.video import frames_on_grid
from dtfilm.system.webvtt import SUBTITLE_BOTTOM_PERCENT

# Two lines of a browser's cue (its font about 5% of the video's height) with their padding.
BAND_SHARE = 0.13
EMPTY_LEVEL = 10  # grey levels from the background within which a row draws nothing
CUE_WIDTH_SHARE = 0.8  # the middle of the frame a centred cue of two full lines covers
MARGIN_SHARE = 0.01  # kept between a cue and what is drawn under it


def background_grey(grey: np.ndarray) -> int:
    """The frame's background: its most common grey level."""
    return int(np.bincount(grey.ravel(), minlength=256).argmax())


def free_bottom_percent(frames: list[Image.Image]) -> int | None:
    """The bottom, in percent of the height, of the lowest band of rows empty (across the middle
    CUE_WIDTH_SHARE of the width) in every frame and at least BAND_SHARE of the height tall;
    None when there is none."""
    empty: np.ndarray | None = None
    for image in frames:
        grey = np.asarray(image.convert("L"), dtype=np.int16)
        side = int(grey.shape[1] * (1 - CUE_WIDTH_SHARE) / 2)
        middle = grey[:, side : grey.shape[1] - side]
        rows = (np.abs(middle - background_grey(grey.astype(np.uint8))) <= EMPTY_LEVEL).all(axis=1)
        empty = rows if empty is None else empty & rows
    if empty is None:
        return None
    height = len(empty)
    need = int(np.ceil(BAND_SHARE * height))
    margin = int(np.ceil(MARGIN_SHARE * height))
    run = 0
    for row in range(height - 1, -1, -1):
        run = run + 1 if empty[row] else 0
        if run >= need + margin:
            bottom = row + run - 1 - margin  # the run's lowest empty row, less the margin
            return int(100 * (bottom + 1) / height)
    return None


def cue_times(cues: list[tuple[float, float]]) -> list[float]:
    """The times a cue's place is read at: just after its start, and its middle."""
    return sorted({t for start, end in cues for t in (start + 0.1, (start + end) / 2)})


def placed_lines(shown: list[tuple[float, Image.Image]], cues: list[tuple[float, float]]) -> list[int]:
    """Each cue's `line:` percent from the frames `shown` (time, image) at its times (cue_times)."""

    def near(t: float) -> Image.Image | None:
        return next((image for at, image in shown if at >= t - 1e-6), shown[-1][1] if shown else None)

    lines = []
    for start, end in cues:
        seen = [image for image in (near(start + 0.1), near((start + end) / 2)) if image is not None]
        free = free_bottom_percent(seen) if seen else None
        lines.append(SUBTITLE_BOTTOM_PERCENT if free is None else free)
    return lines


def cue_lines(clip: Path, cues: list[tuple[float, float]]) -> list[int]:
    """Each cue's `line:` percent (its last line ends there): the free band under it, or just
    above the caption where none is free."""
    times = cue_times(cues)
    frames = dict(frames_at(clip, times)) if times else {}
    return placed_lines(sorted(frames.items()), cues)


def shot_cue_lines(clip: Path, cues: list[tuple[float, float]]) -> list[int] | None:
    """cue_lines for one shot's cues (seconds into the shot), read from the shot's own clip, its
    frames timed as the chapter's join lays them (video.frames_on_grid): the same lines as read
    from the chapter, with only this shot's frames decoded (reading the whole chapter was a
    second of a changed caption's render). None when a cue is read past the clip's last frame
    (the chapter's next shot would show it): then the chapter is read instead."""
    times = cue_times(cues)
    frames: list[tuple[float, Image.Image]] = []
    if times:
        for seconds, frame in frames_on_grid(clip):
            while len(frames) < len(times) and seconds >= times[len(frames)] - 1e-6:
                frames.append((seconds, frame.to_image()))
            if len(frames) == len(times):
                break
    if len(frames) < len(times):
        return None
    return placed_lines(sorted(dict(frames).items()), cues)
