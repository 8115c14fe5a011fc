"""Storyboards: the film's order and defaults, each chapter's shots, loaded and validated."""

from __future__ import annotations

from dtfilm.storyboard.film import Film, find_root, load_film
from dtfilm.storyboard.load import Chapter, load_chapter
from dtfilm.storyboard.shot import Shot

__all__ = ["Chapter", "Film", "Shot", "find_root", "load_chapter", "load_film"]
