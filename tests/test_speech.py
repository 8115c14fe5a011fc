"""Text made for speech: what the voice is given for what the screen shows."""

from __future__ import annotations

import pytest

from dtfilm.voice.speech import SpeechError, integer_words, lexicon, narration_script, spoken
from tests.conftest import ROOT, chapter_ids


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("112 GB", "a hundred and twelve gigabytes"),
        ("1 GB", "one gigabyte"),
        ("24.5\u00a0GB", "twenty-four point five gigabytes"),
        ("1.5×", "one point five times"),
        ("bf16", "B F sixteen"),
        ("ZeRO-3", "zero three"),
        ("NVLink", "N V link"),
        ("all-reduce", "all reduce"),
        ("(p−1)/(m+p−1)", "p minus one over m plus p minus one"),
        ("4.2 × 10²³ FLOPs", "four point two times ten to the twenty-third flops"),
        ("16,384 cards", "sixteen thousand, three hundred and eighty-four cards"),
        ("383 ms · 5.27 s", "three hundred and eighty-three milliseconds, five point two seven seconds"),
        ("at 128K tokens", "at a hundred and twenty-eight K tokens"),
        ("dp 8 × tp 1", "D P eight by T P one"),
        ("LLaMA 7B", "llama seven billion"),
        ("50% of its peak", "fifty percent of its peak"),
        ("K/V per hop", "keys and values per hop"),
    ],
)
def test_what_the_screen_shows_is_said_in_words(written, said):
    assert spoken(written) == said


@pytest.mark.parametrize(
    ("n", "words"),
    [
        (0, "zero"),
        (21, "twenty-one"),
        (100, "a hundred"),
        (1024, "a thousand and twenty-four"),
        (2005, "two thousand and five"),
        (1_000_000, "a million"),
        (70_000_000_000, "seventy billion"),
    ],
)
def test_integers_as_said(n, words):
    assert integer_words(n) == words


def test_a_symbol_no_rule_says_is_an_error_naming_it():
    with pytest.raises(SpeechError, match="'§'"):
        spoken("see § 4")


def test_every_term_of_the_lexicon_is_speakable():
    for term, said in lexicon().items():
        assert spoken(said) == said, term
        assert spoken(term) == said, term


@pytest.mark.parametrize("chapter", chapter_ids())
def test_every_narration_of_the_film_reaches_the_voice_as_words(chapter):
    from dtfilm.storyboard import load_chapter

    script = narration_script(load_chapter(chapter, {}, ROOT))
    spoken_lines = [line for line in script if line.startswith("  spoken:")]
    assert spoken_lines
    for line in spoken_lines:
        assert not any(ch.isdigit() for ch in line), line
