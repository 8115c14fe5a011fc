"""The expert-parallel chapter (issue 60): its claims at the film's defaults (Mixtral 8x7B on
64 H100s) and at DeepSeek-V3's published layout, and the routing its drawing shows. Loads only
(no dry run): the layout and numbers tests dry-run the chapter at both settings already."""

from __future__ import annotations

import pytest

from dtfilm.errors import DtfilmError
from dtfilm.storyboard import load_chapter
from dtfilm.visuals.experts import drawn_cards, route_copies
from tests.conftest import DEEPSEEK_V3, ROOT
from tests.test_claims import claims_of


def said(beats: dict[str, list], beat: str) -> str:
    return " ".join(beats[beat])


def _shot_said(beat: str) -> str:
    return next(s for s in load_chapter("ep", {}, ROOT).shots if s.beat == beat).narration.text.replace("\xa0", " ")


def test_the_chapter_says_what_mixtral_on_h100_nodes_shows():
    beats = claims_of("ep")
    # the fewest cards the chart shows fitting (ep 4's 78.5 GB): "over eight cards, they fit" left
    # a lecturer counting ep 4's column, not red, as not fitting (issue 58)
    assert "from four cards up, they fit" in said(beats, "experts")
    # a teacher's read: ep 4 fits with 1.53 GB of 80 to spare, under the estimate's fit margin (the
    # allocator's fragmentation is left out): "they fit" alone taught a fit practice would not trust
    assert "they fit, four barely" in said(beats, "experts")
    # a teacher's read: "over eight cards, they fit" heard alone is 747 GB of state (16 bytes a
    # parameter) on 640 GB of cards: it fits because the optimizer state is sharded over all 64.
    # A lecturer's: "with the optimizer state sharded over 64 cards, they do not fit on one" said
    # neither why nor by how much: every expert's bf16 weights alone are 93.4 GB a card; and
    # "Mixtral 8x7B" said as "eight by seven billion" reads as 56B: its count is said first
    said_first = "Even with ZeRO-1 over 64 cards, Mixtral 8x7B's 46.7B parameters alone need 93.4 GB a card"
    assert said_first in beats["experts"]
    assert "mostly on other cards" in said(beats, "dispatch")
    # a lecturer's: the FLOPs follow from top-2 routing, not from where the experts sit; and
    # "tokens times hidden size times two" left the two (experts or bytes) to guess
    dispatch = _shot_said("dispatch")
    assert "mostly on other cards. Only those two run: the FLOPs of 12.9B active parameters." in dispatch
    assert "each token's hidden vector, in bf16, to each of its experts: 58.7 MB a card" in dispatch
    assert "times two" not in dispatch
    assert "none of it hidden" in said(beats, "dispatch")  # the step waits for the all-to-all
    assert "grows" in said(beats, "imbalance")  # under EP the busiest expert sets the pace
    nodes = said(beats, "nodes")
    assert "Inside one node," in nodes and "take 698" in nodes  # NVLink, then the network
    beside = said(beats, "beside")
    assert "the all-to-all a sliver of it" in beside and "6.71" in beside  # FSDP gathers every expert


def test_its_claims_hold_at_deepseek_v3s_published_layout():
    beats = claims_of("ep", DEEPSEEK_V3)
    assert "Across 64 nodes," in said(beats, "nodes")  # one card a node under PP16
    assert "even over eight cards, they do not fit" in said(beats, "experts")  # its own ep 64 is what fits
    assert "none of it hidden" in said(beats, "dispatch")


def test_a_dense_model_is_refused_in_one_line():
    with pytest.raises(DtfilmError) as error:
        load_chapter("ep", {"model": "llama3.1-405b", "cards": 16384}, ROOT)
    assert "\n" not in error.value.line() and "plan.ep" in error.value.line()


@pytest.mark.parametrize("imbalance", [1.0, 1.5, 2.0])
def test_the_drawn_routing_follows_the_imbalance(imbalance: float):
    cards, tokens, k = 8, 4, 2
    copies = route_copies(cards, tokens, k, experts=1, imbalance=imbalance, busiest=2)
    assert len(copies) == cards * tokens * k
    received = [sum(1 for c in copies if c.to_card == card) for card in range(cards)]
    mean = len(copies) / cards
    assert received[2] == round(imbalance * mean)  # the busiest: that many times the mean
    others = [r for card, r in enumerate(received) if card != 2]
    assert max(others) - min(others) <= 1  # the rest share what is left evenly
    for card in range(cards):  # a token's copies go to different cards
        for token in range(tokens):
            assert len({c.to_card for c in copies if (c.card, c.token) == (card, token)}) == k
    assert copies == route_copies(cards, tokens, k, experts=1, imbalance=imbalance, busiest=2)  # the same every render


def test_a_large_group_is_drawn_as_its_first_cards_and_its_last():
    assert drawn_cards(8) == list(range(8))
    assert drawn_cards(64) == [0, 1, 2, 3, 4, 5, 6, 63]
