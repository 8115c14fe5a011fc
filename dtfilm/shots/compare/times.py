"""A comparison row's time a step (traffic_compare): its time on the link and its compute, as
bars to one scale of seconds shared by the rows, drawn apart from the row's bytes."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, Mobject, Rectangle, VGroup

from dtfilm.numbers import Numbers
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import FRAME_WIDTH, Theme

COMPUTE_HEIGHT = 0.12  # the compute bar under a row, thinner than the traffic
TIME_GAP = 0.12  # between a time bar and its name
TIME_ENTRY_GAP = 0.4  # between the link's time and the compute's, on one line


def _time_names(theme: Theme, numbers: Numbers) -> tuple[Mobject, Mobject, Mobject]:
    """A row's time line's words: its heading, its link's time and its compute's."""
    heading = label(theme, "time a step:", theme.small_size, theme.muted)
    link_name = label(theme, numbers("on the link {comm.seconds:time}"), theme.small_size, theme.muted)
    compute_name = label(theme, numbers("compute {compute.compute_seconds:time}"), theme.small_size, theme.muted)
    return heading, link_name, compute_name


def _time_room(
    names: tuple[Mobject, Mobject, Mobject], numbers: Numbers, left: float, right_x: float
) -> tuple[bool, float]:
    """Whether a row's time line, its `names` (_time_names) among its bars, is stacked (the
    compute under the link's time: under a second of bars' room on one line), and the longest
    scale of seconds (length a second) it fits."""
    heading, link_name, compute_name = names
    link_s, compute_s = float(numbers.get("comm.seconds")), float(numbers.get("compute.compute_seconds"))
    words = heading.width + link_name.width + compute_name.width + 2 * TIME_GAP + TIME_ENTRY_GAP + TIME_GAP
    one_line = right_x - left - words
    two_lines = right_x - left - heading.width - TIME_GAP - max(link_name.width, compute_name.width) - TIME_GAP
    stacked = one_line < 1.0
    room = two_lines if stacked else one_line
    return stacked, max(room, 0.06) / (max(link_s, compute_s) if stacked else (link_s + compute_s) or 1.0)


def time_scale(theme: Theme, rows: list[Numbers], left: float, right_x: float = FRAME_WIDTH / 2 - 0.3) -> float:
    """One scale of seconds (length a second) for every row's time line, the longest that each
    row's fits: the same compute is as long in every row (a lecturer: ep's two rows drew 4.7 s
    at two lengths, each row to its own scale)."""
    return min(_time_room(_time_names(theme, numbers), numbers, left, right_x)[1] for numbers in rows)


def compute_bar(
    theme: Theme,
    numbers: Numbers,
    bar: VGroup,
    right_x: float = FRAME_WIDTH / 2 - 0.3,
    above: VGroup | None = None,
    unit: float | None = None,
) -> VGroup:
    """Under a row's `bar` (and under `above`, its groups' bytes, when given), the row's time a
    step drawn apart from its bytes, on an axis of its own: a bar as long as its time on the link
    and one as long as its compute, to one scale of seconds (`unit`, a length a second, shared by
    the rows: time_scale; else the row's own), each named with its time. The bars above are
    bytes; a time drawn to their length would mix the units (finding 7 of issue 58: the compute
    was drawn "to this row's time scale" on the bytes axis). One line when it fits before
    `right_x`, else the compute on a line under the link's. Returns (bars, names): the link's
    bar then the compute's; the heading and each time's name."""
    link_s, compute_s = float(numbers.get("comm.seconds")), float(numbers.get("compute.compute_seconds"))
    names = _time_names(theme, numbers)
    heading, link_name, compute_name = names
    left = bar.get_left()[0]
    stacked, own = _time_room(names, numbers, left, right_x)
    unit = own if unit is None else min(unit, own)

    def time_bar(seconds: float, color: str, opacity: float) -> Rectangle:
        return Rectangle(width=max(unit * seconds, 0.03), height=COMPUTE_HEIGHT, fill_color=color,
                         fill_opacity=opacity, stroke_color=color, stroke_width=1)  # fmt: skip

    link = time_bar(link_s, theme.traffic_ink, 0.5)
    compute = time_bar(compute_s, theme.compute_ink, 0.7)
    top = (above if above is not None and len(above) else bar).get_bottom()[1] - 0.08
    heading.move_to([left, top, 0], aligned_edge=UP + LEFT)
    link.next_to(heading, RIGHT, buff=TIME_GAP)
    link_name.next_to(link, RIGHT, buff=TIME_GAP)
    if stacked:
        compute.next_to(link, DOWN, buff=0.2, aligned_edge=LEFT)
    else:
        compute.next_to(link_name, RIGHT, buff=TIME_ENTRY_GAP)
    compute_name.next_to(compute, RIGHT, buff=TIME_GAP)
    return VGroup(VGroup(link, compute), VGroup(heading, link_name, compute_name))
