"""The decision_tree kind: seed 001's tree drawn as a tree, each answer a claim on the cost model,
the path for the shot's numbers lit, and the planner's pick beside it, with where it departs."""

from __future__ import annotations

from typing import Any

from manim import DOWN, LEFT, RIGHT, UP, Animation, Line, ReplacementTransform, Text, VGroup, VMobject

from dtfilm.numbers import Numbers
from dtfilm.phrases import Phrase, plain
from dtfilm.scene import ShotContext
from dtfilm.storyboard import Shot
from dtfilm.storyboard.tree import QUESTIONS, SPLITS, pick_splits
from dtfilm.visuals.fade import appear, vanish
from dtfilm.visuals.regions import regions
from dtfilm.visuals.text import label, left_column, wrapped
from dtfilm.visuals.theme import Theme

TREE_LEFT = -6.65  # the tree's left edge; the pick's column starts at PICK_LEFT
PICK_LEFT = 2.0
TREE_CENTRE = (TREE_LEFT + PICK_LEFT - 0.3) / 2
LEAF_WIDTH = 2.45
LEAF_SLIDE = 0.25  # a leaf's answer slides in this far: less than the gap to the leaf before it
# one card, sharded, bottleneck, leaves, 3D, and the experts' one line under it all (issue 60)
ROW_TOPS = (2.55, 1.55, 0.55, -0.05, -2.05, -2.5)
# the 3D node where the leaves are not reached, so no plan fills it in
UNREACHED_END = "3D: combine the splits the leaves call for"

# Each bottleneck question: its words, what a "yes" adds, and the figures it is weighed on.
LEAVES = {
    "tp": (
        "Single layer too big?",
        "tensor parallel",
        "a layer: {memory.layer_weights:GB} of weights, {memory.activations_per_layer:GB} of activations",
    ),
    "pp": (
        "Too many layers?",
        "pipeline",
        "{state.total:GB} of state; {?count: cluster.cards_per_node > 1 => a node's {cluster.cards_per_node:int} cards"
        " hold {memory.capacity:GB} each | a node's {~one} card holds {memory.capacity:GB}}",
    ),
    "cp": (
        "Sequence too long?",
        "context parallel",
        "{memory.activations:GB} of activations beside {memory.static:GB} of sharded state",
    ),
}
# The mixture-of-experts question, asked of the model whatever the path (dtfilm.storyboard.tree):
# its words, what a "yes" adds, and the figures it is weighed on (every expert's parameters held,
# a token's k of them multiplied by).
EXPERTS = (
    "On any path: mixture of experts?",
    "expert parallel too",
    "{params:si} parameters, {params_active:si} active: {model.top_k:int} of {model.experts:int} experts a token",
)
# The first question, with what both questions are weighed on: one sequence, checkpointed.
ONE_CARD_QUESTION = "Fits on {~one} {memory.capacity:GB} card, {~one} sequence at a time, checkpointed?"
# What a card holds, part by part: the rest (memory.buffers: the recomputed layer's working set,
# the fp32 logits, the CUDA and NCCL reserve; dtfilm.cost.ledger) named by its two big parts where
# the reserve is a sliver of it (cp at 512K tokens: 141 GB, 1 GB of it the reserve), else as what
# it all is (3d's 70B: 2.6 GB, 1 GB of it the reserve). Each fits the tree's width on one line.
# Where "logits and recompute" would wrap the line (cp at 405B on 16,384 cards: 2,695 GB each),
# the same words with a comma; where that would too, the rest's bytes alone, as "other".
HELD = (
    "{memory.static:GB} state, {memory.activations:GB} activations, {memory.buffers:GB}"
    " {?bytes: memory.reserve < 0.1 * memory.buffers => logits and recompute | working memory}"
)
HELD_SHORTER = (
    HELD.replace("logits and recompute", "logits, recompute"),
    "{memory.static:GB} state, {memory.activations:GB} activations, {memory.buffers:GB} other",
)
GAP = 0.25  # between the experts' question, its figures and its answer on their one line


def _held(theme: Theme, numbers: Numbers, lead: str, width: float) -> Phrase:
    """What a card holds, part by part, in the first wording that keeps it on one line."""
    for held in (HELD, *HELD_SHORTER):
        phrase = numbers(lead + held)
        if label(theme, phrase, theme.least_size).width <= width:
            break
    return phrase


def _answer(numbers: Numbers, question: str, yes: str, no: str = "No") -> Phrase:
    """Yes or no as a claim on the configuration the question is weighed on."""
    _, condition = QUESTIONS[question]
    return numbers("{?bytes: " + condition + " => " + yes + " | " + no + "}")


def _node(
    theme: Theme, words: Phrase, figures: Phrase, answer: Phrase, lit: bool, width: float, reached: bool = True
) -> VGroup:
    """A question, the figures it is weighed on and its answer. A node off the path is set back
    in the dimmed colour (still 4.5:1: in the faint one, at 2.4:1, it could not be read at 480p)
    and without its figures: the voice weighs only the path's. A question the tree never reaches
    (it stopped above) is asked without an answer: a "Yes" there read as the tree's own answer
    while the voice said it had ended (a teacher's review, 3d)."""
    if not reached:
        return left_column(wrapped(theme, words, theme.small_size, width, theme.dimmed, left_aligned=True))
    if not lit:
        return left_column(
            wrapped(theme, words, theme.small_size, width, theme.dimmed, left_aligned=True),
            label(theme, answer, theme.small_size, theme.dimmed, weight="BOLD"),
            buff=0.06,
        )
    return left_column(
        wrapped(theme, words, theme.small_size, width, theme.text, left_aligned=True),
        wrapped(theme, figures, theme.least_size, width, theme.muted, left_aligned=True),
        label(theme, answer, theme.small_size, theme.accent, weight="BOLD"),
        buff=0.06,
    )


def _experts(theme: Theme, numbers: Numbers, lit: bool, width: float) -> VGroup:
    """The mixture-of-experts question, its figures and its answer on one line across the stage
    under the tree (the figures under the question where one line would pass `width`); a dense
    model's dimmed (4.5:1, as the other nodes off the path) and without figures."""
    words, adds, figures = EXPERTS
    question = label(theme, words, theme.small_size, theme.text if lit else theme.dimmed)
    answer = label(
        theme, _answer(numbers, "moe", "Yes: " + adds), theme.small_size, theme.accent if lit else theme.dimmed, "BOLD"
    )
    if not lit:
        return VGroup(question, answer).arrange(RIGHT, buff=GAP, aligned_edge=DOWN)
    said = label(theme, numbers(figures), theme.least_size, theme.muted)
    line = VGroup(question, said, answer).arrange(RIGHT, buff=GAP, aligned_edge=DOWN)
    if line.width <= width:
        return line
    return left_column(VGroup(question, answer).arrange(RIGHT, buff=GAP, aligned_edge=DOWN), said, buff=0.06)


def _shape(numbers: Numbers) -> Phrase:
    """The plan in the contract's order of degrees: dp x tp x pp x cp (cp only when split), then
    ep for a mixture of experts split over expert parallelism."""
    groups = [g for g in ("dp", "tp", "pp", "cp") if g != "cp" or numbers.get("plan.cp") > 1]
    groups += ["ep"] if numbers.get("plan.ep") > 1 else []
    shape = numbers(" × ".join(f"{g} {{plan.{g}}}" for g in groups))
    return shape + numbers(", ZeRO {plan.zero}") if numbers.get("plan.zero") else shape


def tree_nodes(theme: Theme, shot: Shot) -> tuple[list[VGroup], list[Line]]:
    """The tree's nodes (one card, sharded, the bottleneck, its three leaves, 3D, the mixture of
    experts' question) placed on the stage, and the lines between them, lit along the path the
    answers take."""
    options = shot.options
    answered, configs = options["tree_answers"], options["tree_configs"]
    one, sharded = configs["one_card"], configs["sharded"]
    width = PICK_LEFT - 0.3 - TREE_LEFT
    first = _node(
        theme,
        one(ONE_CARD_QUESTION),
        _held(theme, one, "{memory.total:GB}: ", width),
        _answer(one, "one_card", "Yes: data parallel (DDP)"),
        True,
        width,
    )
    reach_second = not answered["one_card"]
    second = _node(
        theme,
        sharded("Fits sharded, FSDP / ZeRO-{plan.zero:int} over every card?"),
        # what the card holds, part by part (a teacher's review: cp's "286 GB a card" read as
        # unexplained beside the leaf's 137 GB of activations, then "7 GB state, the rest one
        # sequence's" still left the leaf's figure unnamed, then "the rest buffers" named nothing).
        # The card count is the stats'.
        _held(theme, sharded, "{memory.total:GB} each: ", width),
        _answer(sharded, "sharded", "Yes: FSDP / ZeRO"),
        reach_second,
        width,
        reached=reach_second,
    )
    reach_leaves = reach_second and not answered["sharded"]
    bottleneck = label(
        theme, "Where is the bottleneck?", theme.small_size, theme.text if reach_leaves else theme.dimmed, weight="BOLD"
    )
    leaves = _leaf_nodes(theme, sharded, answered, reach_leaves)
    follow = options["tree_follow"]
    if reach_leaves and follow is not None:
        end = plain("3D: ") + _shape(follow)
    else:
        end = plain(UNREACHED_END)  # not reached: no plan to fill in
    last = label(theme, end, theme.small_size, theme.accent if reach_leaves else theme.dimmed, weight="BOLD")
    _place_rows([first, second, bottleneck], leaves, last, width)
    experts = _experts(theme, sharded, answered["moe"], regions(theme).stage.right - TREE_LEFT)
    experts.move_to([TREE_LEFT, ROW_TOPS[5], 0], aligned_edge=LEFT + UP)
    lines = [
        _link(theme, first, second, reach_second, spine=True),
        _link(theme, second, bottleneck, reach_leaves, spine=True),
    ]
    for g, leaf in zip(SPLITS, leaves, strict=True):
        lines.append(_link(theme, bottleneck, leaf, reach_leaves))
        lines.append(_link(theme, leaf, last, reach_leaves and answered[g]))
    return [first, second, bottleneck, *leaves, last, experts], lines


def _leaf_nodes(theme: Theme, sharded: Numbers, answered: dict[str, bool], reached: bool) -> list[VGroup]:
    """The bottleneck's three leaves (LEAVES), each weighed on the sharded plan's figures, lit
    where the path reaches it and its answer is yes."""
    leaves = []
    for g in SPLITS:
        words, adds, figures = LEAVES[g]
        leaves.append(
            _node(
                theme,
                plain(words),
                sharded(figures),
                _answer(sharded, g, "Yes: " + adds),
                reached and answered[g],
                LEAF_WIDTH,
                reached=reached,
            )
        )
    return leaves


def _place_rows(spine: list[VMobject], leaves: list[VGroup], last: VMobject, width: float) -> None:
    """The tree's rows at ROW_TOPS: the spine's questions at the left, the leaves spread across
    `width`, the 3D node centred under them."""
    for node, top in zip(spine, ROW_TOPS, strict=False):
        node.move_to([TREE_LEFT, top, 0], aligned_edge=LEFT + UP)
    gap = (width - 3 * LEAF_WIDTH) / 2
    for i, leaf in enumerate(leaves):
        leaf.move_to([TREE_LEFT + i * (LEAF_WIDTH + gap), ROW_TOPS[3], 0], aligned_edge=LEFT + UP)
    last.move_to([TREE_CENTRE, ROW_TOPS[4], 0], aligned_edge=UP)


def _link(theme: Theme, upper: VGroup, lower: VGroup, lit: bool, spine: bool = False) -> Line:
    """A branch from `upper` down to `lower`: down the spine (the "no" answers, at the nodes'
    left edge) or from the middle of one to the middle of the other."""
    if spine:
        x = upper.get_left()[0] + 0.12
        start, end = [x, upper.get_bottom()[1] - 0.05, 0], [x, lower.get_top()[1] + 0.05, 0]
    else:
        start = [upper.get_center()[0], upper.get_bottom()[1] - 0.05, 0]
        end = [lower.get_center()[0], lower.get_top()[1] + 0.05, 0]
    return Line(start, end, color=theme.accent if lit else theme.faint, stroke_width=3 if lit else 1.5)


def pick_column(theme: Theme, shot: Shot, width: float) -> VGroup:
    """The planner's pick, and where and why it departs from the tree, each figure a template."""
    options = shot.options
    pick: Numbers = options["pick"]
    follow: Numbers | None = options["tree_follow"]
    lines: list[Phrase] = [pick("{compute.step_seconds:time} a step for {compute.tokens_per_step:si} tokens")]
    lines.append(pick("{memory.total:GB} on the busiest card"))
    if pick.get("plan.virtual_stages") > 1:
        lines.append(pick("{plan.pp:int} pipeline stages, interleaved {plan.virtual_stages:int} ways"))
    if pick_splits(pick) == options["tree_splits"]:
        lines.append(plain("It takes the tree's splits."))
    elif follow is None and not options.get("tree_laid_out", True):
        lines.append(
            pick(
                "It departs from the tree: no plan with exactly its splits divides a batch of"
                " {training.global_batch:int} sequences."
            )
        )
    elif follow is None:
        lines.append(plain("It departs from the tree: no plan with exactly the tree's splits fits."))
    else:
        lines.append(_departs(pick, follow))
    column = left_column(
        label(theme, "the planner's pick", theme.small_size, theme.muted),
        _headline(theme, _shape(pick), width),
        *[wrapped(theme, line, theme.small_size, width, theme.text, left_aligned=True) for line in lines],
        buff=0.14,
    )
    return column.move_to([PICK_LEFT, ROW_TOPS[0], 0], aligned_edge=LEFT + UP)


def _headline(theme: Theme, shape: Phrase, width: float) -> VGroup:
    """The pick's shape in the caption size, or the small size where only that keeps it on one
    line (cp at 16,384 cards broke it as "dp 16 × tp 32 × pp 1 / × cp 32, ZeRO 2"); wrapped
    between its factors only where it is wider than `width` in both."""
    for size in (theme.caption_size, theme.small_size):
        headline = wrapped(theme, shape, size, width, theme.accent, left_aligned=True)
        if len(headline) == 1:
            break
    return headline


def _departs(pick: Numbers, follow: Numbers) -> Phrase:
    """Where the pick departs from the tree, in what the voice does not say: the tree's plan by
    its layout, and its step beside the pick's (said "against the tree plan's", and lit then), with
    its tokens only where the two steps' tokens differ. Its traffic, recomputation and verdict were a note of
    five lines under the pick that the voice said again (a teacher's review, 3d)."""
    step = follow("{compute.step_seconds:time} a step")
    if follow.get("compute.tokens_per_step") != pick.get("compute.tokens_per_step"):
        step = step + follow(" for {compute.tokens_per_step:si} tokens")
    return plain("The tree's plan, ") + _shape(follow) + plain(": ") + step


def play_decision_tree(ctx: ShotContext, shot: Shot) -> None:
    """Seed 001's tree grows row by row as the voice asks each question, the path lit; then the
    planner's pick appears beside it."""
    theme = ctx.theme
    pick: Numbers = shot.options["pick"]
    nodes, lines = tree_nodes(theme, shot)
    first, second, bottleneck, *leaves, last, experts = nodes
    # the tree's first question, and the questions below it dimmed, come in as the last shot's
    # pieces go: the stage never stands empty, the title and the stats alone, while the voice names
    # the model (3d at 93.4 s, issue 58); each node is drawn over its question as it is asked
    outline = {id(node): _asked(theme, node) for node in (second, bottleneck, *leaves)}
    ctx.clear_stage((), appear(first[0], shift=RIGHT * 0.4), *[appear(q) for q in outline.values()])

    ctx.open_shot(shot.caption, clear=False)
    ctx.set_stats([("Cards", pick("{cluster.cards:int}"), False), ("Model", pick("{model.label}"), False)])
    if ctx.has_mark("cards") and ctx.stats is not None:  # the model and its cards, as the voice names them
        ctx.until("cards")
        ctx.point_at(ctx.stats, scale=1.1)
    ctx.until("one_card")  # what the first question is weighed on, and its answer, as the walk starts
    ctx.scene.play(appear(first[1:], shift=RIGHT * 0.4), run_time=0.8)
    said(ctx, "questions", first[0], *outline.values())  # what the tree asks by, its questions lit
    said(ctx, "one_card_answer", first)  # each answer highlighted as the voice gives it
    ctx.until("sharded")
    ctx.scene.play(appear(lines[0]), *_grow(outline, second, RIGHT * 0.4), run_time=0.8)
    if ctx.has_mark("answer"):  # the second answer, as it is said
        ctx.until("answer")
        ctx.highlight(second)
    said(ctx, "sharded_answer", second)
    ctx.until("bottleneck")
    ctx.scene.play(appear(lines[1]), *_grow(outline, bottleneck, None), run_time=0.6)
    ctx.highlight(bottleneck, across=True)  # the question, lit as the voice asks it
    answered = shot.options["tree_answers"]
    reached = not answered["one_card"] and not answered["sharded"]  # the leaves are lit only when reached
    lit = [leaf for g, leaf in zip(SPLITS, leaves, strict=True) if reached and answered[g]]
    upto = "leaf" if ctx.has_mark("leaf") and lit else "end"  # the leaves in before the lit one is named
    for i, leaf in enumerate(leaves):
        ctx.spread("bottleneck", upto, i, len(leaves))
        # (its figures and answer slide in from the left: from above they would cross its question)
        ctx.scene.play(appear(lines[2 + 2 * i]), *_grow(outline, leaf, RIGHT * LEAF_SLIDE, below=True), run_time=0.6)
    if lit:
        said(ctx, "leaf", *lit)
    ctx.until("end")
    ctx.scene.play(*[appear(lines[3 + 2 * i]) for i in range(len(leaves))], appear(last), appear(experts), run_time=0.8)
    ending = first if answered["one_card"] else second if answered["sharded"] else last
    ctx.highlight(ending[-1] if ending is not last else last, across=True)  # where the tree ends, as it is said
    said(ctx, "moe", experts)  # the mixture of experts' answer, where the voice gives it
    ctx.until("pick")
    column = pick_column(theme, shot, ctx.regions.stage.right - PICK_LEFT - 0.1)
    ctx.scene.play(appear(column, shift=LEFT * 0.4), run_time=1.0)
    ctx.point_at(column[1], scale=1.05)
    _said_pick(ctx, column, ending)
    said(ctx, "pick_path", column[-1], ending)  # the pick's verdict on the tree, with where the tree ends
    said(ctx, "pick_figures", column[1], column[2])
    ctx.leave(tree=VGroup(*nodes, *lines), pick=column)


def _grow(outline: dict[int, VMobject], node: VMobject, shift: Any, below: bool = False) -> list[Animation]:
    """A node in, sliding over its dimmed question as that goes (a fade in place alone fell
    under what pacing sees move: 3d's planner stood still 2.9 s at [sharded]). `below`: a
    node's question stays where it stands (lit if on the path) and what it has under it, its
    figures and answer, slides in: a leaf sliding down drew its answer half-faded over its
    dimmed question going ("No" over "Single layer too big?"). `outline`: the dimmed questions
    still standing, by their node's id (the node's taken from it)."""
    asked = outline.pop(id(node), None)
    if asked is None:
        return [appear(node, shift=shift)]
    if not below or isinstance(node, Text) or len(node) == 1:
        return [appear(node, shift=shift), vanish(asked)]
    return [ReplacementTransform(asked, node[0]), appear(node[1:], shift=shift)]


def _asked(theme: Theme, node: VMobject) -> VMobject:
    """A node's question (the bottleneck's, the node itself) alone, in the dimmed colour, where
    the node will stand: the tree's outline before it is walked."""
    question = node.copy() if isinstance(node, Text) else node[0].copy()
    return question.set_color(theme.dimmed)


def said(ctx: ShotContext, mark: str, *pieces: VGroup) -> None:
    """Where the narration holds `mark`: the pieces highlighted as the voice reaches it."""
    if ctx.has_mark(mark):
        ctx.until(mark)
        ctx.highlight(*pieces)


def _said_pick(ctx: ShotContext, column: VGroup, ending: VGroup) -> None:
    """The pick's figures as the voice says them, each at its mark where the narration has it:
    the tree's answer it departs from, its step time, the tree plan's (the column's last line),
    the tree's end again as the voice gives that plan's traffic or recomputation (a swell of the
    line stood still for 4.4 s in 3d), its memory, and its margin when too thin."""
    step, memory, departs = column[2], column[3], column[-1]
    for mark, show in (
        ("departs", lambda: ctx.highlight(ending)),
        ("step", lambda: ctx.highlight(step)),
        ("against", lambda: ctx.highlight(departs)),
        # (the tree plan's traffic or recomputation: its end lit, and again while the voice is on it)
        ("traffic", lambda: (ctx.highlight(ending), ctx.relight(ending, across=True))),
        ("spare", lambda: ctx.highlight(memory)),
        ("thin", lambda: ctx.point_at(memory, scale=1.05)),
    ):
        if ctx.has_mark(mark):
            ctx.until(mark)
            show()
