"""The one context every drawing enters: Manim's version checked, the Mobject patches installed.

Five of the engine's speed-ups cannot be a subclass: every mobject copied (`copying`), every
family listed (`family`), every boundary measured (`bounds`), every path split into its
subpaths (`subpaths`) and every polygon's corners rounded (`corners`) is Manim's own, made by
Manim's code as much as by dtfilm's. They are put
on Manim's classes while a drawing runs (a render's scene, a dry run, a still, the explorer
page's pictures) and taken off after, rather than for the whole process on import. Each gives
Manim's result (tests/test_engine_*.py, tests/test_family.py, tests/test_bounds.py,
tests/test_subpaths.py, tests/test_corners.py), so a shot's key and frames do not depend on whether it is open; only
the time does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from dtfilm.engine import bounds, copying, corners, family, subpaths
from dtfilm.engine.version import check_manim_version

_depth = 0  # how many drawing() contexts are open (they nest: a page's pictures, a scene)


@contextlib.contextmanager
def drawing() -> Iterator[None]:
    """Check Manim's version (DtfilmError), then draw with the quick copy, family walk, boundary,
    subpaths and corners."""
    global _depth
    check_manim_version()
    if _depth == 0:
        copying.install()
        family.install()
        bounds.install()
        subpaths.install()
        corners.install()
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            corners.uninstall()
            subpaths.uninstall()
            bounds.uninstall()
            family.uninstall()
            copying.uninstall()


def is_drawing() -> bool:
    """Whether a drawing() context is open (the patches are installed)."""
    return _depth > 0
