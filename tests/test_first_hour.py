"""A new user's first hour (issue: "A film project anywhere"): each trap they met, as a test."""

from __future__ import annotations

import pytest

from tests.conftest import estimate_cli, run_dtfilm


def _estimate(*flags: str) -> dict:
    return estimate_cli("dp", *flags)


def test_sequence_lengths_with_k_and_m_are_binary():
    """`--seq-len 8K` read as 8,000 tokens: quietly wrong for an ML audience."""
    from dtfilm.cost.inputs import SPECS

    assert SPECS["seq_len"].read("8K") == 8192
    assert SPECS["seq_len"].read("128k") == 131_072
    assert SPECS["seq_len"].read("2M") == 2_097_152
    assert SPECS["seq_len"].read(4096) == 4096
    assert SPECS["tokens"].read("1T") == 1e12 and SPECS["params"].read("7B") == 7e9  # counts stay decimal
    assert _estimate("--seq-len", "8K")["inputs"]["seq_len"]["value"] == 8192
    refused = run_dtfilm("estimate", "dp", "--seq-len", "8B")
    assert refused.returncode == 2 and "8K = 8,192" in refused.stderr


def test_shape_flags_without_params_derive_the_count_and_the_label():
    """`--layers 48 --hidden 6144 ...` kept the film's 7B and its label beside a larger shape."""
    from dtfilm.cost.models import PRESETS, param_count, shape_with

    shaped = _estimate("--layers", "48", "--hidden", "6144", "--heads", "48", "--kv-heads", "48")
    expected = param_count(shape_with(PRESETS["llama-7b"], layers=48, hidden=6144, heads=48, kv_heads=48))
    assert shaped["params"] == expected and shaped["inputs"]["params"]["source"] == "derived"
    assert shaped["model"]["label"] == "17.4B model"
    given = _estimate("--layers", "48", "--params", "30B")
    assert given["params"] == 30e9 and given["model"]["label"] == "30B model"
    alone = _estimate("--params", "13B")  # the contract: the inherited shape, the given count
    assert alone["params"] == 13e9 and alone["model"]["layers"] == 32
    # named by the count, not the preset: "LLaMA 7B" stood beside 13B's (and at 1e12, 1T's) numbers
    assert alone["model"]["label"] == "13B model" and _estimate("--params", "1e12")["model"]["label"] == "1T model"
    assert _estimate("--params", "7.2e9")["model"]["label"] == "LLaMA 7B"  # about the preset's own 6.74B


def test_no_layout_and_no_fit_are_different_answers():
    """`plan --cards 1000 --global-batch 512` said one GPU does not hold it, and exited 0."""
    none = run_dtfilm("plan", "--cards", "1000", "--global-batch", "512")
    assert none.returncode == 2 and none.stderr.count("\n") == 1
    assert "no layout divides 1,000 cards and a global batch of 512 sequences: dp must divide" in none.stderr
    full = run_dtfilm("plan", "--model", "llama3.1-405b", "--cards", "8", "--global-batch", "8")
    assert full.returncode == 1 and "No plan fits" in full.stdout
    fine = run_dtfilm("plan", "--cards", "8", "--global-batch", "8")
    assert fine.returncode == 0 and "The fastest plan that fits" in fine.stdout


def test_status_of_named_chapters(tmp_path):
    """`dtfilm status CHAPTER` was refused."""
    done = run_dtfilm("status", "dp", "tp", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert [line.split()[0] for line in done.stdout.splitlines()] == ["dp", "tp"]  # no film line for a part
    assert "not rendered yet" in done.stdout
    bad = run_dtfilm("status", "nope", "--out", str(tmp_path))
    assert bad.returncode == 2 and "no chapter 'nope' in the film; valid:" in bad.stderr


def test_a_first_render_does_not_read_as_a_failure(capsys):
    """ "(not rendered yet; drew 7 of 7 shots)" read as a failure."""
    from pathlib import Path

    from dtfilm.render.cache import NOT_RENDERED
    from dtfilm.render.chapters import Rendered, _report

    _report(Rendered("dp", Path("renders/dp.mp4"), 79.1, 20.0, drawn=("a",)), [NOT_RENDERED])
    said = capsys.readouterr().out
    assert "its first render" in said and NOT_RENDERED not in said


def test_errors_suggest_what_was_meant(tmp_path):
    """`memory_bar`, `totl`, `gb`, `FP8` each deserved a "did you mean"; a template path never
    mentioned `inputs.`."""
    import shutil

    from tests.conftest import ROOT

    precision = run_dtfilm("estimate", "dp", "--precision", "FP8")
    assert precision.returncode == 2 and "'FP8' is not one of (did you mean 'fp8'?)" in precision.stderr
    kind = run_dtfilm("kinds", "memory_bar")
    assert kind.returncode == 2 and "(did you mean 'memory_bars'?)" in kind.stderr
    project = tmp_path / "film"
    shutil.copytree(ROOT / "storyboard", project / "storyboard")
    chapter = project / "storyboard" / "dp.yaml"
    original = chapter.read_text()
    for typo, says in (
        ("{memory.totl:GB}", "'totl' is not a key of 'memory' (did you mean 'total'?)"),
        ("{memory.total:gb}", "unknown unit 'gb' in {memory.total:gb} (did you mean 'GB'?)"),
        ("{memroy.total:GB}", "'memroy' is not a top-level key (did you mean 'memory'?)"),
    ):
        chapter.write_text(original.replace("{memory.total:GB}", typo, 1))
        done = run_dtfilm("check", "dp", cwd=project)
        assert done.returncode == 2 and says in done.stderr, done.stderr
        if "top-level" in says:
            assert "inputs.NAME" in done.stderr
    chapter.write_text(original.replace("kind: memory_bars", "kind: memory_bar", 1))
    done = run_dtfilm("check", "dp", cwd=project)
    assert done.returncode == 2 and "unknown shot kind 'memory_bar' (did you mean 'memory_bars'?)" in done.stderr


def test_a_still_at_the_shots_start_and_a_wait_are_read_as_their_own_seconds():
    """Two flags of seconds with different ranges: --at takes 0 (the shot's first frame), a
    wait for workers must be more than 0."""
    import pytest

    from dtfilm.cli import build_parser

    assert build_parser().parse_args(["still", "dp:ring", "--at", "0"]).at == 0.0
    assert build_parser().parse_args(["render", "--cluster-wait", "2.5"]).cluster_wait == 2.5
    with pytest.raises(SystemExit):
        build_parser().parse_args(["render", "--cluster-wait", "0"])


def test_a_title_is_a_template_like_a_caption(tmp_path):
    """A title could not hold a number ("Llama 3 70B on 256 H100s" refused as typed digits), and
    `{model.label}` or a `{~...}` escape in one was drawn raw, braces included."""
    from dtfilm.storyboard.film import load_film
    from dtfilm.storyboard.load import chapter_title_phrases, chapter_titles, load_chapter
    from dtfilm.storyboard.new_project import init_project

    init_project(tmp_path, force=True)
    chapter_file = tmp_path / "storyboard" / "memory.yaml"
    text = chapter_file.read_text()
    title_line = next(line for line in text.splitlines() if line.startswith("title:"))
    templated = 'title: "{model.label} on {cluster.cards:int} cards, {~one} film"'
    chapter_file.write_text(text.replace(title_line, templated))
    flags = {"model": "llama2-70b", "cards": 256}
    chapter = load_chapter(chapter_file, flags)
    assert chapter.title.text == "Llama 2 70B on 256 cards, one film"
    assert {fact.path for fact in chapter.title.facts} >= {"model.label", "cluster.cards"}
    film = load_film(tmp_path / "storyboard" / "film.yaml")
    assert chapter_titles(film) == {"memory": "LLaMA 7B on 1 card, one film"}  # the storyboard's own numbers
    drawn = chapter_title_phrases(film, chapter.overrides)["memory"]  # the ledger's map, under the render's flags
    assert drawn.text == chapter.title.text
    checked = run_dtfilm("check", "memory", "--model", "llama2-70b", "--cards", "256", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    chapter_file.write_text(text.replace(title_line, 'title: "{model.lable} on 8 cards"'))
    refused = run_dtfilm("check", "memory", cwd=tmp_path)
    assert refused.returncode == 2 and "storyboard/memory.yaml:" in refused.stderr and "title" in refused.stderr


def test_errors_name_where_a_value_came_from_and_what_to_write(tmp_path):
    """Trap 6, the rest: "needs tp ... (from --tp)" when the shot's own `with:` set it; `--cards -5`
    said "not a whole number"; a YAML syntax error was PyYAML's text, a line off, with no hint."""
    import shutil

    from dtfilm.errors import DtfilmError
    from dtfilm.storyboard.load import load_chapter
    from dtfilm.system.yamlsrc import load_yaml
    from tests.conftest import ROOT

    project = tmp_path / "film"
    shutil.copytree(ROOT / "storyboard", project / "storyboard")
    chapter = project / "storyboard" / "tp.yaml"
    chapter.write_text(chapter.read_text().replace("with: {plan.tp: 4, cluster.cards: 4}", "with: {plan.tp: 1}", 1))
    with pytest.raises(DtfilmError) as refused:
        load_chapter(chapter)
    assert "but here tp = 1 (from this shot's with:, sweep or rows); valid: tp >= 2" in refused.value.message
    with pytest.raises(DtfilmError) as flagged:
        load_chapter(chapter, {"tp": 1})
    assert "(from --tp)" in flagged.value.message

    for flag, value, says in (
        ("--cards", "-5", "'-5' is outside the supported range of cards in all: 1 to 131,072"),
        ("--seq-len", "-4K", "'-4K' is outside the supported range of tokens per sequence"),
    ):
        done = run_dtfilm("estimate", "dp", flag, value)
        assert done.returncode == 2 and says in done.stderr, done.stderr

    storyboard = tmp_path / "broken.yaml"
    for text, line, hint in (
        ("id: x\nshots:\n  - kind: title\n    caption: Note: a colon\n", 4, "quote a value that holds ': '"),
        ("id: x\nshots:\n  - kind: title\n     beat: a\n", 4, "indent this key as the keys beside it are"),
        ("id: x\nnarration: [mark words\nshots: []\n", 2, "close the [ ]"),
        ("id: x\ntitle: {model.label} on 8\n", 2, 'quote a value that starts with { or [ (title: "'),
        ('id: x\ncaption: "{a}" and more\n', 2, "quote all of it (caption: '\"{a}\" and more')"),
        ("id: x\n\tshots: []\n", 2, "indent with spaces"),
    ):
        storyboard.write_text(text)
        with pytest.raises(DtfilmError) as syntax:
            load_yaml(storyboard, "broken.yaml")
        assert syntax.value.where.line == line and hint in syntax.value.message, (text, syntax.value.line())
