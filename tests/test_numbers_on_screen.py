"""Every number on screen equals `dtfilm estimate --json` for the same inputs.

The scene runs without frames; every text it shows carries the Phrase it was made from.
Each shown number is read back by `dtfilm.textcheck` (its own unit table and number-word
reader, not dtfilm's formatter) and compared with the value of the named path in the JSON
of a separate estimate process, within the rounding of the digits shown. A digit, number
word or precision name that no fact claims fails the test: no quantity is typed into a
scene, a caption or the narration.
"""

from __future__ import annotations

import pytest

from dtfilm.textcheck import fact_problem, text_problems
from tests.conftest import HUGE, chapter_configs, estimate_json, inspection


def lookup(data: dict, path: str):
    node = data
    for part in path.split("."):
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, dict) and "value" in node:
        node = node["value"]
    return node


def check_text(chapter: str, config: str, text: str, phrase) -> list[str]:
    """The text's own checks (digits, number words and precision names all claimed by facts,
    each fact showing its value), then each fact against a separate estimate process."""
    problems = text_problems(text, phrase)
    if phrase is None or phrase.text != text:
        return problems
    for fact in phrase.facts:
        overrides = tuple(sorted(dict(fact.overrides).items()))  # the loader merged the config in
        data = estimate_json(chapter, overrides)
        if fact.kind == "index":
            index, bound = int(fact.shown.replace(",", "")), lookup(data, fact.path)
            low, high = (1, bound) if fact.unit == "1-based" else (0, bound - 1)
            if not low <= index <= high:
                problems.append(f"{text!r}: position {index} outside {low}..{high} ({fact.path})")
            continue
        if fact.kind != "cost":
            continue
        found = fact_problem(fact, lookup(data, fact.path))
        if found:
            problems.append(f"{text!r}: {found} (in the estimate process)")
    return problems


@pytest.mark.parametrize(("chapter", "config"), chapter_configs())
def test_every_number_on_screen_matches_estimate(chapter: str, config: str):
    result = inspection(chapter, config)
    problems = []
    checked = 0
    for (text, _), (beat, phrase) in result.texts.shown.items():
        found = check_text(chapter, config, text, phrase)
        problems += [f"{beat}: {p}" for p in found]
        checked += len(phrase.facts) if phrase else 0
    assert problems == []
    assert checked > 10


@pytest.mark.parametrize(("chapter", "config"), chapter_configs(dry_run=False))
def test_every_number_in_the_narration_matches_estimate(chapter: str, config: str):
    # Issue 15: subtitles and narration state quantities too; they are checked as captions are.
    from dtfilm.check.chapters import spoken_and_written
    from dtfilm.storyboard import load_chapter
    from tests.conftest import ROOT, config_flags

    loaded = load_chapter(chapter, config_flags(chapter, config), ROOT)
    problems = [
        f"{beat}: {which}: {p}"
        for beat, which, phrase in spoken_and_written(loaded)
        for p in check_text(chapter, config, phrase.text, phrase)
    ]
    assert problems == []
    assert any(which == "narration" for _, which, _ in spoken_and_written(loaded))


def test_a_typed_number_word_is_caught():
    from dtfilm.phrases import Phrase
    from dtfilm.storyboard import load_chapter
    from tests.conftest import ROOT

    fp8 = load_chapter("ledger", {"precision": "fp8"}, ROOT).numbers
    typed = Phrase("Sixteen bytes a parameter")
    assert any("'Sixteen' is a typed quantity word" in p for p in check_text("ledger", "default", typed.text, typed))
    made = fp8("{bytes_per_param.total:Word} bytes a parameter")
    assert made.text == "Fifteen bytes a parameter"
    assert check_text("ledger", "default", made.text, made) == []
    # A wrong word is caught against the estimate: "sixteen" claimed for fp8's 15 bytes.
    from dtfilm.phrases import Fact

    lie = Phrase("Sixteen bytes", (Fact("bytes_per_param.total", "Word", "Sixteen", (("precision", "fp8"),)),))
    assert any("but the text says" in p for p in check_text("ledger", "default", lie.text, lie))
    bf16 = Phrase("a bf16 weight")
    assert any("'bf16'" in p for p in check_text("ledger", "default", bf16.text, bf16))
    escaped = fp8("{~one} card at a time, {~two} walls")
    assert check_text("ledger", "default", escaped.text, escaped) == []


def test_a_typed_number_is_caught():
    from dtfilm.phrases import Fact, Phrase

    typed = Phrase("Per card: 112 GB, 8 cards", (Fact("memory.total", "GB", "112\u00a0GB"),))
    assert any("8 cards" in p or "'8" in p for p in check_text("dp", "default", typed.text, typed))
    wrong = Phrase("Per card: 99\u00a0GB", (Fact("memory.total", "GB", "99\u00a0GB"),))
    assert any("but the text says" in p for p in check_text("dp", "default", wrong.text, wrong))
    flops = Phrase("4.14\u00a0×\u00a010²³ FLOPs", (Fact("compute.training_flops", "sci", "4.14\u00a0×\u00a010²³"),))
    assert any("but the text says" in p for p in check_text("dp", "default", flops.text, flops))  # 4.2e22
    loose = Phrase("about 4\u00a0×\u00a010²² FLOPs", ())
    assert any("is typed" in p for p in check_text("dp", "default", loose.text, loose))
    names = Phrase("H100 SXM, 3D", ())
    assert check_text("dp", "default", names.text, names) == []
    assert HUGE["cards"] == 16384


def test_no_quantity_word_is_typed_into_shot_code():
    # A text that only some configurations show (the planner's "checkpointing" reason, say) is
    # not seen by a dry run at the defaults; read every string the shot code could put on screen.
    import ast
    import re
    from pathlib import Path

    from dtfilm.words import quantity_words

    fields = re.compile(r"\{[^{}]*\}")  # templates and {~escapes}
    path_like = re.compile(r"^[a-z_]+(\.[a-z_0-9-]+)+$")  # an estimate path, never shown
    package = Path(__file__).resolve().parent.parent / "dtfilm"
    typed = []
    # every drawing module of the kinds' folders (shots/<folder>/draw.py) and the visuals; a
    # kind's specs.py (what `dtfilm kinds` prints), the registry and the play functions' finder
    # (their errors) put nothing on screen
    finders = {package / "shots" / "registry.py", package / "shots" / "plays.py"}
    shown = [*package.glob("shots/*.py"), *package.glob("shots/*/*.py"), *package.glob("visuals/*.py")]
    drawing = [p for p in shown if p not in finders and p.name != "specs.py"]
    assert len([p for p in drawing if p.name == "draw.py"]) >= 14, "the kinds' drawing modules are read"
    for path in sorted(drawing):
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                if path_like.match(node.value):
                    continue
                words = [m.group() for m in quantity_words(fields.sub("", node.value))]
                if words:
                    typed.append(f"{path.relative_to(package)}:{node.lineno}: {words} in {node.value!r}")
    assert typed == []
