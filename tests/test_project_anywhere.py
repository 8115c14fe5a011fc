"""dtfilm outside its repository: the wheel installed into a fresh virtual environment renders a
project that `dtfilm init` wrote; `init`, `sheet`, `pacing` and `--version` as a user meets them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from tests.conftest import ROOT, run_dtfilm


def test_init_writes_a_project_that_checks(tmp_path: Path):
    done = run_dtfilm("init", str(tmp_path / "film"))
    assert done.returncode == 0, done.stderr
    project = tmp_path / "film"
    for name in (
        "storyboard/film.yaml",
        "storyboard/memory.yaml",
        "storyboard/catalog.yaml",
        ".gitignore",
        "README.md",
    ):
        assert (project / name).is_file(), name
    assert "renders/" in (project / ".gitignore").read_text()
    readme = (project / "README.md").read_text()
    assert "dtfilm check" in readme and "dtfilm render" in readme and "dtfilm sheet" in readme
    checked = run_dtfilm("check", cwd=project)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "memory: clean" in checked.stdout


def test_init_refuses_a_folder_that_is_not_empty(tmp_path: Path):
    (tmp_path / "notes.txt").write_text("mine")
    done = run_dtfilm("init", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "is not empty" in done.stderr and "--force" in done.stderr
    assert not (tmp_path / "storyboard").exists()
    forced = run_dtfilm("init", str(tmp_path), "--force")
    assert forced.returncode == 0, forced.stderr
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert (tmp_path / "storyboard" / "film.yaml").is_file()


def test_version():
    done = run_dtfilm("--version")
    assert done.returncode == 0
    from importlib import metadata

    assert done.stdout.strip() == f"dtfilm {metadata.version('dtfilm')} (Manim {metadata.version('manim')})"


@pytest.mark.render
@pytest.mark.xdist_group("dp-default")  # the dp render is that group's
def test_sheet_and_pacing_of_a_chapter_and_of_a_shot(tmp_path: Path, dp_render: Path):
    target = tmp_path / "dp.png"
    done = run_dtfilm("sheet", "dp", "--out", str(dp_render), "-n", "8", "--columns", "4", "-o", str(target))
    assert done.returncode == 0, done.stderr
    with Image.open(target) as sheet:
        assert sheet.size == (4 * 427, 2 * (round(480 * 427 / 854) + 18))
    paced = run_dtfilm("pacing", "dp", "--out", str(dp_render), "--json")
    assert paced.returncode == 0, paced.stderr
    report = json.loads(paced.stdout)
    duration = json.loads((dp_render / "manifest.json").read_text())["chapters"]["dp"]["duration"]
    assert abs(report["duration_s"] - duration) < 0.2
    assert 0 <= report["still_share"] <= 1 and report["longest_still_s"] <= duration
    # the speech, from the chapter's subtitles: as `check` counts it from the narration track
    from dtfilm.check.speech import chapter_pace
    from dtfilm.storyboard import load_chapter

    speech = report["speech"]
    assert abs(speech["words_a_minute"] - chapter_pace(load_chapter("dp")).words_a_minute) < 3
    assert speech["most_quantities_a_sentence"] <= 2 and 0 <= speech["over_stills_share"] <= 1
    listed = run_dtfilm("pacing", "dp", "--out", str(dp_render), "--list", "--min-still", "0.5")
    assert listed.returncode == 0 and "still from" in listed.stdout and "s in)" in listed.stdout  # named by shot
    shot = run_dtfilm("pacing", "dp:ring", "--out", str(dp_render), "--json")
    assert shot.returncode == 0, shot.stderr
    assert json.loads(shot.stdout)["clip"].endswith("-ring.mp4")
    missing = run_dtfilm("sheet", "dp:nope", "--out", str(dp_render))
    assert missing.returncode == 2 and "no shot 'nope'; valid:" in missing.stderr


@pytest.mark.render
@pytest.mark.xdist_group("wheel")
def test_the_wheel_renders_a_new_project_outside_the_repository(tmp_path: Path):
    """What a user does, as the docs' getting-started page says it, block and all: pip install the
    wheel (voice extra) into a fresh venv, dtfilm init, check, render, sheet, pacing. The wheel is
    the one built from this checkout, never whatever an index holds under the name."""
    from tests.test_docs_site import fenced_blocks, kind_of

    (block,) = [b for b in fenced_blocks(ROOT / "docs" / "getting-started.md") if kind_of(b) == "wheel"]
    readme = (ROOT / "README.md").read_text()
    for line in ("pip install -c constraints.txt 'dist/", "dtfilm init my-film && cd my-film"):
        assert line in block.text and line in readme, line  # the front page's commands are the tested ones
    wheels = tmp_path / "wheels"
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(wheels), "."]
    subprocess.run(build, cwd=ROOT, check=True, capture_output=True, timeout=300)
    wheel = next(wheels.glob("dtfilm-*.whl"))
    assert f"dist/{wheel.name}[voice]" in block.text, f"the page installs another wheel than {wheel.name}"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    away = tmp_path / "elsewhere"  # where the user stands: the wheel in dist/ and the constraints beside it
    (away / "dist").mkdir(parents=True)
    shutil.copyfile(wheel, away / "dist" / wheel.name)
    shutil.copyfile(ROOT / "constraints.txt", away / "constraints.txt")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}:{env['PATH']}"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    # pip compiles every module it installs, one after another (Manim, NumPy, SciPy, the voice's
    # ONNX runtime); Python compiles those the commands import as they first import them
    env["PIP_COMPILE"] = "0"
    done = subprocess.run(
        ["bash", "-c", f"set -ex\n{block.text}"], cwd=away, env=env, capture_output=True, text=True, timeout=1500
    )
    assert done.returncode == 0, f"{block.where}:\n{done.stderr[-4000:]}"
    assert "renders/memory.mp4" in done.stdout
    project = away / "my-film"
    assert (project / "renders" / "memory.sheet.png").is_file()
    assert re.search(r"^dtfilm \S+ \(Manim ", done.stdout, re.M)  # --version
    import av

    with av.open(str(project / "renders" / "memory.mp4")) as clip:
        assert clip.streams.video and clip.streams.audio, "the chapter has a picture and the voice"
        assert clip.duration / 1e6 > 10
    chapter_cues = (project / "renders" / "memory.srt").read_text().count(" --> ")
    assert chapter_cues > 0 and (project / "renders" / "film.srt").read_text().count(" --> ") == chapter_cues
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import dtfilm; print(dtfilm.__file__)"],
        cwd=away,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert str(venv) in where.stdout, "the installed package, not the repository's"


def test_the_film_has_subtitles_of_its_own(tmp_path: Path):
    """film.mp4 had chapter markers but no subtitles: a player showing the whole film had no captions."""
    import srt

    from dtfilm.render.film_subtitles import chapter_cues, film_vtt, placed_srt

    (tmp_path / "a.srt").write_text("1\n00:00:01,000 --> 00:00:03,000\nFirst words\n\n")
    (tmp_path / "b.srt").write_text("1\n00:00:00,500 --> 00:00:09,000\nSecond chapter\n\n")
    chapters = [(tmp_path / "a.srt", 0.0, 5.0), (tmp_path / "b.srt", 5.0, 12.0), (tmp_path / "gone.srt", 12, 20)]
    text = placed_srt([(chapter_cues(path), start, end) for path, start, end in chapters])
    cues = list(srt.parse(text))
    assert [(c.content, c.start.total_seconds(), c.end.total_seconds()) for c in cues] == [
        ("First words", 1.0, 3.0),
        ("Second chapter", 5.5, 12.0),  # kept within its chapter
    ]
    vtt = film_vtt(text)
    assert vtt.startswith("WEBVTT") and "00:00:05.500 --> 00:00:12.000" in vtt


def test_the_films_subtitles_sit_where_each_chapters_did(tmp_path: Path):
    """film.vtt put every cue at 86% of the height, over the legends its chapters' own .vtt kept
    clear of (a teacher's review): each cue now keeps its chapter's line, read from the chapter's
    .vtt only when it is the file the render wrote."""
    import hashlib

    from dtfilm.render.film_subtitles import chapter_cues, film_vtt, placed_subtitles, recorded_lines
    from dtfilm.system.webvtt import SUBTITLE_BOTTOM_PERCENT, srt_to_vtt

    a_srt = "1\n00:00:01,000 --> 00:00:02,000\nOne\n\n2\n00:00:02,000 --> 00:00:03,000\nTwo\n\n"
    b_srt = "1\n00:00:00,500 --> 00:00:02,000\nThree\n\n"
    (tmp_path / "a.srt").write_text(a_srt)
    (tmp_path / "b.srt").write_text(b_srt)
    (tmp_path / "a.vtt").write_text(srt_to_vtt(a_srt, [98, 72]))
    record = {"sha256": hashlib.sha256((tmp_path / "a.vtt").read_bytes()).hexdigest()}
    a_cues, b_cues = chapter_cues(tmp_path / "a.srt"), chapter_cues(tmp_path / "b.srt")
    assert recorded_lines(tmp_path / "a.vtt", record, 2) == [98, 72]
    assert recorded_lines(tmp_path / "a.vtt", record, 3) is None  # (not these cues)
    assert recorded_lines(tmp_path / "a.vtt", {"sha256": "0" * 64}, 2) is None  # (not what the render wrote)
    assert recorded_lines(tmp_path / "b.vtt", record, 1) is None  # (not there)
    text, lines = placed_subtitles([(a_cues, [98, 72], 0.0, 5.0), (b_cues, None, 5.0, 9.0)])
    assert lines == [98, 72, SUBTITLE_BOTTOM_PERCENT]
    vtt = film_vtt(text, lines)
    assert "00:00:02.000 --> 00:00:03.000 line:72%,end" in vtt
    assert "00:00:05.500 --> 00:00:07.000 line:86%,end" in vtt
