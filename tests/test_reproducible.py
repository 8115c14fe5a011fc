"""Reproducible renders (issue 42, item 8; finding 9): the same storyboard and code make the same
decoded frames and sound, and the same file bytes, however the shots were drawn: in one process
or two, a shot started from a kept scene state or played from the chapter's start, a shot drawn
whole or in windows, a sound track encoded or copied from the file it replaces."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import av
import numpy as np
import pytest

from benchmarks.same_film import decoded
from tests.conftest import ROOT, run_dtfilm

pytestmark = [pytest.mark.render, pytest.mark.xdist_group("reproducible")]

# Two short spoken shots: with --jobs 2 each is a task of its own, so the second is drawn by a
# process that starts from the state kept at its start (or, with none kept, plays the first
# without frames); with --jobs 1 one scene draws both. Each shot is several of Manim's partial
# movies, whose joins are where Manim's clips hold a short frame.
CHAPTER = """\
id: dp
title: Data parallelism
shots:
  - kind: title
    beat: opening
    subtitle: Copy the model, split the batch
    caption: "Every card holds the whole model"
    narration: "Every card keeps a whole copy of the model."
  - kind: title
    beat: closing
    subtitle: "{memory.total:GB} per card"
    caption: "And a slice of the batch"
    narration: "Each card holds {memory.total:GB}."
"""
OTHER_CAPTION = CHAPTER.replace("And a slice of the batch", "And a share of the batch")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reproducible")
    shutil.copytree(ROOT / "storyboard", root / "storyboard")
    (root / "storyboard" / "dp.yaml").write_text(CHAPTER)
    return root


def assert_same_film(a: Path, b: Path) -> None:
    """The same frames and sound, decoded, and the same bytes."""
    frames_a, sound_a = decoded(a)
    frames_b, sound_b = decoded(b)
    assert len(frames_a) == len(frames_b) > 0, (a, b)
    differing = [i for i, (x, y) in enumerate(zip(frames_a, frames_b, strict=True)) if not np.array_equal(x, y)]
    assert differing == [], f"{a.name}: frames {differing[:10]} differ"
    assert sound_a.shape == sound_b.shape and np.array_equal(sound_a, sound_b), f"{a.name}: the sound differs"
    assert a.read_bytes() == b.read_bytes(), f"{a.name}: the same frames and sound, but not the same file"


@pytest.fixture(scope="module")
def renders(project: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The chapter rendered into two folders: into one by one process, fresh; into the other by
    two, first with the second shot's caption otherwise (that shot drawn after the first played
    without frames) and then as it is: the second shot drawn again, from the state the render
    before kept at its start, and the chapter's sound and that shot's copied from the files
    they replace (its words changed, not its narration)."""
    one, two = tmp_path_factory.mktemp("one"), tmp_path_factory.mktemp("two")
    storyboard = project / "storyboard" / "dp.yaml"
    for text, jobs, out in ((CHAPTER, "1", one), (OTHER_CAPTION, "2", two), (CHAPTER, "2", two)):
        storyboard.write_text(text)
        done = run_dtfilm("render", "dp", "--jobs", jobs, "--format", "webm", "--out", str(out), cwd=project)
        assert done.returncode == 0, done.stderr
    assert "drew 1 of 2 shots: closing" in done.stdout, done.stdout
    return one, two


def test_a_chapter_rendered_twice_is_the_same_film_to_the_byte(renders: tuple[Path, Path]):
    one, two = renders
    for name in ("dp.mp4", "dp.webm", "shots/dp/01-opening.mp4", "shots/dp/02-closing.mp4"):
        assert_same_film(one / name, two / name)
    clips = sorted(path.name for path in (one / "cache").glob("*.mp4"))
    assert len(clips) == 2
    for name in clips:  # each shot's cached clip: the same key, and the same file
        assert_same_film(one / "cache" / name, two / "cache" / name)


def test_a_shots_clip_follows_its_cached_clip_when_that_is_drawn_again(
    project: Path, renders: tuple[Path, Path], tmp_path: Path
):
    # A cached clip that changed under its key (drawn again after damage; once, drawn again
    # differently) is joined into the chapter; the shot's own clip (renders/shots/, for slides)
    # is made again from it too, not kept because its name is the same.
    out = tmp_path / "renders"
    shutil.copytree(renders[0], out)
    manifest = json.loads((out / "manifest.json").read_text())
    opening, closing = (out / shot["cache"] for shot in manifest["chapters"]["dp"]["shots"])
    with av.open(str(opening)) as box:
        frames = box.streams.video[0].frames
    first_packets(closing, frames, opening)  # other pictures, as many frames
    (out / "dp.mp4").unlink()
    done = run_dtfilm("render", "dp", "--jobs", "1", "--out", str(out), cwd=project)
    assert done.returncode == 0, done.stderr
    shown, _ = decoded(out / "shots" / "dp" / "01-opening.mp4")
    cached_now, _ = decoded(opening)
    assert len(shown) == len(cached_now) == frames
    assert all(np.array_equal(a, b) for a, b in zip(shown, cached_now, strict=True)), "the shot's clip is stale"


def first_packets(source: Path, count: int, target: Path) -> None:
    """The first `count` frames of `source` (in decoding order), copied into `target`."""
    with av.open(str(source)) as inp, av.open(str(target), mode="w", format="mp4") as out:
        stream = out.add_stream_from_template(inp.streams.video[0])
        packets = [packet for packet in inp.demux(inp.streams.video[0]) if packet.dts is not None]
        for packet in packets[:count]:
            packet.stream = stream
            out.mux(packet)


def test_a_shot_drawn_in_windows_is_the_shot_drawn_whole_to_the_byte(project: Path, tmp_path: Path):
    # A shot can be drawn by two processes, each the animations starting in its window of time,
    # and joined; the cached clip is the one a single process draws, frame for frame and byte
    # for byte (Manim's own clip held a frame 5 ticks short where two partial movies met, and
    # the join's header carried its first part's bit rate).
    code = (
        "import math, sys; from pathlib import Path\n"
        "from dtfilm.render.job import RenderJob\n"
        "from dtfilm.render.shot_render import ShotTask, draw_shots, join_parts\n"
        "whole, split = Path(sys.argv[1]), Path(sys.argv[2])\n"
        "def draw(out, window=None):\n"
        "    task = ShotTask('dp', ('opening',), 7.0, window=window)\n"
        "    return draw_shots(task, RenderJob(Path('.'), {}, 'preview', out, 'dark'))\n"
        "print(next(k.key for k in draw(whole).keys if k.beat == 'opening'))\n"
        "parts = [draw(split, window).part for window in ((0.0, 1.5), (1.5, math.inf))]\n"
        "print(sum(p.clip is not None for p in parts), join_parts(parts, split).key)"
    )
    whole, split = tmp_path / "whole", tmp_path / "split"
    done = subprocess.run(
        [sys.executable, "-c", code, str(whole), str(split)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    key, parts_drawn, joined = done.stdout.split()
    assert parts_drawn == "2" and joined == key  # both windows drew frames; the same shot
    assert_same_film(whole / "cache" / f"{key}.mp4", split / "cache" / f"{key}.mp4")
