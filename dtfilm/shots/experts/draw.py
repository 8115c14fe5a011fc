"""Shot kinds of the expert-parallel chapter: tokens routed to experts on other cards and back
(the all-to-all), and the routing imbalance that makes every card wait for the busiest expert.

Written on the shot API (docs/adding-a-chapter.md): the visuals take plain values and Phrases,
every figure comes from the shot's numbers, and each step moves as the voice names it.
"""

from __future__ import annotations

import numpy as np
from manim import LEFT, RIGHT, UP, GrowFromEdge, LaggedStart, Mobject, Rectangle, VGroup

from dtfilm.numbers import Numbers
from dtfilm.scene import ShotContext
from dtfilm.shots.common.draw import group_gpu, phase_column
from dtfilm.storyboard import Shot
from dtfilm.visuals.experts import MOST_COPIES, Copy, ExpertCards, drawn_cards, route_copies
from dtfilm.visuals.fade import appear, swap, vanish
from dtfilm.visuals.theme import Theme

OUT_LIFT, BACK_LIFT = -0.9, 0.9  # arcs: over the cards going out, under them coming back
BAR_SLICE = 0.26  # a worked copy's height in the work bar
MOVING = 10  # copies in flight at once (fewer, and at 480p the frame barely changes)
MOST_TRAVEL = 9.0  # a journey's longest: the copies keep moving while a sentence is said
BUSIEST = 2  # the drawn card whose expert the router favours (any but the first reads as chosen)
Points = list[np.ndarray]  # a point a copy


def _expert_cards(ctx: ShotContext, numbers: Numbers) -> tuple[ExpertCards, list[int], int]:
    """The group's cards placed on the stage right of the side column, the ranks drawn, and the
    tokens drawn a card (k copies each: MOST_COPIES copies a card at most)."""
    ep = int(numbers.get("plan.ep"))
    k = int(numbers.get("model.top_k"))
    experts = max(1, int(numbers.get("model.experts")) // ep)
    ranks = drawn_cards(ep)
    tokens = max(1, MOST_COPIES // k)
    names = [group_gpu(numbers, "ep", rank) for rank in ranks]
    gap = numbers("… {plan.ep:int} in all") if len(ranks) < ep else None
    area = ctx.regions.stage_right_of_side
    room = area.part(top=area.top - 0.5, bottom=area.bottom + (0.55 if gap is not None else 0.15))
    colours = [ctx.theme.card_color(i) for i in range(len(ranks))]
    height = min(room.height - 0.45, 3.6)

    def drawn(width: float) -> ExpertCards:
        return ExpertCards(ctx.theme, names, colours, tokens, experts, width=width, height=height, gap=gap)

    width = min(room.width - 0.2, 1.9 * len(ranks))
    cards = drawn(width)
    if cards.width > room.width:  # the experts' word, left of a card its experts fill, widens the group
        cards = drawn(width - (cards.width - room.width) - 0.05)
    room.place(cards)
    return cards, ranks, tokens


def _copies(numbers: Numbers, cards: int, tokens: int, busiest: int = BUSIEST) -> list[Copy]:
    k = min(int(numbers.get("model.top_k")), cards)
    experts = max(1, int(numbers.get("model.experts")) // int(numbers.get("plan.ep")))
    imbalance = float(numbers.get("plan.routing_imbalance"))
    return route_copies(cards, tokens, k, min(experts, 4), imbalance, busiest=min(busiest, cards - 1))


def _landing(cards: ExpertCards, copies: list[Copy]) -> list[np.ndarray]:
    """Where each copy waits at its expert: piled on the expert's box, three by three, so the
    busiest expert's pile spills past its box."""
    seen: dict[tuple[int, int], int] = {}
    points = []
    for copy in copies:
        key = (copy.to_card, copy.to_expert)
        n = seen.get(key, 0)
        seen[key] = n + 1
        row, col = divmod(n, 3)
        centre = cards.expert_point(copy.to_card, copy.to_expert)
        step = min(cards.copy_size * 1.15, cards.expert_size / 2)
        points.append(centre + RIGHT * (step * (col - 1)) + UP * (step * (1 - row)))
    return points


def _travel(
    ctx: ShotContext, cards: ExpertCards, pieces: VGroup, starts: list, ends: list, lift: float, seconds: float
) -> None:
    """The pieces' journeys over `seconds`, staggered so that about MOVING travel at once: a
    journey is quick enough to be seen, and the whole keeps moving until the time is up."""
    journeys = [cards.journey(p, s, e, lift) for p, s, e in zip(pieces, starts, ends, strict=True)]
    n = len(journeys)
    if n == 0:  # every copy went before (one token a card under top-8: the route showed them all)
        ctx.scene.wait(seconds)
        return
    lag = max(0.0, (n / MOVING - 1) / (n - 1)) if n > 1 else 0.0
    ctx.scene.play(LaggedStart(*journeys, lag_ratio=lag), run_time=seconds)


def _serve(
    ctx: ShotContext, cards: ExpertCards, pieces: VGroup, copies: list[Copy], seconds: float
) -> list[np.ndarray]:
    """The experts work: each card's experts take the copies piled on them one a tick, every
    card at the same pace, each copy moving into the card's work bar as a slice of it. The
    busiest card's bar fills last; the others stand idle before. Where each copy ends."""
    received = _received(copies, len(cards.bars))
    most = max(received) or 1
    queues: list[list[int]] = [
        [i for i, c in enumerate(copies) if c.to_card == card] for card in range(len(cards.bars))
    ]
    width = cards.slot_width(most)
    ends: list[np.ndarray] = [np.zeros(3)] * len(copies)
    for tick in range(most):
        moves = []
        for card, queue in enumerate(queues):
            if tick < len(queue):
                i = queue[tick]
                ends[i] = cards.slot_point(card, tick, most)
                piece = pieces[i]
                moves.append(
                    piece.animate.move_to(ends[i]).stretch_to_fit_width(width * 0.85).stretch_to_fit_height(BAR_SLICE)
                )
        ctx.scene.play(*moves, run_time=seconds / most)
    return ends


def _home(cards: ExpertCards, pieces: VGroup) -> list:
    """The copies back to their own size, for the journey home."""
    size = cards.copy_size
    return [p.animate.stretch_to_fit_width(size).stretch_to_fit_height(size) for p in pieces]


def _left(ctx: ShotContext) -> float:
    """Seconds until the voice finishes the shot's narration."""
    return ctx.said_seconds() - (ctx.scene.time - ctx.shot_start)


def _received(copies: list[Copy], cards: int) -> list[int]:
    return [sum(1 for c in copies if c.to_card == card) for card in range(cards)]


def play_expert_all_to_all(ctx: ShotContext, shot: Shot) -> None:
    """The expert-parallel group's cards, each with its tokens and its share of the experts. The
    router picks k experts a token; an all-to-all dispatches every copy to its expert's card, the
    experts work, and a second all-to-all combines the results home; backward, both again."""
    numbers = shot.numbers
    ctx.open_shot(shot.caption)
    ctx.set_stats(
        [
            ("All-to-all", numbers("{comm.collectives.ep_all_to_all.bytes_each:bytes}"), False),
            ("A step", numbers("{comm.seconds_by_group.ep:time}"), True),
        ]
    )
    cards, ranks, tokens = _expert_cards(ctx, numbers)
    copies = _copies(numbers, len(ranks), tokens)
    column = phase_column(
        ctx, "Experts spread", numbers("each card holds its share of {model.experts:int} experts"), wrap=True
    )
    ctx.scene.play(appear(cards), appear(column), run_time=1.0)

    ctx.until("route")
    route = phase_column(ctx, "Route", numbers("a router picks {model.top_k:int} experts for every token"), wrap=True)
    pieces = VGroup(*[cards.copy_piece(c) for c in copies])
    ctx.scene.play(swap(column, route), LaggedStart(*[appear(p) for p in pieces], lag_ratio=0.02), run_time=1.0)
    ends = _landing(cards, copies)
    starts = [cards.token_point(c.card, c.token) for c in copies]
    first = _route_first_tokens(ctx, cards, pieces, copies, starts, ends, len(ranks))

    ctx.until("dispatch")
    dispatch = phase_column(
        ctx,
        "Dispatch",
        "an all-to-all: every card sends to every other",
        numbers("{comm.collectives.ep_all_to_all.bytes_each:bytes} a card"),
        wrap=True,
    )
    rest = [i for i in range(len(copies)) if i not in first]
    ctx.scene.play(swap(route, dispatch), run_time=0.5)
    seconds = min(max(ctx.seconds_until("compute") - 0.2, 1.5), MOST_TRAVEL)
    rest_pieces = VGroup(*[pieces[i] for i in rest])
    _travel(ctx, cards, rest_pieces, [starts[i] for i in rest], [ends[i] for i in rest], OUT_LIFT, seconds)

    ctx.until("compute")
    work = phase_column(ctx, "Experts work", "each on the tokens it received, at the same pace", wrap=True)
    ctx.scene.play(swap(dispatch, work), run_time=0.4)
    served = _serve(ctx, cards, pieces, copies, min(max(ctx.seconds_until("combine") - 0.2, 1.2), MOST_TRAVEL))

    ctx.until("combine")
    combine = phase_column(ctx, "Combine", "a second all-to-all brings each result home", wrap=True)
    ctx.scene.play(swap(work, combine), *_home(cards, pieces), run_time=0.5)
    seconds = min(max(ctx.seconds_until("backward") - 0.3, 1.5), MOST_TRAVEL)
    _travel(ctx, cards, pieces, served, starts, BACK_LIFT, seconds)

    backward = _play_backward(ctx, numbers, cards, pieces, combine, (starts, ends))
    ctx.leave(cards=cards, pieces=pieces, column=backward)


def _route_first_tokens(
    ctx: ShotContext, cards: ExpertCards, pieces: VGroup, copies: list[Copy], starts: Points, ends: Points, n: int
) -> list[int]:
    """Each card's first token in turn: its copies go to the experts its router chose, which are
    pointed at, until the voice says `dispatch`. The copies that moved (by index)."""
    first = [i for i, c in enumerate(copies) if c.token == 0]
    per_card = min(max((ctx.seconds_until("dispatch") - 0.3) / n, 0.8), 1.6)
    for card in range(n):
        mine = [i for i in first if copies[i].card == card]
        path = [starts[i] for i in mine], [ends[i] for i in mine]
        _travel(ctx, cards, VGroup(*[pieces[i] for i in mine]), *path, OUT_LIFT, 0.45 * per_card)
        chosen = {copies[i].to_card for i in mine}
        ctx.point_at(*[cards.experts[c] for c in sorted(chosen)], run_time=0.55 * per_card)
    return first


def _play_backward(
    ctx: ShotContext,
    numbers: Numbers,
    cards: ExpertCards,
    pieces: VGroup,
    combine: Mobject,
    journey: tuple[Points, Points],
) -> Mobject:
    """At `backward`, the step's all-to-alls counted, and the gradients' two journeys (out and
    back) over what is left of the narration. The column it leaves."""
    starts, ends = journey
    ctx.until("backward")
    backward = phase_column(
        ctx,
        "Backward",
        "the gradients travel out and back again",
        numbers("{comm.collectives.ep_all_to_all.count:int} all-to-alls a step"),
        wrap=True,
    )
    ctx.scene.play(swap(combine, backward), run_time=0.6)
    ctx.point_at(ctx.stats.stats[1])
    seconds = min(max((_left(ctx) - 0.3) / 2, 1.2), MOST_TRAVEL)
    _travel(ctx, cards, pieces, starts, ends, OUT_LIFT, seconds)
    _travel(ctx, cards, pieces, ends, starts, BACK_LIFT, seconds)
    return backward


def play_expert_imbalance(ctx: ShotContext, shot: Shot) -> None:
    """The same cards under skewed routing (the sweep's last routing imbalance): the busiest
    expert's card receives that many times the mean, works longest, and every other card waits
    for it at the combine (the wait in red); the step's compute counts from the sweep's first
    value to its last."""
    theme, steps = ctx.theme, shot.steps
    numbers = steps[-1]
    ctx.open_shot(shot.caption)
    values = [n("{compute.compute_seconds:time}") for n in steps]
    cards, ranks, tokens = _expert_cards(ctx, numbers)
    busiest = min(BUSIEST, len(ranks) - 1)
    copies = _copies(numbers, len(ranks), tokens, busiest)
    column = phase_column(ctx, "Skewed routing", "the router favours some experts", wrap=True)
    pieces = VGroup(*[cards.copy_piece(c) for c in copies])
    ctx.scene.play(
        appear(cards), appear(column), LaggedStart(*[appear(p) for p in pieces], lag_ratio=0.02), run_time=1.0
    )
    # the stats swap once the cards stand (before them, the stage stood empty while the header changed)
    ctx.set_stats(
        [
            ("Busiest expert", numbers("{plan.routing_imbalance:x} the mean"), False),
            ("Compute a step", values[0], True),
        ],
        reserve=[(), tuple(values)],
    )
    starts = [cards.token_point(c.card, c.token) for c in copies]
    ends = _landing(cards, copies)

    ctx.until("dispatch")
    seconds = min(max(ctx.seconds_until("busiest") - 0.2, 1.5), MOST_TRAVEL)
    _travel(ctx, cards, pieces, starts, ends, OUT_LIFT, seconds)

    ctx.until("busiest")
    received = _received(copies, len(ranks))
    most = max(received) or 1
    busy = phase_column(
        ctx, "The busiest expert", numbers("{plan.routing_imbalance:x} the mean share of tokens"), wrap=True
    )
    ctx.scene.play(swap(column, busy), run_time=0.4)
    served = _serve(ctx, cards, pieces, copies, min(max(ctx.seconds_until("wait") - 1.0, 1.5), MOST_TRAVEL))
    ctx.point_at(cards.experts[busiest], cards.bars[busiest])

    ctx.until("wait")
    waits = _waits(theme, cards, received, most)
    waiting = phase_column(ctx, "Every card waits", "the combine needs every expert's results", wrap=True)
    ctx.scene.play(swap(busy, waiting), *[GrowFromEdge(w, LEFT) for w in waits], run_time=1.6)
    idle = [cards.experts[i] for i, r in enumerate(received) if r < most]
    if idle:  # the idle cards' experts, pointed at while the voice says they wait
        ctx.point_at(*idle, run_time=min(max(ctx.seconds_until("step") - 0.2, 0.8), 2.0))

    ctx.until("step")
    ctx.scene.play(*ctx.count_stats([numbers("{plan.routing_imbalance:x} the mean"), values[-1]], 1.2), run_time=1.2)
    ctx.point_at(ctx.stats.stats[1])
    ctx.scene.play(*[vanish(w) for w in waits], *_home(cards, pieces), run_time=0.5)
    seconds = min(max(_left(ctx) - 0.3, 1.2), MOST_TRAVEL)
    _travel(ctx, cards, pieces, served, starts, BACK_LIFT, seconds)
    ctx.leave(cards=cards, pieces=pieces, column=waiting)


def _waits(theme: Theme, cards: ExpertCards, received: list[int], most: int) -> list[Rectangle]:
    """Each less busy card's wait, in red: from its last slice to the end of its bar, the time it
    stands idle."""
    waits = []
    for i, r in enumerate(received):
        if r < most:
            track = cards.bars[i]
            wait = Rectangle(width=track.width * (1 - r / most), height=track.height, stroke_width=0)
            wait.set_fill(theme.bad, opacity=0.6).move_to(track.get_right(), aligned_edge=RIGHT)
            waits.append(wait)
    return waits
