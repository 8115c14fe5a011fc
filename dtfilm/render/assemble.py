"""A chapter made from its shots' clips in the cache, without drawing or re-encoding a frame.

- the picture: the shots' H.264 packets one after the other (every clip is encoded with the
  same settings and starts on a keyframe), so the chapter decodes frame for frame as a render
  of the whole chapter in one scene;
- the sound: each shot's narration placed after its lead-in on its shot's own clock, joined
  sample-exact into one track, brought to the film's loudness and encoded once: no gap at the
  joins, and no drift between picture and voice from one shot to the next;
- the subtitles, the poster, the per-shot clips for slides, and the numbers behind it.
"""

from __future__ import annotations

import datetime
import hashlib
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import srt

from dtfilm import beneath
from dtfilm.errors import DtfilmError
from dtfilm.inside import is_hex_name
from dtfilm.render.placed_cues import chapter_cue_lines
from dtfilm.render.shot_cache import cache_folder, cached, clip_path
from dtfilm.render.sidecars import POSTER_LEAD_SECONDS, ShotClip, frame_at, poster_seconds, write_png
from dtfilm.storyboard import Chapter, Shot
from dtfilm.storyboard.timing import LEAD_IN_SECONDS
from dtfilm.system.atomic import atomic_path, write_text_atomic
from dtfilm.system.records import Record, matches
from dtfilm.system.sound import AUDIO_RATE, decoded_audio, encoded_within_peak, pcm16
from dtfilm.system.video import (
    SOUND_TAG,
    clip_comment,
    has_audio,
    join_pictures,
    mux_with_audio,
    remux_faststart,
    sound_code,
    video_seconds,
)
from dtfilm.system.webvtt import srt_to_vtt
from dtfilm.userfile import read_back
from dtfilm.voice.cues import narration_cues
from dtfilm.voice.track import ShotAudio


@dataclass(frozen=True)
class Assembled:
    path: Path
    seconds: float
    shots: tuple[ShotClip, ...]
    sound_encoded: bool  # its sound was encoded this time (not kept from the file it replaced)


def placed_narration(wav: Path | None, lead_seconds: float, seconds: float) -> np.ndarray:
    """A shot's stretch of sound: its narration `lead_seconds` in, silence to `seconds`."""
    sound = np.zeros(round(seconds * AUDIO_RATE), dtype=np.float32)
    if wav is None:
        return sound
    said = decoded_audio(wav, AUDIO_RATE)
    start = round(lead_seconds * AUDIO_RATE)
    piece = said[: max(0, len(sound) - start)]
    sound[start : start + len(piece)] = piece
    return sound


def shot_cues(shot: Shot, audio: ShotAudio | None, seconds: float) -> list[tuple[str, float, float]]:
    """A shot's cues, (text, start, end) in seconds from the shot's start, made as its scene
    makes them (dtfilm.scene): from its narration in the storyboard, timed by its sentences as
    spoken (`audio`; without a voice, spread over the shot's `seconds`). Never from the cache
    entry's copy: the cache is read back from renders/ and not trusted, and an edited entry
    put a five-hour cue with markup into the chapter's and the film's subtitles."""
    if shot.narration is None:
        return []
    spoken = [(s.written, s.start, s.end) for s in audio.sentences] if audio is not None else None
    lead = LEAD_IN_SECONDS if audio is not None else 0.0
    return [(cue.text, cue.start, cue.end) for cue in narration_cues(shot.narration.text, spoken, lead, seconds)]


def subtitles(shots: list[list[tuple[str, float, float]]], starts: list[float]) -> str:
    """The chapter's SubRip cues (plain text: SubRip has no character references, and players
    show `&amp;` as it is written): each shot's (shot_cues), moved to where its clip starts."""
    cues = [
        (start + begin, start + end, text)
        for shot, start in zip(shots, starts, strict=True)
        for text, begin, end in shot
    ]
    return srt.compose(
        [
            srt.Subtitle(i, datetime.timedelta(seconds=begin), datetime.timedelta(seconds=end), text)
            for i, (begin, end, text) in enumerate(cues)
        ]
    )


class ChapterSound:
    """A chapter's sound track: its placed narration brought to the film's loudness and encoded
    once, or, when the narration is placed as it was in the chapter's last render (named by the
    digest in that file's comment), that file's encoded track copied as it is: a changed
    caption leaves the sound alone. The narration is decoded and placed (`said`) only when it
    is encoded: the digest is made from what places it (`placing`: each shot's narration file,
    named by its content, where it starts and how long the shot is), and the code that does."""

    def __init__(
        self,
        previous: Path,
        said: Callable[[], np.ndarray] | None,
        placing: bytes = b"",
        keep: bool = True,
        store: Path | None = None,
    ) -> None:
        self.previous = previous
        self.store = store  # the folder that keeps the sound each track is encoded from
        self.said = said
        self.digest = "silent"
        if said is not None:  # the narration as placed, and the code that places, levels and encodes it
            digest = hashlib.blake2b(placing, digest_size=16)
            digest.update(Path(__file__).read_bytes())
            digest.update(sound_code())
            self.digest = SOUND_TAG + digest.hexdigest()  # (the film's join reads it: sound_digest)
        same = said is not None and clip_comment(previous) == self.digest  # (None: no file yet)
        self.kept = keep and same and has_audio(previous)
        self._final: np.ndarray | None = None

    def join(self, clips: list[Path], temp: Path) -> None:
        if self.said is None:
            join_pictures(clips, temp, None, comment=self.digest)
        elif self.kept:
            join_pictures(clips, temp, self.previous, comment=self.digest)
        else:
            # (here: SciPy, through pyloudnorm, only when sound is levelled)
            from dtfilm.system.loudness import normalised

            level = normalised(self.said(), AUDIO_RATE)[0].astype(np.float32)
            self._final = encoded_within_peak(
                lambda pcm: join_pictures(clips, temp, pcm, comment=self.digest), temp, level, AUDIO_RATE
            )
            if self.store is not None:
                keep_sound(self.store, self.digest, self._final)

    def stretch(self, start: float, end: float) -> np.ndarray | None:
        """The sound as encoded from `start` to `end` seconds (None when silent). A kept track is
        decoded from the chapter when first asked for."""
        if self.said is None:
            return None
        if self._final is None:
            self._final = decoded_audio(self.previous, AUDIO_RATE)
        return self._final[round(start * AUDIO_RATE) : round(end * AUDIO_RATE)]


SOUND_SUFFIX = ".sound.npy"  # in the shot cache: a chapter's sound as its track was encoded from


def sound_name(digest: str) -> str:
    """The file that keeps the sound named by a chapter's comment (`digest`)."""
    return f"{digest.removeprefix(SOUND_TAG)}{SOUND_SUFFIX}"


def keep_sound(folder: Path, digest: str, sound: np.ndarray) -> None:
    """Keep the sound a chapter's track was encoded from (16-bit, as the encoder was given it:
    5.8 MB a minute), named by the digest in the chapter's comment, so that the film's join
    takes it as it is instead of decoding the chapter's AAC, limiting it and encoding it again
    (about half of a 17 s join of the whole film)."""
    with atomic_path(folder / sound_name(digest)) as temp, open(temp, "wb") as out:
        np.save(out, pcm16(sound))


MAX_KEPT_SOUND_BYTES = 256 * 2**20  # a kept sound is 5.8 MB a minute (keep_sound): a 44-minute chapter


def stored_sound(folder: Path, comment: str) -> np.ndarray | None:
    """The sound kept for a chapter whose comment is `comment`, as floats; None if none is."""
    if not comment.startswith(SOUND_TAG) or not is_hex_name(comment.removeprefix(SOUND_TAG)):
        return None  # (a clip's comment is read back: it names a file in the cache, or nothing)
    data = read_back(folder / sound_name(comment), MAX_KEPT_SOUND_BYTES)  # (a FIFO is not waited on)
    if data is None:
        return None
    try:
        samples = np.load(io.BytesIO(data), allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    shaped = isinstance(samples, np.ndarray) and samples.dtype == np.int16 and samples.ndim == 1  # (not an .npz)
    return (samples.astype(np.float32) / 32767) if shaped else None


def assemble_chapter(
    chapter: Chapter,
    keys: list[str],
    out_dir: Path,
    track: dict[str, ShotAudio],
    numbers: dict[str, Any],
    keep: bool = True,
    last: dict[str, Record] | None = None,
) -> Assembled:
    """renders/<chapter>.mp4 and its sidecars from the cached clips of `keys` (one per shot),
    each checked against its entry's record as it is read (shot_cache.cached). `last`: the
    manifest's record of the files the chapter's last render wrote; a file is reused (its sound,
    or kept as it is) only while it matches it, so a file a failed or killed render replaced,
    or a damaged one, is made again."""
    entries = [cached(out_dir, key) for key in keys]
    missing = [shot.beat for shot, entry in zip(chapter.shots, entries, strict=True) if entry is None]
    if missing:  # (checked as the render began, so only a clip damaged since: draw it again)
        raise DtfilmError(f"{chapter.id}: the cached clips of {', '.join(missing)} changed during the render")
    trusted = _trusted(out_dir, last or {})
    clips = [clip_path(out_dir, key) for key in keys]
    lengths = [video_seconds(clip) for clip in clips]
    starts = list(np.cumsum([0.0, *lengths[:-1]]))
    target = out_dir / f"{chapter.id}.mp4"
    said, placing = None, b""
    if track:
        wavs = [track[s.beat].path if s.beat in track else None for s in chapter.shots]

        def said() -> np.ndarray:
            pieces = zip(wavs, lengths, strict=True)
            return np.concatenate([placed_narration(wav, LEAD_IN_SECONDS, seconds) for wav, seconds in pieces])

        placed = [[w.name if w else None, round(n * AUDIO_RATE)] for w, n in zip(wavs, lengths, strict=True)]
        placing = json.dumps([LEAD_IN_SECONDS, AUDIO_RATE, *placed]).encode()
    sound = ChapterSound(target, said, placing, keep and trusted(target), cache_folder(out_dir))
    with atomic_path(target) as temp:
        sound.join(clips, temp)
    times = [(s.beat, start, start + seconds) for s, start, seconds in zip(chapter.shots, starts, lengths, strict=True)]
    digests = [entry.sha256 for entry in entries if entry is not None]
    shots = write_slide_clips(chapter.id, clips, times, out_dir, sound, digests, trusted)
    write_png(frame_at(target, poster_seconds(times, chapter.poster)), out_dir / f"{chapter.id}.png")
    said = [
        shot_cues(shot, track.get(shot.beat), entry.seconds)
        for shot, entry in zip(chapter.shots, entries, strict=True)
        if entry is not None
    ]
    srt_text = subtitles(said, starts)
    write_text_atomic(out_dir / f"{chapter.id}.srt", srt_text)
    timed = [[(begin, end) for _, begin, end in cues] for cues in said]
    lines = chapter_cue_lines(target, out_dir, list(zip(keys, digests, timed, strict=True)), starts)
    write_text_atomic(out_dir / f"{chapter.id}.vtt", srt_to_vtt(srt_text, lines))
    write_text_atomic(out_dir / f"{chapter.id}.numbers.json", json.dumps(numbers, indent=2))
    return Assembled(target, float(sum(lengths)), tuple(shots), sound.said is not None and not sound.kept)


def _trusted(out_dir: Path, last: dict[str, Record]) -> Callable[[Path], bool]:
    """Whether a file in `out_dir` is as the last render recorded it (`last`, by name)."""

    def trusted(path: Path) -> bool:
        name = path.relative_to(out_dir).as_posix()
        return matches(path, last.get(name))

    return trusted


def write_slide_clips(
    chapter_id: str,
    clips: list[Path],
    times: list[tuple[str, float, float]],
    out_dir: Path,
    sound: ChapterSound,
    digests: list[str],
    trusted: Callable[[Path], bool],
) -> list[ShotClip]:
    """Each shot's clip, web-ready, as renders/shots/<chapter>/NN-<beat>.mp4 with its stretch of
    the chapter's sound (slides play them one by one), and its poster frame as a PNG. One is
    made again unless it was made from the same cached clip (its name and `digests`: a clip
    drawn again under its key is another) and sound, and it and its poster are as the last
    render wrote them (`trusted`)."""
    folder = out_dir / "shots" / chapter_id
    out = []
    for index, (clip, digest, (beat, start, end)) in enumerate(zip(clips, digests, times, strict=True)):
        name = f"{index + 1:02d}-{beat}"
        target, still = folder / f"{name}.mp4", folder / f"{name}.png"
        heard = hashlib.blake2b(f"{sound.digest} {start:.6f} {end:.6f}".encode(), digest_size=16).hexdigest()
        made_of = f"{clip.name} {digest[:16]} {heard}"  # its picture, and its stretch of the chapter's sound
        was = (clip_comment(target) or "") if trusted(target) else ""
        if not (trusted(still) and was == made_of):  # else made from the same clip and sound
            with atomic_path(target) as temp:
                if sound.said is None:
                    remux_faststart(clip, temp, comment=made_of)
                elif was.endswith(f" {heard}"):  # a new picture, the same sound: its encoded sound copied
                    join_pictures([clip], temp, target, comment=made_of)
                else:
                    mux_with_audio(clip, temp, sound.stretch(start, end), AUDIO_RATE, comment=made_of)
            write_png(frame_at(clip, max(0.0, end - start - POSTER_LEAD_SECONDS)), still)
        out.append(
            ShotClip(index, beat, start, end, f"shots/{chapter_id}/{name}.mp4", f"shots/{chapter_id}/{name}.png")
        )
    current = {Path(c.clip).stem for c in out}
    for name, _ in beneath.entries(out_dir, f"shots/{chapter_id}"):  # beats renamed or removed since
        if Path(name).stem not in current:  # the last render (unlinked beneath, never followed)
            beneath.unlink(out_dir, f"shots/{chapter_id}/{name}")
    return out
