"""A film's own cards, links and models (storyboard/catalog.yaml), and the built-in B200,
MI300X and InfiniBand HDR (issue 15, part 6)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_dtfilm, seed_caches

CATALOG = """\
cards:
  a100-40gb:
    label: A100 40GB
    memory: 40e9
    peak_flops: {bf16: 312e12, fp32: 156e12}
    intra_node_link: nvlink3
    source: NVIDIA A100 datasheet
links:
  roce-200g:
    label: RoCE 200G
    bandwidth: 25e9
    latency: 10e-6
    between_nodes: true
    source: the cluster's network spec
models:
  my-13b: {label: My 13B, layers: 40, hidden: 5120, heads: 40, kv_heads: 40, ffn: 13824, vocab: 32000, source: a paper}
"""


def _project(tmp_path: Path, catalog: str) -> Path:
    project = tmp_path / "film"
    shutil.copytree(ROOT / "storyboard", project / "storyboard")
    (project / "storyboard" / "catalog.yaml").write_text(catalog)
    seed_caches(project, "voice", "typeset")  # what its cards do not change is made already
    return project


def test_a_films_catalog_adds_cards_links_and_models(tmp_path: Path):
    project = _project(tmp_path, CATALOG)
    args = ("estimate", "dp", "--gpu", "a100-40gb", "--inter-node", "roce-200g", "--model", "my-13b", "--cards", "16")
    done = run_dtfilm(*args, "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["cluster"]["gpu_label"] == "A100 40GB"
    assert data["memory"]["capacity"] == 40e9
    assert data["cluster"]["inter_node_link_label"] == "RoCE 200G"
    assert data["comm"]["links"]["dp"] == "roce-200g"  # 16 cards: the replicas cross nodes
    assert data["model"]["label"] == "My 13B"
    assert data["model"]["layers"] == 40
    checked = run_dtfilm("check", "dp", *args[2:], cwd=project)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            ("    memory: 40e9\n", ""),
            "storyboard/catalog.yaml:2: cards.a100-40gb: missing 'memory' (bytes, such as 40e9)",
        ),
        (("a100-40gb:", "a100-80gb:"), "cards.a100-80gb: 'a100-80gb' is built in and cannot be redefined"),
        (("intra_node_link: nvlink3", "intra_node_link: nvlink9"), "intra_node_link: 'nvlink9' is not the link"),
        (
            ("{bf16: 312e12, fp32: 156e12}", "{fp32: 156e12}"),
            "peak_flops: {'fp32': '156e12'} is not dense FLOP/s per precision; valid: a mapping",
        ),
        (("latency: 10e-6", "latency: -1"), "links.roce-200g.latency: -1 is not seconds per ring step"),
        (("ffn: 13824", "ffn: 0"), "models.my-13b.ffn: 0 is not MLP width"),
        (("source: a paper", "sauce: a paper"), "unknown field 'sauce'; valid: label, layers"),
    ],
)
def test_an_incomplete_entry_is_one_line_naming_the_field(tmp_path: Path, change: tuple[str, str], says: str):
    project = _project(tmp_path, CATALOG.replace(*change))
    done = run_dtfilm("estimate", "dp", cwd=project)
    assert done.returncode == 2
    assert says in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_built_in_b200_mi300x_and_hdr():
    b200 = json.loads(run_dtfilm("estimate", "dp", "--gpu", "b200-180gb", "--json").stdout)
    assert b200["memory"]["capacity"] == 180e9
    assert b200["cluster"]["peak_flops"] == 2250e12
    assert b200["cluster"]["intra_node_link_label"] == "NVLink 5"
    mi300x = json.loads(run_dtfilm("estimate", "dp", "--gpu", "mi300x-192gb", "--json").stdout)
    assert mi300x["memory"]["capacity"] == 192e9
    assert mi300x["cluster"]["peak_flops"] == pytest.approx(1307.4e12)
    assert mi300x["cluster"]["intra_node_link_label"] == "Infinity Fabric"
    hdr = json.loads(run_dtfilm("estimate", "dp", "--cards", "16", "--inter-node", "infiniband-hdr", "--json").stdout)
    ndr = json.loads(run_dtfilm("estimate", "dp", "--cards", "16", "--json").stdout)
    # the same bytes over half the bandwidth: the transfer takes about twice as long
    assert hdr["comm"]["dp"] == ndr["comm"]["dp"]
    assert hdr["comm"]["seconds"] == pytest.approx(2 * ndr["comm"]["seconds"], rel=0.01)


def test_the_explorer_page_takes_the_catalogs_names(tmp_path: Path):
    """`dtfilm page --models llama3-70b --gpus h100-nvl-94gb` refused catalog names."""
    import subprocess
    import sys

    project = _project(tmp_path, CATALOG)
    code = (
        "from dtfilm.cli import build_parser; "
        "a = build_parser().parse_args(['page', '--models', 'llama-7b,my-13b', '--gpus', 'a100-40gb']); "
        "print(a.models, a.gpus)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "('llama-7b', 'my-13b') ('a100-40gb',)"
    refused = run_dtfilm("page", "--models", "nope", cwd=project)
    assert refused.returncode == 2 and "my-13b" in refused.stderr  # the valid names include the catalog's


MEASURED = CATALOG.replace(
    "    source: NVIDIA A100 datasheet\n",
    "    source: NVIDIA A100 datasheet\n"
    "  a100-40gb-measured:\n"
    "    label: A100 40GB measured\n"
    "    memory: 40e9\n"
    "    peak_flops: {bf16: 312e12, fp32: 156e12}\n"
    "    intra_node_link: nvlink3\n"
    "    memory_bandwidth: 1.555e12\n"
    "    matmul_efficiency: {bf16: 0.5}\n"
    "    attention_efficiency: 0.3\n"
    "    power: 400\n"
    "    source: NVIDIA A100 datasheet; a matmul benchmark of our own\n",
)


def test_a_catalog_card_gives_bandwidth_efficiency_and_power(tmp_path: Path):
    """A card variant with its own memory bandwidth, matmul efficiency and power (issue 57)."""
    project = _project(tmp_path, MEASURED)

    def card(name: str) -> dict:
        done = run_dtfilm("estimate", "dp", "--gpu", name, "--json", cwd=project)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    plain, measured = card("a100-40gb"), card("a100-40gb-measured")
    assert measured["cluster"]["memory_bandwidth"] == 1.555e12 and measured["cluster"]["power_watts"] == 400
    assert measured["cluster"]["matmul_efficiency"] == 0.5 and plain["cluster"]["matmul_efficiency"] == 0.8
    assert plain["cluster"]["power_watts"] == 0  # not given
    # the estimate times the card with them: matmuls at 0.5 of peak against the default 0.8, and
    # memory-bound work at 1.555 TB/s against the default 312 TFLOP/s / 295 FLOP a byte
    slow, fast = plain["compute"]["stage_seconds"], measured["compute"]["stage_seconds"]
    assert fast["matmul"] == pytest.approx(slow["matmul"] * 0.8 / 0.5)
    assert fast["memory"] == pytest.approx(slow["memory"] * plain["cluster"]["memory_bandwidth"] / 1.555e12)
    assert measured["cluster"]["attention_efficiency"] == 0.3


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            ("heads: 40, kv_heads: 40,", "heads: 40,"),
            "storyboard/catalog.yaml:26: models.my-13b: missing 'kv_heads' (key/value heads)",
        ),
        (("    power: 400\n", "    power: -5\n"), "cards.a100-40gb-measured.power: -5 is not the board's power limit"),
        (
            ("matmul_efficiency: {bf16: 0.5}", "matmul_efficiency: {bf16: 1.5}"),
            "matmul_efficiency: {'bf16': 1.5} is not the measured share of peak",
        ),
    ],
)
def test_new_catalog_fields_are_refused_in_one_line(tmp_path: Path, change: tuple[str, str], says: str):
    project = _project(tmp_path, MEASURED.replace(*change))
    done = run_dtfilm("estimate", "dp", cwd=project)
    assert done.returncode == 2
    assert says in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_estimate_says_the_defaults_beside_the_derived_count(tmp_path: Path):
    project = _project(tmp_path, CATALOG)
    done = run_dtfilm("estimate", "dp", "--model", "my-13b", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "swiglu MLP (default), untied embeddings (default): 13B parameters derived" in done.stdout
    data = json.loads(run_dtfilm("estimate", "dp", "--model", "my-13b", "--json", cwd=project).stdout)
    assert data["model"]["defaulted"] == ["mlp", "tied_embeddings"]
    builtin = run_dtfilm("estimate", "dp", "--model", "gpt3-175b")
    assert "gelu MLP, tied embeddings: 175B parameters derived" in builtin.stdout


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("llama3-70b", "llama3.1-70b"),
        ("llama3-8b", "llama3.1-8b"),
        ("llama-70b", "llama-65b"),
        ("qwen-72b", "qwen2.5-72b"),
        ("mistral-8b", "mistral-7b"),
        # nothing in the family within twice the size, one model of it in another (a new user's
        # trial: 'llama-405b' was offered LLaMA 65B)
        ("llama-405b", "llama3.1-405b"),
    ],
)
def test_did_you_mean_keeps_to_the_models_family(typed: str, meant: str):
    from dtfilm.cost.models import PRESETS, model_did_you_mean

    assert model_did_you_mean(typed, PRESETS) == f" (did you mean {meant!r}?)"


def test_did_you_mean_on_the_command_line():
    done = run_dtfilm("estimate", "--model", "llama3-70b")
    assert done.returncode == 2 and "(did you mean 'llama3.1-70b'?)" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def _film_without_catalog(tmp_path: Path) -> Path:
    project = tmp_path / "plain"
    shutil.copytree(ROOT / "storyboard", project / "storyboard")
    (project / "storyboard" / "catalog.yaml").unlink(missing_ok=True)
    return project


def test_a_second_film_in_the_process_does_not_inherit_the_firsts_catalog(tmp_path: Path):
    """Issue 61: loading a film registered its catalog's entries for the process, so a second film
    loaded after it could name the first one's card. Both run here, in one process."""
    from tests.test_hostile_input import dtfilm, one_line_error

    with_catalog, plain = _project(tmp_path, CATALOG), _film_without_catalog(tmp_path)
    code, out, err = dtfilm("estimate", "--json", "--gpu", "a100-40gb", "--model", "my-13b", cwd=with_catalog)
    assert code == 0, err
    assert json.loads(out)["cluster"]["gpu_label"] == "A100 40GB"
    err = one_line_error(dtfilm("estimate", "--gpu", "a100-40gb", cwd=plain), "--gpu", "'a100-40gb' is not one of")
    assert "h100-sxm-80gb" in err and "a100-40gb, " not in err.split("one of", 1)[1]  # the plain film's names
    one_line_error(dtfilm("estimate", "--model", "my-13b", cwd=plain), "--model", "'my-13b' is not one of", "llama-7b")
    one_line_error(
        dtfilm("estimate", "--inter-node", "roce-200g", cwd=plain), "--inter-node", "not one of", "infiniband-ndr"
    )
    # and where the film itself writes the card (film.yaml's defaults), named at its line
    film_yaml = plain / "storyboard" / "film.yaml"
    film_yaml.write_text(film_yaml.read_text().replace("{gpu: h100-sxm-80gb,", "{gpu: a100-40gb,", 1))
    one_line_error(dtfilm("estimate", "dp", cwd=plain), "storyboard/film.yaml:13", "cluster.gpu", "h100-sxm-80gb")


def test_an_entry_deleted_between_two_loads_is_gone_on_the_second(tmp_path: Path):
    """`render --watch` loads the film again after each edit: an entry deleted from catalog.yaml
    stayed registered, and the film still drew the card."""
    from dtfilm.storyboard.film import load_film
    from tests.test_hostile_input import dtfilm, one_line_error

    project = _project(tmp_path, CATALOG)
    assert dtfilm("estimate", "--gpu", "a100-40gb", "--model", "my-13b", cwd=project)[0] == 0
    (project / "storyboard" / "catalog.yaml").write_text(CATALOG.split("links:")[0].replace("a100-40gb", "a100-40gb-2"))
    one_line_error(dtfilm("estimate", "--gpu", "a100-40gb", cwd=project), "--gpu", "a100-40gb-2")
    one_line_error(dtfilm("estimate", "--model", "my-13b", cwd=project), "--model", "llama-7b")
    catalog = load_film(project / "storyboard" / "film.yaml").catalog
    assert "a100-40gb" not in catalog.cards and "a100-40gb-2" in catalog.cards
    assert "roce-200g" not in catalog.links and "my-13b" not in catalog.models


def test_the_built_in_catalogs_are_read_only(tmp_path: Path):
    """Nothing adds to (or takes from) the built-in cards, links and models; a film's catalog is
    a frozen value of its own that still travels (pickled) to the processes drawing its shots."""
    import dataclasses
    import pickle

    from dtfilm.cost import BUILTIN_CATALOG
    from dtfilm.cost.hardware import CARDS, LINKS
    from dtfilm.cost.models import PRESETS
    from dtfilm.storyboard.film import load_film

    film_catalog = load_film(_project(tmp_path, CATALOG) / "storyboard" / "film.yaml").catalog
    for table in (CARDS, LINKS, PRESETS, *vars(BUILTIN_CATALOG).values(), *vars(film_catalog).values()):
        with pytest.raises(TypeError):
            table["x"] = next(iter(table.values()))  # type: ignore[index]
        with pytest.raises((TypeError, AttributeError)):
            table.pop(next(iter(table)))  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        film_catalog.cards = {}  # type: ignore[misc]
    assert "a100-40gb" not in CARDS and "a100-40gb" not in BUILTIN_CATALOG.cards
    assert pickle.loads(pickle.dumps(film_catalog)) == film_catalog
