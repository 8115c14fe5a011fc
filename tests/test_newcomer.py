"""A newcomer's first hour with `dtfilm init`: what they type, piped, mistyped, interrupted."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_dtfilm


def test_output_piped_into_a_reader_that_stopped_ends_quietly():
    # `dtfilm kinds | head -1`: the reader has gone; BrokenPipeError is an OSError, and the
    # OSError clause (for read-only folders) re-raised it as a traceback before its own clause
    read_end, write_end = os.pipe()
    os.close(read_end)  # gone before dtfilm writes: every write fails, as at once
    try:
        done = subprocess.run(
            [sys.executable, "-m", "dtfilm", "kinds"], cwd=ROOT, stdout=write_end, stderr=subprocess.PIPE, timeout=120
        )
    finally:
        os.close(write_end)
    err = done.stderr.decode()
    assert "Traceback" not in err, err
    assert done.returncode == 0, err


@pytest.fixture(scope="module")
def film(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project `dtfilm init` writes, as a newcomer starts from."""
    folder = tmp_path_factory.mktemp("newcomer") / "my-film"
    done = run_dtfilm("init", str(folder))
    assert done.returncode == 0, done.stderr
    return folder


def edited(film: Path, tmp_path: Path, edit: Callable[[str], str], name: str = "memory.yaml") -> Path:
    """A copy of the newcomer's film whose storyboard/`name` is `edit` of what `init` wrote:
    the copy's root."""
    project = tmp_path / "film"
    shutil.copytree(film, project)
    path = project / "storyboard" / name
    path.write_text(edit(path.read_text()))
    return project


def one_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    err = done.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_a_beat_used_twice_names_the_second_use_and_the_first(film: Path, tmp_path: Path):
    # the error named the first shot's line and a bare 'beat'; the one to rename is the later
    project = edited(film, tmp_path, lambda text: text.replace("beat: sixteen-bytes", "beat: title"))
    text = (project / "storyboard" / "memory.yaml").read_text()
    first, second = (i for i, line in enumerate(text.splitlines(), 1) if line.strip() == "beat: title")
    err = one_error(run_dtfilm("check", cwd=project))
    assert f"storyboard/memory.yaml:{second}: shots[1].beat: beat 'title' is used twice" in err, err
    assert f"first by shots[0], line {first}" in err and "valid: " in err, err


def test_a_check_report_quotes_text_as_it_reads():
    # `dtfilm check` quoted 'holds 237\xa0GB of 80\xa0GB' (repr of the no-break space that keeps
    # a number to its unit): a newcomer reads a backslash code that is nowhere in their YAML
    from dtfilm.textcheck import excerpt

    assert excerpt("Each of 8 cards holds 237\xa0GB of 80\u202fGB") == "'Each of 8 cards holds 237 GB of 80 GB'"
    assert excerpt("x" * 100, 10) == "'" + "x" * 9 + "…'"


def test_a_card_named_as_people_say_it_is_suggested_in_full(film: Path):
    # '--gpu h100' listed the cards with no suggestion: 'h100' is too short for a close match
    err = one_error(run_dtfilm("estimate", "memory", "--gpu", "h100", cwd=film))
    assert "--gpu: 'h100' is not one of (did you mean 'h100-sxm-80gb'?)" in err, err


def test_a_stale_chapter_names_a_changed_count_as_people_write_it(tmp_path: Path):
    # `dtfilm status` after llama-7b -> llama-13b said 'params 6738415616.0 → 13015864320.0'
    from dtfilm.render.cache import ChapterKey, stale_reasons

    parts = dict.fromkeys(("quality", "storyboard", "film", "numbers", "theme", "code", "voice"), "same")
    key = ChapterKey("memory", {**parts, "inputs": "new"}, {"params": 13015864320.0, "cards": 8})
    entry = {"parts": {**parts, "inputs": "old"}, "inputs": {"params": 6738415616.0, "cards": 1}}
    reasons = stale_reasons(key, {"chapters": {"memory": entry}}, tmp_path)
    assert reasons[0] == "inputs changed: params 6.74B → 13B, cards 1 → 8", reasons


def test_a_catalog_model_whose_heads_do_not_divide_is_refused_at_its_own_line(film: Path, tmp_path: Path):
    # was: 'dtfilm: error: --model: 41 heads do not divide the hidden size 5120', naming the flag
    # that chose the model rather than the catalog line to edit, and nothing valid
    model = (
        "  my-13b: {label: My 13B, layers: 40, hidden: 5120, heads: 41, kv_heads: 41, ffn: 13824, vocab: 32000,"
        " source: x}\n"
    )
    project = edited(film, tmp_path, lambda _: "models:\n" + model, "catalog.yaml")
    err = one_error(run_dtfilm("estimate", "memory", "--model", "my-13b", cwd=project))
    assert "storyboard/catalog.yaml:2: models.my-13b.heads: 41 does not divide the hidden size, 5120" in err, err
    assert "valid: a divisor of 5120, such as 20, 32, 40" in err, err


def test_the_ring_shot_is_refused_under_zero_3_not_drawn_as_a_lone_copy():
    # `dtfilm check dp --zero 3` drew the ring shot's one-card picture for 8 cards: "8 copy of the
    # model: no ring", its gradients "already the average", and the rack pushed off the frame
    err = one_error(run_dtfilm("claims", "dp", "--zero", "3"))
    assert "storyboard/dp.yaml:" in err and ": shots[3]: shot kind 'ring_allreduce' draws a gradient all-reduce" in err
    assert "but here zero = 3 (from --zero); valid: zero <= 2" in err, err
    assert run_dtfilm("claims", "dp", "--zero", "2").returncode == 0


@pytest.mark.parametrize(
    ("written", "meant"),
    [("cluster.card", "cluster.cards"), ("cards", "cluster.cards"), ("zero", "plan.zero"), ("model", "model.preset")],
)
def test_a_sweep_of_a_mistyped_or_bare_input_suggests_its_path(film: Path, tmp_path: Path, written: str, meant: str):
    # `set: cards` (as the flag --cards) listed 35 paths with no word of which was meant
    project = edited(film, tmp_path, lambda text: text + f"\n  - kind: sweep\n    set: {written}\n    values: [1, 2]\n")
    err = one_error(run_dtfilm("check", cwd=project))
    assert f"shots[2].set: {written!r} is not an input (did you mean {meant!r}?); valid: " in err, err


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (("render", "memroy"), "no chapter 'memroy' in the film (did you mean 'memory'?); valid: memory"),
        (("claims", "memroy"), "no chapter 'memroy' (did you mean 'memory'?); valid: memory"),
        (("render", "memory:title-card"), "has no shot 'title-card' (did you mean 'memory:title'?)"),
    ],
)
def test_a_misspelt_chapter_or_shot_on_the_command_line_suggests_the_one_meant(film: Path, command, expected):
    err = one_error(run_dtfilm(*command, cwd=film))
    assert expected in err, err


def test_a_film_with_no_chapters_says_so(film: Path, tmp_path: Path):
    # `chapters: []` was told it is not a list ("expected a list of chapter ids")
    project = edited(film, tmp_path, lambda text: text.replace("chapters: [memory]", "chapters: []"), "film.yaml")
    err = one_error(run_dtfilm("check", cwd=project))
    assert "storyboard/film.yaml:20: chapters: an empty list is not a list of chapter ids; valid: at least one" in err


def test_the_training_time_on_one_card_is_said_once(film: Path):
    # `dtfilm estimate memory` in a new film (cards: 1) said '946 days on 1 card, 2.59 years on one'
    one = run_dtfilm("estimate", "memory", "--cards", "1", cwd=film)
    assert one.returncode == 0, one.stderr
    last = one.stdout.splitlines()[-1]
    assert " on 1 card; " in last and "on one" not in last, last
    eight = run_dtfilm("estimate", "memory", "--cards", "8", cwd=film).stdout.splitlines()[-1]
    assert " on 8 cards, " in eight and " on one; " in eight, eight


def test_init_names_the_next_command_as_a_shell_takes_it(tmp_path: Path):
    # `dtfilm init "my film"` said 'next: cd my film && ...', which a shell reads as cd to 'my'
    done = run_dtfilm("init", "my film", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "next: cd 'my film' && dtfilm check" in done.stdout, done.stdout


def test_a_bad_value_in_a_shots_with_is_named_where_it_is_written(film: Path, tmp_path: Path):
    # was 'storyboard/memory.yaml:N: plan.zero: 9 is not a ZeRO stage', as if the chapter's plan
    beat = "    beat: sixteen-bytes\n"
    project = edited(film, tmp_path, lambda text: text.replace(beat, beat + "    with: {plan.zero: 9}\n"))
    err = one_error(run_dtfilm("check", cwd=project))
    assert ": shots[1].with.plan.zero: 9 is not a ZeRO stage: 0, 1, 2 or 3" in err, err


def test_a_sweep_without_values_says_what_a_sweep_takes(film: Path, tmp_path: Path):
    # `- kind: sweep` alone was told 'expected a list of 2 to 8 values', with no word of `set`
    project = edited(film, tmp_path, lambda text: text + "\n  - kind: sweep\n")
    err = one_error(run_dtfilm("check", cwd=project))
    assert "shots[2].values: missing key 'values'; valid: set: an input (cluster.cards) and values: " in err, err


def test_a_count_written_in_words_is_told_what_would_do(film: Path, tmp_path: Path):
    # `cards: eight` was told only "'eight' is not a whole number"; out of range said the range
    project = edited(film, tmp_path, lambda text: text.replace("cluster: {cards: 1}", "cluster: {cards: eight}"))
    err = one_error(run_dtfilm("check", cwd=project))
    assert "cluster.cards: 'eight' is not a whole number; valid: cards in all, 1 to 131,072" in err, err


def test_a_caption_that_is_a_number_is_told_what_would_do(film: Path, tmp_path: Path):
    def number_caption(text: str) -> str:
        caption = next(line for line in text.splitlines() if line.strip().startswith("caption:"))
        return text.replace(caption, "    caption: 16")

    project = edited(film, tmp_path, number_caption)
    err = one_error(run_dtfilm("check", cwd=project))
    assert "shots[1].caption: expected text, got 16; valid: words in quotes" in err, err


def test_sheet_of_a_chapter_the_film_lacks_names_the_chapters_it_has(film: Path):
    # `dtfilm sheet memroy` said 'not rendered (dtfilm render memroy)': a command that fails too
    err = one_error(run_dtfilm("sheet", "memroy", cwd=film))
    assert "memroy: no chapter 'memroy' in the film (did you mean 'memory'?), and no such file; valid: memory" in err
