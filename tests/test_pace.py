"""The speech bounds (issue 58): words a minute from the subtitle cues, quantities a sentence
counted after templating, and no title card held past its sentence; `check` says each."""

from __future__ import annotations

import dataclasses

import pytest

from dtfilm.check.speech import held_card_problems, speech_problems
from dtfilm.storyboard import load_chapter
from dtfilm.voice.cues import Cue
from dtfilm.voice.pace import pace_of, pace_problems, quantities


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("It holds 73\u00a0GB, and 4.29\u00a0GB of it are weights.", ["73\u00a0GB", "4.29\u00a0GB"]),
        (
            "One card peaks at 989\u00a0TFLOP/s; kept 50% busy it would need 26.9\u00a0years.",
            ["989\u00a0TFLOP/s", "50%", "26.9\u00a0years"],
        ),
        ("288\u00a0ms of 525\u00a0ms wait, over 400\u00a0Gb/s links", ["288\u00a0ms", "525\u00a0ms", "400\u00a0Gb/s"]),
        ("It is 1.5x the buffer, or 6× the first row, 2.5 times more.", ["1.5x", "6×", "2.5 times"]),
        # a layout, counts of things and ordinals are not quantities
        ("At tp 8 × pp 4 on 32 cards, with 8 micro-batches and 80 layers.", []),
        ("Llama 2 70B on 2 nodes, 1,024 tokens a sequence.", []),
    ],
)
def test_quantities_of_a_sentence(sentence: str, expected: list[str]):
    assert quantities(sentence) == expected


def test_words_a_minute_over_the_cues_seconds_and_the_bounds():
    twenty = " ".join(["word"] * 20)
    cues = [Cue(twenty, 0.0, 6.0), Cue(twenty, 7.0, 13.0)]
    pace = pace_of(cues, ["It holds 73 GB, 4 GB and 5 GB. It fits."])
    assert pace.words_a_minute == pytest.approx(200.0)  # 40 words over 12 s of cues, not 13 s
    assert pace.most_quantities == 3
    assert pace_problems(pace) == [
        "speech: 200 words a minute in the subtitle cues; at most 165",
        "speech: 3 quantities in one sentence (73 GB, 4 GB, 5 GB): 'It holds 73 GB, 4 GB and 5 GB.'; at most 2",
    ]
    slow = pace_of([Cue("one two", 0.0, 1.0)], ["It holds 73 GB and 4 GB."])
    assert pace_problems(slow) == []
    # under 40 words the rate is mostly the voice's lead-in and pauses: not held to the bound
    short = pace_of([Cue("one two three four five", 0.0, 1.5)], ["One two three four five."])
    assert short.words_a_minute == pytest.approx(200.0) and pace_problems(short) == []


def test_quantities_counted_after_templating():
    # the storyboard says {memory.total:GB}; the check counts what the voice says
    chapter = load_chapter("dp")
    pace, _ = speech_problems(chapter)
    assert pace.dense and all("{" not in sentence for sentence, _ in pace.dense)
    assert any("GB" in q for _, found in pace.dense for q in found)


def test_a_title_card_held_past_its_sentence():
    chapter = load_chapter("dp")
    assert held_card_problems(chapter) == []
    title = chapter.shots[0]
    held = dataclasses.replace(title, narration=title.narration + " It runs on.")
    longer = dataclasses.replace(chapter, shots=(held, *chapter.shots[1:]))
    assert held_card_problems(longer) == [
        "title: narration: the title card is held past its sentence (2 sentences); at most 1"
    ]


def test_speech_over_stills_counts_the_cues_seconds_under_long_stills():
    from dtfilm.render.look import speech_over_stills

    cues = [(0.0, 4.0), (5.0, 9.0)]  # 8 s of speech
    runs = [(1.0, 2.0), (6.0, 2.5), (9.5, 10.0)]  # a 2 s still (too short), a 2.5 s one, one after the voice
    assert speech_over_stills(cues, runs) == pytest.approx(2.5 / 8)
    assert speech_over_stills(cues, runs, min_still_seconds=2.0) == pytest.approx(4.5 / 8)
    assert speech_over_stills([], runs) == 0.0
