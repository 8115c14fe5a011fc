"""Marks in a narration (`[name]`): stripped from what is said and shown, timed from the voice,
checked against the kinds that wait for them, and waited for by the shot code."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from dtfilm.errors import DtfilmError
from dtfilm.shots.registry import KINDS
from dtfilm.storyboard import load_chapter
from dtfilm.storyboard.marks import mark_seconds, sentence_spans, split_marks
from tests.conftest import ROOT, chapter_ids


def test_marks_are_cut_out_and_point_at_the_next_word():
    text, marks = split_marks("Each card keeps its queries. [pass] The blocks travel [ring]the ring.")
    assert text == "Each card keeps its queries. The blocks travel the ring."
    assert [name for name, _ in marks] == ["pass", "ring"]
    assert [text[offset:].split()[0] for _, offset in marks] == ["The", "the"]


def test_a_mark_at_the_end_or_start_leaves_no_stray_space():
    text, marks = split_marks("[first] One sentence. [end]")
    assert text == "One sentence."
    assert marks == (("first", 0), ("end", len(text)))


def test_mark_times_follow_the_spoken_sentences():
    text, marks = split_marks("Short one. [half] Second sentence is here. [late] End.")
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == ["Short one.", "Second sentence is here.", "End."]
    spoken = [(0.0, 1.0), (1.35, 4.0), (4.35, 5.0)]
    times = mark_seconds(text, marks, spoken)
    assert times["half"] == pytest.approx(1.35)  # between two sentences: when the next starts
    assert times["late"] == pytest.approx(4.35)
    inside = mark_seconds("Second sentence is here.", (("mid", 7),), [(0.0, 2.4)])
    assert inside["mid"] == pytest.approx(2.4 * 7 / 24)  # by its share of the sentence's characters


def test_without_a_voice_marks_are_timed_by_words_at_150_a_minute():
    text, marks = split_marks("one two three four five [m] six")
    assert mark_seconds(text, marks, None)["m"] == pytest.approx(5 / 2.5)


def _storyboard(tmp_path: Path, narration: str) -> Path:
    (tmp_path / "storyboard").mkdir(parents=True)
    film = (ROOT / "storyboard" / "film.yaml").read_text()
    (tmp_path / "storyboard" / "film.yaml").write_text(re.sub(r"(?m)^chapters: .*$", "chapters: [dp]", film))
    (tmp_path / "storyboard" / "dp.yaml").write_text(
        textwrap.dedent(
            f"""\
            id: dp
            title: Marks
            shots:
              - kind: title
                narration: "{narration}"
            """
        )
    )
    return tmp_path


def test_an_unknown_mark_is_one_line_naming_the_file_line_key_and_valid_marks(tmp_path: Path):
    root = _storyboard(tmp_path, "Copy the model [subtite] and split the batch.")
    with pytest.raises(DtfilmError) as caught:
        load_chapter("dp", {}, root)
    message = str(caught.value)
    assert "dp.yaml:5" in message and "shots[0].narration" in message
    assert "[subtite]" in message and "valid: [subtitle]" in message
    assert "\n" not in message


def test_a_mark_used_twice_is_an_error(tmp_path: Path):
    root = _storyboard(tmp_path, "[subtitle] Copy the model [subtitle] and split the batch.")
    with pytest.raises(DtfilmError, match=r"\[subtitle\] is used twice"):
        load_chapter("dp", {}, root)


def test_the_film_names_only_marks_its_kinds_wait_for_and_never_says_one():
    for chapter in chapter_ids():  # every chapter film.yaml lists, a new one included
        for shot in load_chapter(chapter, {}, ROOT).shots:
            assert {name for name, _ in shot.marks} <= set(KINDS[shot.kind].marks)
            if shot.narration is not None:
                assert "[" not in shot.narration.text and "  " not in shot.narration.text


def test_every_kind_of_the_film_waits_for_the_voice():
    # every kind the storyboards name moves with its narration: marks it waits for, or paced steps
    used = {shot.kind for c in chapter_ids() for shot in load_chapter(c, {}, ROOT).shots}
    assert [k for k in sorted(used) if not (KINDS[k].marks or KINDS[k].paced)] == []


def test_the_shot_waits_for_its_mark_before_it_shows_what_the_voice_names(tmp_path: Path):
    # the title card's subtitle appears when the voice reaches [subtitle], not with the title
    from manim import tempconfig

    from dtfilm.onscreen.layout import texts_on_screen
    from dtfilm.scene import LEAD_IN_SECONDS, ChapterScene, narration_track
    from dtfilm.scene_brief import chapter_brief
    from dtfilm.shots.plays import SHOTS

    narration = "One two three four five six seven eight nine ten. [subtitle] Eleven twelve."
    chapter = load_chapter("dp", {}, _storyboard(tmp_path, narration))
    seen: dict[str, float] = {}

    def log(scene, beat: str) -> None:
        for text in texts_on_screen(scene):
            seen.setdefault(text.original_text, scene.time)

    brief = chapter_brief(chapter, SHOTS, observers=(log,))
    with tempconfig({"dry_run": True, "media_dir": str(tmp_path / "media"), "verbosity": "ERROR"}):
        scene = ChapterScene(brief)
        scene.renderer.skip_animations = scene.renderer._original_skipping_status = True
        scene.render()
    track = narration_track(chapter, chapter.film.voice)
    audio = track.get(chapter.shots[0].beat)
    spoken = [(s.start, s.end) for s in audio.sentences] if audio else None
    lead = LEAD_IN_SECONDS if audio else 0.0
    said = lead + mark_seconds(chapter.shots[0].narration.text, chapter.shots[0].marks, spoken)["subtitle"]
    assert seen["Marks"] < said - 1.0  # the title first
    subtitle = next(t for t in seen if t not in ("Marks",))
    # the subtitle lands as the mark is said: its 0.8 s fade ends within a frame or two of that
    assert said + 0.8 - 0.1 <= seen[subtitle] <= said + 0.8 + 0.1


def test_a_mark_inside_a_claims_words_leaves_the_claim_bound(tmp_path: Path):
    # "fits" said inside a claim stays bound to its condition when a mark sits among its words
    from dtfilm.textcheck import text_problems, unclaimed_conclusions

    narration = "{?bytes: memory.total > memory.capacity => It does [subtitle] not fit | It [subtitle] fits}."
    shot = load_chapter("dp", {}, _storyboard(tmp_path, narration)).shots[0]
    assert [name for name, _ in shot.marks] == ["subtitle"]
    assert "[" not in shot.narration.text
    assert text_problems(shot.narration.text, shot.narration) == []
    assert unclaimed_conclusions(shot.narration.text, shot.narration) == []
    claims = [f.value.text for f in shot.narration.facts if f.kind == "claim"]
    assert claims in (["It does not fit"], ["It fits"])  # the claim's report says no mark either


def test_a_mark_inside_a_claims_wording_is_not_part_of_the_claim(tmp_path: Path):
    # cp's planner waits for [pick_path] inside the wording the tree's answer chooses; the claim's
    # words (dtfilm claims, the claim check) are the words said, without the mark
    root = _storyboard(tmp_path / "a", "[subtitle] {?count: plan.dp > 1 => Copies [subtitle] on each card | One card}.")
    with pytest.raises(DtfilmError, match="used twice"):  # a mark still counts once, in or out of a claim
        load_chapter("dp", {}, root)
    root = _storyboard(tmp_path / "b", "Here {?count: plan.dp > 1 => are copies, [subtitle] one a card | is one card}.")
    shot = load_chapter("dp", {}, root).shots[0]
    assert [name for name, _ in shot.marks] == ["subtitle"]
    claims = [fact.value for fact in shot.narration.facts if fact.kind == "claim"]
    assert [claim.text for claim in claims] == ["are copies, one a card"]
    assert shot.narration.text == "Here are copies, one a card."
