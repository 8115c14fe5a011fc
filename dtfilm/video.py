"""Video files: web-ready remuxing (index at the front) and atomic writes."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import av


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
    """Copy the H.264 stream into an MP4 whose index (moov) precedes the data, without
    re-encoding, so a browser can start playing before the file has arrived."""
    with (
        av.open(str(source)) as inp,
        av.open(str(target), mode="w", format="mp4", options={"movflags": "+faststart"}) as out,
    ):
        stream_in = inp.streams.video[0]
        stream_out = out.add_stream_from_template(stream_in)
        for packet in inp.demux(stream_in):
            if packet.dts is None:
                continue
            packet.stream = stream_out
            out.mux(packet)


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
    with av.open(str(target), mode="w", format="mp4", options={"movflags": "+faststart"}) as out:
        stream_out = None
        offset = 0  # in the output stream's time base
        markers = []
        for index, (title, path) in enumerate(parts):
            with av.open(str(path)) as inp:
                stream_in = inp.streams.video[0]
                if stream_out is None:
                    stream_out = out.add_stream_from_template(stream_in)
                    stream_out.time_base = stream_in.time_base
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
                for packet in inp.demux(stream_in):
                    if packet.dts is None:
                        continue
                    packet.pts = (packet.pts or 0) + offset
                    packet.dts = packet.dts + offset
                    packet.stream = stream_out
                    out.mux(packet)
                base = float(stream_in.time_base)
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
