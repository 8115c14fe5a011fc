"""The sixth strategy (issue 60): expert parallelism in why's table and voice, and in the ledger's
map of the chapters ahead whether or not film.yaml lists an `ep` chapter; and the titles' clauses
that come as the voice says them (issue 58)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from dtfilm.phrases import Fact, Phrase
from dtfilm.shots.common.draw import _subtitle_parts
from dtfilm.shots.ledger.draw import map_entries
from dtfilm.shots.registry import KINDS
from dtfilm.shots.strategies import BY_KEY, STRATEGIES
from dtfilm.storyboard import load_chapter

ROOT = Path(__file__).resolve().parent.parent
STORYBOARD = ROOT / "storyboard"


def test_the_table_holds_six_strategies_the_sixth_cutting_experts():
    assert [s.key for s in STRATEGIES] == ["dp", "fsdp", "tp", "pp", "cp", "ep"]
    ep = BY_KEY["ep"]
    assert ep.shards == "a mixture of experts' experts"
    assert "to its experts' cards and back" in ep.talks  # the all-to-all, in plain words
    assert ep.chapter == "ep" and ep.slicing == "experts"
    assert {"ep", "ep_cuts", "ep_talks", "ep_solves"} <= set(KINDS["strategy_table"].marks)


def test_the_map_lists_expert_parallelism_with_or_without_its_chapter():
    without = ["why", "ledger", "dp", "tp", "pp", "fsdp", "cp", "3d"]
    # no `ep` chapter in film.yaml: the strategy's tile stands before the chapter that combines
    assert map_entries(without, without[2:]) == ["dp", "tp", "pp", "fsdp", "cp", "ep", "3d"]
    # with it (branch ep60 puts it between cp and 3d): the chapter's own tile, once
    with_ep = ["why", "ledger", "dp", "tp", "pp", "fsdp", "cp", "ep", "3d"]
    assert map_entries(with_ep, with_ep[2:]) == ["dp", "tp", "pp", "fsdp", "cp", "ep", "3d"]
    # a map placed after every strategy's chapter adds none of them
    assert map_entries(without, ["3d"]) == ["ep", "3d"]


def test_why_says_the_sixth_strategy_where_the_glossary_defines_it():
    chapter = load_chapter(STORYBOARD / "why.yaml")
    shot = next(s for s in chapter.shots if s.beat == "strategies")
    said = shot.narration.text
    assert "mixture of experts" in said and "expert parallelism spreads the experts over the cards" in said
    assert "sending each token to its experts and back" in said
    assert shot.caption.text.startswith("Six ways to split the work")
    terms = {e["term"]: e for e in yaml.safe_load((STORYBOARD / "glossary.yaml").read_text())}
    assert terms["expert parallelism"]["defined"] == "why:strategies"
    assert terms["mixture of experts"]["defined"] == "why:strategies"


def test_the_ledger_map_names_expert_parallelism_as_the_voice_does():
    chapter = load_chapter(STORYBOARD / "ledger.yaml")
    shot = next(s for s in chapter.shots if s.kind == "chapter_map")
    assert "then expert parallelism, the experts;" in shot.narration.text
    names = [name for name, _ in shot.marks]
    assert names.index("cp") < names.index("ep") < names.index("3d")


def test_a_subtitle_splits_after_its_first_comma_each_part_with_its_facts():
    fact = Fact("bytes_per_param.total", None, "Sixteen")
    first, second = _subtitle_parts(Phrase("Sixteen bytes a parameter, and then the activations", (fact,)))
    assert first == Phrase("Sixteen bytes a parameter,", (fact,))
    assert second == Phrase("and then the activations")
    assert _subtitle_parts(Phrase("No comma here")) == [Phrase("No comma here")]


def test_the_maps_tiles_are_named_as_the_voice_names_each_strategy():
    # the tiles read "Sequence too long" and "Too many experts" (cp's and ep's titles, walls)
    # while the voice said "then context parallelism, ... then expert parallelism"
    from dtfilm.shots.ledger.draw import map_tile_name
    from dtfilm.storyboard.load import chapter_title_phrases

    chapter = load_chapter(STORYBOARD / "ledger.yaml")
    film = list(chapter.film.chapters)
    later = map_entries(film, film[film.index("ledger") + 1 :])
    titles = chapter_title_phrases(chapter.film, chapter.overrides)
    by_chapter = {s.chapter: s for s in STRATEGIES if s.chapter}
    names = [map_tile_name(c, by_chapter.get(c), titles).text for c in later]
    assert names == [
        "Data parallelism", "Tensor parallelism", "Pipeline parallelism", "FSDP",
        "Context parallelism", "Expert parallelism", "3D parallelism",
    ]  # fmt: skip
    said = next(s for s in chapter.shots if s.kind == "chapter_map").narration.text
    # ("then tensor and pipeline parallelism": each strategy's own word, as said)
    assert all(re.search(rf"\b{name.split()[0]}\b", said, re.IGNORECASE) for name in names[:-1])
