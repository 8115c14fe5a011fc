"""The drawn-values observer (dtfilm.onscreen.drawn.DrawnValues) records every phrase's values,
whatever memory the run was given."""

from __future__ import annotations

from typing import Any

import pytest

from dtfilm.onscreen import drawn
from dtfilm.phrases import Fact, Phrase


def test_a_new_phrase_where_a_gone_one_stood_has_its_values_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A counter draws "3" from one phrase, then from a new phrase for another setting: the first
    phrase gone, the new one may be given its address (its id). Its values are still recorded,
    each phrase's once (the pp slider's facts came out in two orders over three runs before)."""
    shown: list[tuple[str, Any]] = []
    monkeypatch.setattr(drawn, "_values_on_screen", lambda scene: list(shown))
    values = drawn.DrawnValues()
    for step in range(200):
        phrase = Phrase("3", (Fact("plan.pp", None, "3", (("pp", step),)),))
        shown[:] = [("3", phrase)]
        values(None, "slider")
        values(None, "slider")  # (the same phrase seen again: once)
        shown.clear()
        del phrase  # (its address free for the next)
    assert len(values.facts["slider"]) == 200 * 2  # (each fact as shown, and as its bare number)
