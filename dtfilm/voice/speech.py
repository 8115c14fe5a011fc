"""Text made for speech: what a voice should say for what the screen shows.

"112 GB" is said "a hundred and twelve gigabytes", "1.5×" "one point five times", "bf16"
"B F sixteen", "(p−1)/(m+p−1)" "p minus one over m plus p minus one", "4.2 × 10²³ FLOPs" "four
point two times ten to the twenty-third flops". Terms come from one lexicon
(dtfilm/data/lexicon.yaml); numbers and units are read here. Whatever remains must be words and
pauses: `spoken` raises SpeechError naming any symbol it cannot say, so no raw symbol ever
reaches the engine.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

import yaml

from dtfilm.errors import DtfilmError
from dtfilm.storyboard import Chapter
from dtfilm.words import _ONES, _TENS


class SpeechError(ValueError):
    """Text holds a symbol the voice cannot say; the message names it."""


@cache
def lexicon() -> dict[str, str]:
    """Each term as written, and how the voice says it."""
    text = resources.files("dtfilm.data").joinpath("lexicon.yaml").read_text()
    terms = yaml.safe_load(text)["terms"]
    return {str(k): str(v) for k, v in terms.items()}


@cache
def _lexicon_pattern() -> re.Pattern[str]:
    terms = sorted(lexicon(), key=len, reverse=True)
    return re.compile(r"(?<![\w-])(" + "|".join(re.escape(t) for t in terms) + r")(?![\w-])")


# -- numbers ------------------------------------------------------------------------------------
_SCALES = ((10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (10**3, "thousand"))
_ORDINALS = {
    "one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth", "nine": "ninth",
    "twelve": "twelfth",
}  # fmt: skip


def _below_thousand(n: int) -> str:
    hundreds, rest = divmod(n, 100)
    words = []
    if hundreds:
        words.append(f"{_ONES[hundreds]} hundred")
    if rest:
        tens, ones = divmod(rest, 10)
        part = _ONES[rest] if rest < 20 else _TENS[tens] + (f"-{_ONES[ones]}" if ones else "")
        words.append(("and " if hundreds else "") + part)
    return " ".join(words)


def integer_words(n: int) -> str:
    """A whole number in words, as said aloud: 112 is "a hundred and twelve", 16,384 "sixteen
    thousand, three hundred and eighty-four"."""
    if n == 0:
        return "zero"
    if n < 0:
        return "minus " + integer_words(-n)
    parts = []
    for size, name in _SCALES:
        if n >= size:  # past a thousand trillion the count of trillions is itself a number in words
            count = n // size
            parts.append(f"{_below_thousand(count) if count < 1000 else integer_words(count)} {name}")
            n %= size
    words = ", ".join(parts)
    if n:  # the last part joins with "and" when it is under a hundred: "two thousand and five"
        tail = _below_thousand(n)
        words = f"{words} and {tail}" if words and n < 100 else ", ".join([*parts, tail])
    return re.sub(r"^one (hundred|thousand|million|billion|trillion)", r"a \1", words)


def number_words(text: str) -> str:
    """A number as written ("16,384", "7.39", "0.5") in words: the decimals digit by digit."""
    whole, _, decimals = text.replace(",", "").partition(".")
    words = integer_words(int(whole)) if whole else "zero"
    if decimals:
        words += " point " + " ".join(_ONES[int(d)] for d in decimals)
    return words


def ordinal_words(n: int) -> str:
    """ "twenty-third": for powers of ten."""
    words = integer_words(n)
    last = re.split(r"[\s-]", words)[-1]
    said = _ORDINALS.get(last) or (last[:-1] + "ieth" if last.endswith("y") else last + "th")
    return words[: len(words) - len(last)] + said


# -- units --------------------------------------------------------------------------------------
# unit as shown -> (singular, plural)
UNITS = {
    "GB/s": ("gigabyte per second", "gigabytes per second"),
    "TB": ("terabyte", "terabytes"),
    "GB": ("gigabyte", "gigabytes"),
    "GiB": ("gibibyte", "gibibytes"),
    "MB": ("megabyte", "megabytes"),
    "KB": ("kilobyte", "kilobytes"),
    "µs": ("microsecond", "microseconds"),
    "ms": ("millisecond", "milliseconds"),
    "min": ("minute", "minutes"),
    "s": ("second", "seconds"),
    "h": ("hour", "hours"),
    "days": ("day", "days"),
    "years": ("year", "years"),
    "%": ("percent", "percent"),
}
# units written against the number, with no space: "1.5×", "128K", "7B"
ATTACHED = {
    "×": ("times", "times"),
    "K": ("K", "K"),  # sequence lengths are said as written: "a hundred and twenty-eight K"
    "M": ("million", "million"),
    "B": ("billion", "billion"),
    "T": ("trillion", "trillion"),
    "x": ("times", "times"),  # "a 2x speedup"
    "G": ("gig", "gig"),  # a link's gigabits a second, as engineers say it: "Ethernet 400G", "four hundred gig"
}
_SUPERSCRIPTS = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SCIENTIFIC = re.compile(rf"({_NUMBER})\s?×\s?10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)")
_UNIT_ALTERNATIVES = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
_QUANTITY = re.compile(rf"(?<![\w.])({_NUMBER})[\s\u00a0]?({_UNIT_ALTERNATIVES})(?![\w/])")
_ATTACHED = re.compile(rf"(?<![\w.])({_NUMBER})([{''.join(ATTACHED)}])(?![\w/])")
_BARE_NUMBER = re.compile(rf"(?<![\w.])({_NUMBER})")
_LINKS_TIMES = re.compile(r"(?<![\w.])(\d+)x(?=\d)")  # "4x100G": four links of 100G, "four by a hundred gig"
_SYMBOLS = {
    "−": " minus ",
    "+": " plus ",
    "=": " equals ",
    "×": " by ",
    "/": " over ",
    "·": ", ",
    "⋯": " ",
    "…": ", ",
    "(": " ",
    ")": " ",
    "—": ", ",
    "–": ", ",
    "\u00a0": " ",
    "\u2060": "",
}
SPEAKABLE = re.compile(r"[A-Za-z\s.,;:!?'’\-]*")


def _quantity(match: re.Match[str]) -> str:
    number, unit = match.group(1), match.group(2)
    singular, plural = UNITS.get(unit) or ATTACHED[unit]
    return f"{number_words(number)} {singular if number == '1' else plural}"


def _scientific(match: re.Match[str]) -> str:
    power = int(match.group(2).translate(_SUPERSCRIPTS))
    said = ("minus " + ordinal_words(-power)) if power < 0 else ordinal_words(power)
    return f"{number_words(match.group(1))} times ten to the {said}"


def spoken(text: str) -> str:
    """What the voice says for `text`: terms from the lexicon, numbers and units in words,
    notation read out. Raises SpeechError if a symbol is left that no rule says."""
    said = _lexicon_pattern().sub(lambda m: lexicon()[m.group(1)], text)
    said = _SCIENTIFIC.sub(_scientific, said)
    said = _LINKS_TIMES.sub(r"\1 by ", said)
    said = _ATTACHED.sub(_quantity, said)
    said = _QUANTITY.sub(_quantity, said)
    said = _BARE_NUMBER.sub(lambda m: number_words(m.group(1)), said)
    for symbol, words in _SYMBOLS.items():
        said = said.replace(symbol, words)
    said = re.sub(r"\s+([,.;:!?])", r"\1", re.sub(r"\s+", " ", said)).strip()
    said = re.sub(r",(\s*,)+", ",", said)
    left = SPEAKABLE.sub("", said)
    if left:
        raise SpeechError(f"the voice cannot say {left[0]!r} in {text!r}; add it to dtfilm/data/lexicon.yaml")
    return said


def narration_script(chapter: Chapter) -> list[str]:
    """Every shot's narration as written and as the voice is given it (`dtfilm narration`). A
    narration the voice cannot say is an error naming its shot."""
    lines = []
    for shot in chapter.shots:
        if shot.narration is None:
            continue
        try:
            said = spoken(shot.narration.text)
        except SpeechError as error:
            raise DtfilmError(str(error), shot.where, f"shots[{shot.index}].narration") from None
        lines += [f"{chapter.id}:{shot.beat}", f"  written: {shot.narration.text}", f"  spoken:  {said}"]
    return lines
