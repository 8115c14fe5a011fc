"""step_breakdown: for each of a few plans, one bar of the optimizer step in seconds, cut into
what the step waits for (the busiest stage's compute, the pipeline's bubble, the slowdown of
compute beside hidden traffic, each group's exposed traffic), with the memory a card holds.

Every length and figure is the plan's own estimate: the parts are the terms of
`compute.step_seconds` (docs/contract.md, "Time"), so the bar's parts add up to the step."""

from __future__ import annotations

import math
from dataclasses import dataclass

from manim import DOWN, LEFT, RIGHT, UP, GrowFromEdge, Rectangle, VGroup

from dtfilm.numbers import Numbers
from dtfilm.phrases import Phrase
from dtfilm.scene import SLIDE_UNITS, ShotContext
from dtfilm.shots.compare.draw import GROUPS, KEY_GAP, KEY_LINE_GAP
from dtfilm.storyboard import Shot
from dtfilm.visuals.fade import appear
from dtfilm.visuals.palette import legible
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import Theme

BAR_LEFT_X = -1.6
BAR_MAX_WIDTH = 5.2
BAR_HEIGHT = 0.42
ROW_GAP = 1.1
VALUE_GAP = 0.15  # between a bar and its figures
PART_GAP = 0.03  # between two parts of a bar
# what the voice may say of a row after it is drawn: [rowN_again], [rowN_parts]
FOLLOW_UPS = ("again", "parts")


@dataclass(frozen=True)
class StepPart:
    """One term of a plan's step: what it is (`kind`: compute, bubble, slowdown, or a group),
    the estimate path of its seconds, and the seconds."""

    kind: str
    path: str
    seconds: float


def step_parts(numbers: Numbers) -> list[StepPart]:
    """The terms `compute.step_seconds` adds up, in the order the key names them: the busiest
    stage's compute, the bubble, the slowdown of compute beside hidden traffic, then each group's
    exposed traffic (zero terms left out)."""
    paths = [
        ("compute", "compute.compute_seconds"),
        ("bubble", "compute.bubble_seconds"),
        ("slowdown", "compute.overlap_slowdown_seconds"),
        *[(group, f"comm.exposed_seconds_by_group.{group}") for group in GROUPS],
    ]
    parts = [StepPart(kind, path, float(numbers.get(path))) for kind, path in paths]
    return [part for part in parts if part.seconds > 0]


# What the key calls each look: every group's exposed traffic looks alike (the step waits for the
# link, whichever group's), and the line under a bar names the group ("EP 137 ms").
PART_WORDS = {
    "compute": "compute",
    "bubble": "pipeline bubble",
    "slowdown": "compute slowed by hidden traffic",
    "exposed": "traffic exposed: the step waits",
}


def _look(kind: str) -> str:
    """Which look a part takes: its own, or, for a group's exposed traffic, "exposed"."""
    return "exposed" if kind in GROUPS else kind


def part_color(theme: Theme, kind: str) -> str:
    """Compute in the compute ink, the slowdown in the traffic ink (traffic hidden under
    compute), the bubble and exposed traffic in the bad colour: time the step waits, as the
    pipeline's bubble and tensor parallelism's stalls are drawn (no group wears a colour)."""
    look = _look(kind)
    if look == "compute":
        return theme.compute_ink
    if look == "slowdown":
        return theme.traffic_ink
    return theme.bad


def _part(theme: Theme, kind: str, length: float, height: float = BAR_HEIGHT) -> Rectangle:
    """A part drawn as it is everywhere in the shot: compute solid, the bubble as the pipeline
    draws it (the cards idle: a faint fill, edged), the slowdown faint, exposed traffic solid."""
    color = part_color(theme, kind)
    if kind == "bubble":
        return Rectangle(width=length, height=height, fill_color=color, fill_opacity=0.14, stroke_color=color,
                         stroke_width=2)  # fmt: skip
    opacity = {"compute": 0.75, "slowdown": 0.45}.get(kind, 0.8)
    return Rectangle(width=length, height=height, fill_color=color, fill_opacity=opacity, stroke_width=0)


def step_bar(theme: Theme, numbers: Numbers, unit: float) -> VGroup:
    """The step as a bar, `unit` units of length a second, cut into its parts; each part keeps
    the seconds it is drawn for (`seconds_drawn`) and what it is (`kind`)."""
    bar, x = VGroup(), 0.0
    for part in step_parts(numbers):
        length = unit * part.seconds
        drawn = max(length - PART_GAP, 0.02)
        piece = _part(theme, part.kind, drawn).move_to([x + drawn / 2, 0, 0])
        piece.kind, piece.seconds_drawn, piece.path = part.kind, part.seconds, part.path
        bar.add(piece)
        x += length
    return bar


def step_value(theme: Theme, numbers: Numbers) -> VGroup:
    """A row's figures: the step, and the memory a card holds against its capacity (red when
    it does not fit)."""
    step = label(theme, numbers("{compute.step_seconds:time} a step"), theme.label_size, theme.text)
    fits = float(numbers.get("memory.total")) <= float(numbers.get("memory.capacity"))
    memory = label(
        theme,
        numbers("{memory.total:GB} a card, of {memory.capacity:GB}"),
        theme.small_size,
        theme.muted if fits else theme.oom,
    )
    return VGroup(step, memory).arrange(DOWN, aligned_edge=LEFT, buff=0.06)


def parts_line(theme: Theme, numbers: Numbers, width: float) -> VGroup:
    """Under a bar, every part but the compute, each in its colour with its seconds: the
    slivers a bar of seconds cannot show, said, and each group's exposed traffic named (its
    part looks like every group's) ("bubble 697 ms  TP 365 ms"); where one line is
    wider than `width`, the groups' traffic on a second."""
    words = VGroup()
    for part in step_parts(numbers):
        if part.kind == "compute":
            continue
        name = {"bubble": "bubble", "slowdown": "slowdown"}.get(part.kind, part.kind.upper())
        phrase: Phrase = name + " " + numbers(f"{{{part.path}:time}}")
        # in its colour, shaded where that alone would not read at 4.5:1
        word = label(theme, phrase, theme.small_size, legible(part_color(theme, part.kind), theme.background))
        word.kind = part.kind
        words.add(word)
    if not len(words):
        return words
    words.arrange(RIGHT, buff=0.25)
    if words.width <= width:
        return words
    # two lines, never smaller words: the bubble and the slowdown, then the groups' traffic
    half = next((i for i, w in enumerate(words) if w.kind in GROUPS), (len(words) + 1) // 2) or 1
    first, second = VGroup(*words[:half]).arrange(RIGHT, buff=0.25), VGroup(*words[half:]).arrange(RIGHT, buff=0.25)
    return VGroup(first, second).arrange(DOWN, aligned_edge=LEFT, buff=0.05)


def time_scale(rows: list[tuple[Phrase, Numbers]], values: list[VGroup], right_x: float) -> float:
    """Units of length a second, one scale for every row: the longest step fills BAR_MAX_WIDTH,
    unless a row's bar and its figures would then run past `right_x`."""
    unit = BAR_MAX_WIDTH / max(float(numbers.get("compute.step_seconds")) for _, numbers in rows)
    for (_, numbers), value in zip(rows, values, strict=True):
        unit = min(unit, (right_x - BAR_LEFT_X - VALUE_GAP - value.width) / float(numbers.get("compute.step_seconds")))
    return unit


def step_key(theme: Theme, kinds: list[str], width: float) -> VGroup:
    """What each look is: a swatch drawn as the part is and its name, wrapped to `width`."""
    lines = [VGroup()]
    looks = {_look(k): k for k in kinds}
    for look in [k for k in PART_WORDS if k in looks]:
        swatch = _part(theme, looks[look], 0.3, 0.22)
        entry = VGroup(swatch, label(theme, PART_WORDS[look], theme.small_size, theme.muted))
        entry.arrange(RIGHT, buff=0.12)
        if len(lines[-1]) and lines[-1].width + KEY_GAP + entry.width > width:
            lines.append(VGroup())
        lines[-1].add(entry)
        lines[-1].arrange(RIGHT, buff=KEY_GAP)
    return VGroup(*lines).arrange(DOWN, aligned_edge=LEFT, buff=KEY_LINE_GAP)


def play_step_breakdown(ctx: ShotContext, shot: Shot) -> None:
    """One row per plan: its label, its step as a bar of seconds cut into compute, bubble,
    slowdown and each group's exposed traffic (one time scale for all rows), the step and the
    memory a card holds beside it, and under it the parts too thin to see, with their seconds."""
    theme = ctx.theme
    ctx.open_shot(shot.caption, clear_stats=True)
    rows = shot.options["rows"]
    right = ctx.regions.stage.right
    values = [step_value(theme, numbers) for _, numbers in rows]
    unit = time_scale(rows, values, right)
    top_y = ROW_GAP * (len(rows) - 1) / 2 + 0.35
    heading = label(theme, "each plan's optimizer step, in seconds, and the memory a card holds", theme.small_size,
                    theme.muted)  # fmt: skip
    heading.move_to([BAR_LEFT_X, top_y + 0.7, 0], aligned_edge=LEFT)
    kinds = [part.kind for _, numbers in rows for part in step_parts(numbers)]
    key = step_key(theme, kinds, right - ctx.regions.side.left)
    one_line = all(parts_line(theme, numbers, math.inf).width <= right - BAR_LEFT_X for _, numbers in rows)
    unders = [parts_line(theme, numbers, math.inf if one_line else 0.0) for _, numbers in rows]  # alike
    last_bottom = top_y - (len(rows) - 1) * ROW_GAP - BAR_HEIGHT / 2 - 0.1 - unders[-1].height
    key.move_to([ctx.regions.side.left, last_bottom - 0.25, 0], aligned_edge=LEFT + UP)
    ctx.scene.play(appear(heading), appear(key), run_time=0.5)
    drawn = VGroup()
    done: set[str] = set()

    for i, (name, numbers) in enumerate(rows):
        y = top_y - i * ROW_GAP
        side = ctx.regions.side
        title = label(theme, name, theme.caption_size, theme.text)
        if title.width > BAR_LEFT_X - side.left - 0.2:
            title.scale_to_fit_width(BAR_LEFT_X - side.left - 0.2)
        title.move_to([side.left, y, 0], aligned_edge=LEFT)
        bar = step_bar(theme, numbers, unit).move_to([BAR_LEFT_X, y, 0], aligned_edge=LEFT)
        value = values[i].next_to(bar, RIGHT, buff=VALUE_GAP)
        under = unders[i]
        if len(under):
            under.next_to(bar, DOWN, buff=0.1, aligned_edge=LEFT)
            if under.get_right()[0] + VALUE_GAP > value.get_left()[0]:
                # a line of parts longer than its bar (EP's and FSDP's at DeepSeek-V3's layout) ran
                # into the memory under the step: the figures sit on the bar's baseline, over the line
                value.align_to(bar, DOWN)
        _follow_ups(ctx, key, drawn, done, ctx.mark_seconds(f"row{i + 1}", share=i / len(rows)))
        ctx.until(f"row{i + 1}", share=i / len(rows))
        ctx.scene.play(appear(title, shift=RIGHT * SLIDE_UNITS), GrowFromEdge(bar, LEFT), run_time=0.9)
        ctx.scene.play(appear(value), appear(under), run_time=0.6)
        row = VGroup(title, bar, value, under)
        row.bar = bar
        ctx.highlight(row, across=True)
        drawn.add(row)
    _follow_ups(ctx, key, drawn, done, float("inf"))
    ctx.leave(rows=VGroup(heading, drawn), key=key)


def _follow_ups(ctx: ShotContext, key: VGroup, drawn: VGroup, done: set[str], before: float) -> None:
    """What the voice says of the rows `drawn` so far (and of the key) before `before` seconds
    into the shot, each as it is said; the marks followed up are added to `done`."""
    due = []
    for mark in ("key", *[f"row{i}_{s}" for i in range(1, len(drawn) + 1) for s in FOLLOW_UPS]):
        if ctx.has_mark(mark) and mark not in done and ctx.mark_seconds(mark) <= before:
            due.append((ctx.mark_seconds(mark), mark))
    for _, mark in sorted(due):
        done.add(mark)
        ctx.until(mark)
        if mark == "key":
            ctx.highlight(key, across=True)
            continue
        row = drawn[int(mark[3:].split("_", 1)[0]) - 1]
        if mark.endswith("_again"):
            ctx.highlight(row, across=True)
            ctx.relight(row, across=True)  # again halfway, where the voice stays on it
        else:  # each part pointed at in turn, up to the next mark, its row lit with it where there is room
            if len(row[3]):  # the line that names the parts and their seconds, lit as they are said
                ctx.highlight(row[3], across=True, hold=0.2)
            ctx.point_in_turn(row.bar, mark, row, scale=1.15)
