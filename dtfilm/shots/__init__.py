"""Shot kinds: each in a folder of its own, a `specs.py` beside the module(s) that draw it.

A folder of this package holds one or more kinds: `specs.py`, their `KindSpec`s in `SPECS` (read
with no Manim: dtfilm.shots.registry finds them, `KINDS`), and modules with each kind's
`play_<kind>(ctx, shot)` (dtfilm.shots.plays finds them, `SHOTS`). A new kind is a new folder;
no list to edit. This module imports nothing, so that reading the specs loads no Manim.
"""
