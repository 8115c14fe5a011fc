"""Subtitle cues placed shot by shot (issue 55: a caption back within 1.5 s): a chapter joined
again after one shot changed reads that shot's frames only, and places every cue where reading
the whole chapter placed it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from dtfilm.render import placed_cues, subtitle_place
from dtfilm.render.placed_cues import chapter_cue_lines, lines_path
from dtfilm.render.shot_cache import cache_folder, clip_path
from dtfilm.render.subtitle_place import cue_lines
from dtfilm.system.video import join_pictures, video_seconds
from tests.clips import grey, manim_clip

WIDTH, HEIGHT = 160, 96
KEYS = ("a" * 16, "b" * 16)


def shot_clip(path: Path, frames: int, shift: int, short_at: int | None = None) -> Path:
    """A clip timed as Manim's (tests.clips) whose drawing (a band of grey) climbs 5 rows a
    frame (wrapping round), with frame `short_at` short."""

    def picture(index: int) -> np.ndarray:
        drawn = grey(15, WIDTH, HEIGHT)
        top = (HEIGHT - 30 + shift - 5 * index) % (HEIGHT - 12)
        drawn[top : top + 12, 20 : WIDTH - 20] = 200  # what a cue must stay clear of
        return drawn

    return manim_clip(path, frames, picture, short_at)


@pytest.fixture
def chapter(tmp_path: Path) -> tuple[Path, Path, list[float]]:
    """Two shots in the cache and the chapter joined from them, with where each starts."""
    out = tmp_path / "renders"
    cache_folder(out).mkdir(parents=True)
    shot_clip(clip_path(out, KEYS[0]), 24, 0, short_at=10)
    shot_clip(clip_path(out, KEYS[1]), 30, 12)
    clips = [clip_path(out, key) for key in KEYS]
    join_pictures(clips, out / "ch.mp4", None)
    lengths = [video_seconds(c) for c in clips]
    return out, out / "ch.mp4", [0.0, lengths[0]]


# Seconds into each shot. The third is read 2 ticks before frame 13, which the shot's clip holds
# 5 ticks early (a frame before it is short): the chapter's join puts it on the frame grid, where
# the chapter shows frame 13 then, and frame 14 (placed lower) by the clip's own times.
GRID_EDGE = 13 / 15 - 2 / 15360 - 0.1
CUES = ([(0.0, 0.5), (0.5, 1.3), (GRID_EDGE, GRID_EDGE + 0.2), (1.3, 1.55)], [(0.0, 0.9), (0.95, 1.9)])


def placing(out: Path, cues: tuple[list[tuple[float, float]], ...] = CUES) -> list[tuple[str, str, list]]:
    return [(key, f"digest-{key}", shot) for key, shot in zip(KEYS, cues, strict=True)]


def whole(chapter_clip: Path, starts: list[float], cues: tuple[list[tuple[float, float]], ...] = CUES) -> list[int]:
    """The lines as read from the whole chapter (the code before)."""
    return cue_lines(
        chapter_clip, [(start + b, start + e) for shot, start in zip(cues, starts, strict=True) for b, e in shot]
    )


def test_cues_placed_shot_by_shot_where_the_whole_chapter_placed_them(chapter):
    out, chapter_clip, starts = chapter
    expected = whole(chapter_clip, starts)
    assert len(set(expected)) > 2  # (the drawing climbs: cues are placed at different heights)
    assert chapter_cue_lines(chapter_clip, out, placing(out), starts) == expected
    for key in KEYS:
        assert lines_path(out, key).is_file()  # kept beside each shot's clip


def test_a_shot_changed_reads_only_its_own_frames(chapter, monkeypatch):
    out, chapter_clip, starts = chapter
    expected = whole(chapter_clip, starts)
    chapter_cue_lines(chapter_clip, out, placing(out), starts)
    read: list[Path] = []
    decode = subtitle_place.frames_on_grid
    monkeypatch.setattr(subtitle_place, "frames_on_grid", lambda path: read.append(path) or decode(path))
    monkeypatch.setattr(subtitle_place, "frames_at", lambda *a: pytest.fail("the whole chapter was read"))
    assert chapter_cue_lines(chapter_clip, out, placing(out), starts) == expected
    assert read == []  # nothing changed: every shot's lines kept
    lines_path(out, KEYS[1]).unlink()  # the second shot drawn again (a caption changed)
    assert chapter_cue_lines(chapter_clip, out, placing(out), starts) == expected
    assert read == [clip_path(out, KEYS[1])]


@pytest.mark.parametrize(
    "kept",
    [
        lambda k: {**k, "clip": "another clip's digest", "lines": [100] * len(k["lines"])},
        lambda k: {**k, "lines": [101] * len(k["lines"])},
        lambda k: {**k, "lines": [True] * len(k["lines"])},
        lambda k: {**k, "lines": k["lines"][:-1]},
        lambda k: {**k, "cues": [[0.0, 0.25]]},
        lambda k: {**k, "extra": 1},
        lambda k: [k],
        lambda k: "[" * 100_000,
    ],
)
def test_a_kept_file_not_as_written_is_read_again(chapter, kept):
    out, chapter_clip, starts = chapter
    expected = whole(chapter_clip, starts)
    chapter_cue_lines(chapter_clip, out, placing(out), starts)
    path = lines_path(out, KEYS[0])
    written = json.loads(path.read_text())
    changed = kept(written)
    path.write_text(changed if isinstance(changed, str) else json.dumps(changed))
    assert chapter_cue_lines(chapter_clip, out, placing(out), starts) == expected
    assert json.loads(path.read_text()) == written  # made again


def test_a_link_or_a_fifo_in_its_place_is_not_followed(chapter, tmp_path):
    out, chapter_clip, starts = chapter
    expected = whole(chapter_clip, starts)
    chapter_cue_lines(chapter_clip, out, placing(out), starts)
    elsewhere = tmp_path / "elsewhere.lines"
    elsewhere.write_text(json.dumps({**json.loads(lines_path(out, KEYS[0]).read_text()), "lines": [0, 0, 0]}))
    lines_path(out, KEYS[0]).unlink()
    lines_path(out, KEYS[0]).symlink_to(elsewhere)
    lines_path(out, KEYS[1]).unlink()
    os.mkfifo(lines_path(out, KEYS[1]))
    assert chapter_cue_lines(chapter_clip, out, placing(out), starts) == expected
    assert json.loads(elsewhere.read_text())["lines"] == [0, 0, 0]  # (written through the link: no)


def test_a_cue_past_its_clip_is_read_from_the_chapter(chapter, monkeypatch):
    out, chapter_clip, starts = chapter
    late = ([(0.0, 0.5), (1.45, 1.6)], CUES[1])  # read at 1.55 s: past the first shot's last frame
    expected = whole(chapter_clip, starts, late)
    assert placed_cues.shot_cue_lines(clip_path(out, KEYS[0]), late[0]) is None
    assert chapter_cue_lines(chapter_clip, out, placing(out, late), starts) == expected
