"""The film is joined from its chapters' clips; its sound is encoded once, and copied as it is
when the chapters' sound did not change (a caption changed a picture, not what is said)."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np

from dtfilm.system.sound import AUDIO_RATE, decoded_audio
from dtfilm.system.video import clip_comment, join_with_chapters, mux_with_audio
from tests.clips import grey, manim_clip


def clip(folder: Path, name: str, level: int, tone_hz: float) -> Path:
    """A one-second 64x64 clip of one grey, with a tone."""
    silent = manim_clip(folder / f"{name}.silent.mp4", 15, lambda _: grey(level))
    t = np.arange(AUDIO_RATE) / AUDIO_RATE
    target = folder / f"{name}.mp4"
    mux_with_audio(silent, target, (0.3 * np.sin(2 * np.pi * tone_hz * t)).astype(np.float32), AUDIO_RATE)
    return target


def sound_packets(path: Path) -> list[bytes]:
    with av.open(str(path)) as box:
        return [bytes(p) for p in box.demux(box.streams.audio[0]) if p.size]


def test_the_film_keeps_its_encoded_sound_when_only_a_picture_changed(tmp_path: Path):
    parts = [("One", clip(tmp_path, "one", 40, 220)), ("Two", clip(tmp_path, "two", 80, 330))]
    first = tmp_path / "film.mp4"
    assert len(join_with_chapters(parts, first)) == 2
    assert clip_comment(first)  # what its sound was made of
    parts[1] = ("Two", clip(tmp_path, "two-redrawn", 200, 330))  # another picture, the same sound
    second = tmp_path / "film2.mp4"
    join_with_chapters(parts, second, previous=first)
    assert sound_packets(second) == sound_packets(first)  # copied, not encoded again
    with av.open(str(second)) as film:
        last = [f.to_ndarray(format="gray") for f in film.decode(video=0)][-1]
    assert abs(float(last.mean()) - 200) < 8  # with the new picture
    parts[1] = ("Two", clip(tmp_path, "two-retold", 200, 440))  # the sound changed: encoded anew
    third = tmp_path / "film3.mp4"
    join_with_chapters(parts, third, previous=second)
    assert clip_comment(third) != clip_comment(second)
    tenth = AUDIO_RATE // 10
    heard = decoded_audio(third)[AUDIO_RATE + tenth : AUDIO_RATE + 2 * tenth]  # in the second chapter
    crossings = np.count_nonzero(np.diff(np.sign(heard)) != 0) / 2 / 0.1
    assert abs(crossings - 440) < 25


def tone(hz: float) -> np.ndarray:
    t = np.arange(AUDIO_RATE) / AUDIO_RATE
    return (0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def said(name: str) -> str:
    """A chapter's sound digest, as dtfilm names them (a hex digest: a comment read back names a
    file in the cache only when it is one)."""
    import hashlib

    return hashlib.blake2b(name.encode(), digest_size=16).hexdigest()


def crossings_hz(sound: np.ndarray) -> float:
    return np.count_nonzero(np.diff(np.sign(sound)) != 0) / 2 / (len(sound) / AUDIO_RATE)


def test_the_film_joins_the_sound_its_chapters_were_encoded_from_when_it_is_kept(tmp_path: Path):
    # a chapter keeps the sound its track was encoded from (dtfilm.render.assemble.keep_sound), named by
    # its comment; the film takes that instead of decoding the chapters' AAC. Here what is kept
    # differs from what was encoded, so the film shows which it took.
    from dtfilm.render.assemble import keep_sound, sound_name, stored_sound
    from dtfilm.system.video import SOUND_TAG

    parts = []
    for name, hz in (("one", 220), ("two", 330)):
        clip(tmp_path, name, 60, hz)  # (its picture, name.silent.mp4, told with a comment here)
        silent = tmp_path / f"{name}.silent.mp4"
        target = tmp_path / f"{name}.told.mp4"
        mux_with_audio(silent, target, tone(hz), AUDIO_RATE, comment=f"{SOUND_TAG}{said(name)}")
        parts.append((name, target))
    store = tmp_path / "cache"
    store.mkdir()
    keep_sound(store, f"{SOUND_TAG}{said('one')}", tone(550))
    keep_sound(store, f"{SOUND_TAG}{said('two')}", tone(770))
    assert stored_sound(store, f"{SOUND_TAG}{said('one')}") is not None and stored_sound(store, "sound:none") is None
    kept = tmp_path / "kept.mp4"
    join_with_chapters(parts, kept, encoded_from=lambda comment: stored_sound(store, comment))
    heard = decoded_audio(kept)
    assert len(heard) >= 2 * AUDIO_RATE - 1024
    assert abs(crossings_hz(heard[AUDIO_RATE // 10 : AUDIO_RATE - AUDIO_RATE // 10]) - 550) < 25
    assert abs(crossings_hz(heard[AUDIO_RATE + AUDIO_RATE // 10 : 2 * AUDIO_RATE - AUDIO_RATE // 10]) - 770) < 25
    (store / sound_name(f"{SOUND_TAG}{said('two')}")).unlink()  # one chapter's is not kept: every chapter's
    decoded = tmp_path / "decoded.mp4"  # sound is decoded from its clip
    join_with_chapters(parts, decoded, encoded_from=lambda comment: stored_sound(store, comment))
    heard = decoded_audio(decoded)
    assert abs(crossings_hz(heard[AUDIO_RATE // 10 : AUDIO_RATE - AUDIO_RATE // 10]) - 220) < 25
    assert abs(crossings_hz(heard[AUDIO_RATE + AUDIO_RATE // 10 : 2 * AUDIO_RATE - AUDIO_RATE // 10]) - 330) < 25


def test_the_films_sound_encoded_ahead_is_the_sound_its_join_would_encode(tmp_path: Path):
    # dtfilm.render.film_sound encodes the film's sound chapter by chapter, in film order, as they are
    # joined (here out of order); the film's join copies it: the same packets, at the same times,
    # as encoding it there. Chapters whose sound differs from what was fed get nothing from it.
    from dtfilm.render.assemble import keep_sound, stored_sound
    from dtfilm.render.film_sound import FilmSoundAhead
    from dtfilm.system.video import SOUND_TAG

    store = tmp_path / "cache"
    store.mkdir()
    clips = {}
    for name, hz in (("one", 220), ("two", 330), ("three", 440)):
        clip(tmp_path, name, 60, hz)
        clips[name] = tmp_path / f"{name}.told.mp4"
        mux_with_audio(
            tmp_path / f"{name}.silent.mp4", clips[name], tone(hz), AUDIO_RATE, comment=f"{SOUND_TAG}{said(name)}"
        )
        keep_sound(store, f"{SOUND_TAG}{said(name)}", tone(hz * 1.5))
    order = ["one", "two", "three"]
    parts = [(name, clips[name]) for name in order]

    def sound(comment: str) -> np.ndarray | None:
        return stored_sound(store, comment)

    ahead = FilmSoundAhead(order, clips, sound, tmp_path / "film.mp4", store)
    ahead.joined("two", encoded_anew=True)
    assert ahead.fed == []  # "one" comes first
    ahead.joined("one", encoded_anew=False)
    assert len(ahead.fed) == 2
    ahead.fresh("three")
    encoded = ahead.finished(parts)
    assert encoded is not None and encoded.is_file()
    films = {}
    for how, given in (("ahead", encoded), ("there", None)):
        films[how] = tmp_path / f"film-{how}.mp4"
        join_with_chapters(parts, films[how], encoded_from=sound, ahead=given)
    assert sound_packets(films["ahead"]) == sound_packets(films["there"])
    assert clip_comment(films["ahead"]) == clip_comment(films["there"])
    heard = decoded_audio(films["ahead"])
    assert abs(crossings_hz(heard[2 * AUDIO_RATE + AUDIO_RATE // 10 : 3 * AUDIO_RATE - AUDIO_RATE // 10]) - 660) < 25

    stale = FilmSoundAhead(order, clips, sound, tmp_path / "film.mp4", store)
    for name in order:
        stale.joined(name, encoded_anew=True)
    mux_with_audio(
        tmp_path / "three.silent.mp4", clips["three"], tone(99), AUDIO_RATE, comment=f"{SOUND_TAG}{said('retold')}"
    )
    assert stale.finished(parts) is None  # a chapter told anew after it was fed
    assert not list(store.glob("*.m4a"))  # nothing left behind


def picture_times(path: Path) -> tuple[list[int], int]:
    """A file's frames' start times in decode order, and its picture's length, in 1/15360 s."""
    with av.open(str(path)) as box:
        stream = box.streams.video[0]
        starts = [round(p.pts / stream.time_base.denominator * 15360) for p in box.demux(stream) if p.pts is not None]
        return sorted(starts), round(stream.duration * stream.time_base * 15360)


def test_the_same_frames_joined_make_the_same_length_wherever_a_frame_was_short(tmp_path: Path):
    # A shot joined from parts holds Manim's short frames elsewhere than the same shot drawn
    # whole. Joined into a chapter, both are whole frames on the frame rate's grid: the same
    # length, so the chapter's sound (fitted to its picture) and the film's are the same too.
    # A chapter places each shot's narration by its clip's length: whole frames too, so a shot's
    # sound lands at the same sample whichever way the shot was drawn.
    from dtfilm.system.video import join_pictures, video_seconds

    lengths = set()
    for short_at in (None, 3, 11):
        raw = manim_clip(tmp_path / f"raw-{short_at}.mp4", 20, lambda i: grey(8 * i), short_at)
        joined = tmp_path / f"joined-{short_at}.mp4"
        join_pictures([raw, raw], joined, None)
        starts, length = picture_times(joined)
        assert starts == [i * 1024 for i in range(40)], short_at
        lengths.add(length)
        assert round(video_seconds(raw) * AUDIO_RATE) == 20 * AUDIO_RATE // 15, short_at
        assert round(video_seconds(joined) * AUDIO_RATE) == 40 * AUDIO_RATE // 15, short_at
    assert lengths == {40 * 1024}
