"""This machine's dtfilm folder: what every project of this user shares (npm packages, a cluster
worker's typeset labels, the voice's spoken sentences)."""

from __future__ import annotations

import os
from pathlib import Path


def machine_cache() -> Path:
    """$XDG_CACHE_HOME/dtfilm, else ~/.cache/dtfilm."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dtfilm"
