"""Video files: web-ready remuxing (index at the front) and atomic writes."""

from __future__ import annotations

import contextlib
import os
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
