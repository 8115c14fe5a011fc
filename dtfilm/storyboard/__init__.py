"""Storyboards: the film's order and defaults, each chapter's shots, loaded and validated."""

from __future__ import annotations

from dtfilm.storyboard.load import Chapter, Film, Shot, find_root, load_chapter, load_film

__all__ = ["Chapter", "Film", "Shot", "find_root", "load_chapter", "load_film"]
