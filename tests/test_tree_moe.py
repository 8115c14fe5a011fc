"""Issue 60: the decision tree's mixture-of-experts branch. Its answer is a claim on the cost
model (the model's experts), lit for a MoE model and dimmed for a dense one; a yes adds expert
parallelism to the tree's splits, and the tree's plan then takes an ep above 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from dtfilm.storyboard import load_chapter
from tests.conftest import ROOT

# One decision_tree shot on a model that only the `with` names; its narration says the branch.
CHAPTER = """\
id: moetree
title: Experts
cluster: {{cards: 64}}
shots:
  - kind: decision_tree
    beat: planner
    with: {{model.preset: {model}, plan.tp: 1, plan.pp: 1}}
    caption: "{{model.label}}: the decision tree"
    narration: >-
      On {{model.label}}, walk the tree. [end] {{?bytes: tree.sharded => it ends at FSDP | the tree ends in 3D}};
      [moe] {{?count: tree.moe => and its experts add expert parallelism | and it has no experts to spread}}.
      [pick] {{?count: tree.departs => The planner departs from it | The planner takes its path}}.
"""


def _tree(tmp_path: Path, model: str):
    path = tmp_path / "moetree.yaml"
    path.write_text(CHAPTER.format(model=model))
    chapter = load_chapter(path, root=ROOT)
    return next(s for s in chapter.shots if s.kind == "decision_tree")


@pytest.mark.parametrize(("model", "moe"), [("mixtral-8x7b", True), ("llama2-70b", False)])
def test_the_moe_branch_is_a_claim_on_the_models_experts(tmp_path, model, moe):
    from dtfilm.shots.decision_tree.draw import EXPERTS, _answer
    from dtfilm.storyboard.tree import EXPERT, QUESTIONS

    shot = _tree(tmp_path, model)
    sharded = shot.options["tree_configs"]["sharded"]
    assert QUESTIONS["moe"] == ("sharded", "model.experts > 0")
    assert shot.options["tree_answers"]["moe"] is moe is (sharded.get("model.experts") > 0)
    # the answer drawn is the claim's branch: it flips with the model
    answer = _answer(sharded, "moe", "Yes: " + EXPERTS[1]).text
    assert answer == ("Yes: expert parallel too" if moe else "No")
    said = shot.narration.text.replace("\xa0", " ")
    assert ("its experts add expert parallelism" in said) is moe, said  # claims may name tree.moe
    # a yes adds ep to the tree's splits, and the tree's plan (and here the pick) takes it
    assert (EXPERT in shot.options["tree_splits"]) is moe
    follow, pick = shot.options["tree_follow"], shot.options["pick"]
    assert (follow.get("plan.ep") > 1) is moe
    assert follow.get("plan.ep") == follow.get("inputs.ep")
    if moe:  # the figures it is weighed on: every expert held, a token's two of eight multiplied
        assert sharded.get("params_active") < sharded.get("params")
        figures = sharded(EXPERTS[2]).text
        assert figures == "46.7B parameters, 12.9B active: 2 of 8 experts a token", figures
        assert pick.get("plan.ep") > 1
    else:
        assert sharded.get("params_active") == sharded.get("params")


def test_the_moe_node_is_lit_for_mixtral_and_dimmed_for_a_dense_model(tmp_path):
    from dtfilm.shots.decision_tree.draw import tree_nodes
    from dtfilm.visuals.theme import DARK as theme

    for model, lit in (("mixtral-8x7b", True), ("llama2-70b", False)):
        nodes, _ = tree_nodes(theme, _tree(tmp_path, model))
        experts = nodes[-1]
        words, answer = experts[0], experts[-1]
        colour = theme.text if lit else theme.dimmed
        assert words.get_color().to_hex().lower() == colour.lower(), model
        assert answer.get_color().to_hex().lower() == (theme.accent if lit else theme.dimmed).lower(), model
        assert len(experts) == (3 if lit else 2), model  # the figures only on the path
        assert experts.get_bottom()[1] >= theme.stage_bottom, model  # on the stage, above the caption
