"""A comparison shot: bytes per card per step, and their time, for several configurations."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, GrowFromEdge, Rectangle, VGroup

from dtfilm.numbers import Numbers
from dtfilm.scene import SLIDE_UNITS, ShotContext
from dtfilm.storyboard import Shot
from dtfilm.visuals.fade import appear
from dtfilm.visuals.text import label
from dtfilm.visuals.theme import FRAME_WIDTH, Theme

BAR_LEFT_X = -1.2
BAR_MAX_WIDTH = 5.0
ROW_GAP = 1.15
BAR_HEIGHT = 0.46
SEGMENT_GAP = 0.04  # between a bar's pieces, each a collective (or an all-reduce's half)
MOST_PIECES = 4  # a collective run more often than this is one piece, not one per run
COMPUTE_HEIGHT = 0.12  # the compute bar under a row, thinner than the traffic
COMPUTE_ROOM = 0.25  # the key sits this much lower when the last row draws its compute
# what the voice may say of a row after it is drawn: [rowN_again], [rowN_pieces], ...
FOLLOW_UPS = ("again", "pieces", "compute", "verdict")


def pieces(numbers: Numbers) -> list[tuple[str, float]]:
    """A configuration's traffic as the pieces its bar is built of, in the order a step runs
    them: each collective (comm.breakdown), one piece per run when it runs a few times, and an
    all-reduce as its two halves, a reduce-scatter then an all-gather (the same bytes: (n-1)/n of
    the buffer each), so that FSDP's bar shows data parallelism's halves pulled apart."""
    out: list[tuple[str, float]] = []
    # FSDP's runs are passes over the whole model: 2 gathers and 1 reduce-scatter a micro-batch,
    # however many calls (one a layer on NCCL's network) each pass takes
    fsdp_passes = int(numbers.get("inputs.micro_batches.value")) if int(numbers.get("plan.zero")) >= 3 else 0
    for row in numbers.get_list("comm.breakdown"):
        name, count, size = str(row["collective"]), int(row["count"]), float(row["bytes"])
        if fsdp_passes and row["group"] == "dp":
            count = 2 * fsdp_passes if name == "all-gather" else fsdp_passes
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


KEY_GAP = 0.45  # between one entry of the key and the next
KEY_LINE_GAP = 0.15  # between the key's lines, when it needs more than one


def pieces_key(theme: Theme, names: list[str], width: float | None = None) -> tuple[VGroup, VGroup]:
    """What each kind of piece is: a swatch and the collective's name, in a row; in more rows,
    each no wider than `width`, when one is wider (under context parallelism the ring's two
    collectives joined the data-parallel halves and the pipeline's send/recv, and ran off the frame).
    The key, and its first line (the key itself when it is one)."""
    entries = []
    for name in dict.fromkeys(names):
        swatch = _piece(theme, name, 0.3, 0.22)
        entries.append(VGroup(swatch, label(theme, name, theme.small_size, theme.muted)).arrange(RIGHT, buff=0.12))
    lines = [VGroup()]
    for entry in entries:
        line = lines[-1]
        if width is not None and len(line) and line.width + KEY_GAP + entry.width > width:
            line = VGroup()
            lines.append(line)
        line.add(entry)
        line.arrange(RIGHT, buff=KEY_GAP)
    if len(lines) == 1:
        return lines[0], lines[0]
    return VGroup(*lines).arrange(DOWN, aligned_edge=LEFT, buff=KEY_LINE_GAP), lines[0]


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
    names = [name for _, numbers in rows for name, _ in pieces(numbers)]
    key, first_line = pieces_key(theme, names, width=ctx.regions.stage.right - BAR_LEFT_X)
    below = 0.62 + (COMPUTE_ROOM if ctx.has_mark(f"row{len(rows)}_compute") else 0.0)  # clear of its compute
    key_y = top_y - (len(rows) - 1) * ROW_GAP - below
    key.move_to([BAR_LEFT_X, key_y, 0], aligned_edge=LEFT)
    if first_line is not key:  # its first line where the one line would be, the others below it
        key.shift(UP * (key_y - first_line.get_center()[1]))
    ctx.scene.play(appear(heading), appear(key), run_time=0.5)
    drawn = VGroup(heading)
    done: set[str] = set()

    def follow_ups(before: float) -> None:
        """What the voice says of rows already drawn (and of the key) before `before` seconds
        into the shot, each as it is said, in the order it is said."""
        due = []
        for mark in ("key", *[f"row{i}_{s}" for i in range(1, len(drawn)) for s in FOLLOW_UPS]):
            if ctx.has_mark(mark) and mark not in done and ctx.mark_seconds(mark) <= before:
                due.append((ctx.mark_seconds(mark), mark))
        for _, mark in sorted(due):
            done.add(mark)
            ctx.until(mark)
            if mark == "key":  # the pieces' names, as the voice names the collectives
                ctx.highlight(key, across=True)
                continue
            index, said = mark[3:].split("_", 1)
            follow_up(mark, said, int(index))

    def follow_up(mark: str, said: str, index: int) -> None:
        row, numbers = drawn[index], rows[index - 1][1]
        if said == "again":
            ctx.highlight(row, across=True)
        elif said == "pieces":  # each piece pointed at as the voice names it, to its next mark
            bar = row[1]
            for j, piece in enumerate(bar):
                ctx.spread(mark, _next_mark(shot, mark), j, len(bar))
                ctx.point_at(piece, scale=1.3)
        elif said == "compute":  # the row's compute, to the scale its bar's length is its time
            compute = compute_bar(theme, numbers, row[1], ctx.regions.stage.right)
            ctx.scene.play(GrowFromEdge(compute[0], LEFT), appear(compute[1]), run_time=0.8)
            row.add(compute)
            ctx.highlight(row, across=True)
        elif said == "verdict":  # the traffic against the compute, then the row, as the verdict is said
            ctx.point_at(*row[1:], scale=1.05)
            ctx.spread(mark, _next_mark(shot, mark), 1, 2)
            ctx.highlight(row, across=True)

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
        follow_ups(ctx.mark_seconds(f"row{i + 1}", share=i / len(rows)))
        ctx.until(f"row{i + 1}", share=i / len(rows))
        ctx.scene.play(appear(title, shift=RIGHT * SLIDE_UNITS), GrowFromEdge(bar, LEFT), run_time=0.9)
        ctx.reveal(value, run_time=0.6)
        ctx.highlight(VGroup(title, bar, value), across=True)
        drawn.add(VGroup(title, bar, value))
    follow_ups(float("inf"))
    ctx.leave(rows=drawn, key=key)


def compute_bar(theme: Theme, numbers: Numbers, bar: VGroup, right_x: float = FRAME_WIDTH / 2 - 0.3) -> VGroup:
    """A thin bar under a row's `bar` as long as the configuration's compute a step, at the
    scale where the row's bar is as long as its time on the link, and the compute named beside
    it. A compute too long for the frame at that scale (the traffic a small part of it) is cut
    short where its name still fits before `right_x`, and the name says so; with no room even
    for that, it runs to `right_x` and its name goes under it."""
    traffic = float(numbers.get("comm.seconds")) or 1.0
    length = max(bar.width * float(numbers.get("compute.compute_seconds")) / traffic, 0.03)
    name = label(theme, numbers("compute {compute.compute_seconds:time}, to this row's time scale"), theme.small_size,
                 theme.muted)  # fmt: skip
    left = bar.get_left()[0]
    under = False
    if left + length + 0.15 + name.width > right_x:
        name = label(theme, numbers("compute {compute.compute_seconds:time}, its bar cut short"), theme.small_size,
                     theme.muted)  # fmt: skip
        room = right_x - left - 0.15 - name.width
        under = room < bar.width
        length = min(length, right_x - left) if under else min(length, room)
    line = Rectangle(width=length, height=COMPUTE_HEIGHT, fill_color=theme.text, fill_opacity=0.7, stroke_width=0)
    line.next_to(bar, DOWN, buff=0.08, aligned_edge=LEFT)
    if under:
        name.next_to(line, DOWN, buff=0.06, aligned_edge=RIGHT)
    else:
        name.next_to(line, RIGHT, buff=0.15)
    return VGroup(line, name)


def _next_mark(shot: Shot, mark: str) -> str | None:
    """The mark the narration reaches after `mark` (None: it is the last)."""
    names = [name for name, _ in sorted(shot.marks, key=lambda m: m[1])]
    after = names.index(mark) + 1
    return names[after] if after < len(names) else None
