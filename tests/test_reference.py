"""The storyboard author's reference: `dtfilm kinds`, `dtfilm paths` and docs/contract.md, each
against what the code really has (the docs site's kind and unit lists are generated from the code;
tests/test_docs_site.py checks the built pages)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from dtfilm.numbers import Numbers
from dtfilm.shots.registry import KINDS
from dtfilm.storyboard.load import load_chapter
from dtfilm.storyboard.reference import paths_rows, suggested_unit
from tests.conftest import ROOT, run_dtfilm

CONTRACT = (ROOT / "docs" / "contract.md").read_text()


SHOWN_AS = {
    "bytes": r"-?[0-9.,]+\s(KB|MB|GB|TB)",  # headroom is negative where nothing fits
    "time": r"[0-9.,]+\s(µs|ms|s|min|h|days)",
    "%": r"[0-9.,]+%",
    "x": r"[0-9.,]+×",
    "GB/s": r"[0-9.,]+\sGB/s",
    "int": r"[0-9,]+",
}


@pytest.mark.parametrize("chapter", ["dp", "3d"])
def test_every_path_renders_in_its_unit(chapter):
    numbers: Numbers = load_chapter(chapter, {}, drawable=False).numbers
    rows = paths_rows(numbers.data)
    assert len(rows) > 150
    for template, shown, unit in rows:
        assert numbers(template).text == shown, template  # what the film would show
        if unit in SHOWN_AS:
            assert re.fullmatch(SHOWN_AS[unit], shown), (template, shown)


@pytest.mark.parametrize(
    ("path", "value", "unit"),
    [
        ("memory.total", 1e9, "bytes"),
        ("comm.collectives.tp_all_reduce.bytes", 1e9, "bytes"),
        ("comm.tp_exchanges.total", 4, "int"),
        ("memory.card.dp", 0, "int"),
        ("compute.step_seconds", 2.5, "time"),
        ("links.nvlink4.latency", 3e-6, "time"),
        ("pipeline.bubble_fraction", 0.2, "%"),
        ("compute.predicted_mfu", 0.4, "%"),
        ("memory.over_capacity", 1.6, "x"),
        ("compute.training_flops", 4.2e23, "sci"),
        ("params", 7e9, "si"),
        ("cluster.intra_node_bandwidth", 450e9, "GB/s"),
        ("model.label", "LLaMA 7B", None),
        ("memory.fits", True, None),
    ],
)
def test_suggested_units(path, value, unit):
    assert suggested_unit(path, value) == unit


def test_the_contract_page_names_every_field():
    numbers = load_chapter("3d", {}, drawable=False).numbers.data
    dynamic = ("inputs", "links")  # keyed by input and link names, described as a pattern
    for section, value in numbers.items():
        assert f"`{section}" in CONTRACT, section
        if isinstance(value, dict) and section not in dynamic:
            for key in value:
                if section == "comm" and key == "collectives":
                    continue
                assert f"`{key}`" in CONTRACT, f"{section}.{key}"
    for key in numbers["compute"]["stage_seconds"]:
        assert f"`{key}`" in CONTRACT, key
    for path in (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))):
        text = path.read_text()
        assert "../shared" not in text, f"{path.name} sends users outside the project (a clone has no ../shared)"


def test_kinds_from_the_command_line():
    listing = run_dtfilm("kinds")
    assert listing.returncode == 0 and len(listing.stdout.splitlines()) == len(KINDS)
    code = (
        "import sys; from dtfilm.cli import main; main(['kinds', 'split_matrices']); "
        "assert 'manim' not in sys.modules, 'printing a kind drew something'"
    )
    one = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert one.returncode == 0, one.stderr
    out = one.stdout
    assert "keys: kind, beat, caption, narration, duration, with" in out
    assert "needs: tp of 2 or more" in out
    assert "used in: tp:matrices (storyboard/tp.yaml:" in out
    assert "shortest length" not in out
    measured = run_dtfilm("kinds", "split_matrices", "--measure")
    assert measured.returncode == 0, measured.stderr
    seconds = float(re.search(r"shortest length: ([0-9.]+) s in tp:matrices", measured.stdout).group(1))
    assert 5 < seconds < 60
    bad = run_dtfilm("kinds", "split_matrix")
    assert (
        bad.returncode == 2
        and "no shot kind 'split_matrix' (did you mean 'split_matrices'?); valid: title" in bad.stderr
    )


def test_paths_from_the_command_line():
    done = run_dtfilm("paths", "pp", "--micro-batches", "4")
    assert done.returncode == 0, done.stderr
    assert re.search(r"^\{inputs\.micro_batches:int\}\s+4$", done.stdout, re.M)
    assert re.search(r"^\{pipeline\.bubble_fraction:%\}\s+\S+%$", done.stdout, re.M)
    assert Path(ROOT / "docs" / "contract.md").exists()
