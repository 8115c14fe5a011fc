from __future__ import annotations

from dtfilm.cli import run

run()
