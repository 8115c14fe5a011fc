"""Nothing read back from renders/ or a cache runs code or reaches outside the project (issue:
"Nothing in renders/ can run code"): planted pickles, manifests naming paths outside, probes and
comments that name other files, and `dtfilm serve` following links out."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import stat
import threading
import urllib.error
import urllib.request
import zlib
from pathlib import Path

import pytest

from dtfilm.system import pickled
from tests.conftest import run_dtfilm


class _Planted:
    """A pickle that, unpickled, creates the file it names: what an attacker's would run."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


@pytest.fixture
def own_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A signing key of this test's own, in a config folder outside the project."""
    monkeypatch.setenv(pickled.KEY_VARIABLE, str(tmp_path / "config"))
    pickled.signing_key.cache_clear()
    yield
    pickled.signing_key.cache_clear()


def _planted_files(marker: Path) -> dict[str, bytes]:
    body = zlib.compress(pickle.dumps(_Planted(marker)))
    return {
        "as dtfilm wrote pickles before": body,
        "with a forged header and no valid tag": pickled.MAGIC + b"\0" * pickled.TAG_BYTES + body,
    }


def test_a_planted_pickle_is_never_unpickled(tmp_path: Path, own_key):
    marker = tmp_path / "ran"
    for how, blob in _planted_files(marker).items():
        path = tmp_path / "cache" / "planted.state"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(blob)
        assert pickled.read_pickled(path, "scene state") is None, how
        assert not marker.exists(), f"a pickle {how} ran its code"


def test_a_pickle_signed_with_another_key_counts_as_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "state"
    monkeypatch.setenv(pickled.KEY_VARIABLE, str(tmp_path / "theirs"))
    pickled.signing_key.cache_clear()
    pickled.write_pickled(path, {"screen": [1, 2, 3]}, "scene state")
    assert pickled.read_pickled(path, "scene state") == {"screen": [1, 2, 3]}
    monkeypatch.setenv(pickled.KEY_VARIABLE, str(tmp_path / "ours"))
    pickled.signing_key.cache_clear()
    try:
        assert pickled.read_pickled(path, "scene state") is None
    finally:
        pickled.signing_key.cache_clear()


def test_the_key_is_private_and_outside_the_project(tmp_path: Path, own_key, root: Path):
    pickled.write_pickled(tmp_path / "x", 1, "scene state")
    key = pickled.key_file()
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert root not in key.parents and (root / ".dtfilm-cache") not in key.parents
    assert len(key.read_bytes()) == pickled.KEY_BYTES


def test_a_key_open_to_others_is_not_used(tmp_path: Path, own_key, capsys: pytest.CaptureFixture[str]):
    pickled.write_pickled(tmp_path / "made", 1, "scene state")  # makes the key
    pickled.key_file().chmod(0o644)
    pickled.signing_key.cache_clear()
    assert pickled.read_pickled(tmp_path / "made", "scene state") is None
    pickled.write_pickled(tmp_path / "not-made", 1, "scene state")
    assert not (tmp_path / "not-made").exists()
    assert "chmod 600" in capsys.readouterr().err


@pytest.mark.render
@pytest.mark.xdist_group("dp-default")  # the dp render is that group's
def test_planted_scene_states_do_not_run_when_a_shot_is_drawn(tmp_path: Path, dp_render: Path):
    """The probe that ran code: every kept state replaced with a pickle that runs a command,
    then a shot drawn from them. They are treated as missing (the shots before it play)."""
    out = tmp_path / "renders"
    shutil.copytree(dp_render, out)
    states = sorted((out / "cache").glob("*.state"))
    assert states, "the render keeps scene states"
    marker = tmp_path / "ran"
    for how, blob in _planted_files(marker).items():
        for state in states:
            state.write_bytes(blob)
        done = run_dtfilm("still", "dp:ring", "--at", "1", "--out", str(out))
        assert done.returncode == 0, done.stderr
        assert not marker.exists(), f"a planted state {how} ran its code"


def _manifest(out: Path, chapters: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").write_text(json.dumps({"version": 1, "chapters": chapters, "film": {}}))


def test_clean_deletes_nothing_outside_renders(tmp_path: Path):
    """A manifest naming chapters `../../victim` made `dtfilm clean` delete files outside."""
    project = tmp_path / "project"
    shutil.copytree(Path(__file__).parent.parent / "storyboard", project / "storyboard")
    victims = [tmp_path / "victim.mp4", tmp_path / "victim.numbers.json", project / "victim.mp4"]
    folder = tmp_path / "victimdir"
    (folder / "inside").mkdir(parents=True)
    (folder / "inside" / "precious.txt").write_text("keep")
    for victim in victims:
        victim.write_text("keep")
    out = project / "renders"
    _manifest(out, {"../../victim": {"shots": []}, "../victim": {}, "../../../victimdir": {"shots": []}})
    (out / "shots").mkdir()
    os.symlink(folder / "inside", out / "shots" / "linked")
    done = run_dtfilm("clean", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    for victim in victims:
        assert victim.read_text() == "keep", f"clean deleted {victim}"
    assert (folder / "inside" / "precious.txt").read_text() == "keep"


@pytest.mark.parametrize(
    "manifest",
    [
        "[]",
        '{"chapters": []}',
        '{"chapters": {"dp": {"shots": "no"}}, "film": 3}',
        '{"chapters": {"dp": {"shots": [{"clip": "../../x.mp4", "still": 1, "key": "../k"}]}}}',
        "{",
        None,  # a folder
    ],
    ids=["list", "chapters-list", "wrong-types", "paths-outside", "not-json", "folder"],
)
def test_a_manifest_not_written_by_dtfilm_is_treated_as_missing(tmp_path: Path, manifest: str | None):
    project = tmp_path / "project"
    shutil.copytree(Path(__file__).parent.parent / "storyboard", project / "storyboard")
    out = project / "renders"
    out.mkdir(parents=True)
    if manifest is None:
        (out / "manifest.json").mkdir()
    else:
        (out / "manifest.json").write_text(manifest)
    done = run_dtfilm("status", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "not rendered yet" in done.stdout and "treated as missing" in done.stderr
    if manifest is not None and "../../x.mp4" in manifest:  # what reads a shot's files
        for command in ("clean", "slides"):
            done = run_dtfilm(command, cwd=project)
            assert "Traceback" not in done.stderr, (command, done.stderr)
            assert done.returncode in (0, 2), (command, done.stderr)


def test_cache_names_read_back_stay_in_the_cache(tmp_path: Path):
    """A probe, or a chapter's comment, naming a file outside renders/cache/ is not followed."""
    from dtfilm.render.assemble import stored_sound
    from dtfilm.render.shot_cache import cache_folder, probe_path, probed

    out = tmp_path / "renders"
    cache_folder(out).mkdir(parents=True)
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "k.json").write_text(json.dumps({"key": "k", "chapter": "dp", "beat": "b", "seconds": 1.0}))
    (secret / "k.mp4").write_bytes(b"\0")
    probe_path(out, "p").write_text("../../secret/k")
    assert probed(out, "p") is None
    import numpy as np

    np.save(tmp_path / "outside.sound.npy", np.zeros(4, dtype=np.int16))
    assert stored_sound(cache_folder(out), "sound:../../outside") is None


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_serve_keeps_to_the_renders_folder(tmp_path: Path):
    from http.server import ThreadingHTTPServer

    from dtfilm.publish.serve import handler_for

    renders = tmp_path / "renders"
    (renders / "shots" / "dp").mkdir(parents=True)
    (renders / "index.html").write_text("gallery")
    (renders / "shots" / "dp" / "01-title.mp4").write_bytes(b"clip")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    os.symlink(outside / "secret.txt", renders / "leak.txt")
    os.symlink(outside, renders / "leakdir")
    with ThreadingHTTPServer(("127.0.0.1", 0), handler_for(renders)) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        base = f"http://127.0.0.1:{server.server_address[1]}"
        try:
            assert _get(f"{base}/") == 200
            assert _get(f"{base}/shots/dp/01-title.mp4") == 200
            assert _get(f"{base}/leak.txt") == 404
            assert _get(f"{base}/leakdir/secret.txt") == 404
            assert _get(f"{base}/shots/") == 404  # no folder listings
        finally:
            server.shutdown()


def test_a_named_pipe_planted_where_dtfilm_reads_back_is_not_waited_on(tmp_path: Path, own_key):
    """The manifest, a chapter's subtitles and a kept scene state, each a FIFO: opening one for
    reading waited for a writer that never comes, and dtfilm hung. Each now counts as missing."""
    from dtfilm.render.cache import read_manifest
    from dtfilm.render.film_subtitles import chapter_cues

    out = tmp_path / "renders"
    out.mkdir()
    for name in ("manifest.json", "dp.srt", "dp.state"):
        os.mkfifo(out / name)
    answers: dict[str, object] = {}

    def read_all() -> None:
        answers["manifest"] = read_manifest(out)["chapters"]
        answers["cues"] = chapter_cues(out / "dp.srt")
        answers["state"] = pickled.read_pickled(out / "dp.state", "scene state")

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    reader.join(timeout=20)
    assert not reader.is_alive(), "a read of a FIFO waited for a writer"
    assert answers == {"manifest": {}, "cues": [], "state": None}
