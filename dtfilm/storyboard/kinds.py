"""What a shot kind is (`KindSpec`, read with no Manim) and the keys every shot takes.

Each kind's spec lives in its own folder, beside its drawing: `SPECS` in
dtfilm/shots/<folder>/specs.py, which dtfilm.shots.registry finds (`KINDS`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


def text(raw: Any) -> str:
    """A kind's key that takes text (a parser for `KindSpec.keys`)."""
    if not isinstance(raw, str) or not raw.strip():
        raise ValueError(f"{raw!r} is not text")
    return raw


@dataclass(frozen=True)
class KindSpec:
    """A shot kind: what it shows, and its extra keys (name -> parser, True when required)."""

    name: str
    summary: str
    keys: dict[str, tuple[Callable[[Any], Any], bool]]
    sweep: bool = False  # takes `set` and `values` (one input over values)
    rows: bool = False  # takes `rows`: [{label, with}], one configuration each
    most_rows: int = 5  # the most `rows` it draws (MAX_ROWS)
    pick: bool = False  # runs the planner; takes `global_batch` (default: the configuration's)
    tree: bool = False  # answers seed 001's decision tree (dtfilm.storyboard.tree); with `pick`
    # What `dtfilm kinds NAME` prints besides the summary: how the kind decides what it draws.
    doc: str = ""
    # Degrees the shot draws and cannot do without ({"tp": 2}: tensor parallelism, at least 2).
    needs: dict[str, int] = field(default_factory=dict)
    # Plan settings the drawing cannot show beyond a value ({"virtual_stages": 1}: the timeline
    # draws the 1F1B schedule without interleaving).
    at_most: dict[str, int] = field(default_factory=dict)
    # The hand-off: pieces the shot keeps on screen from the shot before when they were drawn
    # for its own values (else it draws its own), and the pieces it hands on to the next.
    takes: tuple[str, ...] = ()
    hands_on: tuple[str, ...] = ()
    # Keys (of a sweep) whose template resolves against each value's configuration in turn.
    per_step: tuple[str, ...] = ()
    # Its steps stretch to fill its narration (scene_timing.beat_seconds), within limits.
    paced: bool = False
    # The narration's `[mark]`s its steps wait for (ctx.until), in the order it shows them, each
    # with what shows then; a narration without one spreads that step over its length instead.
    marks: dict[str, str] = field(default_factory=dict)
    # Seconds of drawing a second of the shot's floor (its narration's length, as a render knows
    # it before drawing: dtfilm.storyboard.timing), preview, from a cold render of the film's
    # default numbers, two processes on a 2-core machine (titles 0.07 to 0.17). A render task's
    # cost is its shots' floors times these, so a cold render starts the costliest chapters first:
    # by film seconds alone tp (0.17 s a second) went before 3d (0.21), which then drew alone for
    # the last 10 s. Only their ratios matter; a shot the last render drew is ranked by the time it
    # took (dtfilm.render.tasks.draw_costs). Required: the registry refuses a kind without one
    # (0.2, about the film's middle, until a render measures it).
    draw_seconds_per_second: float = 0.0
    # What it draws from the film beyond its own shot (READS): "chapters", every chapter's id and
    # title (the ledger's map), so a renamed chapter makes it stale.
    reads: tuple[str, ...] = ()
    # The most sentences its narration may have (0: any): a title card holds still while the voice
    # goes on past its sentence (dtfilm check says so).
    most_sentences: int = 0


READS = ("chapters",)


MAX_ROWS = 5

# A sweep's steps: `[value2]` where the voice moves to its second value, and so on; a value
# without a mark is spread evenly over the narration.
VALUE_MARKS = {f"value{i}": f"the sweep moves to its value {i}" for i in range(2, 9)}

SHOT_KEYS = ("kind", "beat", "caption", "narration", "duration", "with")
SWEEP_KEYS = ("set", "values", "also")
PICK_KEYS = ("global_batch",)
# The plan inputs the planner chooses; a pick is shown with these on top of the shot's inputs.
PLAN_INPUTS = (
    "dp", "tp", "pp", "cp", "zero", "micro_batches", "micro_batch_size", "checkpointing", "recompute", "schedule",
    "virtual_stages",
)  # fmt: skip
ROW_KEYS = ("label", "with")
