"""A newcomer's first hour with `dtfilm init`: what they type, piped, mistyped, interrupted."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT


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
