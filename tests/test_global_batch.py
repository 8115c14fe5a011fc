"""The global batch as an input (issue 57, item 4): `--global-batch` and `training.global_batch`
derive the micro-batches per replica, are refused in one line where they do not divide, and
where a plan's batch is past what published runs of its size used, the estimate and 3d say so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from dtfilm.cost import builtin_layer, estimate, resolve
from dtfilm.cost.batch import PUBLISHED_BATCHES, parse_global_batch, standing
from dtfilm.errors import DtfilmError
from dtfilm.storyboard.layers import flag_layer
from tests.conftest import ROOT, run_dtfilm


def _estimate(**flags: Any) -> dict[str, Any]:
    return estimate(resolve([builtin_layer(), flag_layer(flags)]))


def _one_error(done) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def test_micro_batches_follow_from_the_global_batch():
    # 16 cards (dp 16), micro-batches of 2: m = 1024 / (16 x 2) = 32
    n = _estimate(cards=16, micro_batch_size=2, global_batch=1024)
    assert n["inputs"]["micro_batches"]["value"] == 32 and n["inputs"]["micro_batches"]["source"] == "derived"
    assert n["training"]["global_batch"] == 1024
    assert n["training"]["tokens_per_step"] == 1024 * 4096 == n["compute"]["tokens_per_step"]
    # the same batch on twice the cards: half the micro-batches, the same tokens a step
    wider = _estimate(cards=32, micro_batch_size=2, global_batch=1024)
    assert wider["inputs"]["micro_batches"]["value"] == 16
    assert wider["training"]["tokens_per_step"] == n["training"]["tokens_per_step"]


def test_tokens_written_with_k_or_m():
    assert parse_global_batch("4M") == parse_global_batch("4M tokens") == parse_global_batch("4096K")
    assert parse_global_batch("4M").count == 4 * 2**20 and parse_global_batch(1024).unit == "sequences"
    n = _estimate(cards=8, global_batch="4M")  # 4,194,304 tokens = 1,024 sequences of 4,096
    assert n["training"]["global_batch"] == 1024 and n["inputs"]["micro_batches"]["value"] == 128
    assert n["inputs"]["global_batch"]["value"] == "4M"  # as written, so the flag reproduces it
    with pytest.raises(ValueError, match="tokens are written with K or M"):
        parse_global_batch("4096 tokens")


def test_without_a_global_batch_it_is_derived_and_reported():
    n = _estimate(cards=8, micro_batches=8)
    assert n["inputs"]["global_batch"] == {
        "value": 64,
        "source": "derived",
        "where": "derived: dp x micro_batches x micro_batch_size",
    }
    assert n["training"]["global_batch"] == 64 and n["training"]["tokens_per_step"] == 64 * 4096


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (
            ("--cards", "16", "--global-batch", "1000"),
            "--global-batch: a global batch of 1,000 sequences does not split into whole micro-batches:"
            " micro_batches = global_batch / (dp x micro_batch_size) = 1,000 / (16 x 1); valid: a multiple of 16",
        ),
        (
            ("--global-batch", "1000K"),  # 1,024,000 tokens are 250 sequences, not a multiple of dp 8
            "--global-batch: a global batch of 1000K tokens (1,024,000) = 250 sequences does not split",
        ),
        (
            ("--global-batch", "3K"),
            "--global-batch: a global batch of 3K tokens (3,072) is not a whole number of sequences of seq_len 4,096",
        ),
        (
            ("--global-batch", "1024", "--micro-batches", "4"),
            "--global-batch: give --global-batch or --micro-batches, not both",
        ),
        (("--global-batch", "lots"), "--global-batch: 'lots' is not a global batch; valid: a whole number"),
    ],
)
def test_each_batch_error_is_one_line(flags: tuple[str, ...], says: str):
    assert says in _one_error(run_dtfilm("estimate", *flags))


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "film"
    shutil.copytree(ROOT / "storyboard", project / "storyboard")
    return project


def test_storyboard_global_batch_and_the_flags_over_it(tmp_path: Path):
    project = _project(tmp_path)
    chapter = project / "storyboard" / "dp.yaml"
    text = chapter.read_text()
    assert "\ntraining:" not in text
    chapter.write_text(text.replace("\nshots:", "\ntraining: {global_batch: 256}\nshots:", 1))
    # the chapter's global batch clears the film's micro_batches: 256 / 8 cards = 32
    n = json.loads(run_dtfilm("estimate", "dp", "--json", cwd=project).stdout)
    assert n["training"]["global_batch"] == 256 and n["inputs"]["micro_batches"]["value"] == 32
    # a flag overrides the storyboard's value of either
    flagged = json.loads(run_dtfilm("estimate", "dp", "--micro-batches", "2", "--json", cwd=project).stdout)
    assert flagged["training"]["global_batch"] == 16 and flagged["inputs"]["micro_batches"]["source"] == "flag"
    # both at one storyboard level: refused, naming the file, line and both
    chapter.write_text(text.replace("\nshots:", "\ntraining: {global_batch: 256, micro_batches: 4}\nshots:", 1))
    line = _one_error(run_dtfilm("estimate", "dp", cwd=project))
    assert "storyboard/dp.yaml:" in line and "training.global_batch" in line
    assert "give training.global_batch or training.micro_batches, not both" in line


def test_both_in_one_layer_is_refused_in_process():
    with pytest.raises(DtfilmError, match="not both"):
        resolve([builtin_layer(), flag_layer({"global_batch": 64, "micro_batches": 8})])


def test_a_batch_past_published_runs_of_its_size_is_said():
    # Llama 2 70B at 8,192 sequences of 4,096 (33.6M tokens), against LLaMA's and Llama 2's 4M
    big = _estimate(model="llama2-70b", cards=1024, global_batch=8192, micro_batch_size=1)
    assert big["training"]["batch_large"] is True
    assert big["training"]["published_batch_tokens"] == 4 * 2**20
    assert "33.6M tokens a step is past the 4.19M of" in big["training"]["batch_note"]
    assert big["training"]["batch_note"] in big["warnings"]
    usual = _estimate(model="llama2-70b", cards=1024, global_batch=1024)
    assert usual["training"]["batch_large"] is False and usual["training"]["batch_note"] == ""
    # 405B may take Llama 3's 16M tokens; 8B may not
    assert not standing(405e9, 16 * 2**20).large and standing(8e9, 16 * 2**20).large
    assert all(run.source for run in PUBLISHED_BATCHES)


def test_3d_says_when_its_planner_picks_a_large_batch():
    """3d's planner picked 8,192 sequences (on 1,024 cards) without a word."""
    done = run_dtfilm("claims", "3d", "--cards", "1024", "--json")
    assert done.returncode == 0, done.stderr
    said = [c for c in json.loads(done.stdout) if "Its batch is large" in c["text"]]
    assert len(said) == 1 and said[0]["holds"] and "33.6M tokens a step" in said[0]["text"]
    # at the film's defaults the pick's batch is 512 sequences, 2.1M tokens: nothing is said
    quiet = json.loads(run_dtfilm("claims", "3d", "--json").stdout)
    assert not any("Its batch is large" in c["text"] for c in quiet)


def test_dp_says_the_tokens_a_step_of_many_replicas():
    """dp at 16,384 cards implies 537M tokens a step (8 micro-batches of 4,096 on each), and never said so."""
    done = run_dtfilm("claims", "dp", "--cards", "16384", "--json")
    assert done.returncode == 0, done.stderr
    said = [c for c in json.loads(done.stdout) if "tokens a step, past the" in c["text"]]
    assert len(said) == 1 and said[0]["holds"] and "537M tokens a step" in said[0]["text"]


def test_the_planner_searches_within_the_global_batch():
    done = run_dtfilm("plan", "--model", "llama2-70b", "--cards", "64", "--global-batch", "2M", "--top", "1", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["global_batch"] == 512 and result["tokens_per_step"] == 2 * 2**20
    pick = result["pick"]
    assert pick["dp"] * pick["micro_batches"] * pick["micro_batch_size"] == 512


def test_a_global_batch_flag_beats_the_pick_shots_own():
    """cp's planner shot searches within its own `global_batch: 16`; --global-batch overrides it,
    as a flag overrides a shot's `with:`."""
    from dtfilm.storyboard.load import load_chapter

    def picked(overrides: dict[str, Any]) -> int:
        chapter = load_chapter("cp", overrides)
        (shot,) = [s for s in chapter.shots if "pick" in s.options]
        return shot.options["global_batch"]

    assert picked({}) == 16
    assert picked({"global_batch": 64}) == 64


def test_plan_refuses_tokens_that_are_no_whole_sequences():
    line = _one_error(run_dtfilm("plan", "--global-batch", "3K"))
    assert "--global-batch: a global batch of 3K tokens (3,072) is not a whole number of sequences" in line
