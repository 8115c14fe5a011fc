"""Text read back from renders/ and the caches is data (issue 54, findings 6, 7, 8, 10 and 11):
renders/validation.json and the shot cache's entries are read through `read_back` and a schema,
what they hold is escaped in HTML and stripped of controls before the terminal, subtitles are
made from the storyboard and escaped for each format, and a signed pickle's tag binds its role,
its name and the key's id. Each test plants what an attacker would and fails on the code before."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import av
import numpy as np
import pytest

from dtfilm.system import pickled
from tests.conftest import ROOT, run_dtfilm

SECONDS = 20  # what a read that waits on a FIFO is given before the test calls it hung


def finishes(work: Callable[[], object]) -> object:
    """What `work` returns, run on a thread: the test fails if it is still waiting after SECONDS
    (a FIFO opened for reading waits for a writer that never comes)."""
    answer: dict[str, object] = {}

    def run() -> None:
        try:
            answer["value"] = work()
        except BaseException as error:  # (MemoryError from /dev/zero among them: the test's failure)
            answer["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=SECONDS)
    assert not thread.is_alive(), "it waited on a named pipe"
    if "error" in answer:
        raise AssertionError(f"it raised {answer['error']!r}")
    return answer["value"]


def project_copy(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(ROOT / "storyboard", project / "storyboard")
    return project


# ---------------------------------------------------------------- 6: renders/validation.json

REPORT = {
    "ranks": 4,
    "torch": "2.13.0",
    "backend": "gloo (CPU)",
    "precision": "fp32",
    "seconds": 12.5,
    "measured_at": "2026-12-01T10:00:00+0000",
    "rows": [
        {
            "strategy": "ddp",
            "quantity": "weights",
            "model": 100.0,
            "measured": 100.0,
            "unit": "B",
            "note": "",
            "verdict": "agrees",
            "ratio": 1.0,
        }
    ],
    "all_agree": True,
}


def _gallery(out: Path) -> str:
    from dtfilm.render.embed import write_gallery

    film = SimpleNamespace(title="Film", subtitle="", small_print="", chapters=())
    return write_gallery(out, film, {"chapters": {}, "film": {}}).read_text()


def test_a_report_with_markup_does_not_reach_the_gallery_as_html(tmp_path: Path):
    """`"ranks": "<script>..."` was written into index.html as it was: stored XSS."""
    from dtfilm.render.embed import validation_html

    out = tmp_path / "renders"
    out.mkdir()
    (out / "validation.json").write_text(json.dumps({**REPORT, "ranks": "<script>alert(1)</script>"}))
    assert "<script>alert" not in _gallery(out)
    # and a report of the right shape whose words carry markup is escaped, every field
    marked = {**REPORT, "backend": "<img src=x onerror=alert(1)>", "torch": "<b>2</b>"}
    marked["rows"] = [{**REPORT["rows"][0], "quantity": "<i>w</i>", "strategy": "<u>ddp</u>"}]
    (out / "validation.json").write_text(json.dumps(marked))
    page = _gallery(out)
    assert "Checked against PyTorch" in page and "&lt;img src=x" in page
    assert not re.search(r"<(img|b|i|u)>|<img ", page.split('id="validation"')[1])
    assert "<script>" not in validation_html({**REPORT, "ranks": "<script>"})


def test_a_report_that_is_a_named_pipe_is_not_waited_on(tmp_path: Path):
    """As a FIFO, `status` and `render` hung while holding the lock."""
    from dtfilm.render.embed import read_report

    out = tmp_path / "renders"
    out.mkdir()
    os.mkfifo(out / "validation.json")
    assert finishes(lambda: read_report(out)) is None


def test_a_report_linked_to_dev_zero_is_not_read(tmp_path: Path):
    """A link to /dev/zero: read_text read until MemoryError."""
    from dtfilm.render.embed import read_report

    out = tmp_path / "renders"
    out.mkdir()
    os.symlink("/dev/zero", out / "validation.json")
    assert finishes(lambda: read_report(out)) is None


@pytest.mark.parametrize("kind", ["folder", "not-utf8", "list", "rows-not-rows", "ansi"])
def test_a_report_not_as_dtfilm_writes_it_stops_nothing_and_is_not_printed_raw(tmp_path: Path, kind: str):
    """A folder, invalid UTF-8 or `[]` gave a traceback after drawing; ANSI escapes in a field
    reached the terminal (a screen cleared, a line forged)."""
    project = project_copy(tmp_path)
    out = project / "renders"
    out.mkdir()
    report = out / "validation.json"
    if kind == "folder":
        report.mkdir()
    elif kind == "not-utf8":
        report.write_bytes(b'{"ranks": "\xff\xfe"}')
    elif kind == "list":
        report.write_text("[]")
    elif kind == "rows-not-rows":
        report.write_text(json.dumps({**REPORT, "rows": [1, "x"]}))
    else:
        report.write_text(json.dumps({**REPORT, "measured_at": "\x1b[2J\x1b[Hdp         fresh\x1b]0;owned\x07"}))
    done = run_dtfilm("status", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stdout + done.stderr
    if kind == "ansi":  # (the report has dtfilm's shape: shown, without the controls)
        assert re.search(r"^validate .*dp +fresh.*4 ranks", done.stdout, re.M), done.stdout
    else:
        assert "validation.json: not a report dtfilm wrote" in done.stderr
        assert "validate" not in done.stdout


# ---------------------------------------------------------------- 7: renders/cache/<key>.json

KEY = "0123456789abcdef"


def test_a_cache_entry_or_probe_that_is_a_named_pipe_is_not_waited_on(tmp_path: Path):
    """A FIFO hung `status --verify` and `render`."""
    from dtfilm.render.shot_cache import cache_folder, cached, entry_path, probe_path, probed, write_probe

    out = tmp_path / "renders"
    cache_folder(out).mkdir(parents=True)
    os.mkfifo(entry_path(out, KEY))
    os.mkfifo(probe_path(out, "feedfacefeedface"))
    assert finishes(lambda: cached(out, KEY, verify=True)) is None
    assert finishes(lambda: probed(out, "feedfacefeedface")) is None
    finishes(lambda: write_probe(out, "feedfacefeedface", KEY))  # (replaced by a file holding the key)
    assert probe_path(out, "feedfacefeedface").read_text() == KEY


def test_a_cache_entry_linked_to_dev_zero_is_not_read(tmp_path: Path):
    """A link to /dev/zero took 2.1 GB in 1.5 s."""
    from dtfilm.render.shot_cache import cache_folder, cached, entry_path, probe_path, probed

    out = tmp_path / "renders"
    cache_folder(out).mkdir(parents=True)
    os.symlink("/dev/zero", entry_path(out, KEY))
    os.symlink("/dev/zero", probe_path(out, "feedfacefeedface"))
    assert finishes(lambda: cached(out, KEY)) is None
    assert finishes(lambda: probed(out, "feedfacefeedface")) is None


def test_a_kept_sound_that_is_a_named_pipe_or_not_an_array_is_not_used(tmp_path: Path):
    """The sound kept beside a chapter (cache/<digest>.sound.npy) was opened with np.load: a FIFO
    there hung the film's join, and an .npz archive under its name raised AttributeError."""
    from dtfilm.render.assemble import SOUND_TAG, sound_name, stored_sound

    folder = tmp_path / "cache"
    folder.mkdir()
    fifo, archive, kept = (SOUND_TAG + digit * 32 for digit in "abc")
    os.mkfifo(folder / sound_name(fifo))
    with open(folder / sound_name(archive), "wb") as out:
        np.savez(out, sound=np.zeros(4, dtype=np.int16))
    with open(folder / sound_name(kept), "wb") as out:
        np.save(out, np.full(4, 32767, dtype=np.int16))
    assert finishes(lambda: stored_sound(folder, fifo)) is None
    assert finishes(lambda: stored_sound(folder, archive)) is None
    assert list(stored_sound(folder, kept)) == [1.0] * 4


def _clip(path: Path, frames: int = 8) -> None:
    """A tiny silent clip: what assembly joins (8 frames at 15 fps)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=15, options={"threads": "1"})
        stream.width, stream.height, stream.pix_fmt = 64, 64, "yuv420p"
        for index in range(frames):
            picture = np.full((64, 64, 3), 16 * index, dtype=np.uint8)
            out.mux(stream.encode(av.VideoFrame.from_ndarray(picture, format="rgb24")))
        out.mux(stream.encode())


FORGED = "<font color=red>FORGED</font> & --&gt; five hours"
SAID = "Cut the matrix in two & keep <both> halves --> on two cards."


def _assembled(tmp_path: Path) -> tuple[Path, object]:
    """The tp chapter assembled from tiny clips whose cache entries carry forged cues; its first
    shot's narration says SAID (an ampersand, a bracket and an arrow)."""
    from dtfilm.render.assemble import assemble_chapter
    from dtfilm.render.shot_cache import CachedShot, clip_path, write_entry
    from dtfilm.storyboard import load_chapter

    project = project_copy(tmp_path)
    path = project / "storyboard" / "tp.yaml"
    first = (
        "Tensor parallelism [subtitle] slices every weight matrix of [picture] every layer: "
        "each card [again] holds a piece\n"
        "      of each, not whole layers."
    )
    assert first in path.read_text(), "tp's first narration, as the test rewrites it"
    path.write_text(path.read_text().replace(first, SAID.replace("-->", "--> [subtitle]")))
    chapter = load_chapter("tp", root=project)
    assert chapter.shots[0].narration.text == SAID
    out = project / "renders"
    keys = []
    for index, shot in enumerate(chapter.shots):
        key = f"{index:016x}"
        _clip(clip_path(out, key))
        entry = CachedShot(key, "tp", shot.beat, 8 / 15, [(FORGED, 0.0, 0.5)], parts={"kind": shot.kind})
        write_entry(out, entry)
        keys.append(key)
    assemble_chapter(chapter, keys, out, {}, {"numbers": []}, keep=False)
    return out, chapter


def test_subtitles_are_made_from_the_storyboard_not_from_a_cache_entry(tmp_path: Path):
    """Edited `cues` in a cache entry forged a five-hour cue with markup into <chapter>.srt and
    .vtt (and film.srt), while `status --verify` said fresh: a cue's text now comes from the
    storyboard; an entry whose cues are not timed inside its shot is not one dtfilm wrote."""
    from dtfilm.render.shot_cache import CachedShot, cached, clip_path, write_entry

    out, _ = _assembled(tmp_path)
    for name in ("tp.srt", "tp.vtt"):
        text = (out / name).read_text()
        assert "FORGED" not in text and "font" not in text, name
        assert "05:00:00" not in text, name
    assert "Cut the matrix in two" in (out / "tp.srt").read_text()
    _clip(clip_path(out, "fedcba9876543210"))
    write_entry(out, CachedShot("fedcba9876543210", "tp", "b", 2.0, [("x", 0.0, 1.5)]))
    assert cached(out, "fedcba9876543210") is not None
    write_entry(out, CachedShot("fedcba9876543210", "tp", "b", 2.0, [("x", 0.0, 18_000.0)]))
    assert cached(out, "fedcba9876543210") is None


def test_an_edited_chapter_srt_is_stale_though_its_size_and_time_are_kept(tmp_path: Path):
    """An .srt rewritten at its old size, its time set back, passed as fresh (size and time
    alone were compared) and reached film.srt: the text files are checked by their digest."""
    from dtfilm.render.cache import files_reasons, record_files
    from dtfilm.render.film_subtitles import recorded_cues

    out = tmp_path / "renders"
    out.mkdir()
    srt = out / "tp.srt"
    srt.write_text("1\n00:00:00,300 --> 00:00:03,000\nTensor parallelism slices\n\n")
    files = record_files(out, ["tp.srt"], None)
    info = srt.stat()
    srt.write_text("1\n00:00:00,300 --> 05:00:03,000\nI forge the film's subtit\n\n")
    os.utime(srt, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert srt.stat().st_size == files["tp.srt"]["size"]
    assert files_reasons(files, ["tp.srt"], out) == ["tp.srt changed since it was rendered"]
    assert recorded_cues(srt, files["tp.srt"]) is None


# ---------------------------------------------------------------- 8: signed pickles


@pytest.fixture
def own_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A signing key of this test's own, in a config folder outside every project."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv(pickled.KEY_VARIABLE, str(tmp_path / "config"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    pickled.signing_key.cache_clear()
    yield
    pickled.signing_key.cache_clear()


def test_two_signed_labels_swapped_by_name_are_refused(tmp_path: Path, own_key):
    """Two validly signed typeset labels swapped by name drew the wrong caption, while `status`
    said fresh: the tag covers the file's name, and its role."""
    store = tmp_path / "typeset"
    store.mkdir()
    a, b = store / ("a" * 32 + ".pickle.z"), store / ("b" * 32 + ".pickle.z")
    pickled.write_pickled(a, "16 bytes a parameter ... 108 GB", "typeset label")
    pickled.write_pickled(b, "4 bytes · fp32 master copy", "typeset label")
    assert pickled.read_pickled(a, "typeset label") == "16 bytes a parameter ... 108 GB"
    blob_a, blob_b = a.read_bytes(), b.read_bytes()
    a.write_bytes(blob_b)
    b.write_bytes(blob_a)
    assert pickled.read_pickled(a, "typeset label") is None
    assert pickled.read_pickled(b, "typeset label") is None
    # a file signed as one role is not read as another, under the same name
    state = tmp_path / "same.name"
    pickled.write_pickled(state, {"screen": 1}, "scene state")
    assert pickled.read_pickled(state, "typeset label") is None
    assert pickled.read_pickled(state, "scene state") == {"screen": 1}


class _Planted:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def _signed_with(key: bytes, path: Path, value: object, role: str) -> None:
    """A file signed with `key` as dtfilm signs one: what an attacker who planted the key writes."""
    body = zlib.compress(pickle.dumps(value))
    path.write_bytes(pickled.MAGIC + pickled._tag(key, role, path.name, body) + body)


@pytest.mark.parametrize("how", ["relative", "absolute-inside"])
def test_a_key_planted_in_the_project_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], how: str
):
    """XDG_CONFIG_HOME=.cfg (relative, inside the project) let a planted key and pickles signed
    with it run code: a relative value is ignored (the key is in ~/.config), and a key inside a
    project is refused, each with one warning."""
    project = project_copy(tmp_path)
    planted = bytes(range(pickled.KEY_BYTES))
    (project / ".cfg" / "dtfilm").mkdir(parents=True)
    (project / ".cfg" / "dtfilm" / "cache-key").write_bytes(planted)
    (project / ".cfg" / "dtfilm" / "cache-key").chmod(0o600)
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv(pickled.KEY_VARIABLE, ".cfg" if how == "relative" else str(project / ".cfg"))
    pickled.signing_key.cache_clear()
    try:
        marker = tmp_path / "ran"
        state = project / "renders" / "cache" / ("c" * 16 + ".state")
        state.parent.mkdir(parents=True)
        _signed_with(planted, state, _Planted(marker), "scene state")
        assert pickled.read_pickled(state, "scene state") is None
        assert not marker.exists(), "a pickle signed with the planted key ran its code"
        assert pickled.signing_key() != planted
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err
        if how == "relative":
            assert "not an absolute path; ignored" in err
            assert pickled.key_file() == tmp_path / "home" / ".config" / "dtfilm" / "cache-key"
        else:
            assert "lies inside the project" in err and pickled.signing_key() is None
    finally:
        pickled.signing_key.cache_clear()


def test_a_key_that_is_a_named_pipe_is_refused_without_waiting(
    tmp_path: Path, own_key, capsys: pytest.CaptureFixture[str]
):
    """A key that was a FIFO hung a render for 60 s."""
    pickled.key_file().parent.mkdir(parents=True)
    os.mkfifo(pickled.key_file())
    assert finishes(pickled.signing_key) is None
    assert "is not a regular file" in capsys.readouterr().err


# ---------------------------------------------------------------- 10: `dtfilm status`


CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _forged_manifest(tmp_path: Path) -> Path:
    """A project whose manifest's tp entry has escape sequences for its quality and voice."""
    project = project_copy(tmp_path)
    out = project / "renders"
    out.mkdir()
    forged = "\x1b[2J\x1b[H\rdp         fresh\x9b31m"
    entry = {"parts": {"quality": forged, "voice": forged, "theme": "dark"}, "shots": [], "outputs": []}
    (out / "manifest.json").write_text(json.dumps({"version": 1, "chapters": {"tp": entry}, "film": {}}))
    return project


def test_status_strips_control_characters_from_the_manifest(tmp_path: Path):
    """`parts.voice` and `parts.quality` were printed raw: ANSI sequences cleared the screen and
    forged "fresh" lines."""
    project = _forged_manifest(tmp_path)
    done = run_dtfilm("status", "tp", cwd=project)
    assert done.returncode == 0, done.stderr
    assert not CONTROLS.search(done.stdout), repr(done.stdout)
    assert re.search(r"^tp +stale: rendered at \[2J\[Hdp +fresh\[?31m quality", done.stdout, re.M), done.stdout


def test_the_docs_plugins_warnings_strip_control_characters_from_the_manifest(tmp_path: Path):
    """The MkDocs and Sphinx builds print a stale clip's reasons, which quote the manifest."""
    from dtfilm.publish.docs_embed import page_player

    project = _forged_manifest(tmp_path)
    (project / "renders" / "tp.mp4").write_bytes(b"")
    warnings = page_player(project, project / "renders", "tp", "renders").warnings
    assert any("[2J[Hdp         fresh" in warning for warning in warnings), warnings
    assert not any(CONTROLS.search(warning) for warning in warnings), warnings


# ---------------------------------------------------------------- 11: subtitles


def test_a_chapter_title_cannot_forge_a_cue_in_the_chapter_markers():
    """A title with a newline and `-->` forged a nine-hour chapter cue in film.chapters.vtt."""
    from dtfilm.system.webvtt import chapters_vtt

    title = "Memory\n\n99\n00:00:00.000 --> 09:00:00.000\n<b>forged</b> & more"
    vtt = chapters_vtt([(title, 0.0, 10.0), ("Data parallelism", 10.0, 20.0)])
    assert vtt.count("-->") == 2, vtt
    assert [line for line in vtt.splitlines() if "-->" in line] == [
        "00:00:00.000 --> 00:00:10.000",
        "00:00:10.000 --> 00:00:20.000",
    ]
    assert "&lt;b&gt;forged&lt;/b&gt; &amp; more" in vtt and "<b>" not in vtt


def test_render_refuses_a_title_that_is_not_one_line(tmp_path: Path):
    """`check` flagged such a title, and `render` went on and wrote it: the storyboard is refused
    before anything is drawn, in one line naming the file and key."""
    project = project_copy(tmp_path)
    path = project / "storyboard" / "tp.yaml"
    path.write_text(
        path.read_text().replace("title: Tensor parallelism", 'title: "Tensor\\n00:00:00.000 --> 09:00:00.000\\nx"')
    )
    done = subprocess.run(
        [sys.executable, "-m", "dtfilm", "render", "tp", "--out", str(tmp_path / "out")],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "tp.yaml" in done.stderr and "title" in done.stderr and "one line" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "out" / "tp.mp4").exists()


def test_subtitles_are_plain_text_in_srt_and_escaped_in_webvtt(tmp_path: Path):
    """`.srt` carried HTML entities (`--&gt;`) that SRT players show as written; WebVTT needs
    `&`, `<` and `-->` escaped, or a line of narration ends its cue."""
    from dtfilm.system.webvtt import srt_to_vtt

    out, _ = _assembled(tmp_path)
    srt_text = (out / "tp.srt").read_text()
    assert "&amp;" not in srt_text and "&lt;" not in srt_text and "&gt;" not in srt_text, srt_text
    assert "two & keep <both>" in srt_text.replace("\n", " ")
    vtt = (out / "tp.vtt").read_text()
    assert "&amp; keep &lt;both&gt;" in vtt.replace("\n", " ")
    assert "halves --> on" not in vtt.replace("\n", " ")
    timings = [line for line in vtt.splitlines() if "-->" in line]
    assert all(re.fullmatch(r"[\d:.]+ --> [\d:.]+ line:\d+%,end", line) for line in timings), timings
    one = srt_to_vtt("1\n00:00:01,000 --> 00:00:02,000\na --> b & <i>c</i>\n\n")
    assert one == "WEBVTT\n\n1\n00:00:01.000 --> 00:00:02.000 line:86%,end\na --&gt; b &amp; &lt;i&gt;c&lt;/i&gt;\n\n"


def test_the_cache_entry_schema_keeps_what_dtfilm_writes(tmp_path: Path):
    """The schema is not so strict that dtfilm's own entries count as missing."""
    from dtfilm.render.shot_cache import CachedShot, cached, clip_path, write_entry

    out = tmp_path / "renders"
    _clip(clip_path(out, KEY))
    entry = CachedShot(
        KEY, "tp", "split", 4.2, [("Cut in two.", 0.3, 2.1)], 1.5, "2026-12-04T19:05:51+0000", {"kind": "x"}, "0" * 32
    )
    written = write_entry(out, entry)
    assert cached(out, KEY, verify=True) == dataclasses.replace(written, cues=[("Cut in two.", 0.3, 2.1)])
