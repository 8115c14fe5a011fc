"""dtfilm's engine: the one place that knows Manim's internals (see UPGRADING.md).

Everything here leans on how Manim 0.22 works inside, for speed or to draw only some frames:
- `start`: Manim imported without scipy.spatial; the one piece that acts at import (of dtfilm),
  as it must precede Manim's own import;
- `scene.FilmScene` and `renderer.FilmRenderer`: the Scene and the Cairo renderer every chapter
  draws with, with a small public API of their own (skipping frames, the clock, sections);
- `drawing()`: the context every drawing path enters, which checks Manim's version and installs
  the quick copy (`copying`), family walk (`family`), boundary (`bounds`), subpaths
  (`subpaths`) and rounded corners (`corners`) on Manim's classes while it is open;
- `camera.FilmCamera`: Cairo paths built once per outline (`paths`);
- `layers`: still furniture drawn once per animation; `glyphs`: labels placed from Pango's SVG.

Outside this package dtfilm uses Manim's public API only (tests/test_engine_seam.py checks).
This module imports nothing, so `import dtfilm` stays without Manim.
"""
