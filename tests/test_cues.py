"""Subtitle cues from the spoken sentences: two lines of 42 characters at most, 0.7 to 7.5 s."""

from __future__ import annotations

import itertools

import pytest

from dtfilm.voice.cues import LINE_CHARS, escaped, narration_cues, sentence_cues, sentences_of

LONG = (
    "The price is traffic: an all-gather forward, another backward and a reduce-scatter instead of an "
    "all-reduce, 1.5× the bytes, and with gradient accumulation it gathers again for every micro-batch."
)


def _rules(cues, text):
    for cue in cues:
        lines = cue.text.split("\n")
        assert len(lines) <= 2 and all(len(line) <= LINE_CHARS for line in lines), cue
        assert 0.7 <= cue.end - cue.start <= 7.5, cue
    assert " ".join(c.text.replace("\n", " ") for c in cues) == " ".join(text.split())  # every word, in order


@pytest.mark.parametrize("seconds", [4.0, 9.0, 14.0])
def test_a_long_sentence_is_cut_at_phrase_ends_into_readable_cues(seconds):
    cues = sentence_cues(LONG, 10.0, 10.0 + seconds)
    _rules(cues, LONG)
    assert cues[0].start == 10.0 and cues[-1].end == pytest.approx(10.0 + seconds)
    assert all(a.end == pytest.approx(b.start) for a, b in itertools.pairwise(cues))


def test_cues_follow_the_sentences_as_spoken():
    spoken = [("First, the weights.", 0.0, 1.6), ("Then the gradients, which are as large.", 1.95, 4.4)]
    cues = narration_cues("First, the weights. Then the gradients, which are as large.", spoken, 0.3, 5.0)
    assert [round(c.start, 2) for c in cues] == [0.3, 2.25]
    _rules(cues, "First, the weights. Then the gradients, which are as large.")


def test_without_a_voice_cues_share_the_shot_by_length():
    text = "A short one. " + LONG
    cues = narration_cues(text, None, 2.0, 20.0)
    assert cues[0].start == 2.0 and cues[-1].end == pytest.approx(22.0)
    assert sentences_of(text)[0] == "A short one."


def test_escaping():
    assert escaped("a <b> & c --> d") == "a &lt;b> &amp; c --&gt; d"


def test_a_cue_that_cannot_wrap_into_two_lines_is_cut_sooner():
    # 84 characters, but no cut gives two lines of 42: the cue ends a word sooner
    sentence = "In a ring all-reduce every card cuts its gradients into chunks and passes a chunk to its neighbour."
    cues = sentence_cues(sentence, 0.0, 5.0)
    _rules(cues, sentence)


def test_vtt_cues_sit_above_the_burned_in_caption():
    # when a viewer turns the subtitles on, the browser draws them above the caption, not on it
    from dtfilm.system.webvtt import SUBTITLE_BOTTOM_PERCENT, srt_to_vtt
    from dtfilm.visuals.regions import regions
    from dtfilm.visuals.theme import FRAME_HEIGHT, THEMES

    vtt = srt_to_vtt("1\n00:00:01,000 --> 00:00:03,500\nHello\n\n2\n00:00:04,000 --> 00:00:05,000\nWorld\n")
    timings = [line for line in vtt.splitlines() if "-->" in line]
    assert timings == [
        f"00:00:01.000 --> 00:00:03.500 line:{SUBTITLE_BOTTOM_PERCENT}%,end",
        f"00:00:04.000 --> 00:00:05.000 line:{SUBTITLE_BOTTOM_PERCENT}%,end",
    ]
    for theme in THEMES.values():
        caption_top_percent = 100 * (FRAME_HEIGHT / 2 - regions(theme).caption.top) / FRAME_HEIGHT
        assert SUBTITLE_BOTTOM_PERCENT <= caption_top_percent


def test_a_cue_is_placed_in_the_lowest_free_band_clear_of_legend_and_caption():
    # issue 58: the cues sat over the legend row; each is placed where the picture under it is empty
    import numpy as np
    from PIL import Image

    from dtfilm.render.subtitle_place import free_bottom_percent
    from dtfilm.system.webvtt import srt_to_vtt

    frame = np.full((480, 854), 15, dtype=np.uint8)  # the background
    frame[440:460, 200:650] = 240  # a caption
    frame[400:412, 150:700] = 200  # a legend row above it
    frame[100:300, 100:750] = 120  # the diagram
    # the band between the diagram and the legend (rows 300 to 399), its bottom kept a margin clear
    assert free_bottom_percent([Image.fromarray(frame)]) == 82
    # a frame that fills that band too leaves no band free: the caller keeps the default place
    filled = frame.copy()
    filled[300:400, 300:500] = 90
    assert free_bottom_percent([Image.fromarray(frame), Image.fromarray(filled)]) == 19  # (above the diagram)
    filled[40:100, 300:500] = 90
    assert free_bottom_percent([Image.fromarray(frame), Image.fromarray(filled)]) is None
    # a label at the frame's edge, outside where a centred cue is drawn, does not take a band
    edge = frame.copy()
    edge[330:360, 0:60] = 200
    assert free_bottom_percent([Image.fromarray(edge)]) == 82
    vtt = srt_to_vtt("1\n00:00:01,000 --> 00:00:03,500\nHello\n\n2\n00:00:04,000 --> 00:00:05,000\nWorld\n", [82, 40])
    assert [line.split(" ", 3)[-1] for line in vtt.splitlines() if "-->" in line] == ["line:82%,end", "line:40%,end"]
