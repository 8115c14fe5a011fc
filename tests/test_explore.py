"""The explorer page (`dtfilm page`): its numbers are the cost model's, its pictures are drawn
by the film's visuals and redrawn only when what they draw changes, and it works in a real
browser: every pill and the slider's ends show the cost model's values, keyboard included,
with no axe-core violations in either colour scheme, at 1440 and 360 px."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from dtfilm.cost import estimate
from dtfilm.publish.explore.page import page_states
from dtfilm.publish.explore.states import PILLS, STATS, Grid, State, offered, pill_plan, state_flags, state_values
from dtfilm.storyboard.film import load_film
from tests.browser import Browser, axe_violations
from tests.conftest import ROOT, run_dtfilm
from tests.test_embed import _chromium

# LLaMA 7B (the film's model, dense) and Mixtral 8x7B (the EP pill's mixture of experts)
SMALL = ("--models", "llama-7b,mixtral-8x7b", "--gpus", "h100-sxm-80gb", "--micro-batches", "1,8,32", "--jobs", "2")
DENSE_PILLS = [p for p in PILLS if offered(p, "llama-7b")]
FILM = load_film(ROOT / "storyboard" / "film.yaml")


def read_states(folder: Path) -> dict[str, Any]:
    text = (folder / "explore" / "states.js").read_text()
    return json.loads(text[text.index("=") + 1 :].strip().rstrip(";"))


def drawn(stdout: str) -> int:
    return int(re.search(r"\((\d+) drawn\)", stdout).group(1))


def cli_estimate(state: State, cards: int = 8) -> dict[str, Any]:
    """`dtfilm estimate --json` with the state's flags, in its own process, as an outside check runs it."""
    flags: list[str] = []
    for name, value in state_flags(state, cards, 8, "llama-7b").items():
        flag = "--" + name.replace("_", "-")
        flags += [flag] if value is True else [f"--no-{flag[2:]}"] if value is False else [flag, str(value)]
    done = run_dtfilm("estimate", *flags, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def model_values(numbers: dict[str, Any]) -> list[float]:
    out = []
    for _, _, path in STATS:
        value: Any = numbers
        for part in path.split("."):
            value = value[part]
        out.append(float(value))
    return out


def test_pills_are_the_seeds_plans_on_any_rack():
    assert pill_plan("DP", 8, 8) == {"dp": 8, "tp": 1, "pp": 1, "cp": 1, "zero": 0}
    assert pill_plan("TP", 8, 8)["tp"] == 8 and pill_plan("PP", 8, 8)["pp"] == 8
    assert pill_plan("FSDP", 8, 8) == {"dp": 8, "tp": 1, "pp": 1, "cp": 1, "zero": 3}
    assert pill_plan("3D", 8, 8) == {"dp": 1, "tp": 2, "pp": 4, "cp": 1, "zero": 0}  # seed 000: pairs on NVLink
    # more than a node: TP and PP stay inside one, replicas across nodes
    assert pill_plan("TP", 16, 8) == {"dp": 2, "tp": 8, "pp": 1, "cp": 1, "zero": 0}
    assert pill_plan("3D", 16, 8) == {"dp": 2, "tp": 2, "pp": 4, "cp": 1, "zero": 0}
    for pill in PILLS:  # one card: every pill is the one card
        plan = pill_plan(pill, 1, 8, experts=8)
        assert plan["dp"] * plan["tp"] * plan["pp"] * plan["cp"] * plan.get("ep", 1) == 1
    # CP: the sequence over a node's cards, replicas across nodes; EP: data parallel, the experts
    # over as many cards as divide both, and only for a model with experts
    assert pill_plan("CP", 16, 8) == {"dp": 2, "tp": 1, "pp": 1, "cp": 8, "zero": 0}
    assert pill_plan("EP", 8, 8, experts=8) == {"dp": 8, "tp": 1, "pp": 1, "cp": 1, "ep": 8, "zero": 0}
    assert pill_plan("EP", 16, 8, experts=8)["ep"] == 8 and pill_plan("EP", 8, 8, experts=256)["ep"] == 8
    with pytest.raises(ValueError, match="mixture-of-experts"):
        pill_plan("EP", 8, 8)
    assert offered("EP", "mixtral-8x7b") and not offered("EP", "llama-7b") and offered("CP", "llama-7b")


def test_the_ep_pill_adds_states_for_mixture_of_experts_models_only():
    grid = Grid(("llama-7b", "mixtral-8x7b"), ("h100-sxm-80gb",), 8, (1, 8))
    states = list(grid.states())
    assert len(states) == (len(PILLS) - 1 + len(PILLS)) * 2 * 3 * 2  # LLaMA's 6 pills, Mixtral's 7
    assert {s.model for s in states if s.pill == "EP"} == {"mixtral-8x7b"}


def test_a_state_is_dtfilm_estimate_with_its_flags():
    """The page's numbers come from the cost model: sampled states (every pill, the slider's
    ends, each precision, checkpointing, another model and card) equal `dtfilm estimate --json`
    run with the state's flags in a separate process."""
    grid = Grid(("llama-7b", "llama2-70b", "mixtral-8x7b"), ("h100-sxm-80gb", "a100-80gb"), 8, (1, 8, 32))
    states, _ = page_states(grid, FILM.defaults)
    samples = [
        *(State("llama-7b", "h100-sxm-80gb", pill, 8, "bf16", False) for pill in DENSE_PILLS),
        State("llama-7b", "h100-sxm-80gb", "PP", 1, "bf16", False),
        State("llama-7b", "h100-sxm-80gb", "PP", 32, "fp32", True),
        State("llama2-70b", "a100-80gb", "FSDP", 1, "fp8", False),
        State("mixtral-8x7b", "h100-sxm-80gb", "EP", 8, "bf16", False),
    ]
    for state in samples:
        numbers = cli_estimate(state)
        shown = states[state.key]
        assert [value for _, value in shown["stats"]] == model_values(numbers), state.key
        assert shown["fits"] == numbers["memory"]["fits"]
    # the film's own model keeps the film's parameter count (the page and the film agree)
    assert cli_estimate(samples[0])["params"] == 7e9


def test_a_small_margin_is_said_in_megabytes_as_the_film_says_it():
    """The page's verdict said "0.13 GB spare" where the film says "132 MB to spare"."""
    from dtfilm.publish.explore.page import VERDICT_FITS, _text

    said = {
        h: _text(VERDICT_FITS, {"memory": {"capacity": 80e9, "headroom": h}}).replace("\xa0", " ")
        for h in (0.132e9, 12.3e9)
    }
    assert said == {0.132e9: "of 80 GB · fits, 132 MB spare", 12.3e9: "of 80 GB · fits, 12.3 GB spare"}


@pytest.fixture(scope="session")
def page(tmp_path_factory: pytest.TempPathFactory, dp_render: Path) -> Path:
    """The page for one model and card, with the dp chapter rendered beside it (the other
    pills' chapters are not: the page says so)."""
    out = tmp_path_factory.mktemp("page")
    for name in ("dp.mp4", "dp.png", "dp.vtt", "manifest.json"):
        shutil.copy2(dp_render / name, out / name)
    done = run_dtfilm("page", *SMALL, "--no-film", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "no film for tp, pp, fsdp, cp, ep, 3d" in done.stderr
    assert 'href="explore/index.html"' in (out / "index.html").read_text()  # the gallery links to it
    return out


def _stats(browser: Browser) -> dict[str, Any]:
    return browser.evaluate(
        "({values: [0,1,2,3].map(i => Number(document.getElementById('stat-' + i).dataset.value)),"
        " texts: [0,1,2,3].map(i => document.getElementById('stat-' + i).textContent),"
        " picture: document.getElementById('picture').getAttribute('src'),"
        " light: document.getElementById('picture-light').getAttribute('srcset'),"
        " state: document.body.dataset.state})"
    )


@pytest.mark.render
@pytest.mark.xdist_group("dp-default")  # the dp render is that group's
def test_every_pill_and_the_sliders_ends_show_the_cost_models_values(page: Path):
    states = read_states(page)["states"]
    url = (page / "explore" / "index.html").as_uri()
    seen_pictures = set()
    with Browser(_chromium()) as browser:
        browser.open(url)
        for pill in DENSE_PILLS:
            browser.evaluate(f"document.querySelector('[data-pill=\"{pill}\"]').click()")
            shown = _stats(browser)
            state = State("llama-7b", "h100-sxm-80gb", pill, 8, "bf16", False)
            numbers = estimate(state_values(state, 8, FILM.defaults))
            assert shown["state"] == state.key
            assert shown["values"] == model_values(numbers), pill
            assert shown["texts"] == [text for text, _ in states[state.key]["stats"]]
            assert browser.evaluate(f"document.querySelector('[data-pill=\"{pill}\"]').getAttribute('aria-pressed')")
            seen_pictures.add(shown["picture"])
            image = page / "explore" / shown["picture"]
            assert image.is_file() and (page / "explore" / shown["light"]).is_file()
        assert len(seen_pictures) == len(DENSE_PILLS)  # the picture changed with every pill

        # the slider's ends under PP, set with the keyboard (Home and End on the focused range)
        browser.evaluate("document.querySelector('[data-pill=\"PP\"]').click()")
        ends = {}
        for key, m in (("Home", 1), ("End", 32)):
            browser.evaluate("document.getElementById('micro-batches').focus()")
            for kind in ("keyDown", "keyUp"):
                code = 36 if key == "Home" else 35
                browser.send(
                    "Input.dispatchKeyEvent", {"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code}
                )
            shown = _stats(browser)
            state = State("llama-7b", "h100-sxm-80gb", "PP", m, "bf16", False)
            assert shown["state"] == state.key
            assert shown["values"] == model_values(estimate(state_values(state, 8, FILM.defaults)))
            assert browser.evaluate("document.getElementById('micro-batches').getAttribute('aria-valuetext')") == (
                f"{m} micro-batches"
            )
            ends[m] = shown
        assert ends[1]["picture"] != ends[32]["picture"]  # the timeline changed
        assert ends[1]["values"][2] > ends[32]["values"][2]  # the bubble shrank

        # the switches: checkpointing empties the activations, fp32 and fp8 change the state
        browser.evaluate("document.getElementById('checkpointing').click()")
        with_ckpt = _stats(browser)
        assert with_ckpt["values"][0] < ends[32]["values"][0]
        browser.evaluate("document.querySelector('input[name=precision][value=fp8]').click()")
        assert _stats(browser)["state"].endswith("|32|fp8|ckpt")


@pytest.mark.render
@pytest.mark.xdist_group("dp-default")
def test_the_ep_pill_shows_the_cost_models_figures_for_a_mixture_of_experts_only(page: Path):
    """Issue 60: the EP pill is offered for Mixtral (its figures the cost model's for data
    parallel with the experts over 8 cards) and disabled, with why, for the film's dense model."""
    url = (page / "explore" / "index.html").as_uri()
    ep = "document.querySelector('[data-pill=\"EP\"]')"
    note = "(n => ({hidden: n.hidden, text: n.textContent}))(document.getElementById('pill-note'))"
    choose = "(m => { const s = document.getElementById('model'); s.value = m; s.dispatchEvent(new Event('change')); })"
    with Browser(_chromium()) as browser:
        browser.open(url)
        # the film's model is dense: EP stays in the row, disabled, and the line under the pills says why
        assert browser.evaluate(f"{ep}.getAttribute('aria-disabled')") == "true"
        said = browser.evaluate(note)
        assert not said["hidden"] and "LLaMA 7B is dense (0 experts)" in said["text"], said
        before = _stats(browser)
        browser.evaluate(f"{ep}.click()")
        assert _stats(browser)["state"] == before["state"]  # a click on it changes nothing
        # Mixtral: EP offered; DP, then EP, each shows the cost model's figures for its plan
        browser.evaluate(f"{choose}('mixtral-8x7b')")
        assert browser.evaluate(f"{ep}.hasAttribute('aria-disabled')") is False and browser.evaluate(note)["hidden"]
        shown, numbers = {}, {}
        for pill in ("DP", "EP"):
            browser.evaluate(f"document.querySelector('[data-pill=\"{pill}\"]').click()")
            state = State("mixtral-8x7b", "h100-sxm-80gb", pill, 8, "bf16", False)
            numbers[pill] = estimate(state_values(state, 8, FILM.defaults))
            shown[pill] = _stats(browser)
            assert shown[pill]["state"] == state.key
            assert shown[pill]["values"] == model_values(numbers[pill]), pill
        assert numbers["EP"]["plan"]["ep"] == 8 and numbers["DP"]["plan"]["ep"] == 1
        assert shown["EP"]["values"] != shown["DP"]["values"] and shown["EP"]["picture"] != shown["DP"]["picture"]
        assert shown["EP"]["values"][0] < shown["DP"]["values"][0]  # each card holds an eighth of the experts
        assert "ep 8" in browser.evaluate("document.getElementById('plan').textContent")
        # back to the dense model with EP pressed: it falls back to DP, and says why
        browser.evaluate(f"{choose}('llama-7b')")
        assert _stats(browser)["state"] == State("llama-7b", "h100-sxm-80gb", "DP", 8, "bf16", False).key
        assert not browser.evaluate(note)["hidden"]


@pytest.mark.render
@pytest.mark.xdist_group("dp-default")
def test_the_page_plays_its_film_and_passes_axe_in_both_schemes_at_1440_and_360(page: Path):
    url = (page / "explore" / "index.html").as_uri()
    shots = os.environ.get("DTFILM_SCREENSHOTS")
    with Browser(_chromium()) as browser:
        for scheme in ("dark", "light"):
            browser.color_scheme(scheme)
            for width in (1440, 360):
                browser.open(url, width, 900)
                assert browser.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scroll
                background = browser.evaluate("getComputedStyle(document.body).backgroundColor")
                assert background == ("rgb(14, 17, 23)" if scheme == "dark" else "rgb(255, 255, 255)")
                picture = browser.evaluate("document.getElementById('picture').currentSrc")
                first = read_states(page)
                dark, light, *_ = first["pictures"][first["states"][first["opening"]]["picture"]]
                assert picture.endswith(dark if scheme == "dark" else light)  # the scheme's still
                full = browser.evaluate("document.getElementById('picture-link').href")
                assert full == picture  # and the link to it at full size
                assert axe_violations(browser) == [], (scheme, width)
                if shots:
                    browser.screenshot(Path(shots) / f"explore-{width}-{scheme}.png")
        # DP's chapter inline, with its voice and its captions (inline, so they load from file://)
        film = browser.evaluate(
            "new Promise(done => { const v = document.getElementById('film-video');"
            " v.preload = 'auto'; v.textTracks[0].mode = 'showing';"
            " const cues = () => v.textTracks[0].cues ? v.textTracks[0].cues.length : 0;"
            " const report = () => done({duration: v.duration, cues: cues(),"
            " hidden: document.getElementById('film-player').hidden});"
            " const later = () => setTimeout(report, 1500);"
            " if (v.readyState >= 1) later(); else v.addEventListener('loadedmetadata', later);"
            " v.load(); })"
        )
        manifest = json.loads((page / "manifest.json").read_text())
        assert film["hidden"] is False
        assert film["duration"] == pytest.approx(manifest["chapters"]["dp"]["duration"], abs=0.2)
        assert film["cues"] > 3
        browser.evaluate("document.querySelector('[data-pill=\"TP\"]').click()")
        assert browser.evaluate("document.getElementById('film-missing').hidden") is False


def test_a_rebuild_redraws_only_the_pictures_whose_numbers_changed(tmp_path: Path):
    project = tmp_path / "project"
    shutil.copytree(ROOT / "storyboard", project / "storyboard")
    film_yaml = project / "storyboard" / "film.yaml"
    args = ("page", "--models", "llama-7b", "--gpus", "h100-sxm-80gb", "--micro-batches", "1,32", "--no-film")
    first = run_dtfilm(*args, cwd=project)
    assert first.returncode == 0, first.stderr
    pictures = int(re.search(r"(\d+) pictures", first.stdout).group(1))
    assert drawn(first.stdout) == pictures
    again = run_dtfilm(*args, cwd=project)
    assert drawn(again.stdout) == 0

    # GPipe instead of 1F1B changes what the pipelines hold and their timelines, and nothing
    # that DP, TP and FSDP draw: exactly the pictures whose drawn numbers changed are drawn
    before = read_states(project / "renders")
    grid = Grid(("llama-7b",), ("h100-sxm-80gb",), 8, (1, 32))

    def keys() -> set[str]:
        distinct = page_states(grid, load_film(film_yaml).defaults)[1]
        return {facts.key(theme) for facts in distinct for theme in ("dark", "light")}

    old_keys = keys()
    film_yaml.write_text(film_yaml.read_text().replace("schedule: 1f1b", "schedule: gpipe"))
    new_keys = keys()
    gpipe = run_dtfilm(*args, cwd=project)
    assert gpipe.returncode == 0, gpipe.stderr
    assert 0 < drawn(gpipe.stdout) == len(new_keys - old_keys) < pictures
    after = read_states(project / "renders")
    for pill, same in (("DP", True), ("PP", False)):
        key = f"llama-7b|h100-sxm-80gb|{pill}|32|bf16|nockpt"
        assert (after["states"][key]["stats"][0] == before["states"][key]["stats"][0]) is same
    stills = {p.name for p in (project / "renders" / "explore" / "stills").iterdir()}
    assert stills == {f"{k}.webp" for k in new_keys}  # the old ones are gone from the page and the cache
    assert {p.name for p in (project / "renders" / "cache" / "explore").iterdir()} == stills

    # bad input: one line, exit 2, the page built before left whole
    index = (project / "renders" / "explore" / "index.html").read_bytes()
    bad = run_dtfilm("page", "--cards", "12", "--no-film", cwd=project)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--cards" in bad.stderr
    assert "Traceback" not in bad.stderr
    assert (project / "renders" / "explore" / "index.html").read_bytes() == index
    assert not [p for p in (project / "renders").iterdir() if p.name.startswith(".explore")]


def test_embed_explore_prints_an_iframe_or_a_link():
    html = run_dtfilm("embed", "explore")
    assert html.returncode == 0
    assert html.stdout.startswith('<iframe src="renders/explore/index.html"')
    assert 'title="Slicing the loaf: explore the rack"' in html.stdout
    assert "copy the folder" in html.stderr
    md = run_dtfilm("embed", "explore", "--as", "markdown", "--base", "../renders")
    assert md.stdout.strip() == r"[Slicing the loaf\: explore the rack](../renders/explore/index.html)"  # (escaped)
    rst = run_dtfilm("embed", "explore", "--as", "rst")
    assert rst.stdout.startswith(".. raw:: html\n\n   <iframe")


def test_work_on_the_page_leaves_the_films_shots_fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The film's shots are keyed by dtfilm's code, but not by the page's: no chapter runs it."""
    import dtfilm.render.cache

    package = tmp_path / "dtfilm"
    shutil.copytree(
        Path(dtfilm.render.cache.__file__).parents[1], package, ignore=shutil.ignore_patterns("__pycache__")
    )
    monkeypatch.setattr(dtfilm.render.cache, "PACKAGE", package)
    digest = dtfilm.render.cache.code_digest.__wrapped__
    before = digest()
    (package / "publish" / "explore" / "page.py").write_text(
        (package / "publish" / "explore" / "page.py").read_text() + "\n# edited\n"
    )
    assert digest() == before
    (package / "visuals" / "card.py").write_text((package / "visuals" / "card.py").read_text() + "\n# edited\n")
    assert digest() != before


def test_a_still_keeps_every_colour_of_the_theme_on_16384_cards(tmp_path: Path):
    """The stills are stored in a palette: every memory colour of the legend survives it, even
    where the picture is almost all one colour (405B under FSDP on 16,384 cards, out of memory)."""
    import numpy as np
    from PIL import Image

    from dtfilm.publish.explore.picture import draw_picture, picture_facts
    from dtfilm.visuals.theme import THEMES

    state = State("llama3.1-405b", "a100-80gb", "FSDP", 1, "bf16", False)
    values = state_values(state, 16384, FILM.defaults)
    for theme in ("dark", "light"):
        target = tmp_path / f"{theme}.webp"
        draw_picture(picture_facts(estimate(values)), theme, target)
        pixels = np.asarray(Image.open(target).convert("RGB")).reshape(-1, 3).astype(int)
        for part, colour in THEMES[theme].memory.items():
            rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
            assert np.abs(pixels - rgb).max(axis=1).min() <= 6, (theme, part, colour)
