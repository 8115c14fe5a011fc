"""The film's words on other hardware (--gpu mi300x-192gb, a100-80gb with fp8, --inter-node
ethernet-400g): the node's fabric named as the card's own, compute said at the precision it is
timed at, and no sentence that contradicts the one before; the estimate reports what they read
(cluster.intra_node_fabric, peak_precision, inter_node_shared)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_dtfilm


def _said(chapter: str, beat: str, flags: dict) -> str:
    """The shot's caption, narration and row labels, as one text."""
    from dtfilm.storyboard import load_chapter

    (shot,) = [s for s in load_chapter(chapter, flags, root=ROOT).shots if s.beat == beat]
    texts = [getattr(shot.caption, "text", ""), getattr(shot.narration, "text", "")]
    texts += [label.text for label, _ in shot.options.get("rows", [])]
    return " ".join(texts).replace("\xa0", " ")


@pytest.mark.parametrize(
    ("gpu", "fabric"),
    [("mi300x-192gb", "Infinity Fabric"), ("b200-180gb", "NVLink"), ("h100-sxm-80gb", "NVLink")],
)
def test_tp_names_the_cards_own_fabric(gpu: str, fabric: str):
    """On an MI300X tp said 'tensor parallelism lives inside the NVLink domain of a single node'."""
    text = _said("tp", "stalls", {"gpu": gpu})
    assert f"tensor parallelism stays inside one node's {fabric}" in text
    if fabric != "NVLink":
        assert "NVLink" not in text


def test_the_estimate_names_fabric_compute_precision_and_a_shared_link():
    from dtfilm.cost.estimate import estimate
    from dtfilm.cost.inputs import builtin_layer, resolve
    from dtfilm.storyboard.layers import flag_layer

    def cluster(**flags: object) -> dict:
        return estimate(resolve([builtin_layer(), flag_layer(flags)]))["cluster"]

    mi300x = cluster(gpu="mi300x-192gb")
    assert (mi300x["intra_node_fabric"], mi300x["intra_node_link_label"]) == ("Infinity Fabric", "Infinity Fabric")
    assert cluster(gpu="a100-80gb")["intra_node_fabric"] == "NVLink"
    a100 = cluster(gpu="a100-80gb", precision="fp8")
    assert (a100["peak_precision"], a100["peak_flops"]) == ("bf16", 312e12)  # no fp8 tensor cores
    assert cluster(gpu="h100-sxm-80gb", precision="fp8")["peak_precision"] == "fp8"
    assert cluster(inter_node="ethernet-400g")["inter_node_shared"] is True
    assert cluster()["inter_node_shared"] is False


def test_fp8_on_an_a100_is_said_computed_in_bf16():
    """At --gpu a100-80gb --precision fp8 the numbers keep weights at 1 byte but time compute at the
    bf16 peak; the film said 'its weight in fp8' and 'peaks at 312 TFLOP/s' with no word of it."""
    a100 = {"gpu": "a100-80gb", "precision": "fp8"}
    ledger = _said("ledger", "sixteen-bytes", a100)
    assert "its weight in fp8, 1 byte, though the A100 80GB, with no fp8 tensor cores, multiplies in bf16" in ledger
    # why comes before the ledger defines the formats: it glosses each in passing (glossary.yaml)
    why = _said("why", "wont-finish", a100)
    assert "peaks at 312 TFLOP/s, in bf16 (another number format), for it has no tensor cores for fp8 (" in why
    # an H100 has fp8 tensor cores: neither says otherwise
    h100 = {"precision": "fp8"}
    assert "tensor cores" not in _said("ledger", "sixteen-bytes", h100) + _said("why", "wont-finish", h100)


def test_why_links_on_ethernet_does_not_contradict_itself():
    """At --inter-node ethernet-400g: 'Between nodes, Ethernet 400G ...: pipeline stages and
    data-parallel replicas cross it. Ethernet, shared by a whole node, carries only data
    parallelism's exchange a step.' And it said Ethernet's 6.25 GB/s as the ladder lit the
    InfiniBand row and showed 50 GB/s: the voice names the row lit at each tier."""
    text = _said("why", "links", {"inter_node": "ethernet-400g"})
    assert "Between nodes, InfiniBand NDR moves 50 GB/s a card" in text
    assert "This cluster's Ethernet 400G is shared by a whole node, 6.25 GB/s a card" in text
    assert "Omni-Path" not in text.split("This cluster's")[1]
    # the row lit; a teacher's read could not parse "A link a whole node shares, like Omni-Path, carries only"
    assert "Omni-Path, shared by a whole node, is best kept to data parallelism's exchange a step" in _said(
        "why", "links", {}
    )
    omni = _said("why", "links", {"inter_node": "omnipath-4x100g"})  # the voice could not say '4x100G'
    assert "This cluster's Omni-Path 4x100G is shared" in omni


def test_link_names_are_said_as_engineers_say_them():
    from dtfilm.voice.speech import spoken

    assert spoken("Ethernet 400G") == "Ethernet four hundred gig"  # was "four hundredG"
    assert spoken("Omni-Path 4x100G") == "Omni-Path four by a hundred gig"  # was refused
    assert spoken("a 2x speedup") == "a two times speedup"  # was "twox"


def test_cp_planner_never_says_a_step_against_the_same_figure():
    """At --inter-node ethernet-400g cp said 'departs from the tree, 16.9 min a step against the
    tree's 16.9 min'."""
    # the seeds' whiteboard, where the pick departs by a hair (on NCCL's network it takes the tree's path)
    text = _said("cp", "planner", {"inter_node": "ethernet-400g", "network": "single-link", "overlap": "none"})
    against = re.search(r"([\d.]+ \w+) a step against the tree's ([\d.]+ \w+)", text)
    assert against is None or against.group(1) != against.group(2)
    assert "departs from the tree, for a plan a hair faster" in text


CATALOG = """\
cards:
  x-card:
    label: X Card
    memory: 96e9
    peak_flops: {bf16: 500e12}
    intra_node_link: x-link
    source: a datasheet
links:
  x-link:
    label: X Link 2
    fabric: X Link
    bandwidth: 400e9
    latency: 3e-6
    between_nodes: false
    source: a datasheet
"""


@pytest.mark.parametrize(
    ("catalog", "fabric", "error"),
    [
        (CATALOG, "X Link", None),
        (CATALOG.replace("    fabric: X Link\n", ""), "X Link 2", None),  # no fabric: its label
        (CATALOG.replace("fabric: X Link", "fabric: ''"), None, "storyboard/catalog.yaml:11: links.x-link.fabric:"),
    ],
)
def test_a_catalog_link_names_its_fabric(tmp_path: Path, catalog: str, fabric: str | None, error: str | None):
    project = tmp_path / "film"
    shutil.copytree(ROOT / "storyboard", project / "storyboard")
    (project / "storyboard" / "catalog.yaml").write_text(catalog)
    done = run_dtfilm("estimate", "tp", "--gpu", "x-card", "--json", cwd=project)
    if error:
        assert done.returncode == 2 and error in done.stderr and "is not the family the words name it by" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        return
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["cluster"]["intra_node_fabric"] == fabric


def test_omni_path_is_not_called_intels():
    """A lecturer: the ladder's caption said 'Omni-Path, Intel's'; Intel spun Omni-Path off to
    Cornelis Networks in 2020 (issue 58)."""
    import yaml

    said = _said("why", "links", {})
    assert "Intel" not in said
    assert "Cornelis Networks' Omni-Path" in said
    glossary = yaml.safe_load((ROOT / "storyboard" / "glossary.yaml").read_text())
    (omni,) = [entry for entry in glossary if entry["term"] == "Omni-Path"]
    assert omni["means"].startswith("Cornelis Networks'")


def test_every_built_in_model_can_be_said():
    """`check ep --model qwen2-57b-a14b` was refused: the voice could not say 'Qwen2' nor
    '57B-A14B', though the preset is one of the mixtures of experts the ep chapter is for."""
    from dtfilm.storyboard.catalog import BUILTIN_CATALOG
    from dtfilm.voice.speech import spoken

    for name, shape in BUILTIN_CATALOG.models.items():
        said = spoken(f"{shape.label} holds its parameters.")
        assert not re.search(r"\d", said), (name, said)
    assert spoken("Qwen2 57B-A14B") == "Qwen two fifty-seven B, A fourteen B"
