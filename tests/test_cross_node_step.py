"""dp's more-cards draws the step from a card's traffic to its time between nodes: a lecturer
could not work out "26.2 GB · 65.7 ms" for 16 cards over a 50 GB/s link (a student dividing gets
524 ms); that the node's network cards share the crossing, each sending 3.28 GB, was only
spoken (issue 58). The bytes and the bandwidth drawn give the time drawn."""

from __future__ import annotations

import pytest

from dtfilm.storyboard import load_chapter
from tests.conftest import inspection


@pytest.mark.xdist_group("dp-default")
def test_dp_draws_the_bytes_each_card_sends_across_nodes_and_the_links_bandwidth():
    (shot,) = [s for s in load_chapter("dp").shots if s.beat == "more-cards"]
    last = shot.steps[-1]
    assert int(last.get("cluster.nodes")) > 1  # the ring leaves the node at the sweep's last value
    sends, bandwidth = last("{comm.nic_bytes:bytes}").text, last("{cluster.inter_node_bandwidth:GB/s}").text
    per_node = last("{cluster.cards_per_node:int}").text
    shown = [text for (text, _), (beat, _) in inspection("dp", "default").texts.shown.items() if beat == "more-cards"]
    assert any(sends in text and bandwidth in text and per_node in text for text in shown), shown
    # the student's division: the bytes drawn over the bandwidth drawn is the time drawn (and said)
    seconds = float(last.get("comm.nic_bytes")) / float(last.get("cluster.inter_node_bandwidth"))
    assert seconds == pytest.approx(float(last.get("comm.seconds")), rel=0.01)
