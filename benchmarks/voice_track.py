"""Listen to a rendered clip without ears: its sound's length, loudness, where speech is, and
whether the subtitles' cues sit on the speech (figures printed, not asserted).

Usage: python benchmarks/voice_track.py renders/tp.mp4 [--gaps]
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import av
import numpy as np

from dtfilm.system.sound import AUDIO_RATE, decoded_audio
from dtfilm.voice.listen import cues, speech_spans


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("clip", type=Path)
    parser.add_argument("--gaps", action="store_true", help="list every stretch of the clip without speech")
    args = parser.parse_args()
    samples, rate = decoded_audio(args.clip), AUDIO_RATE
    if not samples.size:
        print(f"{args.clip}: no sound")
        return 0
    with av.open(str(args.clip)) as box:
        length = float(box.duration / 1e6)
    peak = 20 * np.log10(np.abs(samples).max() + 1e-12)
    spans = speech_spans(samples, rate)
    spoken = sum(b - a for a, b in spans)
    voiced = np.concatenate([samples[int(a * rate) : int(b * rate)] for a, b in spans]) if spans else samples
    rms = 20 * np.log10(np.sqrt((voiced**2).mean()) + 1e-12)
    print(f"{args.clip}: {length:.1f} s, sound {len(samples) / rate:.1f} s (decoded at {rate} Hz)")
    print(f"  speech {spoken:.1f} s in {len(spans)} stretches ({100 * spoken / length:.0f}% of the clip)")
    print(f"  level while speaking {rms:.1f} dBFS RMS, peak {peak:.1f} dBFS")
    try:
        import pyloudnorm

        print(f"  integrated loudness {pyloudnorm.Meter(rate).integrated_loudness(samples):.1f} LUFS")
    except ImportError:
        pass
    listed = cues(args.clip)
    if listed:
        covered = [
            sum(max(0.0, min(b, end) - max(a, start)) for a, b in spans) / max(end - start, 1e-9)
            for start, end, _ in listed
        ]
        filled = 100 * float(np.mean(covered))
        print(f"  {len(listed)} subtitle cues; speech fills {filled:.0f}% of their time on average")
        for (start, end, text), share in zip(listed, covered, strict=True):
            if share < 0.6:
                print(f"    cue {start:.1f}-{end:.1f} s mostly silent ({100 * share:.0f}%): {text[:60]}")
    if args.gaps:
        for (_, a), (b, _) in itertools.pairwise(spans):
            if b - a >= 1.0:
                print(f"    no speech {a:.1f}-{b:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
