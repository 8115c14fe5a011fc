"""The Manim the engine was written for, and the guard that every drawing passes first."""

from __future__ import annotations

from importlib import metadata

from dtfilm.errors import DtfilmError, Where

# The version pinned in pyproject.toml and constraints.txt (tests/test_engine_seam.py checks):
# the engine relies on its internals (UPGRADING.md lists them), so another is refused
MANIM_VERSION = "0.22.0"


def installed_manim() -> str:
    """The version of Manim installed (its package's metadata: no import of Manim)."""
    return metadata.version("manim")


def check_manim_version() -> None:
    """A Manim other than MANIM_VERSION is a one-line error naming both."""
    found = installed_manim()
    if found != MANIM_VERSION:
        raise DtfilmError(
            f"Manim {found} is installed, but dtfilm's engine was written for Manim {MANIM_VERSION}; "
            f"valid: manim=={MANIM_VERSION} (pip install 'manim=={MANIM_VERSION}'; "
            "dtfilm/engine/UPGRADING.md says what moving to another needs)",
            Where("manim"),
        )
