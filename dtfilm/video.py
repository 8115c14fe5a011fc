"""Video files: web-ready remuxing (index at the front) and atomic writes."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import wave
from collections.abc import Iterator
from pathlib import Path

import av
import numpy as np


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """A temporary path beside `target`, renamed over it only if the block succeeds."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp" + target.suffix, dir=target.parent)
    os.close(fd)
    temp = Path(name)
    try:
        yield temp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)  # mkstemp makes 0600; renders are for serving
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)


def write_text_atomic(target: Path, text: str) -> None:
    with atomic_path(target) as temp:
        temp.write_text(text, encoding="utf-8")


def remux_faststart(source: Path, target: Path) -> None:
    """Copy the H.264 stream (and the narration's audio, if any) into an MP4 whose index (moov)
    precedes the data, without re-encoding, so a browser can start playing before the file has
    arrived."""
    with (
        av.open(str(source)) as inp,
        av.open(str(target), mode="w", format="mp4", options={"movflags": "+faststart"}) as out,
    ):
        streams_in = [inp.streams.video[0], *inp.streams.audio[:1]]
        streams_out = {s.index: out.add_stream_from_template(s) for s in streams_in}
        for packet in inp.demux(*streams_in):
            if packet.dts is None:
                continue
            packet.stream = streams_out[packet.stream.index]
            out.mux(packet)


def remux_with_narration(source: Path, target: Path, narration: Path, lead_seconds: float) -> None:
    """`remux_faststart` for a clip whose picture has no sound of its own (a shot's section),
    with `narration` (a WAV) encoded in as AAC, starting `lead_seconds` into the clip."""
    with wave.open(str(narration), "rb") as wav:
        rate, pcm = wav.getframerate(), np.frombuffer(wav.readframes(wav.getnframes()), dtype=np.int16)
    samples = np.concatenate([np.zeros(round(lead_seconds * rate), dtype=np.int16), pcm])
    with (
        av.open(str(source)) as inp,
        av.open(str(target), mode="w", format="mp4", options={"movflags": "+faststart"}) as out,
    ):
        video_in = inp.streams.video[0]
        video_out = out.add_stream_from_template(video_in)
        audio_out = out.add_stream("aac", rate=rate)
        audio_out.layout = "mono"
        for packet in inp.demux(video_in):
            if packet.dts is None:
                continue
            packet.stream = video_out
            out.mux(packet)
        fifo = av.AudioFifo()
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate, frame.pts = rate, 0
        fifo.write(frame)
        size = audio_out.codec_context.frame_size or 1024
        while (chunk := fifo.read(size)) is not None:
            out.mux(audio_out.encode(chunk))
        if (rest := fifo.read()) is not None:
            out.mux(audio_out.encode(rest))
        out.mux(audio_out.encode(None))


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


def join_with_chapters(parts: list[tuple[str, Path]], target: Path) -> list[tuple[str, float, float]]:
    """Concatenate clips of identical encoding into one MP4 without re-encoding, with a chapter
    marker per clip (players such as VLC, mpv and QuickTime list them). Returns the chapters
    as (title, start, end) seconds."""
    chapters: list[tuple[str, float, float]] = []
    voiced = all(has_audio(path) for _, path in parts)  # the narration, when every part speaks
    with av.open(str(target), mode="w", format="mp4", options={"movflags": "+faststart"}) as out:
        stream_out = audio_out = None
        offset = 0  # in the output stream's time base
        markers = []
        for index, (title, path) in enumerate(parts):
            with av.open(str(path)) as inp:
                stream_in = inp.streams.video[0]
                audio_in = inp.streams.audio[0] if voiced else None
                if stream_out is None:
                    stream_out = out.add_stream_from_template(stream_in)
                    stream_out.time_base = stream_in.time_base
                    if audio_in is not None:
                        audio_out = out.add_stream_from_template(audio_in)
                        audio_out.time_base = audio_in.time_base
                duration = int(stream_in.duration or 0)
                if duration <= 0:
                    duration = int(inp.duration / 1e6 / stream_in.time_base)
                markers.append(
                    {
                        "id": index + 1,
                        "start": offset,
                        "end": offset + duration,
                        "time_base": stream_in.time_base,
                        "metadata": {"title": title},
                    }
                )
                if index == 0:
                    out.set_chapters(markers)  # before the header is written
                base = float(stream_in.time_base)
                for packet in inp.demux(*[s for s in (stream_in, audio_in) if s is not None]):
                    if packet.dts is None:
                        continue
                    shift = offset
                    if audio_in is not None and packet.stream.index == audio_in.index:
                        shift = round(offset * base / float(audio_in.time_base))
                        packet.stream = audio_out
                    else:
                        packet.stream = stream_out
                    packet.pts = (packet.pts or 0) + shift
                    packet.dts = packet.dts + shift
                    out.mux(packet)
                chapters.append((title, offset * base, (offset + duration) * base))
                offset += duration
        out.set_chapters(markers)
    return chapters


def chapters_vtt(chapters: list[tuple[str, float, float]]) -> str:
    """A WebVTT file for <track kind="chapters"> (browsers ignore MP4 chapter markers)."""

    def stamp(seconds: float) -> str:
        ms = round(seconds * 1000)
        return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"

    cues = [f"{i}\n{stamp(start)} --> {stamp(end)}\n{title}\n" for i, (title, start, end) in enumerate(chapters, 1)]
    return "WEBVTT\n\n" + "\n".join(cues)


def srt_to_vtt(srt: str) -> str:
    """WebVTT for <track> from SubRip: a header, and a dot before the milliseconds."""
    return "WEBVTT\n\n" + re.sub(r"(\d\d:\d\d:\d\d),(\d\d\d)", r"\1.\2", srt)
