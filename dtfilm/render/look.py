"""Look at a clip as a viewer would: `dtfilm sheet` (its frames tiled into one PNG, each stamped
with its time) and `dtfilm pacing` (every stretch where nothing moves). What the project's own
reviews use, shipped with the product so that a user can look at what they made."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import av
import numpy as np
from PIL import Image, ImageDraw

from dtfilm.errors import DtfilmError, Where
from dtfilm.system.atomic import atomic_path

STILL_THRESHOLD = 0.5  # mean grey-level change (0-255) below which a frame is still
MIN_STILL_SECONDS = 3.0  # stills at least this long count toward a clip's still share
STAMP_PIXELS = 18  # the band above each tile that holds its time


READABLE = "valid: a video clip, such as the MP4s dtfilm renders"


def readable_clip(path: Path) -> float:
    """The length in seconds of the clip at `path`; a one-line DtfilmError where it is not a video
    PyAV can read (a text file, an image, a clip with no picture or no length)."""
    try:
        with av.open(str(path)) as box:
            pictures, seconds = len(box.streams.video), (box.duration or 0) / 1e6
    except (av.error.FFmpegError, UnicodeDecodeError) as error:
        raise DtfilmError(f"cannot be read as a video ({_reason(error)}); {READABLE}", Where(str(path))) from None
    if not pictures or seconds <= 0:
        what = "has no picture" if not pictures else "has no length (a still image?)"
        raise DtfilmError(f"{what}; {READABLE}", Where(str(path)))
    return seconds


@contextlib.contextmanager
def decoding(path: Path) -> Iterator[float]:
    """The clip's length (`readable_clip`), for work that decodes its frames: a frame that cannot
    be decoded ends it with one line, not PyAV's error."""
    seconds = readable_clip(path)
    try:
        yield seconds
    except av.error.FFmpegError as error:
        raise DtfilmError(f"its frames cannot be decoded ({_reason(error)}); {READABLE}", Where(str(path))) from None


def _reason(error: Exception) -> str:
    return str(getattr(error, "strerror", None) or error).rstrip(".")


def frames_at(path: Path, times: list[float]) -> list[tuple[float, Image.Image]]:
    """The first frame at or after each time (seconds), with its own time."""
    out: list[tuple[float, Image.Image]] = []
    wanted = sorted(times)
    with av.open(str(path)) as box:
        stream = box.streams.video[0]
        for frame in box.decode(stream):
            seconds = float(frame.pts * stream.time_base)
            while len(out) < len(wanted) and seconds >= wanted[len(out)] - 1e-6:
                out.append((seconds, frame.to_image()))
            if len(out) == len(wanted):
                break
    return out


def clip_seconds(path: Path) -> float:
    with av.open(str(path)) as box:
        return (box.duration or 0) / 1e6


def contact_sheet(clip: Path, target: Path, frames: int = 12, columns: int = 4, tile_width: int = 427) -> int:
    """Tile `frames` evenly spaced frames of `clip` into the PNG `target`; how many it tiled."""
    seconds = clip_seconds(clip)
    shots = frames_at(clip, [seconds * (k + 0.5) / frames for k in range(frames)])
    if not shots:
        return 0
    first = shots[0][1]
    tile_height = round(first.height * tile_width / first.width)
    rows = -(-len(shots) // columns)
    sheet = Image.new("RGB", (columns * tile_width, rows * (tile_height + STAMP_PIXELS)), "white")
    draw = ImageDraw.Draw(sheet)
    for k, (at, image) in enumerate(shots):
        x, y = (k % columns) * tile_width, (k // columns) * (tile_height + STAMP_PIXELS)
        sheet.paste(image.resize((tile_width, tile_height)), (x, y + STAMP_PIXELS))
        draw.text((x + 4, y + 3), f"{at:6.2f} s", fill="black")
    with atomic_path(target) as temp:  # (beside a clip in renders/: a link there is replaced)
        sheet.save(temp, format="PNG")
    return len(shots)


@dataclass(frozen=True)
class Pacing:
    """Where a clip stands still: its length and every still run as (start, length) seconds."""

    seconds: float
    runs: list[tuple[float, float]]

    def counted(self, min_still_seconds: float = MIN_STILL_SECONDS) -> list[tuple[float, float]]:
        return [(start, length) for start, length in self.runs if length >= min_still_seconds]

    def longest_seconds(self) -> float:
        return max((length for _, length in self.runs), default=0.0)

    def still_share(self, min_still_seconds: float = MIN_STILL_SECONDS) -> float:
        counted = self.counted(min_still_seconds)
        return sum(length for _, length in counted) / self.seconds if self.seconds else 0.0


def pacing(path: Path, threshold: float = STILL_THRESHOLD) -> Pacing:
    """Every run of frames that differ from the one before by less than `threshold` grey
    levels on average."""
    runs: list[tuple[float, float]] = []
    with av.open(str(path)) as box:
        stream = box.streams.video[0]
        fps = float(stream.average_rate)
        previous, start, count = None, None, 0
        for frame in box.decode(stream):
            grey = frame.to_ndarray(format="gray").astype(np.int16)
            if previous is not None:
                still = float(np.abs(grey - previous).mean()) < threshold
                if still and start is None:
                    start = count - 1
                elif not still and start is not None:
                    runs.append((start / fps, (count - start) / fps))
                    start = None
            previous, count = grey, count + 1
        if start is not None:
            runs.append((start / fps, (count - start) / fps))
    return Pacing(count / fps, runs)


SPEECH_STILL_SECONDS = 2.5  # a still this long under the voice counts against the speech (issue 58)
MAX_SPEECH_OVER_STILLS = 0.05  # of a chapter's speech


def speech_over_stills(
    cues: list[tuple[float, float]], runs: list[tuple[float, float]], min_still_seconds: float = SPEECH_STILL_SECONDS
) -> float:
    """The share of the cues' seconds (start, end) that plays over stills (start, length) of
    `min_still_seconds` or more: the voice speaking while the picture does not move."""
    spoken = sum(end - start for start, end in cues)
    if spoken <= 0:
        return 0.0
    stills = [(start, start + length) for start, length in runs if length >= min_still_seconds]
    over = sum(max(0.0, min(end, b) - max(start, a)) for start, end in cues for a, b in stills)
    return over / spoken
