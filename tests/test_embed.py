"""Embedding: posters, per-shot clips, subtitles timed to the shots, snippets, the gallery in a
real browser, the slide deck, GIF and WebM copies (issue 10)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import av
import pytest
from PIL import Image

from dtfilm.system.video import has_audio, probe
from dtfilm.voice import engine
from tests.conftest import ROOT, run_dtfilm

pytestmark = [pytest.mark.render, pytest.mark.xdist_group("dp-default")]

FRAME = 1 / 15  # one frame at preview


def shots_of(out: Path, chapter: str = "dp") -> list[dict]:
    return json.loads((out / "manifest.json").read_text())["chapters"][chapter]["shots"]


def test_poster_and_one_clip_per_shot(dp_render: Path):
    poster = Image.open(dp_render / "dp.png")
    assert poster.size == (854, 480)
    assert len(poster.getcolors(1 << 16) or range(1 << 16)) > 8  # a picture, not a blank frame
    shots = shots_of(dp_render)
    assert [s["beat"] for s in shots] == ["title", "copies", "memory", "ring", "more-cards", "overlap"]
    total = probe(dp_render / "dp.mp4")["duration"]
    lengths = []
    ends = [s["start"] for s in shots[1:]] + [total]  # the clips tile the film (the last ends with it)
    for shot, end in zip(shots, ends, strict=True):
        info = probe(dp_render / shot["clip"])
        assert (info["codec"], info["pix_fmt"]) == ("h264", "yuv420p")
        assert info["duration"] == pytest.approx(end - shot["start"], abs=3 * FRAME)
        assert Image.open(dp_render / shot["still"]).size == (854, 480)
        lengths.append(info["duration"])
    assert sum(lengths) == pytest.approx(total, abs=0.5)


def _cues(vtt: str) -> list[tuple[float, float, str]]:
    def seconds(stamp: str) -> float:
        h, m, s = stamp.split(":")
        return int(h) * 3600 + int(m) * 60 + float(s)

    cues = []
    for block in vtt.split("\n\n"):
        lines = block.strip().splitlines()
        times = next((line for line in lines if " --> " in line), None)
        if times:
            start, end = times.split(" --> ")
            cues.append((seconds(start), seconds(end.split()[0]), " ".join(lines[lines.index(times) + 1 :])))
    return cues


def test_subtitle_cues_follow_the_shots(dp_render: Path):
    shots = [s for s in shots_of(dp_render) if s["narration"]]
    for name in ("dp.vtt", "dp.srt"):
        text = (dp_render / name).read_text()
        if name.endswith("srt"):  # SRT writes 00:00:04,535; only its times, not its words' commas
            text = re.sub(r"(\d\d:\d\d:\d\d),(\d{3})", r"\1.\2", text)
        cues = _cues(text)
        assert len(cues) > len(shots)  # a cue per sentence or phrase, as it is spoken
        for shot in shots:
            inside = [c for c in cues if shot["start"] - 2 * FRAME <= c[0] < shot["end"]]
            assert inside and all(end <= shot["end"] + 2 * FRAME for _, end, _ in inside)
            said = " ".join(words for _, _, words in inside).replace("&amp;", "&").replace("&lt;", "<")
            assert said.split() == shot["narration"].split()  # every word, in order, in its shot


@pytest.mark.parametrize(
    ("fmt", "pieces"),
    [
        (
            "html",
            ["<video controls", 'src="docs/dp.mp4"', 'poster="docs/dp.png"', 'src="docs/dp.vtt"', 'label="English">'],
        ),
        ("markdown", ["[![Data parallelism](docs/dp.png)](docs/dp.mp4)"]),
        ("rst", [".. raw:: html", "   <video controls", '     <track kind="subtitles"']),
    ],
)
def test_embed_snippets(fmt: str, pieces: list[str]):
    done = run_dtfilm("embed", "dp", "--as", fmt, "--base", "docs")
    assert done.returncode == 0, done.stderr
    for piece in pieces:
        assert piece in done.stdout, (piece, done.stdout)
    # one thing, not two; a responsive player; and which files to copy where, on stderr
    assert (fmt == "markdown") == ("<video" not in done.stdout)
    if fmt != "markdown":
        assert 'width="854" height="480" style="max-width:100%;height:auto"' in done.stdout
    assert "dtfilm: copy dp." in done.stderr and "resolved against the built page's URL" in done.stderr


def test_embed_names_an_unknown_chapter():
    done = run_dtfilm("embed", "nosuch")
    assert done.returncode == 2
    assert "no chapter 'nosuch'; valid: why, ledger, dp" in done.stderr


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (./dev.sh test installs it)")
        pytest.skip("chromium is not installed")
    return found


def chromium_dom(url: str, budget_ms: int = 40000, *extra: str) -> subprocess.CompletedProcess[str]:
    """The page's DOM after `budget_ms` of virtual time in headless Chromium, sound muted,
    autoplay allowed, no network but the page's own."""
    return subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--mute-audio",
            "--autoplay-policy=no-user-gesture-required",
            f"--virtual-time-budget={budget_ms}",
            *extra,
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_gallery_plays_every_clip_in_a_real_browser(dp_render: Path):
    page = (dp_render / "index.html").read_text()
    assert '<video id="dp"' in page and 'poster="dp.png"' in page and 'src="dp.vtt"' in page
    assert "<h2>Data parallelism</h2>" in page
    done = chromium_dom((dp_render / "index.html").as_uri() + "#selftest")
    found = re.search(r'<pre id="selftest">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stdout[-2000:] + done.stderr[-2000:]
    reports = json.loads(found.group(1))
    duration = json.loads((dp_render / "manifest.json").read_text())["chapters"]["dp"]["duration"]
    assert [r["id"] for r in reports] == ["dp"]
    for report in reports:
        assert report["error"] is None
        assert report["duration"] == pytest.approx(duration, abs=1.0)
        # it played, or (headless, no sound device: a clip with sound never starts) a frame 1.5 s in decodes
        assert report["advanced"] >= 0.5 or report["seeked"] >= 1.0, report


def test_slides_one_per_shot_with_clip_and_notes(dp_render: Path, tmp_path: Path):
    done = run_dtfilm("slides", "dp", "--out", str(dp_render))
    assert done.returncode == 0, done.stderr
    deck = (dp_render / "slides.html").read_text()
    shots = shots_of(dp_render)
    sections = re.findall(r'<section class="shot".*?</section>', deck, re.S)
    assert len(sections) == len(shots)
    for section, shot in zip(sections, shots, strict=True):
        clip = re.search(r'<video src="([^"]+)"', section).group(1)
        assert clip == shot["clip"] and (dp_render / clip).is_file()
        notes = re.search(r'<aside class="notes">(.*?)</aside>', section, re.S).group(1)
        assert shot["narration"][:40].replace("'", "&#x27;") in notes
    # reveal.js is bundled beside the deck: nothing is fetched at show time
    assert "http" not in re.sub(r"<aside.*?</aside>", "", deck, flags=re.S)
    for name in ("reveal/dist/reveal.js", "reveal/dist/reveal.css", "reveal/dist/plugin/notes.js"):
        assert (dp_render / name).stat().st_size > 1000
    with zipfile.ZipFile(dp_render / "slides.pptx") as pptx:
        names = pptx.namelist()
        slides = [n for n in names if re.fullmatch(r"ppt/slides/slide\d+\.xml", n)]
        notes = [n for n in names if re.fullmatch(r"ppt/notesSlides/notesSlide\d+\.xml", n)]
        media = [n for n in names if n.startswith("ppt/media/") and n.endswith(".mp4")]
        assert len(slides) == len(notes) == len(media) == len(shots)
        first_notes = pptx.read("ppt/notesSlides/notesSlide1.xml").decode()
        assert shots[0]["narration"].split()[0] in first_notes
        # muted by default (a speaker talks over slides): the deck's videos, the movies' pictures alone
        movie = tmp_path / "first.mp4"
        movie.write_bytes(pptx.read(media[0]))
        assert not has_audio(movie)
    assert all(" muted " in section for section in sections)
    assert has_audio(dp_render / shots[0]["clip"])


def test_slides_with_the_voice_keep_its_sound(dp_render: Path, tmp_path: Path):
    done = run_dtfilm("slides", "dp", "--out", str(dp_render), "--voice")
    assert done.returncode == 0, done.stderr
    assert "with the narration's voice" in done.stdout
    deck = (dp_render / "slides.html").read_text()
    assert "<video" in deck and " muted " not in deck
    with zipfile.ZipFile(dp_render / "slides.pptx") as pptx:
        media = sorted(n for n in pptx.namelist() if n.startswith("ppt/media/") and n.endswith(".mp4"))
        movie = tmp_path / "first.mp4"
        movie.write_bytes(pptx.read(media[0]))
    assert has_audio(movie)


TWO_SHOTS = """\
id: dp
title: Data parallelism
shots:
  - kind: title
    subtitle: Copy the model, split the batch
    narration: A short clip for the copies.
    duration: 2
  - kind: loaf_to_rack
    caption: "Every card holds all {model.layers} layers"
"""


def test_gif_and_webm_on_request(tmp_path: Path):
    shutil.copytree(ROOT / "storyboard", tmp_path / "storyboard")
    (tmp_path / "storyboard" / "dp.yaml").write_text(TWO_SHOTS)
    done = run_dtfilm("render", "dp", "--format", "gif,webm", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "renders"
    gif = Image.open(out / "dp.gif")
    assert gif.format == "GIF" and gif.n_frames > 10
    assert (out / "dp.gif").stat().st_size <= 5_000_000
    assert probe(out / "dp.webm")["codec"] == "vp9"
    with av.open(str(out / "dp.webm")) as webm:  # the narration, as Opus (GIFs stay silent)
        assert [s.codec_context.name for s in webm.streams.audio] == (["opus"] if engine.available() else [])
    again = run_dtfilm("render", "dp", "--format", "gif", cwd=tmp_path)  # fresh: nothing made again
    assert "dp.gif" not in again.stdout and "dp: fresh" in again.stdout
    bad = run_dtfilm("render", "dp", "--format", "avi", cwd=tmp_path)
    assert bad.returncode == 2 and "'avi' is not a format; valid: gif, webm" in bad.stderr
