"""Video files: web-ready remuxing (index at the front), joins with their sound, chapter markers
(their writes: dtfilm.system.atomic; the sound itself: dtfilm.system.sound; subtitles: dtfilm.system.webvtt)."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import av
import numpy as np

from dtfilm.system.sound import AUDIO_RATE, SoundFeed, decoded_audio, encoded_within_peak, fitted_length, peak_over


def remux_faststart(source: Path, target: Path, comment: str = "") -> None:
    """Copy the H.264 stream into an MP4 whose index (moov) precedes the data, without
    re-encoding, so a browser can start playing before the file has arrived. (A clip with
    sound goes through `mux_with_audio`.) Written as a join of one clip (`_write_joined`): its
    frames put on the frame rate's grid, so that a shot drawn whole is the same file, byte for
    byte, as the same shot joined from parts. (Manim's own clip holds a frame 5 ticks short
    where two of its partial movies meet, and a join of parts holds none: dp's memory shot drawn
    whole and in two parts was the same frames, but 273 of its 360 frames stamped apart.)"""
    _write_joined([("", source)], target, None, markers=False, comment=comment)


def _tag(out: av.container.OutputContainer, comment: str) -> None:
    if comment:
        out.metadata["comment"] = comment


def clip_comment(path: Path) -> str | None:
    """The comment a clip was written with (what it was made of), or None if there is no clip."""
    if not path.is_file():
        return None
    try:
        with av.open(str(path)) as clip:
            return clip.metadata.get("comment")
    except av.error.FFmpegError:
        return None


def video_seconds(path: Path) -> float:
    """The length of a file's picture (its video stream), in seconds: its frames at its frame
    rate, as dtfilm's clock counts a shot (whole frames) and as a join lays them out
    (_on_frame_grid); Manim's own clips say 0.3 ms less here and there. Else as its header says."""
    with av.open(str(path)) as box:
        stream = box.streams.video[0]
        if stream.frames and stream.base_rate:
            return float(stream.frames / stream.base_rate)
        if stream.duration:
            return float(stream.duration * stream.time_base)
        return float(box.duration / 1e6)


def mux_with_audio(source: Path, target: Path, pcm: np.ndarray, rate: int, comment: str = "") -> None:
    """`remux_faststart` with a sound track of our own: the picture's packets copied (on the
    frame rate's grid), `pcm` (mono floats in -1..1) encoded once as AAC at `rate`, cut or
    padded with silence to the picture's length so that sound and picture end together."""
    sound = fitted_length(pcm, round(video_seconds(source) * rate))
    _write_joined([("", source)], target, sound, markers=False, comment=comment, rate=rate)


def fitted_to_picture(pcm: np.ndarray, path: Path) -> np.ndarray:
    """`pcm` (at AUDIO_RATE) cut or padded to the length of `path`'s picture, sample-exact."""
    return fitted_length(pcm, round(video_seconds(path) * AUDIO_RATE))


def _fitted_sound(path: Path) -> np.ndarray:
    """A clip's sound cut or padded to its picture's length."""
    return fitted_to_picture(decoded_audio(path), path)


def has_audio(path: Path) -> bool:
    with av.open(str(path)) as box:
        return bool(box.streams.audio)


def probe(path: Path) -> dict[str, object]:
    """Codec, pixel format, size, frame rate and duration of a video file."""
    with av.open(str(path)) as box:
        stream = box.streams.video[0]
        return {
            "codec": stream.codec_context.name,
            "pix_fmt": stream.codec_context.pix_fmt,
            "width": stream.width,
            "height": stream.height,
            "fps": float(stream.average_rate) if stream.average_rate else 0.0,
            "duration": float(box.duration / 1e6) if box.duration else 0.0,
            "frames": stream.frames,
        }


def sound_code() -> bytes:
    """The code that levels and encodes sound: part of what any encoded sound track is made of."""
    package = Path(__file__).parent
    return b"".join((package / module).read_bytes() for module in ("loudness.py", "sound.py", "video.py"))


SOUND_TAG = "sound:"  # a comment naming what a file's encoded sound is made of (a chapter's)


def sound_digest(parts: list[tuple[str, Path]]) -> str:
    """What a joined file's sound is made of: each clip's encoded sound, the length of its
    picture (which cuts or pads it), and the code that levels and encodes it. A clip's sound is
    named by its comment when that starts with SOUND_TAG (a chapter names what its sound was
    encoded from: reading the film's 30,000 sound packets cost a quarter of a second), else
    read byte for byte."""
    h = hashlib.sha256(sound_code())
    for _, path in parts:
        with av.open(str(path)) as box:
            h.update(f"{video_seconds(path):.6f}|{len(box.streams.audio)}".encode())
            comment = box.metadata.get("comment", "")
            if comment.startswith(SOUND_TAG):
                h.update(comment.encode())
            elif box.streams.audio:
                for packet in box.demux(box.streams.audio[0]):
                    h.update(bytes(packet))
    return h.hexdigest()[:16]


def join_with_chapters(
    parts: list[tuple[str, Path]],
    target: Path,
    previous: Path | None = None,
    encoded_from: Callable[[str], np.ndarray | None] | None = None,
    ahead: Path | None = None,
) -> list[tuple[str, float, float]]:
    """Concatenate clips of identical encoding into one MP4 without re-encoding the picture,
    with a chapter marker per clip (players such as VLC, mpv and QuickTime list them). When every
    clip speaks, their sound is decoded, joined sample-exact (each cut or padded to its clip's
    picture) and encoded once, so the joins have no gap or click. When `previous` (the file this
    one replaces) was joined from the same sound (the digest in its comment), its encoded sound
    is copied instead: a chapter whose picture changed but not its sound costs no sound work.
    `encoded_from` finds, by a clip's comment, the sound its track was encoded from (a chapter
    keeps it: dtfilm.render.assemble.stored_sound). When every clip's is found, the film's sound is
    those joined: already limited, and not decoded from AAC to be encoded a second time.
    `ahead`: a file holding that sound already encoded (dtfilm.render.film_sound), copied when its true
    peak is within the target. Returns the chapters as (title, start, end) seconds."""
    if not all(has_audio(path) for _, path in parts):
        return _write_joined(parts, target, None)
    digest = sound_digest(parts)
    if previous is not None and clip_comment(previous) == digest:
        return _write_joined(parts, target, previous, comment=digest)
    if ahead is not None:
        joined = _write_joined(parts, target, ahead, comment=digest)
        if peak_over(target, AUDIO_RATE) <= 0:
            return joined
    sound = _sound_encoded_from(parts, encoded_from) if encoded_from is not None else None
    if sound is None:  # decoded AAC overshoots a little: limit the joined sound again before encoding it
        # (here: SciPy, through pyloudnorm, only when sound is levelled)
        from dtfilm.system.loudness import limited

        sound = limited(np.concatenate([_fitted_sound(path) for _, path in parts]), AUDIO_RATE).astype(np.float32)
    chapters: list[tuple[str, float, float]] = []

    def write(pcm: np.ndarray) -> None:
        chapters[:] = _write_joined(parts, target, pcm, comment=digest)

    encoded_within_peak(write, target, sound, AUDIO_RATE)
    return chapters


def _sound_encoded_from(
    parts: list[tuple[str, Path]], encoded_from: Callable[[str], np.ndarray | None]
) -> np.ndarray | None:
    """The clips' sound as each was encoded from, cut or padded to its picture; None unless
    every clip's is found."""
    pieces = []
    for _, path in parts:
        pcm = encoded_from(clip_comment(path) or "")
        if pcm is None:
            return None
        pieces.append(fitted_to_picture(pcm, path))
    return np.concatenate(pieces)


def join_pictures(clips: list[Path], target: Path, sound: np.ndarray | Path | None, comment: str = "") -> None:
    """Clips of identical encoding joined without re-encoding (no chapter markers), with
    `sound` beside them: mono floats at AUDIO_RATE encoded once, or a file whose sound track is
    copied as it is. A chapter from its shots."""
    _write_joined([("", clip) for clip in clips], target, sound, markers=False, comment=comment)


def _write_joined(
    parts: list[tuple[str, Path]],
    target: Path,
    sound: np.ndarray | Path | None,
    markers: bool = True,
    comment: str = "",
    rate: int = AUDIO_RATE,
) -> list[tuple[str, float, float]]:
    """The clips' pictures copied one after the other, each on the frame rate's grid
    (`_on_frame_grid`), with `sound` (if any: floats at `rate`, or a file whose encoded sound is
    copied) beside them, and with `markers` a chapter marker per clip titled as `parts` name it."""
    chapters: list[tuple[str, float, float]] = []
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(av.open(str(target), mode="w", format="mp4", options={"movflags": "+faststart"}))
        _tag(out, comment)
        stream_out = None
        feed: SoundFeed | None = None
        offset = 0  # in the output stream's time base
        chapter_marks = []
        for index, (title, path) in enumerate(parts):
            with av.open(str(path)) as inp:
                stream_in = inp.streams.video[0]
                if stream_out is None:
                    stream_out, feed = _streams(out, stack, stream_in, sound, rate)
                packets, duration = _on_frame_grid(inp, stream_in)
                chapter_marks.append(
                    {
                        "id": index + 1,
                        "start": offset,
                        "end": offset + duration,
                        "time_base": stream_in.time_base,
                        "metadata": {"title": title},
                    }
                )
                if index == 0 and markers:
                    out.set_chapters(chapter_marks)  # before the header is written
                base = float(stream_in.time_base)
                for packet in packets:
                    packet.pts = packet.pts + offset
                    packet.dts = packet.dts + offset
                    if feed is not None:
                        feed.until(out, packet.dts * base)
                    packet.stream = stream_out
                    out.mux(packet)
                chapters.append((title, offset * base, (offset + duration) * base))
                offset += duration
        if feed is not None:
            feed.rest(out)
        if markers:
            out.set_chapters(chapter_marks)
    return chapters


def _streams(
    out: av.container.OutputContainer,
    stack: contextlib.ExitStack,
    first: av.VideoStream,
    sound: np.ndarray | Path | None,
    rate: int,
) -> tuple[av.VideoStream, SoundFeed | None]:
    """The joined file's picture stream (as the first clip's) and its sound, if any: `sound`
    encoded at `rate`, or the encoded sound of the file `sound` names, copied."""
    stream_out = out.add_stream_from_template(first)
    stream_out.time_base = first.time_base
    feed = None
    if isinstance(sound, Path):
        feed = SoundFeed.copied(out, stack.enter_context(av.open(str(sound))))
    elif sound is not None:
        feed = SoundFeed(out, "aac", sound, rate)
    # The header gives each stream's peak bit rate as the larger of its stream's own figure and
    # what the packets written average. The own figure is the first clip's for a copied picture
    # (a shot's first part has one, the shot drawn whole another), the source file's for copied
    # sound and the encoder's for encoded sound (all encoded by now): 0 leaves it to what is
    # written, so the same packets make the same file however they came.
    for stream in out.streams:
        stream.bit_rate = 0
    return stream_out, feed


def _on_frame_grid(source: av.container.InputContainer, stream: av.VideoStream) -> tuple[list[av.Packet], int]:
    """A clip's picture packets (those with a time) and its length, in its stream's time base.

    Manim's clips hold a frame 5 ticks (0.3 ms) short here and there, where two of its partial
    movies meet, and a shot joined from parts holds them elsewhere than the same shot drawn
    whole: the same frames, but a chapter 0.3 ms longer or shorter, so its sound and the film's
    differed, and the film's sound was encoded again (6 s). A shot is whole frames
    (dtfilm.scene counts its clock in frames), so every frame is put back on the frame rate's
    grid and the clip lasts its frames: the same frames make the same clip, however they were
    drawn. Where a frame is not whole ticks, or a frame lies over a quarter frame off the grid,
    the clip is copied as it is, as long as its header says."""
    packets = [packet for packet in source.demux(stream) if packet.dts is not None and packet.pts is not None]
    header = int(stream.duration or 0) or int(source.duration / 1e6 / stream.time_base)
    rate = stream.base_rate or stream.average_rate  # the frame rate (a short frame skews the average)
    if not packets or not rate or not stream.time_base:
        return packets, header
    frame = 1 / (rate * stream.time_base)
    if frame.denominator != 1:
        return packets, header
    step = int(frame)
    if header == len(packets) * step:  # whole frames already (joined here, or no frame short)
        return packets, header
    first = min(packet.pts for packet in packets)

    def snapped(tick: int) -> int:
        return first + round((tick - first) / step) * step

    times = [(snapped(packet.pts), snapped(packet.dts)) for packet in packets]
    off_grid = any(
        abs(packet.pts - pts) > step // 4 or abs(packet.dts - dts) > step // 4
        for packet, (pts, dts) in zip(packets, times, strict=True)
    )
    decode_order = [dts for _, dts in times]
    if off_grid or any(b <= a for a, b in itertools.pairwise(decode_order)):
        return packets, header
    for packet, (pts, dts) in zip(packets, times, strict=True):
        packet.pts, packet.dts, packet.duration = pts, dts, step
    return packets, len(packets) * step


def frames_on_grid(path: Path) -> Iterator[tuple[float, av.VideoFrame]]:
    """A clip's frames in order, each with its time as a join lays the clip out (`_on_frame_grid`):
    a shot's frame at t here is the chapter's at the shot's start plus t, so what is read from a
    shot's own clip is what the chapter shows (dtfilm.render.subtitle_place)."""
    with av.open(str(path)) as box:
        stream = box.streams.video[0]
        packets, _ = _on_frame_grid(box, stream)
        base = stream.time_base
        for packet in [*packets, None]:
            for frame in stream.codec_context.decode(packet):
                if frame.pts is not None:
                    yield float(frame.pts * base), frame
