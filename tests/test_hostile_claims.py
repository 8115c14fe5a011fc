"""Hostile claims and text (issue 56, findings 1 and 2): the claims language has a budget, `and`
and `or` stop early, an evaluation error is one line naming the claim's file:line and values at
any input and wherever a claim is evaluated, and no text hides what it draws. Each test names
the probe it covers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dtfilm import conditions
from dtfilm.conditions import ClaimError, evaluate
from dtfilm.storyboard import tree
from dtfilm.system.fonts import coverage
from tests.conftest import ROOT
from tests.test_hostile_input import CATALOG, GOOD_CHAPTER, _catalogs_kept, bounded_run, dtfilm, one_line_error  # noqa: F401 (a fixture)

CHAPTER = GOOD_CHAPTER.replace("narration: Every card holds the whole model.", "narration: '{narration}'")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "storyboard", tmp_path / "storyboard")
    return tmp_path


def narrate(project: Path, narration: str, caption: str = "Per card: {memory.total:GB}") -> None:
    """The probe chapter dp with `narration` (single-quoted YAML) and `caption`."""
    text = CHAPTER.replace("{narration}", narration.replace("'", "''"))
    (project / "storyboard" / "dp.yaml").write_text(text.replace("Per card: {memory.total:GB}", caption))


def claim(condition: str) -> str:
    return f"{{?count: {condition} => Big | Small}}."


# --- finding 1: the budget --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("not " * 100_000 + "1", "400,001 characters; valid: at most 1,000"),
        ("1+" * 100_000 + "1 > 0", "200,005 characters; valid: at most 1,000"),
        ("not " * 200 + "1", "bound of 40 levels of nesting"),
        ("min(" + "1," * 450 + "1) > 0", "bound of 400 nodes"),
        ('"' + "a" * 500 + '" == tree.branch', "a quoted name of 500 characters; valid: at most 100"),
        ("inputs.cards < 1e999", "the number inf is past the bound"),
    ],
    ids=["100,000 nots", "100,000 1+ terms", "deep", "many nodes", "long name", "huge number"],
)
def test_a_condition_past_the_budget_is_one_line(project: Path, condition: str, expected: str):
    """Probes: 100,000 `not`s (MemoryError) and 100,000 `1+` terms (RecursionError); a condition
    deep or wide within the length bound; a long quoted name; a number past the bound."""
    narrate(project, claim(condition))
    one_line_error(dtfilm("claims", "dp", cwd=project), "dp.yaml:8", "shots[0].narration", expected)


@pytest.mark.parametrize(
    "condition",
    [
        '"a" * 4000000000 == "b"',
        " and ".join(['"a" * 4000000000 == "b"'] * 3),
        '"a" * 9999999999999999999999999 == "b"',
    ],
    ids=["4 GB of a", "and of three", "999...9"],
)
def test_a_string_repetition_is_one_line_in_bounded_memory(project: Path, condition: str):
    """Probes: `"a" * 4000000000 == "b"` took 3.9 GB and 15 s, 200 of them joined by `and` 54 s;
    `"a" * 999...9` was a traceback. In a process of at most 2 GB, and 30 s."""
    narrate(project, claim(condition))
    done = bounded_run("check", "dp", cwd=project)
    one_line_error((done.returncode, done.stdout, done.stderr), "dp.yaml:8", "'a'", "valid: numbers on both sides")


def test_and_and_or_stop_early_and_still_record_every_path():
    """Probe: 200 terms joined by `and` were all evaluated (no short-circuit). What a skipped
    operand names is still read, so a claim's values are the same at every setting."""
    values = {"inputs.cards": 8, "memory.total": 1e9, "memory.capacity": 8e10}
    seen: dict[str, object] = {}
    assert not evaluate("inputs.cards < 8 and memory.total / 0 > 1", values.__getitem__, seen)
    assert list(seen) == ["inputs.cards", "memory.total"]
    seen = {}
    assert evaluate("inputs.cards == 8 or abs(tree) > memory.capacity", values.get, seen)
    assert list(seen) == ["inputs.cards", "tree", "memory.capacity"]
    assert not evaluate("1 > 2 > min()", values.get, {})  # a chain stops too


@pytest.mark.parametrize(
    ("condition", "flags", "expected"),
    [
        (
            "inputs.cards == 1 or memory.total / (inputs.cards - 16) > 1 GB",
            ["--cards", "16"],
            "divides 1.318e+11 by zero (inputs.cards = 16, memory.total = 132 GB)",
        ),
        ('"a" < inputs.cards', [], "orders the name 'a' against 8 (inputs.cards = 8); valid: numbers, or two names"),
        ("min() > 1", [], "'min()' is given nothing; valid: one or more numbers"),
        ('abs("x") > 1', [], "'abs(\"x\")' is given the name 'x'; valid: one number"),
    ],
    ids=["division by zero at --cards 16", "name against number", "min()", "abs of a name"],
)
@pytest.mark.parametrize("command", ["check", "claims", "render"])
def test_an_evaluation_error_is_one_line_naming_the_claim_and_values(
    project: Path, condition: str, flags: list[str], expected: str, command: str
):
    """Probes: `1/0`, `memory.total / (inputs.cards - 8)` (which fails at one setting only),
    `"a" < 1`, `min()` and `abs("x")` were tracebacks, in check, claims and render alike."""
    narrate(project, claim(condition))
    if flags:  # defined at the defaults: the claim holds there
        assert dtfilm("claims", "dp", cwd=project)[0] == 0
    one_line_error(dtfilm(command, "dp", *flags, cwd=project), "storyboard/dp.yaml:8: shots[0].narration", expected)


def test_the_planners_tree_question_that_cannot_be_answered_is_one_line(monkeypatch: pytest.MonkeyPatch):
    """The planner's words rest on the decision tree's questions, claims' conditions too: one
    that divides by zero at these inputs is one line naming the shot, not a traceback."""
    monkeypatch.setitem(tree.QUESTIONS, "pp", ("sharded", "state.total / (cluster.cards - cluster.cards) > 1"))
    one_line_error(
        dtfilm("claims", "3d", "--cards", "16", cwd=ROOT),
        "storyboard/3d.yaml:",
        "the decision tree: condition",
        "divides",
        "cluster.cards = 16",
    )


def test_a_condition_error_is_a_claim_error_not_a_python_one():
    """Every failure of evaluation is the ClaimError the loaders turn into one line."""
    for condition in ("1/0 > 1", '"a" < 1', "min()", 'abs("x")', "-tree", '"a" * 3', "max(1, tree)"):
        with pytest.raises(ClaimError, match="cannot be evaluated here"):
            evaluate(condition, lambda _: "ddp", {})


# --- finding 2: text that cannot hide ---------------------------------------------------------


@pytest.mark.parametrize(
    ("caption", "character"),
    [
        ("{memory.total:GB} on an 80 GB card: it does not \u202etif", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        ("{memory.total:GB}: it fi\u200bts", "U+200B (ZERO WIDTH SPACE)"),
        ("{memory.total:GB}: it f\u2066its", "U+2066 (LEFT-TO-RIGHT ISOLATE)"),
        ("{memory.total:GB}: it fi\u00adts", "U+00AD (SOFT HYPHEN)"),
    ],
    ids=["RLO", "zero-width space", "isolate", "soft hyphen"],
)
@pytest.mark.parametrize("where", ["caption", "narration", "title"])
def test_a_format_character_is_refused_naming_it(project: Path, caption: str, character: str, where: str):
    """Probes: a caption with U+202E showed "it fits" (108 GB on an 80 GB card) and passed check
    with 0 claims found; "it fi\\u200bts" passed too."""
    text = caption.replace("{memory.total:GB}", "It")
    if where == "caption":
        narrate(project, "Every card holds the whole model.", caption.replace("80 GB", "{memory.capacity:GB}"))
        key, line = "shots[0].caption", "dp.yaml:7"
    elif where == "narration":
        narrate(project, text)
        key, line = "shots[0].narration", "dp.yaml:8"
    else:
        narrate(project, "Every card holds the whole model.")
        chapter = project / "storyboard" / "dp.yaml"
        chapter.write_text(chapter.read_text().replace("title: Data parallelism", f"title: '{text}'"))
        key, line = "title", "dp.yaml:2"
    one_line_error(dtfilm("check", "dp", cwd=project), line, key, character, "valid: visible text")


@pytest.mark.skipif(coverage() is None, reason="fontconfig (fc-match) is not installed")
def test_a_glyph_the_films_fonts_lack_is_refused_naming_it(project: Path):
    """Probe: glyphs the film's fonts lack drew as empty boxes with a clean check."""
    narrate(project, "Every card holds the whole model.", "Per card: {memory.total:GB} \u4e16\u754c")
    one_line_error(
        dtfilm("check", "dp", cwd=project),
        "dp.yaml:7",
        "shots[0].caption",
        "'\u4e16' (U+4E16 (CJK UNIFIED IDEOGRAPH-4E16)), which the film's fonts (Inter, DejaVu Sans) cannot draw",
    )
    narrate(project, "Every card holds \u4e16.")  # narration is heard, not drawn: its glyphs are the voice's
    assert dtfilm("claims", "dp", cwd=project)[0] == 0


def test_a_condition_past_its_time_bound_is_one_line(monkeypatch: pytest.MonkeyPatch):
    """The time bound backs up the others (which keep a condition to microseconds): here a bound
    already spent stops the first node."""
    monkeypatch.setattr(conditions, "MAX_SECONDS", -1.0, raising=False)
    with pytest.raises(ClaimError, match=r"took more than -1 s; valid: a condition the budget allows"):
        evaluate("inputs.cards > 1", {"inputs.cards": 8}.__getitem__, {})


@pytest.mark.parametrize(
    ("label", "expected"),
    [("Ti\u202eny", "valid: visible text, without U+202E (RIGHT-TO-LEFT OVERRIDE)"), ("Tiny \u4e16", "not '\u4e16'")],
    ids=["RLO", "glyph"],
)
def test_a_catalog_label_is_drawn_text_too(project: Path, label: str, expected: str):
    """A card's label from catalog.yaml is drawn as a caption is: the same characters refused."""
    narrate(project, "Every card holds the whole model.")
    (project / "storyboard" / "catalog.yaml").write_text(CATALOG.replace("label: Tiny", f"label: '{label}'"))
    one_line_error(dtfilm("estimate", "dp", cwd=project), "catalog.yaml:3", "cards.tiny.label", expected)
