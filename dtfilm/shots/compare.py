"""A comparison shot: bytes per card per step, and their time, for several configurations."""

from __future__ import annotations

from manim import LEFT, RIGHT, GrowFromEdge, Rectangle, VGroup

from dtfilm.scene import SLIDE_UNITS, ShotContext
from dtfilm.storyboard import Shot
from dtfilm.visuals.fade import appear
from dtfilm.visuals.text import label

BAR_LEFT_X = -1.2
BAR_MAX_WIDTH = 5.0
ROW_GAP = 1.15


def play_traffic_compare(ctx: ShotContext, shot: Shot) -> None:
    """One row per configuration: its label, a bar as long as its traffic, bytes and seconds."""
    theme = ctx.theme
    ctx.open_shot(shot.caption, clear_stats=True)
    rows = shot.options["rows"]
    most = max(float(numbers.get("comm.total")) for _, numbers in rows) or 1.0
    top_y = ROW_GAP * (len(rows) - 1) / 2 + 0.25
    heading = label(
        theme, "each card, per optimizer step: bytes sent · time on the link", theme.small_size, theme.muted
    )
    heading.move_to([BAR_LEFT_X, top_y + 0.75, 0], aligned_edge=LEFT)
    ctx.scene.play(appear(heading), run_time=0.5)
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
        bar = Rectangle(width=width, height=0.46, fill_color=theme.accent, fill_opacity=0.9, stroke_width=0)
        bar.move_to([BAR_LEFT_X + width / 2, y, 0])
        value = label(theme, numbers("{comm.total:bytes} · {comm.seconds:time}"), theme.label_size, theme.muted)
        value.next_to(bar, RIGHT, buff=0.15)
        back_to_rows(ctx.mark_seconds(f"row{i + 1}", share=i / len(rows)))
        ctx.until(f"row{i + 1}", share=i / len(rows))
        ctx.scene.play(appear(title, shift=RIGHT * SLIDE_UNITS), GrowFromEdge(bar, LEFT), run_time=0.9)
        ctx.reveal(value, run_time=0.6)
        ctx.highlight(VGroup(title, bar, value), across=True)
        drawn.add(VGroup(title, bar, value))
    back_to_rows(float("inf"))
    ctx.leave(rows=drawn)
