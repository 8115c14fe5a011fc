"""Shared fixtures: the project root, dry-run inspections of chapters (run once per session)."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HUGE = {"model": "llama3.1-405b", "cards": 16384}
CONFIGS = {"default": {}, "huge": HUGE}
# DeepSeek-V3's published layout (its report, section 3.2; docs/cost-model.md): 2,048 H800s,
# PP16, EP64, ZeRO-1, fp8, sequences of 4K, 15,360 a step (120 micro-batches of the 128
# replicas: the decision tree's sharded plan, dp 2,048, cannot split a --global-batch 15360).
DEEPSEEK_V3 = {
    "model": "deepseek-v3", "gpu": "h800-sxm-80gb", "cards": 2048, "pp": 16, "ep": 64, "zero": 1,
    "precision": "fp8", "seq_len": 4096, "micro_batches": 120,
}  # fmt: skip
# The expert chapter's "huge" is DeepSeek-V3's layout: a dense 405B has no experts to split
# (the chapter refuses it in one line, as cp's ring refuses --cp 1).
HUGE_BY_CHAPTER = {"ep": DEEPSEEK_V3}


def config_flags(chapter: str, config: str) -> dict:
    """The flags of a (chapter, config) pair of chapter_configs."""
    return HUGE_BY_CHAPTER.get(chapter, HUGE) if config == "huge" else CONFIGS[config]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


def chapter_ids() -> list[str]:
    from dtfilm.storyboard import load_film

    return list(load_film(ROOT / "storyboard" / "film.yaml").chapters)


def chapter_configs() -> list:
    """(chapter, config) pairs; each pair's tests share one dry run, so they run on one worker."""
    return [
        pytest.param(chapter, config, marks=pytest.mark.xdist_group(f"{chapter}-{config}"), id=f"{chapter}-{config}")
        for chapter in chapter_ids()
        for config in sorted(CONFIGS)
    ]


@cache
def inspection(chapter: str, config: str, theme: str | None = None):
    """A chapter's dry run, once per worker. Its labels are kept typeset in the project's cache
    (signed, as a render keeps them), so the other worker and every `dtfilm` the tests run read
    them back instead of typesetting them again (a seventh of a dry run)."""
    from dtfilm.check.inspect import inspect_chapter
    from dtfilm.visuals.text import TYPESET_FOLDER, keep_typeset_in

    keep_typeset_in(ROOT / TYPESET_FOLDER)
    return inspect_chapter(chapter, ROOT, config_flags(chapter, config), theme)


@pytest.fixture(scope="session")
def dp_render(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data-parallel chapter rendered at preview into a folder of its own, once: the
    render, sidecar, gallery and slides tests all read it (they share its xdist group)."""
    out = tmp_path_factory.mktemp("renders")
    done = run_dtfilm("render", "dp", "--quality", "preview", "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


def run_dtfilm(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """`dtfilm ARGS` as a separate process, as a user (or an outside check) runs it."""
    return subprocess.run([sys.executable, "-m", "dtfilm", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@cache
def estimate_json(chapter: str, overrides: tuple[tuple[str, object], ...]) -> dict:
    """`dtfilm estimate CHAPTER --flag value ... --json` in a separate process."""
    flags: list[str] = []
    for name, value in overrides:
        flag = "--" + name.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif value is False:
            flags.append("--no-" + flag[2:])
        else:
            flags += [flag, str(value)]
    done = run_dtfilm("estimate", chapter, *flags, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
