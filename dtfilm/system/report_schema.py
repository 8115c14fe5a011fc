"""What renders/validation.json must look like before `status` prints it or the gallery shows it.

The report is written by `dtfilm validate` and read back from the renders folder, which is not
trusted (docs/security.md): a report whose `ranks` was `<script>...` was written into the
gallery's HTML as it was, one that was a FIFO hung `status` and `render` while they held the
lock, and one that was `[]`, not UTF-8 or a folder stopped them with a traceback after drawing.
It is read through `read_back` (a regular file, at most MAX_REPORT_BYTES) and checked here
against the shape dtfilm.validate.run writes; a file that does not match counts as no report,
with one warning. What it holds is still data: escaped in HTML, stripped of controls before the
terminal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dtfilm.system.manifest_schema import warn_once
from dtfilm.userfile import read_back

REPORT = "validation.json"
MAX_REPORT_BYTES = 4 * 2**20  # a report is a few kB: a row for each quantity of 7 strategies
VERDICTS = ("agrees", "explained", "DIFFERS")
_TEXT_FIELDS = ("torch", "backend", "measured_at")
_ROW_TEXT = ("strategy", "quantity", "note")  # what status and the gallery read of a row
_MAX_TEXT_CHARS = 2_000  # a field's words: a note is a sentence


def _number(value: object) -> bool:
    """A JSON number (NaN and infinity included: a measurement that differs between ranks is
    NaN, a ratio to a zero model infinite)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _text(value: object) -> bool:
    return isinstance(value, str) and len(value) <= _MAX_TEXT_CHARS


def _row_problem(row: object) -> str | None:
    if not isinstance(row, dict):
        return "a row is not a mapping"
    if not all(_text(row.get(name)) for name in _ROW_TEXT):
        return f"a row's {', '.join(_ROW_TEXT)} are not text"
    if "unit" in row and not _text(row["unit"]):
        return "a row's unit is not text"
    if row.get("verdict") not in VERDICTS:
        return f"a row's verdict is not one of {', '.join(VERDICTS)}"
    if not (_number(row.get("model")) and _number(row.get("measured"))):
        return "a row's model and measured are not numbers"
    return None


def report_problem(data: object) -> str | None:
    """What is wrong with a parsed report (None: it has the shape dtfilm writes)."""
    if not isinstance(data, dict):
        return "not a JSON object"
    ranks = data.get("ranks")
    if not (isinstance(ranks, int) and not isinstance(ranks, bool) and 1 <= ranks <= 1_000_000):
        return "its ranks are not a whole number of processes"
    if not all(_text(data.get(name)) for name in _TEXT_FIELDS):
        return f"its {', '.join(_TEXT_FIELDS)} are not text"
    if not isinstance(data.get("all_agree"), bool):
        return "its all_agree is not true or false"
    rows = data.get("rows")
    if not isinstance(rows, list):
        return "its rows are not a list"
    return next((problem for row in rows if (problem := _row_problem(row))), None)


def read_report(out_dir: Path) -> dict[str, Any] | None:
    """The last `dtfilm validate` report in `out_dir`, checked; None when there is none or the
    file is not one dtfilm wrote (then with one warning, naming the file)."""
    path = out_dir / REPORT
    data = read_back(path, MAX_REPORT_BYTES)
    if data is None:
        if path.exists() or path.is_symlink():  # (there, but a folder, a FIFO, too large, unreadable)
            warn_once(
                f"{path}: not a report dtfilm wrote (not a readable regular file of at most "
                f"{MAX_REPORT_BYTES:,} bytes); left out"
            )
        return None
    try:
        report = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        problem: str | None = "not JSON in UTF-8"
    else:
        problem = report_problem(report)
    if problem is not None:
        warn_once(f"{path}: not a report dtfilm wrote ({problem}); left out")
        return None
    return report
