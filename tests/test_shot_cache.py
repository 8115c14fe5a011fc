"""The shot cache (issue 17): a render draws only the shots whose keys changed, and a chapter
joined from cached clips is the chapter one scene draws."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import av
import numpy as np
import pytest

from tests.conftest import run_dtfilm

pytestmark = [pytest.mark.render, pytest.mark.xdist_group("shot-cache")]

FILM = """\
title: Test film
voice: none
defaults:
  model: {preset: llama-7b, params: 7e9}
  training: {seq_len: 4096}
chapters: [alpha]
"""
CHAPTER = """\
id: alpha
title: Alpha
plan: {{zero: {zero}}}
shots:
  - kind: title
    beat: opening
    subtitle: A plain subtitle
    caption: "{caption}"
    duration: 1
  - kind: title
    beat: figure
    subtitle: "{{memory.total:GB}} per card"
    caption: "The state, sharded or not"
    narration: "Each card holds {{memory.total:GB}}."
  - kind: title
    beat: after
    subtitle: No numbers here
    caption: "Next"
    duration: 1
  - kind: title
    beat: closing
    subtitle: Nor here
    caption: "The end"
    duration: 1
"""


def write_project(root: Path, zero: int = 0, caption: str = "Where we begin") -> None:
    (root / "storyboard").mkdir(exist_ok=True)
    (root / "storyboard" / "film.yaml").write_text(FILM)
    (root / "storyboard" / "alpha.yaml").write_text(CHAPTER.format(zero=zero, caption=caption))


def shots(root: Path) -> dict[str, dict]:
    manifest = json.loads((root / "renders" / "manifest.json").read_text())
    return {shot["beat"]: shot for shot in manifest["chapters"]["alpha"]["shots"]}


def drawn_now(root: Path) -> set[str]:
    return {beat for beat, shot in shots(root).items() if shot["drawn_now"]}


def grey_frames(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as movie:
        return [frame.to_ndarray(format="gray").astype(float) for frame in movie.decode(video=0)]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("shots")
    write_project(root)
    done = run_dtfilm("render", "--jobs", "2", cwd=root)  # four shots, split between two workers
    assert done.returncode == 0, done.stderr
    assert drawn_now(root) == {"opening", "figure", "after", "closing"}
    return root


def status(project: Path, *flags: str) -> list[str]:
    code = (
        "import sys; from dtfilm.cli import main; main(['status', *sys.argv[1:]]); "
        "print('manim imported' if 'manim' in sys.modules else 'no manim')"
    )
    done = subprocess.run([sys.executable, "-c", code, *flags], cwd=project, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def stale_shots(lines: list[str]) -> dict[str, str]:
    return dict(re.findall(r"^  alpha:(\w+) +(.+)$", "\n".join(lines), re.M))


def test_status_names_the_stale_shots_and_why(project: Path):
    write_project(project, caption="Where it all starts")
    try:
        said = status(project)  # from the storyboard alone: no manim
        assert said[-1] == "no manim" and said[0].startswith("alpha      stale")
        assert stale_shots(said) == {"opening": "its caption changed"}
        played = status(project, "--shots")  # played without drawing: the cache is asked
        assert played[-1] == "manim imported"
        assert stale_shots(played) == {"opening": "its caption changed"}
        write_project(project, zero=3)
        said = status(project)
        # its subtitle and narration read the number: their words as resolved changed
        assert stale_shots(said) == {"figure": "its options changed; its narration changed"}
        assert any("dtfilm status --shots names them" in line for line in said)
        played = stale_shots(status(project, "--shots"))  # and the next shot starts from it
        assert played == {
            "figure": "its options changed; its narration changed",
            "after": "the screen it starts from changed (what the shot before leaves)",
        }
    finally:
        write_project(project)
    assert status(project)[:2] == ["alpha      fresh", "film       fresh"]


def test_a_changed_caption_draws_exactly_its_shot_again(project: Path):
    write_project(project, caption="Where it all starts")
    done = run_dtfilm("render", cwd=project)
    assert done.returncode == 0, done.stderr
    assert drawn_now(project) == {"opening"}
    assert "drew 1 of 4 shots: opening" in done.stdout
    write_project(project)  # and back: every shot is in the cache, none is drawn
    done = run_dtfilm("render", cwd=project)
    assert done.returncode == 0, done.stderr
    assert drawn_now(project) == set()
    # found by probes, chained through the screens each shot leaves: no scene played at all
    assert json.loads((project / "renders" / "manifest.json").read_text())["chapters"]["alpha"]["tasks"] == 0


def test_a_wrong_guess_of_the_stale_shots_is_corrected_by_playing_the_chapter(project: Path):
    # The stale shots are guessed from probes with no scene, taking a changed shot to leave the
    # screen its last render left. Here the guess is made to miss one of two changed shots: once
    # the guessed one is drawn, the cache lacks a shot, so the chapter is played and it is drawn.
    text = (project / "storyboard" / "alpha.yaml").read_text()
    (project / "storyboard" / "alpha.yaml").write_text(
        text.replace("Where we begin", "Guessed").replace('caption: "Next"', 'caption: "Not guessed"')
    )
    code = (
        "from dtfilm.render.shot_cache import Prober; guess = Prober.missing_beats\n"
        "Prober.missing_beats = lambda *a: guess(*a)[:1]\n"
        "from dtfilm.cli import main; main(['render', '--jobs', '1'])"
    )
    try:
        done = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert drawn_now(project) == {"opening", "after"}
        assert "drew 2 of 4 shots: opening, after" in done.stdout, done.stdout
        again = run_dtfilm("render", cwd=project)  # the manifest holds the keys as drawn
        assert again.returncode == 0 and "alpha: fresh" in again.stdout, again.stdout
    finally:
        write_project(project)


def test_a_shot_drawn_in_parts_is_the_shot_drawn_whole_frame_for_frame(project: Path, tmp_path: Path):
    # two processes can draw one shot between them, each the animations that start in its window
    # of time (the ones before play without frames, and a part but the last stops at its end);
    # the parts joined are the shot, frame for frame
    code = (
        "import math, sys; from pathlib import Path\n"
        "from dtfilm.render.job import RenderJob\n"
        "from dtfilm.render.shot_render import ShotTask, draw_shots, join_parts\n"
        "out = Path(sys.argv[1]); parts = []\n"
        "for window in ((0.0, 0.9), (0.9, math.inf), (50.0, math.inf)):\n"
        "    task = ShotTask('alpha', ('figure',), 2.0, window=window)\n"
        "    drawn = draw_shots(task, RenderJob(Path('.'), {}, 'preview', out, 'dark'))\n"
        "    parts.append(drawn.part); print(window[0], drawn.part.clip is not None)\n"
        "    print(drawn.part.stop is not None, 'figure' in [k.beat for k in drawn.keys])\n"
        "print(join_parts(parts, out).key)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], cwd=project, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split()
    # both windows hold animations; one past the shot's end holds none, and adds no frames. The
    # first stopped at its end, so it has no key for the shot: the later parts play it through
    # (each window: its start, frames drawn, stopped, the shot's key known)
    windows = [lines[i : i + 4] for i in range(0, 12, 4)]
    assert windows == [
        ["0.0", "True", "True", "False"],
        ["0.9", "True", "False", "True"],
        ["50.0", "False", "False", "True"],
    ], lines
    key = lines[-1]
    assert key == shots(project)["figure"]["key"]  # the same shot, so the same key
    assert not list((tmp_path / "cache").glob("*.part-*"))  # the parts' files are gone
    whole = grey_frames(project / "renders" / "cache" / f"{key}.mp4")
    joined = grey_frames(tmp_path / "cache" / f"{key}.mp4")
    assert len(joined) == len(whole) > 20
    assert all(np.array_equal(a, b) for a, b in zip(joined, whole, strict=True))
    # and it lasts as long as the whole shot joined into a chapter would: whole frames, which
    # end where its header says (Manim's own clips hold a frame 0.3 ms short here and there)
    from dtfilm.system.video import join_pictures

    chapter_of_whole = tmp_path / "whole.mp4"
    join_pictures([project / "renders" / "cache" / f"{key}.mp4"], chapter_of_whole, None)
    ticks = picture_ticks(tmp_path / "cache" / f"{key}.mp4")
    assert ticks == picture_ticks(chapter_of_whole) == (len(whole) * 1024, len(whole) * 1024)  # 1/15 s each


def picture_ticks(path: Path) -> tuple[int, int]:
    """A clip's picture length in its time base: as its header says, and as its frames add up."""
    with av.open(str(path)) as box:
        stream = box.streams.video[0]
        frames = [packet for packet in box.demux(stream) if packet.dts is not None]
        return int(stream.duration), max(p.pts + p.duration for p in frames) - min(p.pts for p in frames)


def test_a_part_that_drew_another_shot_is_not_joined(tmp_path: Path):
    # a part that stopped at its window's end is joined only when the last part drew the same
    # before that point: the same probe, and the same digest before the animation it stopped at
    from dtfilm.render.shot_cache import CachedShot
    from dtfilm.render.shot_render import join_parts
    from dtfilm.render.tasks import ShotPart

    entry = CachedShot("k", "alpha", "figure", 2.0, [], 1.0, "now", {}, "screen")
    clips = [tmp_path / "early.part.mp4", tmp_path / "late.part.mp4"]
    for clip in clips:
        clip.write_bytes(b"frames")
    last = ShotPart((0.9, float("inf")), clips[1], entry, "probe", 1.0, ("d0", "d1", "d2"))
    early = ShotPart((0.0, 0.9), clips[0], None, "probe", 1.0, ("d0", "d1"), stop=(1, "d1"))
    assert early.agrees(last)
    assert not dataclasses.replace(early, stop=(1, "other")).agrees(last)  # drew something else first
    assert not dataclasses.replace(early, stop=(3, "d3")).agrees(last)  # past the shot's end
    assert not dataclasses.replace(early, probe="another").agrees(last)  # another start, words or sound
    assert not early.agrees(dataclasses.replace(last, entry=None))  # the last part did not finish the shot
    assert join_parts([dataclasses.replace(early, stop=(1, "other")), last], tmp_path) is None
    assert not any(clip.exists() for clip in clips)  # nothing cached, and the parts' files are gone


def test_a_shot_drawn_from_the_state_kept_at_its_start_is_the_shot_drawn_after_the_ones_before(
    project: Path, tmp_path: Path
):
    # every render keeps the scene's state at its shots' starts (dtfilm.onscreen.scene_state); a scene
    # drawing a later shot starts there instead of playing the shots before it, and draws the
    # same frames under the same key
    assert run_dtfilm("render", cwd=project).returncode == 0  # (another test may have left it stale)
    kept, replayed = tmp_path / "kept", tmp_path / "replayed"
    for out in (kept, replayed):
        shutil.copytree(project / "renders" / "cache", out / "cache")
    for state in replayed.glob("cache/*.state"):
        state.unlink()
    states = {p.name for p in kept.glob("cache/*.state")}
    assert len(states) >= 3  # at the start of every shot but the first (and of earlier renders)
    text = (project / "storyboard" / "alpha.yaml").read_text()
    (project / "storyboard" / "alpha.yaml").write_text(text.replace('caption: "Next"', 'caption: "Next, as kept"'))
    code = (
        "import sys; from pathlib import Path; from dtfilm.render.job import RenderJob\n"
        "from dtfilm.render.shot_render import ShotTask, draw_shots\n"
        "for out in sys.argv[1:]:\n"
        "    job = RenderJob(Path('.'), {}, 'preview', Path(out), 'dark')\n"
        "    drawn = draw_shots(ShotTask('alpha', ('after',), 1.0), job)\n"
        "    print(drawn.started_at, drawn.drawn[0], drawn.keys[-1].key)"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, str(kept), str(replayed)], cwd=project, capture_output=True, text=True
        )
    finally:
        write_project(project)
    assert done.returncode == 0, done.stderr
    (started, beat, key), (started_again, beat_again, key_again) = (line.split() for line in done.stdout.splitlines())
    # from the state kept at its start (shot 2); with none kept, after playing the two before it
    assert (started, started_again) == ("2", "0")
    assert beat == beat_again == "after" and key == key_again
    from_state, played = grey_frames(kept / "cache" / f"{key}.mp4"), grey_frames(replayed / "cache" / f"{key}.mp4")
    assert len(from_state) == len(played) > 10
    assert all(np.array_equal(a, b) for a, b in zip(from_state, played, strict=True))
    # and the state the next shot starts from after the new one is kept: changed next, it too
    # starts there
    assert len({p.name for p in kept.glob("cache/*.state")} - states) == 1


def test_a_still_from_a_kept_state_is_the_still_after_playing_the_shots_before(project: Path, tmp_path: Path):
    assert run_dtfilm("render", cwd=project).returncode == 0
    bare = tmp_path / "renders"  # no cache: the shots before play first
    for out in (project / "renders", bare):
        done = run_dtfilm("still", "alpha:after", "--at", "0.5", "--out", str(out), cwd=project)
        assert done.returncode == 0, done.stderr
    from PIL import Image

    name = Path("one") / "alpha-after-0.5s-preview.png"
    from_state, played = (np.asarray(Image.open(out / name)) for out in (project / "renders", bare))
    assert from_state.shape == played.shape and np.array_equal(from_state, played)
    assert from_state.std() > 1  # a picture, not a blank frame


def test_a_changed_number_draws_exactly_the_shots_that_show_it_and_their_narration(project: Path):
    assert run_dtfilm("render", cwd=project).returncode == 0  # (another test may have left it stale)
    before = shots(project)
    write_project(project, zero=3)  # ZeRO-3 over 8 cards: memory.total falls
    done = run_dtfilm("render", cwd=project)
    assert done.returncode == 0, done.stderr
    after = shots(project)
    # the figure shows it, and the next shot begins by clearing the figure's card away (its
    # first frames show the number going); the shots before and after are kept
    assert drawn_now(project) == {"figure", "after"}
    assert after["after"]["parts"]["start"] != before["after"]["parts"]["start"]
    assert after["figure"]["parts"]["drawn"] != before["figure"]["parts"]["drawn"]  # what it shows
    said = after["figure"]["narration"]  # its narration, said again with the new number
    total = json.loads((project / "renders" / "alpha.numbers.json").read_text())["numbers"]["memory"]["total"]
    spoken = float(re.search(r"holds ([\d.]+)\xa0GB", said).group(1))
    assert said != before["figure"]["narration"] and spoken == pytest.approx(total / 1e9, rel=0.01)
    cues = (project / "renders" / "alpha.vtt").read_text()
    assert said.replace("\xa0", " ") in cues.replace("\xa0", " ")  # and its subtitles with it
    kept = ("opening", "closing")
    assert [after[beat]["key"] for beat in kept] == [before[beat]["key"] for beat in kept]
    write_project(project)


def test_a_joined_chapter_is_the_chapter_one_scene_draws_frame_for_frame(project: Path):
    # the render above split the chapter between two workers (two scenes, each reaching its
    # first shot by playing the ones before it without frames); one scene draws it whole here
    done = run_dtfilm("render", "--force", "--jobs", "2", cwd=project)
    assert done.returncode == 0, done.stderr
    with tempfile.TemporaryDirectory() as media:
        code = (
            "import sys; from pathlib import Path; from manim import tempconfig; "
            "from dtfilm.scene_brief import chapter_brief; from dtfilm.system.quality import QUALITY; "
            "from dtfilm.scene import ChapterScene; from dtfilm.shots.plays import SHOTS; "
            "from dtfilm.storyboard import load_chapter; "
            "plan = chapter_brief(load_chapter('alpha', {}, Path('.')), SHOTS, with_sound=False)\n"
            "with tempconfig({**QUALITY['preview'].manim_settings(), 'media_dir': sys.argv[1], "
            "'disable_caching': True, 'verbosity': 'ERROR', 'progress_bar': 'none'}):\n"
            "    scene = ChapterScene(plan); scene.render(); print(scene.renderer.file_writer.movie_file_path)"
        )
        whole = subprocess.run(
            [sys.executable, "-c", code, media], cwd=project, capture_output=True, text=True, timeout=300
        )
        assert whole.returncode == 0, whole.stderr
        one_scene = grey_frames(Path(whole.stdout.strip().splitlines()[-1]))
    joined = grey_frames(project / "renders" / "alpha.mp4")
    assert len(joined) == len(one_scene) > 30
    worst = max(float(np.abs(a - b).mean()) for a, b in zip(joined, one_scene, strict=True))
    assert worst < 0.5, worst


def test_clean_evicts_the_shots_no_render_uses_and_keeps_the_rest(project: Path):
    # a caption drawn and changed back: the cache holds a clip no chapter's last render joined
    # (drawn here, not left by the tests above: xdist need not run a module's tests in order, and
    # a test that ran after the last render leaves the storyboard restored but not rendered)
    for caption in ("A caption clean will evict", "Where we begin"):
        write_project(project, caption=caption)
        assert run_dtfilm("render", cwd=project).returncode == 0
    cache = project / "renders" / "cache"
    used = {shot["key"] for shot in shots(project).values()}
    assert {p.stem for p in cache.glob("*.mp4")} > used
    stray = cache / "0123456789abcdef.sound.npy"  # a chapter's sound no chapter is now made of
    stray.write_bytes(b"")
    lines = cache / "0123456789abcdef.lines"  # the subtitle lines kept of a shot no render uses
    lines.write_text("{}")
    done = run_dtfilm("clean", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "cached shots no render uses" in done.stdout, done.stdout
    assert {p.stem for p in cache.glob("*.mp4")} == {p.stem for p in cache.glob("*.json")} == used
    assert {p.read_text() for p in cache.glob("*.probe")} <= used
    assert not lines.exists() and {p.stem for p in cache.glob("*.lines")} <= used
    # the scene's state at each shot's start, as the last render's shots lead to it, is kept (a
    # later shot drawn starts there); the state after the evicted caption's shot is not
    assert "scene states kept at those shots' starts" in done.stdout, done.stdout
    assert len(list(cache.glob("*.state"))) == 3
    assert "chapters' sound no chapter is made of" in done.stdout and not stray.exists()
    again = run_dtfilm("render", cwd=project)  # nothing it needs was removed
    assert again.returncode == 0 and "alpha: fresh" in again.stdout, again.stdout
    assert "nothing to free" in run_dtfilm("clean", cwd=project).stdout


def test_the_costliest_tasks_start_first_not_the_longest_film():
    # drawn cold, a chapter's shots may cost more a second than a longer chapter's (fsdp's
    # against tp's): by film time the longer went first and the costlier drew alone at the end.
    # A shot drawn before is ranked by the time it took.
    from dtfilm.render.tasks import ShotTask, draw_costs, shot_seconds, split_tasks
    from dtfilm.storyboard import load_chapter
    from tests.conftest import ROOT

    longer, costlier = "tp", "fsdp"
    chapters = {i: load_chapter(i, {}, ROOT) for i in (longer, costlier)}
    cold = {"chapters": {}}
    seconds = {i: shot_seconds(c, cold) for i, c in chapters.items()}
    tasks = [ShotTask(i, tuple(s.beat for s in c.shots), sum(seconds[i].values())) for i, c in chapters.items()]
    assert tasks[0].seconds > tasks[1].seconds  # tp has the longer film
    assert [t.chapter for t in split_tasks(tasks, 1, seconds)] == [longer, costlier]
    costs = {i: draw_costs(c, cold, seconds[i]) for i, c in chapters.items()}
    assert [t.chapter for t in split_tasks(tasks, 1, seconds, costs=costs)] == [costlier, longer]
    stalls = next(s for s in chapters[longer].shots if s.beat == "stalls")
    drawn = {
        "chapters": {longer: {"shots": [{"beat": "stalls", "render_seconds": 99.0, "parts": {"kind": stalls.kind}}]}}
    }
    costs[longer] = draw_costs(chapters[longer], drawn, seconds[longer])
    assert costs[longer]["stalls"] == 99.0
    assert [t.chapter for t in split_tasks(tasks, 1, seconds, costs=costs)] == [longer, costlier]


def test_split_tasks_cuts_a_lone_long_shot_into_windows_of_its_time():
    from dtfilm.render.tasks import EARLIER_SHARE, MIN_WINDOW_SECONDS, ShotTask, split_tasks

    lone = ShotTask("dp", ("ring",), 21.6)
    parts = split_tasks([lone], 4, {"dp": {"ring": 21.6}})
    windows = sorted(t.window for t in parts)
    assert len(parts) == 4 and windows[0][0] == 0.0 and windows[-1][1] == float("inf")
    assert all(a[1] == b[0] for a, b in itertools.pairwise(windows))  # no gap, no overlap
    assert sum(t.seconds for t in parts) == pytest.approx(21.6)
    short = ShotTask("dp", ("title",), MIN_WINDOW_SECONDS / (1 - EARLIER_SHARE) - 0.1)
    assert split_tasks([short], 4, {"dp": {"title": short.seconds}}) == [short]
    assert split_tasks([lone], 4, {"dp": {"ring": 21.6}}, windows=False) == [lone]  # (a cluster's)
    two = ShotTask("dp", ("memory", "ring"), 30.0)  # shots are split between tasks first
    halves = split_tasks([two], 2, {"dp": {"memory": 8.4, "ring": 21.6}})
    assert sorted(t.beats for t in halves) == [("memory",), ("ring",)] and all(t.window is None for t in halves)
