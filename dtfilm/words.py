"""Words that state quantities: the one list of them, how numbers are written (digits and words), and
how such words are found and read back.

A caption that says "Sixteen bytes a parameter" states a number as surely as "16 bytes":
under fp8 it is wrong. So number words and precision names on screen and in the narration
must come from the cost model, as templates (`{bytes_per_param.total:Word}`), or be marked
as ordinary English in the storyboard (`{~one} card at a time`). `dtfilm check` and the
numbers test both read this list.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
    " sixteen seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()

# Every word that states a quantity, with the value it states (a factor or a fraction for
# "twice", "half" and their kin). A word here that no template or escape claims is an error.
NUMBER_WORDS: dict[str, float] = {
    **{word: float(i) for i, word in enumerate(_ONES)},
    **{word: float(10 * i) for i, word in enumerate(_TENS) if word != "_"},
    "hundred": 100.0,
    "hundreds": 100.0,
    "thousand": 1e3,
    "thousands": 1e3,
    "million": 1e6,
    "millions": 1e6,
    "billion": 1e9,
    "billions": 1e9,
    "trillion": 1e12,
    "dozen": 12.0,
    "once": 1.0,
    "twice": 2.0,
    "double": 2.0,
    "doubles": 2.0,
    "triple": 3.0,
    "triples": 3.0,
    "half": 0.5,
    "halve": 0.5,
    "halves": 0.5,
    "third": 1 / 3,
    "quarter": 0.25,
    "eighth": 0.125,
    "tenth": 0.1,
    "sixteenth": 1 / 16,
}
# Number formats a state part or an activation is kept in: names that change with the precision.
PRECISION_WORDS = ("bf16", "fp16", "fp32", "fp8", "tf32", "int8")

# As written in a sentence: lower case, capitalised, or (precision names) upper case. "ZeRO"
# is a name, not a number.
_FORMS = {
    *NUMBER_WORDS,
    *(w.capitalize() for w in NUMBER_WORDS),
    *PRECISION_WORDS,
    *(w.upper() for w in PRECISION_WORDS),
}
CHECKED = re.compile(r"(?<![\w-])(" + "|".join(sorted(_FORMS, key=len, reverse=True)) + r")(?!\w)")


def _group_thousands(digits: str) -> str:
    whole, _, frac = digits.partition(".")
    whole = f"{int(whole):,}"
    return f"{whole}.{frac}" if frac else whole


def format_number(value: float) -> str:
    """Three significant figures without trailing zeros, thousands grouped: 112, 24.5, 1.75, 16,384."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    magnitude = abs(value)
    if magnitude >= 100:
        text = f"{round(value):d}"
    elif magnitude >= 10:
        text = f"{value:.1f}"
    elif magnitude >= 0.01:
        text = f"{value:.2f}"
    else:
        text = f"{value:.2g}"
        return text
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    sign = "-" if text.startswith("-") else ""
    return sign + _group_thousands(text.lstrip("-"))


def quantity_words(text: str) -> list[re.Match[str]]:
    """Every checked word in `text` (number words, precision names), in order."""
    return list(CHECKED.finditer(text))


def number_word(value: float) -> str:
    """A whole or half number in words, up to 999 ("sixteen", "one and a half"); anything else
    in digits, three figures, as the screen writes numbers."""
    whole = int(value)
    if value < 0 or value >= 1000 or value * 2 != int(value * 2):
        return format_number(value)
    words = _whole_words(whole) if whole or value == 0 else ""
    if value - whole:
        return f"{words} and a half" if words else "a half"
    return words


def _whole_words(n: int) -> str:
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + (f"-{_ONES[ones]}" if ones else "")
    hundreds, rest = divmod(n, 100)
    return f"{_ONES[hundreds]} hundred" + (f" and {_whole_words(rest)}" if rest else "")


def times_word(value: float) -> str:
    """A factor: "once", "twice", "three times", "one and a half times"."""
    if value == 1:
        return "once"
    if value == 2:
        return "twice"
    return f"{number_word(value)} times"


_PARTS = {Fraction(1, 2): "half", Fraction(1, 3): "a third", Fraction(1, 4): "a quarter", Fraction(1, 8): "an eighth"}


def part_word(value: float) -> str:
    """A simple fraction in words ("a third", "half"); others as a percentage."""
    fraction = Fraction(value).limit_denominator(16)
    if abs(float(fraction) - value) < 1e-9 and fraction in _PARTS:
        return _PARTS[fraction]
    return f"{format_number(100 * value)}%"


def read_number_words(text: str) -> float | None:
    """The quantity a phrase of number words states ("one and a half times", "twenty-one",
    "a third", "twice"), or None when it is not one. A reader of its own, so that the numbers
    test checks the writer above rather than repeating it."""
    tokens = [t for t in re.split(r"[\s-]+", text.lower().strip()) if t and t != "times"]
    extra = 0.0
    if tokens[-3:] == ["and", "a", "half"]:
        tokens, extra = tokens[:-3], 0.5
    if tokens and tokens[0] in ("a", "an"):
        tokens = tokens[1:]
    if len(tokens) == 1 and tokens[0] in NUMBER_WORDS and NUMBER_WORDS[tokens[0]] < 1:
        return NUMBER_WORDS[tokens[0]] + extra
    total = 0.0
    for token in tokens:
        if token == "and":
            continue
        if token not in NUMBER_WORDS:
            return None
        if token == "hundred":
            total *= 100
        else:
            total += NUMBER_WORDS[token]
    return total + extra if tokens else None


# Words that draw a conclusion from the numbers: true at one setting, false at another (the 3D
# chapter's "heaviest exchange" is the lightest by bytes). Each must sit in a claim
# (`{?bytes: CONDITION => fits | does not fit}`, dtfilm/claims.py) or be marked as ordinary
# English (`{~fits}`). A phrase of two words is matched as written.
CONCLUSION_WORDS = (
    "fit",
    "fits",
    "fitting",
    "heaviest",
    "lightest",
    "fastest",
    "slowest",
    "largest",
    "smallest",
    "busiest",
    "cannot",
    "can't",
    "scale",
    "scales",
    "shrink",
    "shrinks",
    "collapse",
    "collapses",
    "almost nothing",
    "tiny",
    "sliver",
    "crippling",
    "far past",
    "level off",
    "levels off",
    "buy",
    "buys",
    "cheaper",
    "most of the work",
)
_CONCLUSIONS = re.compile(
    r"(?<![\w-])("
    + "|".join(
        re.escape(w).replace(r"\ ", r"\s+").replace("'", "['’]")
        for w in sorted({*CONCLUSION_WORDS, *(w.capitalize() for w in CONCLUSION_WORDS)}, key=len, reverse=True)
    )
    + r")(?![\w-])"
)


def conclusion_words(text: str) -> list[re.Match[str]]:
    """Every conclusion word in `text`, in order."""
    return list(_CONCLUSIONS.finditer(text))


# Count nouns the film's templates write in the plural, with their singular. After a count of
# exactly one ({cluster.cards:int} cards at --cards 1, {inputs.micro_batches:word} micro-batches
# at one) the noun agrees: "1 card", "one micro-batch" (dtfilm.phrases.render_template).
SINGULAR: dict[str, str] = {
    "all-reduces": "all-reduce",
    "buckets": "bucket",
    "bytes": "byte",
    "cards": "card",
    "chunks": "chunk",
    "copies": "copy",
    "GPUs": "GPU",
    "groups": "group",
    "layers": "layer",
    "micro-batches": "micro-batch",
    "nodes": "node",
    "replicas": "replica",
    "rows": "row",
    "sequences": "sequence",
    "shards": "shard",
    "slots": "slot",
    "stages": "stage",
    "steps": "step",
    "tokens": "token",
}
# Verbs the film's templates write right after a counted noun, in the plural, with their
# singular: "{cluster.cards:int} cards take 9.6 days" reads "1 card takes 9,830 days" at one.
# Only the word right after a noun of SINGULAR agrees ("1 card, the same work split" is left be).
SINGULAR_VERBS: dict[str, str] = {
    "are": "is",
    "do": "does",
    "get": "gets",
    "have": "has",
    "hold": "holds",
    "keep": "keeps",
    "move": "moves",
    "need": "needs",
    "run": "runs",
    "send": "sends",
    "take": "takes",
    "wait": "waits",
    "were": "was",
}
ONE_MARK = "\x00"  # follows a count of one while a template is filled (dtfilm.phrases.render_template)
_ONE_BEFORE_NOUN = re.compile(re.escape(ONE_MARK) + r"(\s+)([A-Za-z][\w-]*)(?:(\s+)([a-z]+)\b)?")


def _singular(match: re.Match[str]) -> str:
    space, noun, gap, verb = match.groups()
    if noun not in SINGULAR:
        return match.group(0)[1:]
    after = f"{gap}{SINGULAR_VERBS.get(verb, verb)}" if verb else ""
    return f"{space}{SINGULAR[noun]}{after}"


def agreeing(text: str) -> str:
    """`text` with every noun after a count of one (marked by a NUL where the count was filled in)
    made singular, and a verb right after it (SINGULAR_VERBS) agreeing, and the marks removed."""
    return _ONE_BEFORE_NOUN.sub(_singular, text).replace(ONE_MARK, "")
