"""why's strategy table draws every cell of every row (issue 58: a lecturer reported the Expert
parallel row's 'talks by' and 'solves' blank; they come as the voice says 'sending each token to
its experts and back', 3 s before the shot ends, and self-check item 5 asks for the table)."""

from __future__ import annotations

import pytest

from dtfilm.shots.strategies import STRATEGIES
from tests.conftest import inspection


@pytest.mark.xdist_group("why-default")
def test_every_cell_of_the_strategy_table_is_drawn():
    shown = [text for (text, _), (beat, _) in inspection("why", "default").texts.shown.items() if beat == "strategies"]
    words = {word for text in shown for word in text.split()}
    for strategy in STRATEGIES:
        for cell in (strategy.name, strategy.shards, strategy.talks, strategy.solves):
            assert cell.strip(), f"{strategy.key}: an empty cell"
            assert set(cell.split()) <= words, f"{strategy.key}: {cell!r} not drawn"
