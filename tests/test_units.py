from __future__ import annotations

import pytest

from dtfilm.units import format_quantity, parse_count


@pytest.mark.parametrize(
    ("text", "value"),
    [("7e9", 7e9), ("7B", 7e9), ("512M", 512e6), ("1T", 1e12), ("6.74B", 6.74e9), (4096, 4096.0)],
)
def test_parse_count(text, value):
    assert parse_count(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["seven", "7Q", "", "1e"])
def test_parse_count_rejects(text):
    with pytest.raises(ValueError):
        parse_count(text)


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [
        (112e9, "GB", "112\u00a0GB"),
        (24.5e9, "GB", "24.5\u00a0GB"),
        (14e9, "GB", "14\u00a0GB"),
        (1.75e9, "GB", "1.75\u00a0GB"),
        (6.5e12, "GB", "6,500\u00a0GB"),
        (16384, "int", "16,384"),
        (7e9, "si", "7B"),
        (1.63, "x", "1.63×"),
        (0.467, "%", "46.7%"),
        (8.5e8, "years", "26.9\u00a0years"),
        (4.2e23, "sci", "4.2\u00a0×\u00a010²³"),
        (9.996e22, "sci", "1\u00a0×\u00a010²³"),
        (0.0, "bytes", "0\u00a0GB"),  # none at all: the film's unit, as "{comm.dp:GB}" says it
        (5e5, "bytes", "500\u00a0KB"),
    ],
)
def test_format_quantity(value, unit, shown):
    assert format_quantity(value, unit) == shown


@pytest.mark.parametrize(
    ("value", "shown"), [(4096, "4K"), (131072, "128K"), (524288, "512K"), (2**20, "1M"), (3000, "3,000"), (6144, "6K")]
)
def test_sequence_lengths_are_named_in_binary_thousands(value, shown):
    from dtfilm.textcheck import parse_binary

    assert format_quantity(value, "K") == shown
    parsed, half = parse_binary(shown)
    assert abs(parsed - value) <= half  # the check reads back what the formatter wrote


def test_a_fact_is_found_as_a_whole_word():
    from dtfilm.textcheck import find_shown

    text = "as well as its weights. Past eight cards"
    assert find_shown(text, "eight") == text.index("eight cards")  # never the one in "weights"
    assert find_shown("GPU 12 and 1", "1") == 11
    assert find_shown("F1 B1", "1") == 1  # a position beside a letter is still found
    assert find_shown("nothing here", "two") == -1


def test_a_layer_setting_a_degree_lets_dp_follow():
    from dtfilm.cost.inputs import cleared_by

    assert cleared_by({"tp"}) == {"dp"}
    assert cleared_by({"tp", "dp"}) == set()  # set together, both stand
    assert cleared_by({"zero"}) == set()


def test_a_noun_after_a_count_of_one_is_singular():
    """A template writes its count nouns in the plural; at a count of one they agree ("1 card",
    "one micro-batch"), a fact's own words and digits unchanged. A quantity that is not a count
    (1 GB) and a count of two keep the plural."""
    from dtfilm.phrases import render_template

    data = {"cluster": {"cards": 1, "nodes": 2}, "inputs": {"micro_batches": 1}, "memory": {"total": 1e9}}
    phrase = render_template(
        "{cluster.cards:int} cards, {inputs.micro_batches:word} micro-batches, {cluster.nodes:int} nodes,"
        " {memory.total:GB} cards, on {cluster.cards:int} cards.",
        data,
        (),
    )
    assert phrase.text == "1 card, one micro-batch, 2 nodes, 1\u00a0GB cards, on 1 card."
    assert [f.shown for f in phrase.facts] == ["1", "one", "2", "1\u00a0GB", "1"]


def test_the_films_words_agree_at_one_micro_batch_and_one_card():
    """What a user tries first: --micro-batches 1 and --cards 1. No narration, caption or title of
    the film says "one micro-batches" or "1 cards" (dp, tp, pp and 3d did)."""
    import re

    from dtfilm.storyboard import load_chapter
    from dtfilm.words import SINGULAR
    from tests.conftest import ROOT

    plural_after_one = re.compile(rf"\b(1|one|One) ({'|'.join(re.escape(n) for n in SINGULAR)})\b")
    said = []
    for overrides, chapters in (({"micro_batches": 1}, ("dp", "tp", "pp", "3d")), ({"cards": 1}, ("why", "dp"))):
        for chapter_id in chapters:
            chapter = load_chapter(chapter_id, overrides, ROOT)
            for shot in chapter.shots:
                texts = [shot.narration.text if shot.narration else "", getattr(shot.caption, "text", "")]
                said += [f"{chapter_id}:{shot.beat}: {t}" for t in texts if plural_after_one.search(t)]
    assert said == []


def test_a_verb_after_a_count_of_one_agrees():
    """A verb right after a counted noun agrees with it: "1 card takes", "2 cards take"; a word
    that is not a verb the film writes there, or a noun that is not a count's, is left as written."""
    from dtfilm.phrases import render_template

    def said(cards: int, template: str) -> str:
        return render_template(template, {"cluster": {"cards": cards}, "memory": {"total": 1e9}}, ()).text

    assert said(1, "{cluster.cards:int} cards take a year; {cluster.cards:int} cards are few") == (
        "1 card takes a year; 1 card is few"
    )
    assert said(2, "{cluster.cards:int} cards take a year") == "2 cards take a year"
    assert said(1, "{cluster.cards:int} cards, the same work split") == "1 card, the same work split"
    assert said(1, "{memory.total:GB} take") == "1\u00a0GB take"


def test_the_films_verbs_agree_at_one_card_and_one_micro_batch():
    """At --cards 1 the why chapter said "1 card take 9,830 days" and dp "Each of the 1 card gets";
    at --micro-batches 1 dp said "one micro-batch, slices it runs one after another, adding up
    their gradients". The film at its defaults says what it said."""
    import re

    from dtfilm.storyboard import load_chapter
    from dtfilm.words import SINGULAR
    from tests.conftest import ROOT

    nouns = "|".join(map(re.escape, SINGULAR.values()))
    verbs = "are|do|get|have|hold|keep|move|need|run|send|take|wait|were"  # a plural verb after a singular noun
    disagreeing = re.compile(rf"\b(1|one|One) ({nouns}) ({verbs})\b|Each of the (1|one) |one micro-batch, slices")

    def said(chapter_id: str, overrides: dict) -> str:
        shots = load_chapter(chapter_id, overrides, ROOT).shots
        texts = [f"{s.narration.text if s.narration else ''} {getattr(s.caption, 'text', '')}" for s in shots]
        return " ".join(texts).replace("\xa0", " ")

    for overrides, chapters in (({"micro_batches": 1}, ("dp", "tp", "pp", "3d")), ({"cards": 1}, ("why", "dp"))):
        for chapter_id in chapters:
            found = [m.group(0) for m in disagreeing.finditer(said(chapter_id, overrides))]
            assert found == [], (chapter_id, overrides)
    # at one card why no longer says how long its cards take (the one card's years are said already)
    assert "the one card gets a full copy" in said("dp", {"cards": 1})
    assert "each of the 8 cards gets a full copy" in said("dp", {}) and "1,024 cards take 9.6 days" in said("why", {})


def _shot(chapter_id: str, beat: str, overrides: dict):
    from dtfilm.storyboard import load_chapter
    from tests.conftest import ROOT

    return next(s for s in load_chapter(chapter_id, overrides, ROOT).shots if s.beat == beat)


def _words(shot) -> str:
    """The shot's narration, caption, note and row labels, as one text with plain spaces."""
    texts = [getattr(shot.narration, "text", ""), getattr(shot.caption, "text", "")]
    texts += [getattr(shot.options.get("note"), "text", "")]
    texts += [getattr(row[0], "text", "") for row in shot.options.get("rows", ())]
    return " | ".join(texts).replace("\xa0", " ")


def test_why_says_true_things_at_one_card_at_a_tp_only_plan_and_at_the_largest_model():
    """At --cards 1 why said "26.9 years on one card, 9,830 days on 1" and drew "1 card, the same
    work split" (now not drawn at one card): the one card twice; at --tp 16 --cards 16 "on 16 card
    they buy no memory"; at --model llama3.1-405b "the small model needs 82" of the largest model."""
    one = _shot("why", "wont-finish", {"cards": 1})
    assert "9,830 days on 1" not in _words(one) and "1 card takes" not in _words(one)
    assert "This run has only that one card." in _words(one)
    assert "on one card they buy no memory" in _words(_shot("why", "strategies", {"cards": 1}))
    tp_only = _words(_shot("why", "strategies", {"tp": 16, "cards": 16}))
    assert "16 card " not in tp_only and "single data-parallel copy" in tp_only
    assert "the small model" not in _words(_shot("why", "wont-fit", {"model": "llama3.1-405b"}))
    # the defaults say what they said
    default = _shot("why", "wont-finish", {})
    assert "9.6 days on 1,024" in _words(default) and "1,024 cards take 9.6 days" in _words(default)
    assert "the small model needs 2, the middle one 14, the largest whole racks" in _words(_shot("why", "wont-fit", {}))


def test_ledger_dp_and_tp_say_true_things_at_edge_inputs():
    """--precision fp8 made the ledger say "its weight in fp8, 1 bytes" and "full fp32 ...: still 15
    bytes" (fp32 is 16); --cards 1 made dp's ring say "Each card computed its gradients on different
    data" and "0 GB leaves every card"; --seq-len 131072 made tp say 39.2 s of waiting was "more
    than its 68.5 s of compute"; --cards-per-node 1 made it say "Inside a node InfiniBand NDR" (and
    --overlap framework "Nothing else can run while it does", "stalls to 179 ms" of 24.4 ms exposed);
    the decision tree "a node's 1 card holds 80 GB each"."""
    import re

    from dtfilm.shots.decision_tree.draw import LEAVES

    fp8 = {"precision": "fp8", "gpu": "a100-80gb"}
    assert "in fp8, 1 byte, though" in _words(_shot("ledger", "sixteen-bytes", fp8))
    assert "still 16 bytes" in _words(_shot("ledger", "precision", fp8))
    assert "fp8 buys neither speed nor state memory" in _words(_shot("ledger", "precision", fp8))
    ring = _words(_shot("dp", "ring", {"cards": 1}))
    assert "Each card computed" not in ring and "leaves every card" not in ring
    assert "already the average" in ring
    long = _words(_shot("tp", "stalls", {"seq_len": 131072}))
    waited, compute = re.search(r"the step waits all ([\d.]+) s, \w+ its ([\d.]+) s of compute", long).groups()
    assert float(waited) < float(compute) and "more than its" not in long
    overlapped = _shot("tp", "stalls", {"overlap": "framework"})
    hidden, exposed = (
        overlapped.options["rows"][0][1].get(f"comm.{k}.tp") for k in ("seconds_by_group", "exposed_seconds_by_group")
    )
    assert exposed < hidden and "Nothing else can run" not in _words(overlapped)
    said_overlapped = _words(overlapped)
    assert "on the critical path" not in said_overlapped
    assert "take 179 ms a step; only 24.4 ms of that stalls the step" in said_overlapped
    # and draws the stalls that short: a row's stall blocks shrink by what the overlap hides
    from dtfilm.shots.tensor.draw import DETAIL, _exposed_share

    inside = overlapped.options["rows"][0][1]
    assert _exposed_share(inside) == pytest.approx(exposed / hidden) and _exposed_share(inside) < 0.2
    assert "24.4 ms of it exposed" in inside(DETAIL).text.replace("\xa0", " ")
    # the whiteboard's pricing (--overlap none, pinned: `framework` is the default since the
    # network model): every stall is the whole all-reduce, and the words say nothing hides it
    whiteboard = _shot("tp", "stalls", {"overlap": "none"})
    plain_row = whiteboard.options["rows"][0][1]
    assert _exposed_share(plain_row) == 1.0 and "exposed" not in plain_row(DETAIL).text
    said = _words(whiteboard)
    assert "Nothing else can run while it does" in said and "each stalling its layer" in said
    # the default prices the framework's overlap: the same picture and words as --overlap framework
    default = _shot("tp", "stalls", {})
    assert _exposed_share(default.options["rows"][0][1]) == pytest.approx(exposed / hidden)
    assert _words(default) == _words(overlapped)
    for overrides in ({"cards_per_node": 1}, {"tp": 16, "cards": 16}):
        stalls = _words(_shot("tp", "stalls", overrides))
        assert "Inside a node" not in stalls and "already cross InfiniBand" in stalls, overrides
    tree = next(s for s in _shot_list("cp", {"cards_per_node": 1}) if s.kind == "decision_tree")
    figures = tree.options["tree_configs"]["sharded"](LEAVES["pp"][2]).text.replace("\xa0", " ")
    assert figures.endswith("a node's one card holds 80 GB")
    # the defaults say what they said
    assert "still 16 bytes" in _words(_shot("ledger", "precision", {}))
    assert "Each card's gradients came from different data" in _words(_shot("dp", "ring", {}))
    stalls = _words(_shot("tp", "stalls", {"overlap": "none"}))
    assert "Inside a node NVLink 4 keeps the stalls to 179 ms" in stalls and "more than its 363 ms" in stalls
    stalls = _words(_shot("tp", "stalls", {}))  # (the default, framework: 24.4 ms of the 179 ms exposed)
    assert (
        "Inside a node the all-reduces take 179 ms a step; only 24.4 ms" in stalls and "more than its 396 ms" in stalls
    )
    tree = next(s for s in _shot_list("cp", {}) if s.kind == "decision_tree")
    figures = tree.options["tree_configs"]["sharded"](LEAVES["pp"][2]).text.replace("\xa0", " ")
    assert figures.endswith("a node's 8 cards hold 80 GB each")


def _shot_list(chapter_id: str, overrides: dict):
    from dtfilm.storyboard import load_chapter
    from tests.conftest import ROOT

    return load_chapter(chapter_id, overrides, ROOT).shots


def test_a_rack_of_one_card_nodes_stays_on_the_frame():
    """tp's halves at --cards-per-node 1 drew eight one-card nodes 20 units wide (x -9.98..9.98),
    off a 14.2-unit frame: each node's caption is wider than its card. A rack that fitted is drawn
    as it was (the default eight cards of one node)."""
    from dtfilm.shots.common.draw import build_rack
    from dtfilm.visuals.theme import FRAME_WIDTH, THEMES

    spread = _shot("tp", "halves", {"cards_per_node": 1}).steps[-1]
    assert int(spread.get("cluster.cards")) == 8 and int(spread.get("cluster.cards_per_node")) == 1
    rack = build_rack(THEMES["dark"], spread)
    assert rack.width <= FRAME_WIDTH - 0.5 and abs(rack.get_center()[0]) < 0.01
    one_node = build_rack(THEMES["dark"], _shot("tp", "halves", {}).steps[-1])
    assert one_node.node_boxes.width == pytest.approx(one_node.node_boxes[0].width)  # one node, unscaled
    assert one_node.cards[0].body.height == pytest.approx(1.7)  # (1.7 since issue 58: gauges readable at 480p)
