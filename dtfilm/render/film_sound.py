"""The film's sound, encoded while its chapters are still being drawn.

The film's join encodes the film's sound once, from the sound each chapter's track was encoded
from (dtfilm.render.assemble.stored_sound), and checks its true peak: in a cold render that was 2.4 s of
encoding alone at the very end, with nothing else left to run. `FilmSoundAhead` feeds that same
sound to the same encoder, chapter by chapter in film order, as soon as a chapter and every
chapter before it are joined, into an audio-only file in the shot cache's folder. The film's join copies
that file's packets (dtfilm.system.video.join_with_chapters, `ahead`) when it holds the sound the join
would have encoded: the same chapters, with the same sound (their comments), in order. The
packets are the ones encoding the whole sound at once gives: the encoder takes it in the same
frames from the same start.

It starts only once the film's sound is known to change: a chapter's sound was encoded anew, or
there is no film yet. A render whose chapters keep their sound (a caption changed) encodes none.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

import av
import numpy as np

from dtfilm import beneath
from dtfilm.system.sound import AUDIO_RATE, SoundEncoder
from dtfilm.system.video import clip_comment, fitted_to_picture

AHEAD_NAME = "film-sound-ahead.m4a"  # in the shot cache's folder; replaced by each render


class FilmSoundAhead:
    """The film's sound encoded ahead of its join. `order`: the film's chapters; `clip`: a
    chapter's joined file; `sound`: the sound its track was encoded from, by its comment;
    `film`: the film's file; `folder`: where the encoded sound is written."""

    def __init__(
        self,
        order: list[str],
        clip: dict[str, Path],
        sound: Callable[[str], np.ndarray | None],
        film: Path,
        folder: Path,
    ) -> None:
        self.order = order
        self.film = film
        self.clip = clip
        self.sound = sound
        self.path = folder / AHEAD_NAME
        self.ready: set[str] = set()  # chapters joined (or fresh)
        self.fed: list[str] = []  # the comments of the chapters encoded so far, in film order
        self.started = False
        self.failed = False
        self._out: av.container.OutputContainer | None = None
        self._encoder: SoundEncoder | None = None

    def fresh(self, chapter_id: str) -> None:
        """Chapter `chapter_id` needs no render: its file is the film's as it is (its sound
        is encoded with the next chapter joined, not now, before any shot is drawn)."""
        self.ready.add(chapter_id)

    def joined(self, chapter_id: str, encoded_anew: bool) -> None:
        """Chapter `chapter_id` is joined; `encoded_anew`: its sound was encoded this time, so
        the film's will be too."""
        self.ready.add(chapter_id)
        if encoded_anew or not self.film.is_file():
            self.started = True
        if self.started:
            self._feed()

    def _feed(self) -> None:
        while not self.failed and len(self.fed) < len(self.order) and self.order[len(self.fed)] in self.ready:
            path = self.clip[self.order[len(self.fed)]]
            comment = clip_comment(path) or ""
            pcm = self.sound(comment)
            if pcm is None:
                self.failed = True
                return
            if self._out is None:
                beneath.clear_for_writing(self.path)  # (a link planted there is removed, not written through)
                self._out = av.open(str(self.path), mode="w", format="mp4")
                self._encoder = SoundEncoder(self._out, "aac", AUDIO_RATE)  # as the film's join would
            self._out.mux(self._encoder.encode(fitted_to_picture(pcm, path)))
            self.fed.append(comment)

    def finished(self, parts: list[tuple[str, Path]]) -> Path | None:
        """The encoded file, when it holds the sound of `parts` (the film's, in order); else
        None, and nothing is left behind."""
        try:
            comments = [clip_comment(path) or "" for _, path in parts]
            if self.started and not self.failed:
                self._feed()
            if self._out is None or self._encoder is None or self.failed or self.fed != comments:
                return None
            self._out.mux(self._encoder.finish())
            self._out.close()
            self._out = None
            return self.path
        finally:
            self.close()

    def close(self) -> None:
        """Stop, leaving nothing behind (the file stays only for the join that asked for it)."""
        if self._out is not None:
            with contextlib.suppress(Exception):
                self._out.close()
            self._out = None
            self.path.unlink(missing_ok=True)
