"""Files made from a rendered clip with PyAV, no second tool: a poster frame, per-shot clips,
and GIF or WebM (VP9) copies on request. Each is written to a temporary file and renamed."""

from __future__ import annotations

import io
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
from PIL import Image

from dtfilm.storyboard.timing import CAPTION_EXIT_SECONDS
from dtfilm.system.atomic import atomic_path
from dtfilm.system.sound import AUDIO_RATE, SoundFeed, decoded_audio

FORMATS = ("gif", "webm")
GIF_MAX_BYTES = 5_000_000  # small enough for a README
# (width in pixels, frames per second) tried in order until the GIF is small enough
GIF_STEPS = ((640, 8), (480, 8), (480, 5), (360, 5), (320, 4), (240, 3))
# a poster is taken this long before its shot ends: all drawn, still held, its caption not yet fading
POSTER_LEAD_SECONDS = CAPTION_EXIT_SECONDS + 0.1


@dataclass(frozen=True)
class ShotClip:
    index: int
    beat: str
    start: float
    end: float
    clip: str  # relative to the renders folder
    still: str  # its last frame, a PNG (slides use it as the poster)


def frame_at(movie: Path, seconds: float) -> Image.Image:
    """The frame shown at `seconds` (the last one when past the end)."""
    with av.open(str(movie)) as box:
        stream = box.streams.video[0]
        target = max(0.0, seconds)
        box.seek(int(target / stream.time_base), stream=stream, backward=True, any_frame=False)
        chosen = None
        for frame in box.decode(stream):
            if chosen is not None and frame.time is not None and frame.time > target:
                break
            chosen = frame
        if chosen is None:
            raise ValueError(f"{movie} has no frame")
        return chosen.to_image()


PNG_COMPRESSION = 3  # zlib's level: a poster in 10-15 ms and 91-183 kB, against 86-143 ms and
# 95-190 kB with PIL's optimize (level 9 and a filter search), which flat frames do not repay


def write_png(image: Image.Image, target: Path) -> None:
    with atomic_path(target) as temp:
        image.save(temp, format="PNG", compress_level=PNG_COMPRESSION)


def poster_seconds(shot_times: list[tuple[str, float, float]], beat: str | None) -> float:
    """The poster's moment: the end of the named beat's shot, else of the first shot after
    the title (the chapter's first full picture), just before the next shot clears it."""
    if beat is not None:
        chosen = next(t for t in shot_times if t[0] == beat)
    else:
        chosen = shot_times[1] if len(shot_times) > 1 else shot_times[0]
    _, start, end = chosen
    return max(start, end - POSTER_LEAD_SECONDS)


def _sampled_frames(movie: Path, fps: float, width: int) -> list[Image.Image]:
    frames, next_time = [], 0.0
    with av.open(str(movie)) as box:
        stream = box.streams.video[0]
        for frame in box.decode(stream):
            if frame.time is None or frame.time + 1e-6 < next_time:
                continue
            next_time += 1 / fps
            image = frame.to_image()
            height = round(image.height * width / image.width / 2) * 2
            frames.append(image.resize((width, height), Image.Resampling.LANCZOS))
    return frames


def write_gif(movie: Path, target: Path, max_bytes: int = GIF_MAX_BYTES) -> tuple[int, int, int]:
    """A looping GIF at the largest size and rate (of GIF_STEPS) that stays under
    `max_bytes`. Returns (bytes, width, fps)."""
    size = 0
    for width, fps in GIF_STEPS:
        frames = _sampled_frames(movie, fps, width)
        # one palette for the whole clip, from a few frames: no flicker between frames
        sample = frames[:: max(1, len(frames) // 8)]
        strip = Image.new("RGB", (width, sum(f.height for f in sample)))
        y = 0
        for frame in sample:
            strip.paste(frame, (0, y))
            y += frame.height
        palette = strip.quantize(colors=128, method=Image.Quantize.MEDIANCUT)
        indexed = [f.quantize(palette=palette, dither=Image.Dither.NONE) for f in frames]
        data = io.BytesIO()
        indexed[0].save(
            data, format="GIF", save_all=True, append_images=indexed[1:], duration=round(1000 / fps), loop=0
        )
        size = data.tell()
        if size <= max_bytes:
            with atomic_path(target) as temp:
                temp.write_bytes(data.getvalue())
            return size, width, fps
    raise ValueError(f"{target.name}: even at the smallest size the GIF is {size / 1e6:.1f} MB")


def write_webm(movie: Path, target: Path) -> int:
    """The clip re-encoded as VP9 in WebM (the web's open codec), its narration, if any, as
    Opus. Returns its bytes."""
    sound = decoded_audio(movie)
    with av.open(str(movie)) as inp, atomic_path(target) as temp:
        stream_in = inp.streams.video[0]
        rate = stream_in.average_rate or Fraction(15)
        # bitexact: the WebM muxer otherwise draws a random segment and track UID for every
        # file (32 bytes apart between two writes of the same clip)
        with av.open(str(temp), mode="w", format="webm", options={"fflags": "+bitexact"}) as out:
            stream = out.add_stream("libvpx-vp9", rate=rate)
            stream.width, stream.height = stream_in.width, stream_in.height
            stream.pix_fmt = "yuv420p"
            stream.options = {"crf": "34", "b": "0", "deadline": "realtime", "cpu-used": "8", "row-mt": "1"}
            feed = SoundFeed(out, "libopus", sound, AUDIO_RATE) if sound.size else None
            for frame in inp.decode(stream_in):
                frame.pts = None
                for packet in stream.encode(frame):
                    if feed is not None and packet.pts is not None:
                        feed.until(out, float(packet.pts * packet.time_base))
                    out.mux(packet)
            for packet in stream.encode():
                out.mux(packet)
            if feed is not None:
                feed.rest(out)
        return temp.stat().st_size
