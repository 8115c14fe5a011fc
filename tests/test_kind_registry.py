"""A kind is one folder of dtfilm/shots/: its spec (specs.py, no Manim) and its play function
beside it, found by themselves. A mistake in a kind is one line naming the kind and its file."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dtfilm.errors import DtfilmError
from dtfilm.shots.registry import KINDS, Kinds, find_specs, spec_problem
from dtfilm.storyboard.kinds import KindSpec
from tests.conftest import ROOT

SPECS = """
from dtfilm.storyboard.kinds import KindSpec

SPECS = ({specs},)
"""
DRAW = """
def play_{kind}(ctx, shot):
    pass
"""
GOOD = 'KindSpec("{kind}", "a scratch kind", {{}}, draw_seconds_per_second=0.2)'


def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, package: str, folders: dict[str, dict[str, str]]) -> Path:
    """A scratch package of kind folders ({folder: {module: source}}), importable as `package`."""
    root = tmp_path / package
    root.mkdir()
    (root / "__init__.py").write_text("")
    for folder, modules in folders.items():
        (root / folder).mkdir()
        (root / folder / "__init__.py").write_text("")
        for module, source in modules.items():
            (root / folder / f"{module}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    return root


def kind_folder(kind: str, spec: str | None = None) -> dict[str, str]:
    return {"specs": SPECS.format(specs=spec or GOOD.format(kind=kind)), "draw": DRAW.format(kind=kind)}


def test_the_film_kinds_are_found_in_their_folders_in_the_listing_order():
    # every folder's specs, in the order `dtfilm kinds` has always listed them (its folders' PLACE)
    assert list(KINDS)[:5] == ["title", "loaf_to_rack", "memory_bars", "ring_allreduce", "sweep"]
    assert list(KINDS)[-1] == "overlap_timeline" and len(KINDS) == 33
    found = KINDS.where("timeline")
    assert found.folder == "dtfilm.shots.pipeline" and found.path == ROOT / "dtfilm" / "shots" / "pipeline" / "specs.py"
    assert [kind for kind, spec in KINDS.items() if spec_problem(spec)] == []


def test_reading_the_specs_imports_no_manim():
    code = "import sys; from dtfilm.shots.registry import KINDS; len(KINDS); print('manim' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.stdout.strip() == "False", done.stderr


def test_a_scratch_package_of_kind_folders_is_found_by_itself(tmp_path, monkeypatch):
    from dtfilm.shots.plays import find_shots

    root = scratch(tmp_path, monkeypatch, "scratch_found", {"one": kind_folder("one"), "two": kind_folder("two")})
    kinds = Kinds([str(root)], "scratch_found")
    assert list(kinds) == ["one", "two"] and kinds.where("two").folder == "scratch_found.two"
    shots = find_shots([str(root)], "scratch_found", kinds)
    assert list(shots) == ["one", "two"] and shots["one"].__module__ == "scratch_found.one.draw"


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ('KindSpec("bad", "a scratch kind", {})', "'bad': draw_seconds_per_second is missing"),
        ('KindSpec("bad", "", {}, draw_seconds_per_second=0.2)', "'bad': summary is not text"),
        ('KindSpec("bad", "a kind", {}, draw_seconds_per_second=0.2, needs={"tp": "2"})', "'bad': needs is no mapping"),
        ('KindSpec("bad", "a kind", {}, draw_seconds_per_second=0.2, marks={"A b": "x"})', "'bad': marks: 'A b'"),
        ('KindSpec("bad", "a kind", {}, draw_seconds_per_second=0.2, takes="rack")', "'bad': takes is no tuple"),
        ('KindSpec("bad", "a kind", {}, draw_seconds_per_second=0.2, reads=("x",))', "'bad': reads ['x']"),
        ('KindSpec("Bad kind", "a kind", {}, draw_seconds_per_second=0.2)', "'Bad kind': name 'Bad kind' is no"),
        ('KindSpec("bad", "a kind", {}, draw_seconds_per_seconds=0.2)', "specs.py:4: TypeError:"),
    ],
)
def test_a_bad_spec_is_one_line_naming_the_kind_and_its_file(tmp_path, monkeypatch, spec, said):
    root = scratch(tmp_path, monkeypatch, f"scratch_bad_{abs(hash(spec))}", {"bad": kind_folder("bad", spec)})
    with pytest.raises(DtfilmError) as raised:
        find_specs([str(root)], root.name)
    line = str(raised.value)
    assert "\n" not in line and f"{root.name}/bad/specs.py" in line and said in line, line


def test_a_name_declared_twice_is_an_error(tmp_path, monkeypatch):
    folders = {"one": kind_folder("same"), "two": kind_folder("same")}
    root = scratch(tmp_path, monkeypatch, "scratch_twice", folders)
    twice = r"two/specs\.py: shot kind 'same' is declared twice \(also in .*one/specs\.py\)"
    with pytest.raises(DtfilmError, match=twice):
        find_specs([str(root)], "scratch_twice")


def test_a_film_kind_taken_again_is_an_error():
    with pytest.raises(DtfilmError, match="shot kind 'title' exists already"):
        KINDS.add(KindSpec("title", "again", {}, draw_seconds_per_second=0.2))


def test_a_play_function_for_no_spec_or_outside_its_folder_and_a_spec_without_one_are_errors(tmp_path, monkeypatch):
    from dtfilm.shots.plays import find_shots

    typo = {"one": {**kind_folder("one"), "more": DRAW.format(kind="onne")}}
    root = scratch(tmp_path, monkeypatch, "scratch_typo", typo)
    with pytest.raises(DtfilmError, match=r"one/more\.py: scratch_typo\.one\.more\.play_onne draws no kind"):
        find_shots([str(root)], "scratch_typo", Kinds([str(root)], "scratch_typo"))

    astray = {"one": kind_folder("one"), "two": {**kind_folder("two"), "more": DRAW.format(kind="one")}}
    root = scratch(tmp_path, monkeypatch, "scratch_astray", astray)
    with pytest.raises(DtfilmError, match=r"two/more\.py: play_one is not beside its spec \(.*one/specs\.py\)"):
        find_shots([str(root)], "scratch_astray", Kinds([str(root)], "scratch_astray"))

    bare = {"one": {"specs": SPECS.format(specs=GOOD.format(kind="one"))}}
    root = scratch(tmp_path, monkeypatch, "scratch_bare", bare)
    with pytest.raises(DtfilmError, match=r"one/specs\.py: shot kind 'one' has no play_one in a module of its folder"):
        find_shots([str(root)], "scratch_bare", Kinds([str(root)], "scratch_bare"))


def test_the_loader_takes_the_kinds_it_is_given():
    from dtfilm.storyboard import load_chapter

    whole = load_chapter("dp", root=ROOT)  # (every kind dtfilm has)
    given = {shot.kind: KINDS[shot.kind] for shot in whole.shots}
    assert [s.kind for s in load_chapter("dp", root=ROOT, kinds=given).shots] == [s.kind for s in whole.shots]
    missing = whole.shots[1].kind
    fewer = {name: spec for name, spec in given.items() if name != missing}
    with pytest.raises(DtfilmError) as error:
        load_chapter("dp", root=ROOT, kinds=fewer)
    assert f"unknown shot kind {missing!r}" in error.value.line()
    assert f"valid: {', '.join(fewer)}" in error.value.line()  # the kinds given, and no others
