"""Every number on screen equals `dtfilm estimate --json` for the same inputs.

The scene runs without frames; every text it shows carries the Phrase it was made from.
This test parses each shown number itself (its own unit table, not dtfilm's formatter),
and compares it with the value of the named path in the JSON of a separate estimate
process, within the rounding of the digits shown. A digit on screen that no fact claims
fails the test: no number is typed into a scene.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import HUGE, chapter_configs, estimate_json, inspection

SCALE = {
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
UNIT_ALTERNATIVES = "|".join(sorted((re.escape(u) for u in SCALE if u), key=len, reverse=True))
NUMBER = re.compile(rf"(?<![\w.,])(\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.(\d+))?(?:\s?({UNIT_ALTERNATIVES}))?(?!\w)")


SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
SCIENTIFIC = re.compile(rf"(\d+)(?:\.(\d+))?\s?×\s?10(⁻?[{SUPERSCRIPTS}]+)")


def parse_shown(shown: str) -> tuple[float, float]:
    """The quantity a shown string states in base units, and half its last digit."""
    science = SCIENTIFIC.search(shown)
    if science:
        whole, frac, power = science.group(1), science.group(2) or "", science.group(3)
        exponent = int(power.translate(str.maketrans("⁻" + SUPERSCRIPTS, "-0123456789")))
        return float(f"{whole}.{frac or 0}") * 10**exponent, 0.5 * 10 ** (exponent - len(frac))
    match = NUMBER.search(shown)
    assert match, f"no number in {shown!r}"
    whole, frac, unit = match.group(1), match.group(2) or "", match.group(3) or ""
    value = float(whole.replace(",", "") + ("." + frac if frac else ""))
    scale = SCALE[unit]
    return value * scale, 0.5 * 10 ** (-len(frac)) * scale


def lookup(data: dict, path: str):
    node = data
    for part in path.split("."):
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, dict) and "value" in node:
        node = node["value"]
    return node


def check_text(chapter: str, config: str, text: str, phrase) -> list[str]:
    problems = []
    if phrase is None:
        return [f"{text!r} was not made from a Phrase"]
    if phrase.text != text:
        return [f"{text!r} shows other text than its phrase {phrase.text!r}"]
    rest, cursor = text, 0
    for fact in phrase.facts:
        at = rest.find(fact.shown, cursor)
        if at < 0:
            problems.append(f"{text!r}: fact {fact.path} shows {fact.shown!r}, not found")
            continue
        rest = rest[:at] + "▯" * len(fact.shown) + rest[at + len(fact.shown) :]
        cursor = at + len(fact.shown)
        overrides = tuple(sorted(dict(fact.overrides).items()))  # the loader merged the config in
        data = estimate_json(chapter, overrides)
        if fact.kind == "formula":
            if not re.search(r"[A-Za-z].*[−+/=×]|[−+/=×].*[A-Za-z]", fact.shown):
                problems.append(f"{text!r}: {fact.shown!r} is declared a formula but is not symbolic")
            continue
        if fact.kind == "index":
            index, bound = int(fact.shown.replace(",", "")), lookup(data, fact.path)
            low, high = (1, bound) if fact.unit == "1-based" else (0, bound - 1)
            if not low <= index <= high:
                problems.append(f"{text!r}: position {index} outside {low}..{high} ({fact.path})")
            continue
        expected = lookup(data, fact.path)
        if isinstance(expected, bool):
            if fact.shown != ("on" if expected else "off"):
                problems.append(f"{text!r}: {fact.path} is {expected}, shown {fact.shown!r}")
            continue
        if isinstance(expected, str):
            if fact.shown != expected:
                problems.append(f"{text!r}: {fact.path} is {expected!r}, shown {fact.shown!r}")
            continue
        shown, half_digit = parse_shown(fact.shown)
        if abs(shown - float(expected)) > half_digit * 1.0001 + 1e-9 * abs(float(expected)):
            problems.append(f"{text!r}: {fact.path} = {expected} but the screen says {fact.shown!r}")
    for match in [*SCIENTIFIC.finditer(rest), *NUMBER.finditer(rest)]:
        problems.append(f"{text!r}: {match.group(0)!r} is on screen but comes from no fact")
    return problems


@pytest.mark.parametrize(("chapter", "config"), chapter_configs())
def test_every_number_on_screen_matches_estimate(chapter: str, config: str):
    result = inspection(chapter, config)
    problems = []
    checked = 0
    for (text, _), (beat, phrase) in result.texts.shown.items():
        found = check_text(chapter, config, text, phrase)
        problems += [f"{beat}: {p}" for p in found]
        checked += len(phrase.facts) if phrase else 0
    assert problems == []
    assert checked > 10


def test_a_typed_number_is_caught():
    from dtfilm.phrases import Fact, Phrase

    typed = Phrase("Per card: 112 GB, 8 cards", (Fact("memory.total", "GB", "112\u00a0GB"),))
    assert any("8 cards" in p or "'8" in p for p in check_text("dp", "default", typed.text, typed))
    wrong = Phrase("Per card: 99\u00a0GB", (Fact("memory.total", "GB", "99\u00a0GB"),))
    assert any("but the screen says" in p for p in check_text("dp", "default", wrong.text, wrong))
    flops = Phrase("4.14\u00a0×\u00a010²³ FLOPs", (Fact("compute.training_flops", "sci", "4.14\u00a0×\u00a010²³"),))
    assert any("but the screen says" in p for p in check_text("dp", "default", flops.text, flops))  # 4.2e22
    loose = Phrase("about 4\u00a0×\u00a010²² FLOPs", ())
    assert any("comes from no fact" in p for p in check_text("dp", "default", loose.text, loose))
    names = Phrase("H100 SXM, fp32, bf16, 3D", ())
    assert check_text("dp", "default", names.text, names) == []
    assert HUGE["cards"] == 16384
