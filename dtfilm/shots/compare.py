"""A comparison shot: bytes per card per step, and their time, for several configurations."""

from __future__ import annotations

from manim import LEFT, RIGHT, GrowFromEdge, Rectangle, VGroup

from dtfilm.numbers import Numbers
from dtfilm.scene import SLIDE_UNITS, ShotContext
from dtfilm.storyboard import Shot
from dtfilm.visuals.fade import appear
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import Theme

BAR_LEFT_X = -1.2
BAR_MAX_WIDTH = 5.0
ROW_GAP = 1.15
BAR_HEIGHT = 0.46
SEGMENT_GAP = 0.04  # between a bar's pieces, each a collective (or an all-reduce's half)
MOST_PIECES = 4  # a collective run more often than this is one piece, not one per run


def pieces(numbers: Numbers) -> list[tuple[str, float]]:
    """A configuration's traffic as the pieces its bar is built of, in the order a step runs
    them: each collective (comm.breakdown), one piece per run when it runs a few times, and an
    all-reduce as its two halves, a reduce-scatter then an all-gather (the same bytes: (n-1)/n of
    the buffer each), so that FSDP's bar shows data parallelism's halves pulled apart."""
    out: list[tuple[str, float]] = []
    for row in numbers.get_list("comm.breakdown"):
        name, count, size = str(row["collective"]), int(row["count"]), float(row["bytes"])
        if name == "all-reduce":
            halves = [("reduce-scatter", size / 2), ("all-gather", size / 2)]
            out += halves * count if count <= MOST_PIECES // 2 else halves
        elif 1 < count <= MOST_PIECES:
            out += [(name, size / count)] * count
        else:
            out.append((name, size))
    return out


def _piece(theme: Theme, name: str, length: float, height: float = BAR_HEIGHT) -> Rectangle:
    """One piece of a bar, drawn as its collective is everywhere in the shot (and in its key):
    an all-gather solid, a reduce-scatter hollow, anything else muted."""
    if name == "all-gather":
        return Rectangle(width=length, height=height, fill_color=theme.accent, fill_opacity=0.9, stroke_width=0)
    if name == "reduce-scatter":
        return Rectangle(
            width=length, height=height, fill_color=theme.accent, fill_opacity=0.3, stroke_color=theme.accent,
            stroke_width=2,
        )  # fmt: skip
    return Rectangle(width=length, height=height, fill_color=theme.muted, fill_opacity=0.8, stroke_width=0)


def segmented_bar(theme: Theme, numbers: Numbers, width: float) -> VGroup:
    """A bar `width` long cut into its pieces, each as long as its bytes."""
    parts = pieces(numbers)
    total = sum(size for _, size in parts) or 1.0
    bar, x = VGroup(), 0.0
    for name, size in parts:
        length = max(width * size / total - (SEGMENT_GAP if len(parts) > 1 else 0.0), 0.02)
        bar.add(_piece(theme, name, length).move_to([x + length / 2, 0, 0]))
        x += width * size / total
    return bar


def pieces_key(theme: Theme, names: list[str]) -> VGroup:
    """What each kind of piece is: a swatch and the collective's name, in a row."""
    entries = VGroup()
    for name in dict.fromkeys(names):
        swatch = _piece(theme, name, 0.3, 0.22)
        entries.add(VGroup(swatch, label(theme, name, theme.small_size, theme.muted)).arrange(RIGHT, buff=0.12))
    return entries.arrange(RIGHT, buff=0.45)


def play_traffic_compare(ctx: ShotContext, shot: Shot) -> None:
    """One row per configuration: its label, a bar as long as its traffic (cut into its
    collectives), bytes and seconds."""
    theme = ctx.theme
    ctx.open_shot(shot.caption, clear_stats=True)
    rows = shot.options["rows"]
    most = max(float(numbers.get("comm.total")) for _, numbers in rows) or 1.0
    top_y = ROW_GAP * (len(rows) - 1) / 2 + 0.25
    heading = label(
        theme, "each card, per optimizer step: bytes sent · time on the link", theme.small_size, theme.muted
    )
    heading.move_to([BAR_LEFT_X, top_y + 0.75, 0], aligned_edge=LEFT)
    # the key to the bars' pieces under the last row, from the start: each piece a collective
    key = pieces_key(theme, [name for _, numbers in rows for name, _ in pieces(numbers)])
    key.move_to([BAR_LEFT_X, top_y - (len(rows) - 1) * ROW_GAP - 0.62, 0], aligned_edge=LEFT)
    ctx.scene.play(appear(heading), appear(key), run_time=0.5)
    drawn = VGroup(heading)

    def back_to_rows(before: float) -> None:
        """Rows the voice comes back to before `before` seconds into the shot, highlighted again."""
        for i, row in enumerate(drawn[1:], start=1):
            again = f"row{i}_again"
            if ctx.has_mark(again) and again not in done and ctx.mark_seconds(again) <= before:
                done.add(again)
                ctx.until(again)
                ctx.highlight(row, across=True)

    done: set[str] = set()
    for i, (name, numbers) in enumerate(rows):
        y = top_y - i * ROW_GAP
        title = label(theme, name, theme.caption_size, theme.text)
        side = ctx.regions.side
        if title.width > BAR_LEFT_X - side.left - 0.2:
            title.scale_to_fit_width(BAR_LEFT_X - side.left - 0.2)
        title.move_to([side.left, y, 0], aligned_edge=LEFT)
        width = max(BAR_MAX_WIDTH * float(numbers.get("comm.total")) / most, 0.03)
        bar = segmented_bar(theme, numbers, width)
        bar.move_to([BAR_LEFT_X, y, 0], aligned_edge=LEFT)
        value = label(theme, numbers("{comm.total:bytes} · {comm.seconds:time}"), theme.label_size, theme.muted)
        value.next_to(bar, RIGHT, buff=0.15)
        back_to_rows(ctx.mark_seconds(f"row{i + 1}", share=i / len(rows)))
        ctx.until(f"row{i + 1}", share=i / len(rows))
        ctx.scene.play(appear(title, shift=RIGHT * SLIDE_UNITS), GrowFromEdge(bar, LEFT), run_time=0.9)
        ctx.reveal(value, run_time=0.6)
        ctx.highlight(VGroup(title, bar, value), across=True)
        drawn.add(VGroup(title, bar, value))
    back_to_rows(float("inf"))
    ctx.leave(rows=drawn, key=key)
