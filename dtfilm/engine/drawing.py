"""The one context every drawing enters: Manim's version checked, the Mobject patches installed.

Two of the engine's speed-ups cannot be a subclass: every mobject copied (`copying`) and every
family listed (`family`) is Manim's own Mobject, made by Manim's code as much as by dtfilm's. They
are put on Manim's Mobject while a drawing runs (a render's scene, a dry run, a still, the
explorer page's pictures) and taken off after, rather than for the whole process on import. Each
gives Manim's result (tests/test_engine_*.py), so a shot's key and frames do not depend on
whether it is open; only the time does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from dtfilm.engine import copying, family
from dtfilm.engine.version import check_manim_version

_depth = 0  # how many drawing() contexts are open (they nest: a page's pictures, a scene)


@contextlib.contextmanager
def drawing() -> Iterator[None]:
    """Check Manim's version (DtfilmError), then draw with the quick copy and family walk."""
    global _depth
    check_manim_version()
    if _depth == 0:
        copying.install()
        family.install()
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            family.uninstall()
            copying.uninstall()


def is_drawing() -> bool:
    """Whether a drawing() context is open (the patches are installed)."""
    return _depth > 0
