"""A clip's sound: mono floats encoded (AAC, Opus) beside its picture or decoded from it, and kept
under the true-peak target however the encoder overshoots."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

# Every clip's sound: AAC at 24 kHz. The voice is Piper's, at 22.05 kHz, so nothing is heard
# above 11 kHz and 48 kHz carried no more of it; 24 kHz is the lowest rate above the voice's
# that Opus (the WebM copies) takes too. It halves what every sound costs: encoding, decoding,
# measuring loudness, and the packets a join copies. (The true peak is still measured at
# 192 kHz: dtfilm.system.loudness.oversampling.)
AUDIO_RATE = 24000


# FFmpeg's AAC encoder with its fast coder: 80 s of the narration encoded in 0.35 s against
# 1.18 s with its default (twoloop), about as small, and nearer the sound it was given (RMS
# error 2.5% against 5.9%). A cold film encodes 2,800 s of sound (chapters, their slide clips
# and the film), on the main process while the shots draw.
ENCODER_OPTIONS = {"aac": {"aac_coder": "fast"}}


PEAK_MARGIN_DB = 0.2  # an encoded file's true peak stays this far under the target


PEAK_TRIES = 3


def pcm16(sound: np.ndarray) -> np.ndarray:
    """Floats in -1..1 as the 16-bit samples an encoder is given."""
    return np.clip(np.round(sound * 32767), -32768, 32767).astype(np.int16)


class SoundEncoder:
    """Mono sound encoded in `codec` (aac, libopus) as a new stream of `out`, fed whole or a
    piece at a time: the encoder takes it in its frame size from time 0 either way, so the
    packets are the same (dtfilm.render.film_sound feeds the film's sound a chapter at a time)."""

    def __init__(self, out: av.container.OutputContainer, codec: str, rate: int) -> None:
        self.stream = out.add_stream(codec, rate=rate, options=ENCODER_OPTIONS.get(codec, {}))
        self.stream.layout = "mono"
        self.rate = rate
        self.size = self.stream.codec_context.frame_size or 1024
        self.fifo = av.AudioFifo()
        self.done = 0  # each chunk stamped with its start (in samples): without it the encoder's
        # packets carry no time, SoundFeed.until cannot hold them back, and the muxer writes all
        # the sound first

    def encode(self, sound: np.ndarray) -> list[av.Packet]:
        """The packets of `sound`'s whole frames (the rest waits for more, or `finish`)."""
        if len(sound):
            frame = av.AudioFrame.from_ndarray(pcm16(sound).reshape(1, -1), format="s16", layout="mono")
            frame.sample_rate, frame.pts = self.rate, self.done
            self.fifo.write(frame)
        return self._chunks(self.size)

    def finish(self) -> list[av.Packet]:
        """The packets of what is left, and the encoder's last."""
        return self._chunks(self.size) + self._chunks(None) + list(self.stream.encode(None))

    def _chunks(self, size: int | None) -> list[av.Packet]:
        packets = []
        while (chunk := self.fifo.read(size) if size else self.fifo.read()) is not None:
            chunk.pts, chunk.time_base = self.done, Fraction(1, self.rate)
            self.done += chunk.samples
            packets += self.stream.encode(chunk)
        return packets


class SoundFeed:
    """A mono sound track added to `out` in `codec` (aac, libopus), encoded ahead in the
    encoder's frame size from time 0, and muxed a little at a time beside the picture, so that
    the file interleaves sound and picture: a browser seeking in a file whose sound sits at its
    end stalls."""

    def __init__(self, out: av.container.OutputContainer, codec: str, sound: np.ndarray, rate: int) -> None:
        encoder = SoundEncoder(out, codec, rate)
        self.packets: list[av.Packet] = encoder.encode(sound) + encoder.finish()
        self._timed()

    def _timed(self) -> None:
        """Each packet's start in seconds, once (a Fraction per packet at every look cost the
        film's join a fifth of a second); a packet with no time goes out at once. The packets
        are one stream's, so they share a time base."""
        base = float(self.packets[0].time_base) if self.packets else 0.0
        self.starts = [-math.inf if p.pts is None else p.pts * base for p in self.packets]
        self.next = 0

    @classmethod
    def copied(cls, out: av.container.OutputContainer, source: av.container.InputContainer) -> SoundFeed:
        """The sound track of `source`, already encoded, copied packet for packet (a chapter whose
        sound did not change keeps it without encoding it again)."""
        feed = cls.__new__(cls)
        stream_in = source.streams.audio[0]
        stream = out.add_stream_from_template(stream_in)
        feed.packets = []
        for packet in source.demux(stream_in):
            if packet.dts is not None:
                packet.stream = stream
                feed.packets.append(packet)
        feed._timed()
        return feed

    def until(self, out: av.container.OutputContainer, seconds: float) -> None:
        """Mux the sound up to `seconds`."""
        first = self.next
        while self.next < len(self.packets) and self.starts[self.next] <= seconds:
            self.next += 1
        if self.next > first:
            out.mux(self.packets[first : self.next])

    def rest(self, out: av.container.OutputContainer) -> None:
        self.until(out, float("inf"))


def decoded_audio(path: Path, rate: int = AUDIO_RATE) -> np.ndarray:
    """A file's sound as mono floats at `rate` (empty when it has none)."""
    with av.open(str(path)) as box:
        if not box.streams.audio:
            return np.zeros(0, dtype=np.float32)
        resampler = av.AudioResampler(format="flt", layout="mono", rate=rate)
        chunks, as_is = [], None  # (our own AAC decodes to floats, mono, at the rate: taken as it is)
        for frame in box.decode(box.streams.audio[0]):
            if as_is is None:
                as_is = (frame.format.name, frame.layout.name, frame.sample_rate) == ("fltp", "mono", rate)
            if as_is:
                chunks.append(frame.to_ndarray()[0])
            else:
                chunks += [out.to_ndarray().reshape(-1) for out in resampler.resample(frame)]
        if not as_is:
            chunks += [out.to_ndarray().reshape(-1) for out in resampler.resample(None)]
        return np.concatenate(chunks).astype(np.float32) if chunks else np.zeros(0, dtype=np.float32)


def fitted_length(pcm: np.ndarray, frames: int) -> np.ndarray:
    """`pcm` cut or padded with silence to `frames` samples."""
    piece = np.zeros(frames, dtype=np.float32)
    piece[: min(frames, len(pcm))] = pcm[:frames]
    return piece


def encoded_within_peak(write: Callable[[np.ndarray], None], written: Path, pcm: np.ndarray, rate: int) -> np.ndarray:
    """Encode `pcm` with `write` into `written`. AAC's overshoot depends on the sound (measured
    from 0.5 to 1.6 dB), so while the decoded file's true peak is above the target the sound is
    limited lower and encoded again. Returns the sound as finally encoded."""
    # (here: SciPy, through pyloudnorm, only when sound is levelled)
    from dtfilm.system.loudness import CEILING_DBTP, limited

    sound, ceiling = pcm, CEILING_DBTP
    for _ in range(PEAK_TRIES):
        write(sound)
        over = peak_over(written, rate)
        if over <= 0:
            break
        ceiling -= over + 0.1
        sound = limited(sound, rate, ceiling).astype(np.float32)
    return sound


def peak_over(written: Path, rate: int) -> float:
    """How far (dB) the true peak of `written`'s sound, decoded at `rate`, is above what an
    encoded file may reach (the target less PEAK_MARGIN_DB); 0 or less: within it."""
    # (here: SciPy, through pyloudnorm, only when sound is levelled)
    from dtfilm.system.loudness import TARGET_PEAK_DBTP, true_peak_dbtp

    return true_peak_dbtp(decoded_audio(written, rate), rate) - (TARGET_PEAK_DBTP - PEAK_MARGIN_DB)
