"""The test workers' estimate process (tests.estimate_process) answers as `dtfilm estimate` does
in a process of its own: the same JSON to the byte after other questions were asked of it, and
the same exit status and error line for a bad flag."""

from __future__ import annotations

from tests.conftest import ROOT, run_dtfilm
from tests.estimate_process import EstimateProcess, estimate_flags


def test_the_estimate_process_answers_as_a_fresh_dtfilm_estimate_does():
    process = EstimateProcess(ROOT)
    try:
        asked = [("fsdp", ()), ("tp", (("cards", 16), ("tp", 8))), ("ledger", (("precision", "fp8"),))]
        answers = [process.run("estimate", chapter, *estimate_flags(flags), "--json") for chapter, flags in asked]
        bad = process.run("estimate", "tp", "--tp", "3")
    finally:
        process.close()
    for (chapter, flags), (status, stdout, _) in list(zip(asked, answers, strict=True))[1:]:
        fresh = run_dtfilm("estimate", chapter, *estimate_flags(flags), "--json")
        assert (status, stdout) == (fresh.returncode, fresh.stdout)
    fresh_bad = run_dtfilm("estimate", "tp", "--tp", "3")
    assert bad[0] == fresh_bad.returncode == 2
    assert bad[2] == fresh_bad.stderr and bad[2].startswith("dtfilm: error:")


def test_flags_are_written_as_the_command_line_takes_them():
    flags = (("seq_len", 4096), ("activation_checkpointing", True), ("overlap", False))
    assert estimate_flags(flags) == ["--seq-len", "4096", "--activation-checkpointing", "--no-overlap"]
