"""The numbers and words checks on one text: every digit, number word and precision name it
shows must come from a fact (a cost-model value, a position, notation, or words marked as
ordinary English), and every fact must show its value. No manim here.

`dtfilm check` runs these on everything a chapter shows and says; the numbers-on-screen test
runs them too, and compares each fact with a separate `dtfilm estimate` process besides.
"""

from __future__ import annotations

import re
import unicodedata

from dtfilm.phrases import Fact, Phrase
from dtfilm.words import conclusion_words, quantity_words, read_number_words

# The screen's units and their size in base units: a table of this module's own, so that the
# check reads what the formatter wrote rather than repeating the formatter.
SCALE = {
    "GB/s": 1e9,
    "TFLOP/s": 1e12,
    "GB": 1e9,
    "TB": 1e12,
    "MB": 1e6,
    "KB": 1e3,
    "GiB": 2**30,
    "B": 1e9,
    "M": 1e6,
    "K": 1e3,
    "T": 1e12,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "min": 60.0,
    "h": 3600.0,
    "days": 86400.0,
    "years": 365.25 * 86400,
    "%": 0.01,
    "×": 1.0,
    "": 1.0,
}
_UNIT_ALTERNATIVES = "|".join(sorted((re.escape(u) for u in SCALE if u), key=len, reverse=True))
NUMBER = re.compile(rf"(?<![\w.,])(\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.(\d+))?(?:\s?({_UNIT_ALTERNATIVES}))?(?!\w)")
SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
SCIENTIFIC = re.compile(rf"(\d+)(?:\.(\d+))?\s?×\s?10(⁻?[{SUPERSCRIPTS}]+)")
MASK = "▯"


# Characters that change what a text shows without being seen: format characters (Cf: the bidi
# controls U+202A..U+202E and U+2066..U+2069 that reorder "it does not fit" into "it fits", the
# zero-width space and joiners that split "fi\u200bts" away from the conclusion words), line
# and paragraph separators, private and unassigned code points, and the blank letters and
# joiners outside Cf that draw nothing.
HIDDEN_CATEGORIES = frozenset({"Cf", "Zl", "Zp", "Co", "Cn", "Cs"})
HIDDEN_CHARACTERS = frozenset("\u034f\u115f\u1160\u3164\uffa0\u2800") | frozenset(map(chr, range(0xFE00, 0xFE10)))


def hidden_character(text: str) -> str | None:
    """The first character of `text` that hides or reorders what is drawn or said, or None."""
    for char in text:
        if char in HIDDEN_CHARACTERS or unicodedata.category(char) in HIDDEN_CATEGORIES:
            return char
    return None


def character_name(char: str) -> str:
    """U+202E (RIGHT-TO-LEFT OVERRIDE): a character as an error names it."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" ({name})" if name else "")


def parse_shown(shown: str) -> tuple[float, float] | None:
    """The quantity a shown string states in base units, and half its last digit (the
    rounding it allows); None when it states none."""
    science = SCIENTIFIC.search(shown)
    if science:
        whole, frac, power = science.group(1), science.group(2) or "", science.group(3)
        exponent = int(power.translate(str.maketrans("⁻" + SUPERSCRIPTS, "-0123456789")))
        return float(f"{whole}.{frac or 0}") * 10**exponent, 0.5 * 10 ** (exponent - len(frac))
    match = NUMBER.search(shown)
    if match:
        whole, frac, unit = match.group(1), match.group(2) or "", match.group(3) or ""
        value = float(whole.replace(",", "") + ("." + frac if frac else ""))
        scale = SCALE[unit]
        return value * scale, 0.5 * 10 ** (-len(frac)) * scale
    words = read_number_words(shown)
    if words is not None:
        return words, 1e-9
    return None


# A count in binary thousands, as sequence lengths are named (the `K` unit: 128K is 131,072).
BINARY = {"K": 2**10, "M": 2**20, "": 1}


def parse_binary(shown: str) -> tuple[float, float] | None:
    """A sequence length as shown ("128K", "1M", "3,000"): exact, so half a token of rounding."""
    match = re.fullmatch(r"(\d{1,3}(?:,\d{3})*|\d+)([KM]?)", shown)
    if match is None:
        return None
    return float(match.group(1).replace(",", "")) * BINARY[match.group(2)], 0.5


def find_shown(text: str, shown: str, start: int = 0) -> int:
    """Where `shown` stands in `text` from `start` as a whole (the "eight" of "eight cards",
    never the one inside "weights"), or -1."""

    def edge(char: str) -> str:  # a letter may not touch a letter, nor a digit a digit
        return "[^\\W\\d_]" if char.isalpha() else r"\d" if char.isdigit() else ""

    first, last = edge(shown[:1]), edge(shown[-1:])
    before = f"(?<!{first})" if first else ""
    after = f"(?!{last})" if last else ""
    match = re.compile(before + re.escape(shown) + after).search(text, start)
    return match.start() if match else -1


def masked(text: str, phrase: Phrase) -> tuple[str, list[str]]:
    """`text` with every fact's span blanked out, and the facts that were not found in it."""
    rest, cursor, missing = text, 0, []
    for fact in phrase.facts:
        if fact.kind == "claim":  # a claim's words: its own numbers are facts of their own
            continue
        at = find_shown(rest, fact.shown, cursor)
        if at < 0:
            missing.append(f"fact {fact.path} shows {fact.shown!r}, not found")
            continue
        rest = rest[:at] + MASK * len(fact.shown) + rest[at + len(fact.shown) :]
        cursor = at + len(fact.shown)
    return rest, missing


def unclaimed(text: str, phrase: Phrase) -> list[str]:
    """Numbers, number words and precision names in `text` that no fact of `phrase` claims."""
    rest, problems = masked(text, phrase)
    for match in [*SCIENTIFIC.finditer(rest), *NUMBER.finditer(rest)]:
        problems.append(f"{match.group(0)!r} is typed, not taken from the cost model")
    for match in quantity_words(rest):
        word = match.group(0)
        problems.append(f"{word!r} is a typed quantity word: template it ({{path:word}}) or mark it {{~{word}}}")
    return problems


def excerpt(text: str, width: int = 70) -> str:
    """A long text shortened for a one-line report, quoted as it reads: the no-break spaces that
    keep a number to its unit are plain spaces there (repr wrote them as \\xa0)."""
    plain = text.replace("\xa0", " ").replace("\u202f", " ")
    return repr(plain if len(plain) <= width else plain[: width - 1] + "…")


def fact_problem(fact: Fact, expected: float | str) -> str | None:
    """Whether a fact shows `expected` (the value at its path) within the rounding shown."""
    if fact.kind != "cost":
        return None
    if isinstance(expected, bool):
        return None if fact.shown == ("on" if expected else "off") else f"{fact.path} is {expected}"
    if isinstance(expected, str):
        return None if fact.shown == expected else f"{fact.path} is {expected!r}"
    parsed = parse_binary(fact.shown) if fact.unit == "K" else parse_shown(fact.shown)
    if parsed is None:
        return f"{fact.path}: {fact.shown!r} states no number"
    shown, half_digit = parsed
    if abs(shown - float(expected)) > half_digit * 1.0001 + 1e-9 * abs(float(expected)):
        return f"{fact.path} = {expected:.6g} but the text says {fact.shown!r}"
    return None


def text_problems(text: str, phrase: Phrase | None) -> list[str]:
    """Everything wrong with one shown or spoken text, checked against its own facts."""
    if phrase is None:
        return [f"{text!r} was not made from a Phrase"]
    if phrase.text != text:
        return [f"{text!r} shows other text than its phrase {phrase.text!r}"]
    shown = excerpt(text)
    problems = [f"{shown}: {p}" for p in unclaimed(text, phrase)]
    for fact in phrase.facts:
        if fact.kind == "formula" and not re.search(r"[A-Za-z].*[−+/=×]|[−+/=×].*[A-Za-z]", fact.shown):
            problems.append(f"{shown}: {fact.shown!r} is declared a formula but is not symbolic")
        found = fact_problem(fact, fact.value) if fact.value is not None else None
        if found:
            problems.append(f"{shown}: {found}")
    return problems


def unclaimed_conclusions(text: str, phrase: Phrase) -> list[str]:
    """Conclusion words ("fits", "heaviest", "scales") in `text` outside a claim and outside
    the `{~...}` escape: a conclusion is bound to the numbers, or marked as ordinary English."""
    rest = text
    for kind in ("claim", "literal"):  # claims first: an escape inside a claim is already covered
        cursor = 0
        for fact in phrase.facts:
            if fact.kind != kind or not fact.shown:
                continue
            at = find_shown(rest, fact.shown, cursor)
            if at < 0:
                continue
            rest = rest[:at] + MASK * len(fact.shown) + rest[at + len(fact.shown) :]
            cursor = at + len(fact.shown)
    return [
        f"{m.group(0)!r} draws a conclusion from the numbers: bind it as a claim"
        f" ({{?bytes: CONDITION => {m.group(0)} | other words}}) or mark it {{~{m.group(0)}}}"
        for m in conclusion_words(rest)
    ]


def false_claims(phrase: Phrase) -> list[str]:
    """Each claim of `phrase` that is false at its setting: its words, its condition and the
    values that contradict it."""
    problems = []
    for fact in phrase.facts:
        result = fact.value
        if fact.kind == "claim" and not result.holds:
            problems.append(
                f"false claim {result.text!r} ({result.quantity}): {result.condition} does not hold:"
                f" {result.contradiction()}"
            )
    return problems
