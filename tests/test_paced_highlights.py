"""3d and pp light what the voice names at the marks added to pace them (issue 45, item 5): a
highlighter's band on screen as each mark is said."""

from __future__ import annotations

import pytest

from dtfilm.scene import LEAD_IN_SECONDS, narration_track
from dtfilm.storyboard import load_chapter
from dtfilm.storyboard.marks import mark_seconds
from tests.conftest import inspection

# the marks whose words a highlighter's band lights (the others point: a swell, no band)
LIT = {
    "3d": {
        "links": ["tp_bytes", "dp_bytes", "dp_vs_bytes", "dp_seconds", "dp_vs_seconds", "hidden"],
        "knobs": ["verdict", "verdict2"],
        # ("spare" lights the pick's memory only where its margin is tight: the defaults' pick has room)
        "planner": ["answer", "departs", "step", "against"],
    },
    "pp": {"timeline": ["rows", "sizes"], "slider": ["interleave", "again"]},
}


@pytest.mark.parametrize(
    "chapter_id", [pytest.param(c, marks=pytest.mark.xdist_group(f"{c}-default")) for c in sorted(LIT)]
)
def test_each_pacing_mark_lights_what_is_said_as_it_is_said(chapter_id: str):
    chapter = load_chapter(chapter_id)
    # after each animation: is a band on screen, and when (the chapter's shared dry run, dark)
    bands = inspection(chapter_id, "default").bands
    track = narration_track(chapter, chapter.film.voice)
    for shot in chapter.shots:
        if shot.beat not in LIT[chapter_id]:
            continue
        audio = track.get(shot.beat)
        spoken = [(s.start, s.end) for s in audio.sentences] if audio else None
        said = mark_seconds(shot.narration.text, shot.marks, spoken)
        for mark in LIT[chapter_id][shot.beat]:
            at = (LEAD_IN_SECONDS if audio else 0.0) + said[mark]
            # lit within the band's fade-in (and a point before it, for a pipe pointed at first)
            assert any(at <= t <= at + 1.5 for t in bands.get(shot.beat, [])), (shot.beat, mark, at)
