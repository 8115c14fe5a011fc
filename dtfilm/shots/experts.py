"""Shot kinds of the expert-parallel chapter: tokens routed to experts on other cards and back
(the all-to-all), and the routing imbalance that makes every card wait for the busiest expert.

Written on the shot API (docs/adding-a-chapter.md): the visuals take plain values and Phrases,
every figure comes from the shot's numbers, and each step moves as the voice names it.
"""

from __future__ import annotations

import numpy as np
from manim import LEFT, RIGHT, UP, GrowFromEdge, LaggedStart, VGroup

from dtfilm.numbers import Numbers
from dtfilm.scene import ShotContext
from dtfilm.shots.common import group_gpu, phase_column
from dtfilm.storyboard import Shot
from dtfilm.visuals.experts import MOST_COPIES, Copy, ExpertCards, drawn_cards, route_copies
from dtfilm.visuals.fade import appear, vanish

OUT_LIFT, BACK_LIFT = -0.9, 0.9  # arcs: over the cards going out, under them coming back
MOST_TRAVEL = 7.0  # a journey's longest: the copies keep moving while a sentence is said
BUSIEST = 2  # the drawn card whose expert the router favours (any but the first reads as chosen)


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
    cards = ExpertCards(
        ctx.theme,
        names,
        [ctx.theme.card_color(i) for i in range(len(ranks))],
        tokens,
        experts,
        width=min(room.width - 0.2, 1.9 * len(ranks)),
        height=min(room.height - 0.45, 3.6),
        gap=gap,
    )
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
        col, row = divmod(n, 3)
        centre = cards.expert_point(copy.to_card, copy.to_expert)
        points.append(centre + RIGHT * (cards.copy_size * 1.15 * (col - 1)) + UP * (cards.copy_size * 1.15 * (1 - row)))
    return points


def _travel(
    ctx: ShotContext, cards: ExpertCards, pieces: VGroup, starts: list, ends: list, lift: float, seconds: float
) -> None:
    journeys = [cards.journey(p, s, e, lift) for p, s, e in zip(pieces, starts, ends, strict=True)]
    ctx.scene.play(LaggedStart(*journeys, lag_ratio=min(0.5, 4.0 / max(len(journeys), 1))), run_time=seconds)


def _left(ctx: ShotContext) -> float:
    """Seconds until the voice finishes the shot's narration."""
    return ctx.said_seconds() - (ctx.scene.time - ctx.shot_start)


def _received(copies: list[Copy], cards: int) -> list[int]:
    return [sum(1 for c in copies if c.to_card == card) for card in range(cards)]


def play_expert_all_to_all(ctx: ShotContext, shot: Shot) -> None:
    """The expert-parallel group's cards, each with its tokens and its share of the experts. The
    router picks k experts a token; an all-to-all dispatches every copy to its expert's card, the
    experts work, and a second all-to-all combines the results home; backward, both again."""
    theme, numbers = ctx.theme, shot.numbers
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
    ctx.scene.play(
        vanish(column), appear(route), LaggedStart(*[appear(p) for p in pieces], lag_ratio=0.02), run_time=1.0
    )
    ends = _landing(cards, copies)
    starts = [cards.token_point(c.card, c.token) for c in copies]
    first = [i for i, c in enumerate(copies) if c.card == 0 and c.token == 0]
    # one token's copies go first, slowly, to the experts its router chose
    demo = VGroup(*[pieces[i] for i in first])
    _travel(ctx, cards, demo, [starts[i] for i in first], [ends[i] for i in first], OUT_LIFT, 1.4)
    ctx.point_at(*[cards.experts[copies[i].to_card] for i in first], run_time=0.8)

    ctx.until("dispatch")
    dispatch = phase_column(
        ctx,
        "Dispatch",
        "an all-to-all: every card sends to every other",
        numbers("{comm.collectives.ep_all_to_all.bytes_each:bytes} a card"),
        wrap=True,
    )
    rest = [i for i in range(len(copies)) if i not in first]
    ctx.scene.play(vanish(route), appear(dispatch), run_time=0.5)
    seconds = min(max(ctx.seconds_until("compute") - 0.2, 1.5), MOST_TRAVEL)
    _travel(
        ctx,
        cards,
        VGroup(*[pieces[i] for i in rest]),
        [starts[i] for i in rest],
        [ends[i] for i in rest],
        OUT_LIFT,
        seconds,
    )

    ctx.until("compute")
    work = phase_column(ctx, "Experts work", "each on the tokens it received", wrap=True)
    received = _received(copies, len(ranks))
    most = max(received) or 1
    bars = [cards.work_bar(i, r / most, theme.card_color(i)) for i, r in enumerate(received)]
    ctx.scene.play(vanish(dispatch), appear(work), *[GrowFromEdge(b, LEFT) for b in bars], run_time=1.4)

    ctx.until("combine")
    combine = phase_column(ctx, "Combine", "a second all-to-all brings each result home", wrap=True)
    ctx.scene.play(vanish(work), appear(combine), run_time=0.5)
    seconds = min(max(ctx.seconds_until("backward") - 0.3, 1.5), MOST_TRAVEL)
    _travel(ctx, cards, pieces, ends, starts, BACK_LIFT, seconds)

    ctx.until("backward")
    backward = phase_column(
        ctx,
        "Backward",
        "the gradients travel out and back again",
        numbers("{comm.collectives.ep_all_to_all.count:int} all-to-alls a step"),
        wrap=True,
    )
    ctx.scene.play(vanish(combine), appear(backward), *[b.animate.set_opacity(0.35) for b in bars], run_time=0.6)
    ctx.point_at(ctx.stats.stats[1])
    # the gradients' two journeys over what is left of the narration
    seconds = min(max((_left(ctx) - 0.3) / 2, 1.2), MOST_TRAVEL)
    _travel(ctx, cards, pieces, starts, ends, OUT_LIFT, seconds)
    _travel(ctx, cards, pieces, ends, starts, BACK_LIFT, seconds)
    ctx.leave(cards=cards, pieces=pieces, bars=VGroup(*bars), column=backward)


def play_expert_imbalance(ctx: ShotContext, shot: Shot) -> None:
    """The same cards under skewed routing (the sweep's last routing imbalance): the busiest
    expert's card receives that many times the mean, works longest, and every other card waits
    for it at the combine (the wait in red); the step's compute counts from the sweep's first
    value to its last."""
    theme, steps = ctx.theme, shot.steps
    numbers = steps[-1]
    ctx.open_shot(shot.caption)
    values = [n("{compute.compute_seconds:time}") for n in steps]
    ctx.set_stats(
        [
            ("Busiest expert", numbers("{plan.routing_imbalance:x} the mean"), False),
            ("Compute a step", values[0], True),
        ],
        reserve=[(), tuple(values)],
    )
    cards, ranks, tokens = _expert_cards(ctx, numbers)
    busiest = min(BUSIEST, len(ranks) - 1)
    copies = _copies(numbers, len(ranks), tokens, busiest)
    column = phase_column(ctx, "Skewed routing", "the router favours some experts", wrap=True)
    pieces = VGroup(*[cards.copy_piece(c) for c in copies])
    ctx.scene.play(
        appear(cards), appear(column), LaggedStart(*[appear(p) for p in pieces], lag_ratio=0.02), run_time=1.0
    )
    starts = [cards.token_point(c.card, c.token) for c in copies]
    ends = _landing(cards, copies)

    ctx.until("dispatch")
    seconds = min(max(ctx.seconds_until("busiest") - 0.2, 1.5), MOST_TRAVEL)
    _travel(ctx, cards, pieces, starts, ends, OUT_LIFT, seconds)

    ctx.until("busiest")
    received = _received(copies, len(ranks))
    most = max(received) or 1
    bars = [cards.work_bar(i, r / most, theme.card_color(i)) for i, r in enumerate(received)]
    busy = phase_column(
        ctx, "The busiest expert", numbers("{plan.routing_imbalance:x} the mean share of tokens"), wrap=True
    )
    ctx.scene.play(vanish(column), appear(busy), *[GrowFromEdge(b, LEFT) for b in bars], run_time=1.6)
    ctx.point_at(cards.experts[busiest], bars[busiest])

    ctx.until("wait")
    waits = [
        cards.work_bar(i, 1.0, theme.bad).set_opacity(0.55)
        .stretch_to_fit_width(max(cards.bars[i].width * (1 - r / most), 0.02))
        .next_to(bars[i], direction=[1, 0, 0], buff=0)
        for i, r in enumerate(received)
        if r < most
    ]  # fmt: skip
    waiting = phase_column(ctx, "Every card waits", "the combine needs every expert's results", wrap=True)
    ctx.scene.play(vanish(busy), appear(waiting), *[GrowFromEdge(w, LEFT) for w in waits], run_time=1.6)

    ctx.until("step")
    ctx.scene.play(*ctx.count_stats([numbers("{plan.routing_imbalance:x} the mean"), values[-1]], 1.2), run_time=1.2)
    ctx.point_at(ctx.stats.stats[1])
    seconds = min(max(_left(ctx) - 0.3, 1.2), MOST_TRAVEL)
    _travel(ctx, cards, pieces, ends, starts, BACK_LIFT, seconds)
    ctx.leave(cards=cards, pieces=pieces, bars=VGroup(*bars, *waits), column=waiting)
