"""The voice's CPU and wall time on a dozen of the film's kind of sentences, with ONNX Runtime's
threads spinning while they wait (its default) and told not to (what dtfilm.voice.engine loads),
and whether the audio is the same (figures printed, not asserted). Run it on a quiet machine and
again while the cores are busy (a render, the tests): spinning costs most when they are.

Usage: python benchmarks/voice_speed.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import time

from dtfilm.voice.engine import VoiceSpec, _quiet_session, model_files

SENTENCES = (
    "Every card holds the whole model and trains on its own slice of the batch.",
    "The all-to-all takes 137 milliseconds a step, none of it hidden under the compute.",
    "With the experts spread, a step takes 4.85 seconds, the all-to-all a sliver of it.",
    "Give tensor parallelism two cards of each replica: the group spans two nodes.",
) * 3


def speak(voice, rate: float) -> tuple[float, float, str]:
    """CPU seconds, wall seconds and the audio's digest for SENTENCES."""
    from piper import SynthesisConfig

    config = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0, length_scale=1 / rate, volume=1.0)
    before, started, digest = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter(), hashlib.sha256()
    for sentence in SENTENCES:
        for chunk in voice.synthesize(sentence, syn_config=config):
            digest.update(chunk.audio_int16_bytes)
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, time.perf_counter() - started, digest.hexdigest()[:12]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    from piper import PiperVoice

    spec = VoiceSpec("joe", 0.83)
    model, config = model_files(spec)
    spinning = PiperVoice.load(str(model), config_path=str(config))
    quiet = PiperVoice.load(str(model), config_path=str(config))
    quiet.session = _quiet_session(model)
    for _ in range(args.rounds):
        for name, voice in (("spinning", spinning), ("quiet", quiet)):
            cpu, wall, digest = speak(voice, spec.rate)
            print(f"{name:9} {len(SENTENCES)} sentences: {cpu:5.2f} s CPU, {wall:5.2f} s wall, audio {digest}")


if __name__ == "__main__":
    main()
