"""Manim's own log lines stay out of dtfilm's output (issue 59, finding 11): a render put "The
original duration of ChapterScene.wait(), 0.0365777 seconds, is too short for the current frame
rate" between dtfilm's lines. They go to renders/logs/manim.log, written through dtfilm.beneath,
or are shown as well with --verbose."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dtfilm.errors import DtfilmError
from dtfilm.render.manim_log import MANIM_LOG, VERBOSE_VARIABLE, manim_log


def _short_wait(tmp_path: Path, renders: Path) -> None:
    """Manim's own warning, from Manim's own code: a wait shorter than a frame."""
    from manim import Scene, tempconfig

    class Short(Scene):
        def construct(self) -> None:
            self.wait(0.01)

    settings = {"dry_run": True, "media_dir": str(tmp_path / "media"), "verbosity": "WARNING", "frame_rate": 15}
    with tempconfig(settings), manim_log(renders, "memory:title"):
        Short().render()


def test_manims_lines_go_to_the_log_not_the_terminal(tmp_path, capfd, monkeypatch):
    import logging

    import manim  # noqa: F401  (its console handler installed)

    monkeypatch.delenv(VERBOSE_VARIABLE, raising=False)
    before = list(logging.getLogger("manim").handlers), list(logging.getLogger().handlers)
    renders = tmp_path / "renders"
    _short_wait(tmp_path, renders)
    out, err = capfd.readouterr()
    assert "The original duration of" not in out + err
    logged = (renders / MANIM_LOG).read_text()
    assert "too short for the current frame rate" in logged and "memory:title" in logged
    # and Manim's console is its own again after the context
    assert (list(logging.getLogger("manim").handlers), list(logging.getLogger().handlers)) == before


def test_verbose_shows_them_as_well(tmp_path, capfd, monkeypatch):
    monkeypatch.setenv(VERBOSE_VARIABLE, "1")
    renders = tmp_path / "renders"
    _short_wait(tmp_path, renders)
    out, err = capfd.readouterr()
    assert "The original duration of" in out + err
    assert "too short" in (renders / MANIM_LOG).read_text()


def test_the_log_is_written_beneath_renders_safely(tmp_path, monkeypatch):
    monkeypatch.delenv(VERBOSE_VARIABLE, raising=False)
    renders = tmp_path / "renders"
    (renders / "logs").mkdir(parents=True)
    outside = tmp_path / "bashrc"
    outside.write_text("mine\n")
    # a hard link planted as the log: the log gets a file of its own, the user's file is untouched
    os.link(outside, renders / MANIM_LOG)
    _short_wait(tmp_path, renders)
    assert outside.read_text() == "mine\n"
    assert "too short" in (renders / MANIM_LOG).read_text()
    # a symbolic link is refused in one line, never followed
    (renders / MANIM_LOG).unlink()
    (renders / MANIM_LOG).symlink_to(outside)
    with pytest.raises(DtfilmError, match=r"is a link"):
        _short_wait(tmp_path, renders)
    assert outside.read_text() == "mine\n"
