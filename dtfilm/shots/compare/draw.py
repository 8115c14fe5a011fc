"""Comparison shots: bytes per card per step and their time (traffic_compare), and the step
cut into compute, bubble and each group's exposed traffic (step_breakdown), for several
configurations, one row each. Traffic wears no colour: its pieces are drawn in the traffic ink,
each as its collective (dtfilm.visuals.collectives), and each group is named under its pieces."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, GrowFromEdge, Line, Mobject, VGroup

from dtfilm.numbers import Numbers
from dtfilm.onscreen.design import MIN_TEXT_PX, text_px
from dtfilm.phrases import Phrase, plain
from dtfilm.scene import SLIDE_UNITS, ShotContext
from dtfilm.shots.compare.times import compute_bar, time_scale
from dtfilm.storyboard import Shot
from dtfilm.visuals.collectives import collective_piece
from dtfilm.visuals.fade import appear
from dtfilm.visuals.text import label, wrapped
from dtfilm.visuals.theme import Theme

BAR_LEFT_X = -1.2
BAR_MAX_WIDTH = 5.0
ROW_GAPS = {1: 1.4, 2: 1.4, 3: 1.4, 4: 1.3}  # by rows; five rows: ROW_GAP
ROW_GAP = 1.12
BAR_HEIGHT = 0.46
SEGMENT_GAP = 0.04  # between a bar's pieces, each a collective (or an all-reduce's half)
MOST_PIECES = 4  # a collective run more often than this is one piece, not one per run
COMPUTE_ROOM = 0.25  # the key sits this much lower when the last row draws its compute
# what the voice may say of a row after it is drawn: [rowN_again], [rowN_pieces], ...
FOLLOW_UPS = ("again", "pieces", "compute", "verdict")


GROUPS = ("tp", "cp", "ep", "pp", "dp")  # the order a key names them: innermost first
GROUP_WORDS = {
    "tp": "tensor parallel",
    "cp": "context parallel",
    "ep": "expert parallel",
    "pp": "pipeline",
    "dp": "data parallel",
}


def group_pieces(numbers: Numbers) -> list[tuple[str, str, float]]:
    """A configuration's traffic as the pieces its bar is built of, in the order a step runs
    them, each with its group: each collective (comm.breakdown), one piece per run when it runs
    a few times, and an all-reduce as its two halves, a reduce-scatter then an all-gather (the
    same bytes: (n-1)/n of the buffer each), so that FSDP's bar shows data parallelism's halves
    pulled apart."""
    out: list[tuple[str, str, float]] = []
    # FSDP's runs are passes over the whole model: 2 gathers and 1 reduce-scatter a micro-batch,
    # however many calls (one a layer on NCCL's network) each pass takes
    fsdp_passes = int(numbers.get("inputs.micro_batches.value")) if int(numbers.get("plan.zero")) >= 3 else 0
    for row in numbers.get_list("comm.breakdown"):
        group, name, count, size = str(row["group"]), str(row["collective"]), int(row["count"]), float(row["bytes"])
        if fsdp_passes and group == "dp":
            count = 2 * fsdp_passes if name == "all-gather" else fsdp_passes
        if name == "all-reduce":
            halves = [(group, "reduce-scatter", size / 2), (group, "all-gather", size / 2)]
            out += halves * count if count <= MOST_PIECES // 2 else halves
        elif 1 < count <= MOST_PIECES:
            out += [(group, name, size / count)] * count
        else:
            out.append((group, name, size))
    return out


def pieces(numbers: Numbers) -> list[tuple[str, float]]:
    """The pieces of `group_pieces`, each a collective and its bytes."""
    return [(name, size) for _, name, size in group_pieces(numbers)]


def segmented_bar(theme: Theme, numbers: Numbers, width: float) -> VGroup:
    """A bar `width` long cut into its pieces, each as long as its bytes and drawn as its
    collective (in the traffic ink: a group's colour borrowed a card's, issue 58); each piece
    keeps its `group` and `collective`, and the group line under the bar names the groups."""
    parts = group_pieces(numbers)
    total = sum(size for _, _, size in parts) or 1.0
    bar, x = VGroup(), 0.0
    for group, name, size in parts:
        length = max(width * size / total - (SEGMENT_GAP if len(parts) > 1 else 0.0), 0.02)
        piece = collective_piece(theme, name, length, BAR_HEIGHT).move_to([x + length / 2, 0, 0])
        piece.group, piece.collective = group, name
        bar.add(piece)
        x += width * size / total
    return bar


KEY_GAP = 0.45  # between one entry of the key and the next
KEY_LINE_GAP = 0.15  # between the key's lines, when it needs more than one


def pieces_key(theme: Theme, names: list[str], width: float | None = None) -> tuple[VGroup, VGroup]:
    """What the pieces are: each kind of piece (a swatch drawn as that collective is, and its
    name), in a row; in more rows, each no wider than `width`, when one is wider (under context
    parallelism the ring's two collectives joined the data-parallel halves and the pipeline's
    send/recv, and ran off the frame). The groups are named under the bars, not here: a group
    has no colour to key. The key, and its first line (the key itself when it is one)."""
    entries = []
    for name in dict.fromkeys(names):
        swatch = collective_piece(theme, name, 0.3, 0.22)
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


def _place_key(
    ctx: ShotContext,
    rows: list[tuple[str, Numbers]],
    unit: float,
    key: VGroup,
    first_line: VGroup,
    top_y: float,
    gap: float,
) -> None:
    """The key to the bars' pieces under the last row, clear of the last row's compute where the
    voice draws it (its name under it or not); a key of several lines has its first line where
    the one line would be, the others below it."""
    theme, right = ctx.theme, ctx.regions.stage.right
    last_y = top_y - (len(rows) - 1) * gap
    below = 0.62 + GROUP_LINE_ROOM
    if ctx.has_mark(f"row{len(rows)}_compute"):  # clear of the last row's compute, its name under it or not
        last = rows[-1][1]
        bar = segmented_bar(theme, last, row_width(last, unit)).move_to([BAR_LEFT_X, last_y, 0], aligned_edge=LEFT)
        under = groups_under(theme, last, bar)
        if len(under):
            under_bar(theme, under, bar)
        below = max(below, last_y - compute_bar(theme, last, bar, right, under).get_bottom()[1] + 0.35)
    key_y = last_y - below
    key.move_to([BAR_LEFT_X, key_y, 0], aligned_edge=LEFT)
    if first_line is not key:  # its first line where the one line would be, the others below it
        key.shift(UP * (key_y - first_line.get_center()[1]))


class _FollowUps:
    """What the voice says of rows already drawn (and of the key), each done once, as it is said:
    a row again (then its name), its pieces in turn, its compute, its verdict."""

    def __init__(self, ctx: ShotContext, rows: list[tuple[str, Numbers]], drawn: VGroup, key: VGroup) -> None:
        self.ctx, self.rows, self.drawn, self.key = ctx, rows, drawn, key
        self.done: set[str] = set()
        # one scale of seconds for the rows whose compute the voice draws
        timed = [numbers for i, (_, numbers) in enumerate(rows, start=1) if ctx.has_mark(f"row{i}_compute")]
        self.seconds_unit = time_scale(ctx.theme, timed, BAR_LEFT_X, ctx.regions.stage.right) if timed else None

    def said_before(self, before: float) -> None:
        """What the voice says of rows already drawn (and of the key) before `before` seconds
        into the shot, each as it is said, in the order it is said."""
        ctx, due = self.ctx, []
        for mark in ("key", *[f"row{i}_{s}" for i in range(1, len(self.drawn)) for s in FOLLOW_UPS]):
            if ctx.has_mark(mark) and mark not in self.done and ctx.mark_seconds(mark) <= before:
                due.append((ctx.mark_seconds(mark), mark))
        for _, mark in sorted(due):
            self.done.add(mark)
            ctx.until(mark)
            if mark == "key":  # the pieces' names, as the voice names the collectives
                ctx.highlight(self.key, across=True)
                continue
            index, said = mark[3:].split("_", 1)
            self._follow_up(mark, said, int(index))

    def _follow_up(self, mark: str, said: str, index: int) -> None:
        ctx, theme = self.ctx, self.ctx.theme
        row, numbers = self.drawn[index], self.rows[index - 1][1]
        if said == "again":
            ctx.highlight(row, across=True)
            following = ctx.next_mark(mark)
            end = ctx.mark_seconds(following) if following else ctx.said_seconds()
            if end - ctx.mark_seconds(mark) > LONG_AGAIN_SECONDS:  # a long sentence about the row: then its name
                ctx.until_second((ctx.mark_seconds(mark) + end) / 2)
                ctx.highlight(row[0], across=True)
        elif said == "pieces":  # each piece pointed at as the voice names it, to its next mark
            ctx.point_in_turn(row[1], mark, row, scale=1.3)
        elif said == "compute":  # the row's time on the link and its compute, on an axis of seconds apart
            compute = compute_bar(theme, numbers, row[1], ctx.regions.stage.right, row[2][-1], self.seconds_unit)
            ctx.scene.play(*[GrowFromEdge(b, LEFT) for b in compute[0]], appear(compute[1]), run_time=0.8)
            row.add(compute)
            ctx.highlight(row, across=True)
        elif said == "verdict":  # the traffic against the compute, then the row, as the verdict is said
            ctx.point_at(*row[1:], scale=1.05)
            ctx.spread(mark, ctx.next_mark(mark), 1, 2)
            ctx.highlight(row, across=True)


def _traffic_row(
    ctx: ShotContext, name: str | Phrase, numbers: Numbers, y: float, width: float, value: VGroup
) -> tuple[Mobject, VGroup]:
    """A row at height `y`: its name at the side, its bar `width` long cut into its collectives,
    and its figures beside the bar (with its groups' line under it where it has several)."""
    theme, side = ctx.theme, ctx.regions.side
    room = BAR_LEFT_X - side.left - 0.2
    title: Mobject = label(theme, name, theme.caption_size, theme.text)
    if title.width > room:
        title.scale_to_fit_width(room)
    if text_px(title) < MIN_TEXT_PX - 0.05:  # two lines where one would shrink past the floor (405B: 4,096 copies)
        words = name if isinstance(name, Phrase) else plain(name)
        title = wrapped(theme, words, theme.small_size, room, theme.text, left_aligned=True)
        title.scale_to_fit_width(min(title.width, room))
    title.move_to([side.left, y, 0], aligned_edge=LEFT)
    bar = segmented_bar(theme, numbers, width)
    bar.move_to([BAR_LEFT_X, y, 0], aligned_edge=LEFT)
    value.next_to(bar, RIGHT, buff=VALUE_GAP)
    under = groups_under(theme, numbers, bar)
    if len(under):  # the poles before the line: the line stays the figures' last (compute_bar goes under it)
        value.add(under_bar(theme, under, bar))
    value.add(under)
    return title, bar


def play_traffic_compare(ctx: ShotContext, shot: Shot) -> None:
    """One row per configuration: its label, a bar as long as its traffic (cut into its
    collectives), bytes and seconds."""
    theme = ctx.theme
    rows = shot.options["rows"]
    right = ctx.regions.stage.right
    values = [traffic_value(theme, numbers) for _, numbers in rows]
    unit = bytes_scale(rows, values, right)
    gap = ROW_GAPS.get(len(rows), ROW_GAP)
    top_y = gap * (len(rows) - 1) / 2 + 0.35
    heading = label(
        theme, "each card, per optimizer step: bytes sent · time on the link", theme.small_size, theme.muted
    )
    heading.move_to([BAR_LEFT_X, top_y + 0.75, 0], aligned_edge=LEFT)
    # the key to the bars' pieces under the last row, from the start: each piece a collective
    drawn_pieces = [piece for _, numbers in rows for piece in group_pieces(numbers)]
    names = [name for _, name, _ in drawn_pieces]
    key, first_line = pieces_key(theme, names, width=right - BAR_LEFT_X)
    _place_key(ctx, rows, unit, key, first_line, top_y, gap)
    drawn = VGroup(heading)
    follow_ups = _FollowUps(ctx, rows, drawn, key)
    for i, (name, numbers) in enumerate(rows):
        value = values[i]
        title, bar = _traffic_row(ctx, name, numbers, top_y - i * gap, row_width(numbers, unit), value)
        entering = [appear(title, shift=RIGHT * SLIDE_UNITS), GrowFromEdge(bar, LEFT)]
        if i == 0:  # the first row's name and bar come in with the heading and the key as the last shot's
            # pieces go, from the shot's first moment: the stage never stands almost empty while the
            # voice opens on the traffic (pp at 104 s, issue 58); its figures come as it is said
            ctx.clear_stats()  # (first: the heading comes in where they stood)
            ctx.clear_stage((), appear(heading), appear(key), *entering, run_time=0.9)
            ctx.open_shot(shot.caption, clear=False)
            follow_ups.said_before(ctx.mark_seconds("row1", share=0.0))
        else:
            follow_ups.said_before(ctx.mark_seconds(f"row{i + 1}", share=i / len(rows)))
            ctx.until(f"row{i + 1}", share=i / len(rows))
            ctx.scene.play(*entering, run_time=0.9)
        ctx.until(f"row{i + 1}", share=i / len(rows))
        if i == 0:  # drawn before it is said: its bar pointed at as the voice names it
            ctx.point_at(bar, scale=1.1)
        ctx.reveal(value, run_time=0.6)
        ctx.highlight(VGroup(title, bar, value), across=True)
        drawn.add(VGroup(title, bar, value))
    follow_ups.said_before(float("inf"))
    ctx.leave(rows=drawn, key=key)


VALUE_GAP = 0.15  # between a bar and its figures
LONG_AGAIN_SECONDS = 2.6  # a row said again for longer than this is marked twice: the row, then its name


def traffic_value(theme: Theme, numbers: Numbers) -> VGroup:
    """A row's figures: the bytes and the seconds on the link, and under them how much of
    those seconds the step waits for (the rest hides under compute, as `inputs.overlap` says)."""
    total = label(theme, numbers("{comm.total:bytes} · {comm.seconds:time}"), theme.label_size, theme.muted)
    # where the step waits for all of it, the seconds are not said twice (pp's "21.5 ms · 21.5 ms of it exposed")
    every = float(numbers.get("comm.exposed_seconds")) >= float(numbers.get("comm.seconds"))
    said = plain("all of it exposed") if every else numbers("{comm.exposed_seconds:time} of it exposed")
    exposed = label(theme, said, theme.small_size, theme.muted)
    return VGroup(total, exposed).arrange(DOWN, aligned_edge=LEFT, buff=0.06)


def bytes_scale(rows: list[tuple[object, Numbers]], values: list[VGroup], right_x: float) -> float:
    """Units of length a byte, one scale for every row: the most bytes fill BAR_MAX_WIDTH,
    unless some row's bar and its figures would then run past `right_x`."""
    unit = BAR_MAX_WIDTH / (max(float(numbers.get("comm.total")) for _, numbers in rows) or 1.0)
    for (_, numbers), value in zip(rows, values, strict=True):
        sent = float(numbers.get("comm.total"))
        if sent > 0:
            unit = min(unit, (right_x - BAR_LEFT_X - VALUE_GAP - value.width) / sent)
    return unit


def row_width(numbers: Numbers, unit: float) -> float:
    return max(unit * float(numbers.get("comm.total")), 0.03)


GROUP_LINE_ROOM = 0.28  # under a bar: its groups' bytes


GROUP_WORD_GAP = 0.25  # between one group's bytes and the next, under a bar
LINE_GAP = 0.08  # between a bar and its groups' bytes
POLE_GAP = 0.06  # between a group's pole and its bytes


def groups_under(theme: Theme, numbers: Numbers, bar: VGroup) -> VGroup:
    """The group line under a row's bar where its traffic is several groups' (none where it is
    one group's: "PP 1.07 GB" under pp's pipeline row said its "1.07 GB" again, the group already
    in the row's name, one line of a row's three or four, issue 58; and where every row is one
    group's, fsdp's, "DP 36.8 GB" under "FSDP" read as data parallelism's bytes beside the "Data
    parallel" row's own)."""
    groups = [g for g in GROUPS if float(numbers.get(f"comm.{g}")) > 0]
    return group_line(theme, numbers, bar) if len(groups) > 1 else VGroup()


def group_line(theme: Theme, numbers: Numbers, bar: VGroup | None = None) -> VGroup:
    """Under a bar, each group's bytes ("TP 1.22 TB · PP 2.15 GB · DP 7.95 GB"), which tell the
    groups apart (their pieces wear one ink):
    a group whose piece is a sliver beside another's is still said. Given the `bar`, in the bar's
    order, each starting under its group's first piece where the words before it leave room (ep's
    "EP 60.1 GB" stood under data parallelism's small pieces, its long bar unnamed: a lecturer's
    review), a pole's room before it (`under_bar` puts the line under the bar, and the poles);
    without it, in GROUPS' order, in a row."""
    in_bar = list(dict.fromkeys(piece.group for piece in bar)) if bar is not None else []
    order = [*in_bar, *[g for g in GROUPS if g not in in_bar]]
    words, starts = VGroup(), []
    for group in order:
        if float(numbers.get(f"comm.{group}")) > 0:
            phrase = group.upper() + " " + numbers(f"{{comm.{group}:bytes}}")
            word = label(theme, phrase, theme.small_size, theme.muted)
            word.group = group
            words.add(word)
            first = next((piece for piece in bar if piece.group == group), None) if bar is not None else None
            starts.append(None if first is None else first.get_left()[0] - bar.get_left()[0])
    if not len(words) or bar is None:
        return words.arrange(RIGHT, buff=GROUP_WORD_GAP) if len(words) else words
    x = 0.0
    for word, start in zip(words, starts, strict=True):
        x = max(x, start if start is not None else x)
        word.pole_x = x  # from the bar's left
        word.move_to([x + POLE_GAP, 0, 0], aligned_edge=LEFT)
        x += POLE_GAP + word.width + GROUP_WORD_GAP
    return words


def under_bar(theme: Theme, line: VGroup, bar: VGroup) -> VGroup:
    """`line` (group_line, given the bar) put under the `bar`, and the poles beside its words:
    from each group's own pieces down beside its bytes. The groups share one ink, so "DP 7.95 GB"
    at a bar's start, under tensor parallelism's long piece, named it, not data parallelism's
    sliver there (the colour had said which); a pole says which pieces the words name."""
    if not len(line):
        return VGroup()
    left = bar.get_left()[0]
    line.next_to(bar, DOWN, buff=LINE_GAP)
    line.shift(RIGHT * (left + line[0].pole_x + POLE_GAP - line[0].get_left()[0]))
    poles = VGroup()
    for word in line:
        own = [piece for piece in bar if piece.group == word.group]
        if not own:
            continue
        x = left + word.pole_x
        top = min(max(x, own[0].get_left()[0]), own[-1].get_right()[0])  # inside its pieces
        pole = Line([top, bar.get_bottom()[1], 0], [x, word.get_center()[1], 0], stroke_color=theme.traffic_ink,
                    stroke_width=1.5)  # fmt: skip
        pole.group = word.group
        poles.add(pole)
    return poles
