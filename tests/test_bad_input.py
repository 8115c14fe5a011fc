"""Bad input: one line naming file:line, the key and what is valid; exit 2; nothing written."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_dtfilm

GOOD_CHAPTER = """\
id: dp
title: Data parallelism
subtitle: Copy the model
shots:
  - kind: memory_bars
    caption: "Per card: {memory.total:GB}"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "storyboard", tmp_path / "storyboard")
    (tmp_path / "storyboard" / "dp.yaml").write_text(GOOD_CHAPTER)
    return tmp_path


def line_of(text: str, marker: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if marker in line)


def check_error(done, *expected: str) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    err = done.stderr.strip()
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("dtfilm: error: ")
    for piece in expected:
        assert piece in err, (piece, err)
    return err


CASES = {
    "yaml syntax": ("  - kind: memory_bars\n    caption: [unclosed\n", "caption: [unclosed", ["YAML syntax"]),
    "unknown key": ("colour: red\n", "colour: red", ["colour", "unknown key", "valid: id, title"]),
    "wrong type": ("plan: {tp: two}\n", "plan: {tp: two}", ["plan.tp", "'two' is not a whole number"]),
    "out of range": ("training: {mfu: 1.5}\n", "mfu: 1.5", ["training.mfu", "(0, 1]"]),
    "zero out of range": ("plan: {zero: 4}\n", "zero: 4", ["plan.zero", "0, 1, 2 or 3"]),
    "unknown template path": (
        '  - kind: sweep\n    set: cluster.cards\n    values: [2, 4]\n    caption: "{memory.totl:GB}"\n',
        "memory.totl",
        ["shots[1].caption", "unknown value {memory.totl}: 'totl' is not a key of 'memory' (did you mean 'total'?)"],
    ),
    "unknown unit": (
        '  - kind: ring_allreduce\n    caption: "{comm.total:GiBB}"\n',
        "GiBB",
        ["shots[1].caption", "unknown unit 'GiBB'", "valid: B, KB"],
    ),
    "unknown shot kind": (
        "  - kind: pie_chart\n",
        "pie_chart",
        ["shots[1].kind", "unknown shot kind", "valid: title"],
    ),
    "a kind's required key": (
        "  - kind: memory_columns\n    set: plan.zero\n    values: [0, 3]\n",
        "kind: memory_columns",
        ["shots[1]", "shot kind 'memory_columns' needs 'label'"],
    ),
    "a per-value template": (
        '  - kind: memory_columns\n    set: plan.zero\n    values: [0, 3]\n    label: "{plan.zeroo:int}"\n',
        "plan.zeroo",
        ["shots[1].label", "unknown value {plan.zeroo}"],
    ),
    "unknown preset": ("model: {preset: llama-8b}\n", "llama-8b", ["model.preset", "llama-7b, llama-13b"]),
    "impossible plan": ("plan: {tp: 3}\n", "tp: 3", ["multiples of 3"]),
    "bad sweep value": (
        "  - kind: sweep\n    set: cluster.cards\n    values: [2, 0]\n",
        "values: [2, 0]",
        ["shots[1].values[1]", "outside the supported range of cards in all: 1 to 131,072"],
    ),
    "steps that refuse the card count": (  # one message, naming the card counts every step takes
        '  - kind: memory_columns\n    set: plan.pp\n    values: [1, 3, 5]\n    label: "pp {plan.pp:int}"\n',
        "values: [1, 3, 5]",
        ["shots[1].values[1]", "multiples of 3; values[2] too", "every step takes are multiples of 15"],
    ),
    "unknown input in with": (
        "  - kind: memory_bars\n    with: {plan.zeros: 1}\n",
        "plan.zeros",
        ["shots[1].with.plan.zeros", "not an input", "plan.zero"],
    ),
    "bad value in with": ("  - kind: memory_bars\n    with: {plan.zero: 7}\n", "plan.zero: 7", ["0, 1, 2 or 3"]),
    "row without label": (
        "  - kind: traffic_compare\n    rows:\n      - with: {plan.zero: 0}\n",
        "- with: {plan.zero: 0}",
        ["shots[1].rows[0]", "a row needs a label"],
    ),
    "tp does not divide heads": (
        "cluster: {nodes: 3}\nplan: {tp: 12}\n",
        "tp: 12",
        ["plan.tp", "32 attention heads"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_storyboard_errors_name_file_line_and_key(project: Path, case: str):
    addition, marker, expected = CASES[case]
    text = (
        GOOD_CHAPTER + addition
        if addition.startswith("  -")
        else GOOD_CHAPTER.replace("shots:\n", addition + "shots:\n")
    )
    (project / "storyboard" / "dp.yaml").write_text(text)
    done = run_dtfilm("estimate", "dp", cwd=project)
    line = line_of(text, marker)
    err = check_error(done, *expected)
    if case != "impossible plan":
        assert f"storyboard/dp.yaml:{line}" in err, err


def test_film_errors(project: Path):
    film = project / "storyboard" / "film.yaml"
    text = re.sub(r"^chapters: \[(\w+)", r"chapters: [\1, nosuch", film.read_text(), flags=re.M)
    film.write_text(text)
    check_error(
        run_dtfilm("estimate", "dp", cwd=project),
        f"film.yaml:{line_of(text, 'nosuch')}",
        "chapters[1]",
        "no storyboard for chapter 'nosuch'",
    )


def test_missing_file(project: Path):
    check_error(run_dtfilm("estimate", "storyboard/nothere.yaml", cwd=project), "nothere.yaml", "no such file")
    check_error(run_dtfilm("estimate", "tpp", cwd=project), "no chapter 'tpp'", "valid: why, ledger, dp")


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--gpu", "h300"], ["--gpu", "'h300' is not one of: a100-80gb"]),
        (["--model", "gpt5"], ["--model", "llama-7b"]),
        (["--params", "lots"], ["--params", "not a count"]),
        (["--precision", "int4"], ["--precision", "bf16, fp32, fp8"]),
        (["--dp", "3"], ["dp x tp x pp x cp = 3 x 1 x 1 x 1 = 3", "8 cards"]),
        (["--zero", "9"], ["--zero", "0, 1, 2 or 3"]),
        (["--virtual-stages", "2"], ["--virtual-stages", "needs pp of 2 or more", "valid: 1"]),
        (["--cards", "16", "--pp", "16", "--virtual-stages", "4"], ["exceeds the 2 layers", "valid: 1 to 2"]),
        (["--recompute", "some"], ["--recompute", "none, selective, full"]),
        (["--flash-attention", "maybe"], ["unrecognized arguments: maybe"]),  # a switch takes no value
        (["--bogus"], ["unrecognized arguments: --bogus"]),
    ],
)
def test_flag_errors(project: Path, flags, expected):
    check_error(run_dtfilm("estimate", "dp", *flags, cwd=project), *expected)


def test_bad_render_touches_nothing(project: Path):
    renders = project / "renders"
    renders.mkdir()
    earlier = renders / "dp.mp4"
    earlier.write_bytes(b"an earlier render")
    (project / "storyboard" / "dp.yaml").write_text(GOOD_CHAPTER.replace("{memory.total:GB}", "{memory.total:GG}"))
    check_error(run_dtfilm("render", "dp", cwd=project), "dp.yaml:6", "unknown unit 'GG'")
    assert earlier.read_bytes() == b"an earlier render"
    assert sorted(p.name for p in renders.iterdir()) == ["dp.mp4"]


def test_poster_names_a_beat(project: Path):
    path = project / "storyboard" / "pp.yaml"
    text = path.read_text().replace("poster: timeline", "poster: bubble")
    path.write_text(text)
    check_error(
        run_dtfilm("estimate", "pp", cwd=project),
        f"pp.yaml:{line_of(text, 'poster: bubble')}",
        "poster",
        "'bubble' is not a beat of this chapter; valid: title, stages, timeline, slider, traffic",
    )
