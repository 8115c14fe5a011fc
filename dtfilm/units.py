"""Units at the edges: parsing counts like "7B" and formatting quantities for the screen.

Inside dtfilm every quantity is bytes, seconds, FLOPs or a plain count. On screen
GB = 1e9 bytes (decimal, as the seeds and the card makers use), never GiB silently.
"""

from __future__ import annotations

import math
import re

from dtfilm.words import format_number, number_word, part_word, times_word

_SUFFIX_SCALE = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}
# A sign is read, so that `--cards -5` is refused by the input's range ("1 to 131,072"), as
# `cards: -5` in YAML is, and not as "not a whole number".
_COUNT_RE = re.compile(r"^\s*([+-]?[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([KMBGT]?)\s*$", re.IGNORECASE)

SECONDS_PER_DAY = 86_400.0
SECONDS_PER_YEAR = 365.25 * SECONDS_PER_DAY

# unit name -> (kind of quantity it formats, how many base units one of it is)
UNITS: dict[str, tuple[str, float]] = {
    "B": ("bytes", 1.0),
    "KB": ("bytes", 1e3),
    "MB": ("bytes", 1e6),
    "GB": ("bytes", 1e9),
    "TB": ("bytes", 1e12),
    "GiB": ("bytes", 2.0**30),
    "us": ("seconds", 1e-6),
    "ms": ("seconds", 1e-3),
    "s": ("seconds", 1.0),
    "min": ("seconds", 60.0),
    "h": ("seconds", 3600.0),
    "days": ("seconds", SECONDS_PER_DAY),
    "years": ("seconds", SECONDS_PER_YEAR),
    "%": ("fraction", 0.01),
    "x": ("ratio", 1.0),
    "int": ("count", 1.0),
    "sci": ("count", 1.0),
    "si": ("count", 1.0),
    "num": ("count", 1.0),
    "K": ("count", 1.0),  # a power-of-two count as sequence lengths are named: 4K, 128K, 1M
    "word": ("count", 1.0),  # in words: "sixteen", "one and a half" (dtfilm.words)
    "Word": ("count", 1.0),  # the same, capitalised to start a sentence: "Sixteen"
    "times": ("ratio", 1.0),  # a factor in words: "once", "twice", "three times"
    "part": ("fraction", 1.0),  # a simple fraction in words: "half", "a third"
    "bytes": ("bytes", 1.0),  # MB, GB or TB, whichever keeps the number short
    "time": ("seconds", 1.0),  # µs, ms, s, min, h or days, likewise
    "GB/s": ("bytes_per_second", 1e9),
    "TFLOP/s": ("flops_per_second", 1e12),
}
_SHOWN_UNIT = {"us": "µs", "int": "", "si": "", "num": "", "x": "×", "%": "%"}


def parse_count(text: str | int | float) -> float:
    """Parse 7e9, 7B, 512M, 1T, 6.7e9 or a plain number into a float count."""
    if isinstance(text, bool):
        raise ValueError("expected a number, got a boolean")
    if isinstance(text, (int, float)):
        return float(text)
    match = _COUNT_RE.match(str(text))
    if not match:
        raise ValueError(f"{text!r} is not a count (write 7e9, 7B, 512M or 1T)")
    return float(match.group(1)) * _SUFFIX_SCALE[match.group(2).upper()]


_BINARY_SCALE = {"": 1, "K": 2**10, "M": 2**20}


def parse_sequence_length(text: str | int | float) -> float:
    """Tokens per sequence, where K and M are binary, as sequence lengths are named: 8K = 8,192,
    128K = 131,072, 1M = 1,048,576 (the `K` unit shows them so). Plain numbers as they are."""
    if isinstance(text, bool):
        raise ValueError("expected a number, got a boolean")
    if isinstance(text, (int, float)):
        return float(text)
    match = _COUNT_RE.match(str(text))
    if not match or match.group(2).upper() not in _BINARY_SCALE:
        raise ValueError(f"{text!r} is not a sequence length (write 4096, 8K = 8,192 or 128K = 131,072)")
    return float(match.group(1)) * _BINARY_SCALE[match.group(2).upper()]


def format_si(value: float) -> str:
    """A count with a K/M/B/T suffix: 7B, 6.74B, 512M, 1T."""
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(value) >= scale:
            return format_number(value / scale) + suffix
    return format_number(value)


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def format_scientific(value: float) -> str:
    """A huge count in powers of ten, three figures: 4.14 × 10²³ (FLOPs)."""
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)))
    mantissa = value / 10**exponent
    if round(mantissa, 2) >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{format_number(mantissa)}\u00a0×\u00a010{str(exponent).translate(_SUPERSCRIPT)}"


def format_binary(value: float) -> str:
    """A count in binary thousands, as context lengths are named: 4,096 is 4K, 131,072 is 128K,
    1,048,576 is 1M; a count that is not a whole number of them is written out."""
    for prefix, size in (("M", 2**20), ("K", 2**10)):
        if abs(value) >= size and float(value) % size == 0:
            return f"{round(value / size):,}{prefix}"
    return f"{round(value):,}"


def format_quantity(value: float, unit: str) -> str:
    """Format a base-unit quantity (bytes, seconds, a fraction ...) in `unit` for the screen."""
    if unit not in UNITS:
        raise KeyError(unit)
    if unit == "bytes":
        # (none at all in GB, the film's unit: one card's dp traffic reads "0 GB" in the stat and the note)
        unit = next((u for u in ("TB", "GB", "MB") if abs(value) >= UNITS[u][1]), "KB" if value else "GB")
    if unit == "time":
        steps = (("days", SECONDS_PER_DAY * 2), ("h", 7200.0), ("min", 120.0), ("s", 1.0), ("ms", 1e-3))
        unit = next((u for u, floor in steps if abs(value) >= floor), "us")
    if unit == "int":
        return f"{round(value):,}"
    if unit in ("word", "Word", "times", "part"):
        text = {"word": number_word, "Word": number_word, "times": times_word, "part": part_word}[unit](value)
        return text[:1].upper() + text[1:] if unit == "Word" else text
    if unit == "K":
        return format_binary(value)
    if unit == "si":
        return format_si(value)
    if unit == "sci":
        return format_scientific(value)
    _, scale = UNITS[unit]
    shown = _SHOWN_UNIT.get(unit, unit)
    number = format_number(value / scale)
    if unit in ("x", "%"):
        return f"{number}{shown}"
    # A no-break space keeps "24.5 GB" on one line when captions wrap.
    return f"{number}\u00a0{shown}" if shown else number


def counted(n: int, noun: str) -> str:
    """'1 plan', '37 plans', '1,040 calls': a count with its noun in the number it takes."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
