"""A film of your own setup (issue 59): a user's own plan ranked by `dtfilm plan --rank`, and the
smaller findings of a new user's run (Llama 3 70B on 256 H100s, tp 8 x pp 4 x dp 8, ZeRO-1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dtfilm.cost.planner import plan
from dtfilm.cost.rank import PART_WORDS, rank
from tests.conftest import run_dtfilm
from tests.test_planner import make_setup

USER = ["--model", "llama3.1-70b", "--cards", "256", "--gpu", "h100-sxm-80gb", "--seq-len", "8K"]
USER_PLAN = ["--dp", "8", "--tp", "8", "--pp", "4", "--zero", "1"]


@pytest.fixture(scope="module")
def ranked_json() -> dict:
    done = run_dtfilm("plan", *USER, "--global-batch", "512", "--rank", *USER_PLAN, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_rank_searches_every_plan_and_places_the_given_one(ranked_json):
    free = json.loads(run_dtfilm("plan", *USER, "--global-batch", "512", "--json").stdout)
    # --rank does not restrict: the pick and the plans listed are the free search's
    assert ranked_json["fixed"] == {} and ranked_json["pick"] == free["pick"]
    assert ranked_json["plans"] == free["plans"]
    rank_ = ranked_json["rank"]
    assert rank_["given"] == {"dp": 8, "tp": 8, "pp": 4, "zero": 1}
    assert rank_["of"] == free["fitting"]
    row = rank_["plan"]
    assert (row["dp"], row["tp"], row["pp"], row["zero"]) == (8, 8, 4, 1)
    # its row is the restricted search's pick: the best plan with those degrees
    restricted = json.loads(run_dtfilm("plan", *USER, "--global-batch", "512", *USER_PLAN, "--json").stdout)
    assert row == restricted["pick"]
    assert rank_["position"] > 1
    faster = rank_["faster"]
    # the plans ranked above it are faster per token or as fast with less memory; the faster tight
    # fits the ranking puts after every plan with room
    assert faster["count"] - faster["tight"] <= rank_["position"] - 1 <= faster["count"] + 1
    assert sum(c["plans"] for c in faster["changes"]) == faster["count"]
    for change in faster["changes"]:
        assert change["best_step_seconds"] < row["step_seconds"]
        for name, (given, theirs) in change["changes"].items():
            assert given == row[name] and theirs != given
    assert faster["changes"][0]["best_step_seconds"] == pytest.approx(ranked_json["pick"]["step_seconds"])


def test_rank_why_is_the_cost_models_parts_of_a_step(ranked_json):
    why = {w["part"]: w for w in ranked_json["rank"]["why"]}
    # the pick (pp 1) has no bubble; the user's four stages do
    assert why["bubble"]["pick"] == 0 and why["bubble"]["given"] > 0
    assert why["memory"]["given"] == pytest.approx(ranked_json["rank"]["plan"]["memory_total"])
    assert why["memory"]["pick"] == pytest.approx(ranked_json["pick"]["memory_total"])
    # the parts named add up to the gap between the two steps (those left out are each under a
    # thousandth of the step)
    gap = ranked_json["rank"]["plan"]["step_seconds"] - ranked_json["pick"]["step_seconds"]
    named = sum(w["given"] - w["pick"] for w in why.values() if w["part"] != "memory")
    step = ranked_json["rank"]["plan"]["step_seconds"]
    assert named == pytest.approx(gap, abs=len(PART_WORDS) * 0.001 * step)


def test_rank_in_words():
    done = run_dtfilm("plan", *USER, "--global-batch", "512", "--rank", *USER_PLAN)
    assert done.returncode == 0, done.stderr
    said = done.stdout
    position = json.loads(run_dtfilm("plan", *USER, "--global-batch", "512", "--rank", *USER_PLAN, "--json").stdout)
    assert f"ranked {position['rank']['position']:,} of {position['rank']['of']:,} plans that fit" in said
    faster = position["rank"]["faster"]["count"]
    assert f"{faster:,} plans are faster per token" in said and "(s)" not in said
    assert "dp 8 to 32" in said  # what the faster plans change
    assert "Why the pick, dp 32 x tp 8 x pp 1 x cp 1, ZeRO-1, is faster" in said
    assert "the pipeline bubble:" in said and "memory per card:" in said


def test_rank_of_the_pick_and_of_a_plan_that_does_not_fit():
    setup = make_setup(model="llama3.1-70b", cards=256, seq_len=8192)
    pick = plan(setup, 512)["pick"]
    first = rank(setup, 512, {k: pick[k] for k in ("dp", "tp", "pp", "cp", "zero")})
    assert first["position"] == 1 and first["faster"]["count"] == 0 and first["why"] == []
    # ZeRO-0 with the layers whole on each of 8 cards: 145 GB on an 80 GB card
    over = rank(setup, 512, {"tp": 8, "pp": 1, "cp": 1, "zero": 0})
    assert over["position"] is None and over["faster"] is None
    assert over["why"][0]["part"] == "memory" and over["why"][0]["given"] > setup.card.memory_bytes


def test_rank_of_degrees_the_batch_cannot_take():
    from dtfilm.cost.rank import rank_lines

    setup = make_setup(model="llama3.1-70b", cards=256, seq_len=8192)
    result = rank(setup, 100, {"dp": 8, "tp": 8, "pp": 4})
    assert result["laid_out"] == 0 and result["position"] is None and result["plan"] is None
    assert rank_lines(result) == [
        "Your plan (dp 8, tp 8, pp 4): no plan splits a global batch of 100 sequences with those degrees"
        " (dp must divide it, into at most 1,024 micro-batches of at most 1,024 sequences)."
    ]


def test_rank_needs_a_plan_and_a_storyboards_plan_does_not_restrict():
    done = run_dtfilm("plan", *USER, "--rank")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("dtfilm: error: --rank: needs the plan to rank") and done.stderr.count("\n") == 1
    # the 3D chapter writes plan: {tp: 2, pp: 4}; as a storyboard's plan it restricts nothing
    free = json.loads(run_dtfilm("plan", "3d", "--json").stdout)
    assert free["fixed"] == {}
    assert (free["pick"]["tp"], free["pick"]["pp"]) != (2, 4) or free["fitting"] > 0


def test_plan_words_name_the_bubble_and_the_stage_as_they_are():
    setup = make_setup(model="llama3.1-70b", cards=256, seq_len=8192)
    restricted = plan(setup, 512, fixed={"tp": 8, "pp": 4, "zero": 1})
    said = "\n".join(restricted["reason"])
    # 32 micro-batches over 4 stages of 8 virtual stages: 1.16%, not "1%" (nor "0%" for 0.39%)
    assert "keep the bubble at 1.16%." in said
    free = plan(setup, 512)
    said = "\n".join(free["reason"])
    # ZeRO-1: over 16 micro-batches ZeRO-2 holds the gradients whole too (memory.gradients_sharded)
    assert free["pick"]["zero"] == 1 and free["pick"]["tp"] == 8
    assert all(p["zero"] != 2 or p["micro_batches"] == 1 for p in free["plans"])  # no ZeRO-1 twin listed
    # not "stage 3 is the least that fits" beside a ZeRO-1 pick that splits the layers
    assert "(stage 3 is the least that fits)" not in said
    assert "with the batch split alone, stage 3 is the least that fits; the pick also splits the layers" in said
    # not "sharding the layers shrinks the buffer" beside a pick that moves more traffic (3.59 s against 1.27)
    assert free["pick"]["comm_seconds"] > free["data_parallel_only"]["comm_seconds"]
    assert "shrinks the buffer" not in said
    assert "the pick moves more (3.59 s) and is faster all the same (`dtfilm plan --rank --tp 1" in said


def test_step_times_past_a_second_are_in_seconds():
    """The tensor chapter's detail and the 3D chapter's traffic per group said "2,924 ms a step"."""
    from dtfilm.numbers import Numbers
    from dtfilm.shots.tensor.draw import DETAIL
    from tests.test_cost_reference import run

    numbers = Numbers(run(model="llama3.1-70b", cards=256, seq_len="8K", tp=8, pp=4, zero=1, global_batch=512))
    detail = numbers(DETAIL).text
    assert not re.search(r"\d,\d{3}\s?ms", detail), detail
    assert "2.92\u00a0s of all-reduce per step" in detail
    source = (Path(__file__).parent.parent / "dtfilm" / "shots" / "three_d" / "draw.py").read_text()
    assert "seconds_by_group.{group}:time}} a step" in source


def _project(tmp_path: Path) -> Path:
    done = run_dtfilm("init", str(tmp_path / "film"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return tmp_path / "film"


def test_nodes_flag_is_blamed_for_cards_it_makes(tmp_path):
    project = _project(tmp_path)
    film = project / "storyboard" / "film.yaml"
    film.write_text(film.read_text().replace("plan: {zero: 0,", "plan: {tp: 8, pp: 4, zero: 0,"))
    done = run_dtfilm("estimate", "--nodes", "31", cwd=project)
    assert done.returncode == 2
    assert done.stderr.startswith("dtfilm: error: --nodes: 248 cards are not a whole number"), done.stderr


def test_set_with_mapping_values_is_told_so(tmp_path):
    project = _project(tmp_path)
    chapter = project / "storyboard" / "memory.yaml"
    chapter.write_text(
        chapter.read_text()
        + "  - kind: sweep\n    beat: sw\n    set: cluster.cards\n"
        + "    values: [{cluster.cards: 8}, {cluster.cards: 16}]\n"
    )
    done = run_dtfilm("check", "memory", cwd=project)
    assert done.returncode == 2
    assert "values[0]: a mapping of inputs is not a value of cluster.cards" in done.stderr
    assert "leave `set` out" in done.stderr and "not a whole number" not in done.stderr


# -- the film's title and subtitle are templates (issue 59, item 5) -------------------------------


def _film_yaml(project: Path, title: str, subtitle: str | None = None) -> Path:
    film = project / "storyboard" / "film.yaml"
    lines = film.read_text().splitlines()
    lines = [f"title: {json.dumps(title)}" if line.startswith("title:") else line for line in lines]
    if subtitle is not None:
        lines = [f"subtitle: {json.dumps(subtitle)}" if line.startswith("subtitle:") else line for line in lines]
    film.write_text("\n".join(lines) + "\n")
    return film


def test_the_films_title_is_a_template_on_its_pages(tmp_path):
    from dtfilm.render.embed import write_gallery
    from dtfilm.storyboard import load_film

    project = _project(tmp_path)
    film = load_film(_film_yaml(project, "{model.label} on {cluster.cards:int} cards", "{~One} card at a time"))
    out = tmp_path / "renders"
    out.mkdir()
    page = write_gallery(out, film, {"chapters": {}, "film": {}}).read_text()
    assert "<title>LLaMA 7B on 8 cards</title>" in page and "<h1>LLaMA 7B on 8 cards</h1>" in page
    assert '<p class="subtitle">One card at a time</p>' in page and "{" not in page.split("<style>")[0]
    # under the flags the render took
    page = write_gallery(out, film, {"chapters": {}, "film": {}}, {"cards": 16}).read_text()
    assert "<h1>LLaMA 7B on 16 cards</h1>" in page
    # the deck's and the explorer page's titles take the same text
    from dtfilm.storyboard.film import film_titles

    assert film_titles(film)[0].text == "LLaMA 7B on 8 cards"
    source = (Path(__file__).parent.parent / "dtfilm" / "publish" / "slides.py").read_text()
    assert "title = deck_theme(film.theme), film_titles(film)[0].text" in source
    assert "deck_html(title, theme, shots, voice)" in source


def test_a_title_card_shows_the_films_title_under_the_chapters_numbers(tmp_path):
    from dtfilm.storyboard import load_chapter

    project = _project(tmp_path)
    _film_yaml(project, "{model.label} on {cluster.cards:int} cards")
    chapter = load_chapter(project / "storyboard" / "memory.yaml")
    assert chapter.film_title.text == "LLaMA 7B on 1 card"  # the memory chapter's one card
    assert [f.path for f in chapter.film_title.facts] == ["model.label", "cluster.cards"]


def test_typed_digits_in_the_films_title_fail_check(tmp_path):
    project = _project(tmp_path)
    _film_yaml(project, "Llama 3 70B on 256 H100s")
    done = run_dtfilm("check", "memory", cwd=project)
    assert done.returncode == 1
    assert "memory: film: title: 'Llama 3 70B on 256 H100s': '256' is typed, not taken from the cost model" in (
        done.stdout
    )
    # a template's error names film.yaml's line and key, in one line, exit 2
    _film_yaml(project, "{model.label} on {cluster.cardz:int}")
    done = run_dtfilm("check", "memory", cwd=project)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr.startswith("dtfilm: error: storyboard/film.yaml:3: title: unknown value {cluster.cardz}")


def test_status_says_the_films_title_changed_not_its_numbers(tmp_path):
    from dtfilm.render.cache import chapter_key, stale_reasons
    from dtfilm.storyboard import load_chapter

    project = _project(tmp_path)
    path = project / "storyboard" / "memory.yaml"
    before = chapter_key(load_chapter(path), "preview", "dark")
    _film_yaml(project, "Our own film")
    after = chapter_key(load_chapter(path), "preview", "dark")
    entry = {"parts": before.parts, "inputs": before.inputs, "film": before.film, "files": {}}
    reasons = stale_reasons(after, {"chapters": {"memory": entry}, "film": {}}, tmp_path)
    assert reasons[0] == "the film's title changed: 'My first film' → 'Our own film'"
    assert not any("numbers changed" in r for r in reasons)
    from dtfilm.render.cache import film_changes

    assert film_changes(entry["film"], after.film, values=False) == "the film's title changed"


def test_the_gallery_shows_each_chapters_subtitle():
    from dtfilm.render.embed import gallery_html

    chapters = [{"id": "memory", "title": "The memory ledger", "subtitle": "Sixteen bytes a parameter", "duration": 22}]
    page = gallery_html("Film", "The films own subtitle", "", chapters)
    assert '<h1>Film</h1>\n<p class="subtitle">The films own subtitle</p>' in page
    assert '<h2>The memory ledger</h2>\n<p class="subtitle">Sixteen bytes a parameter</p>' in page


# -- slides, single shots and stills are outputs with records (issue 59, item 6) -----------------


def _fake_renders(project: Path) -> Path:
    """A renders folder as a render of the memory chapter leaves it, for the deck's inputs: the
    manifest's shots and their clip and still files (their bytes are not read here)."""
    renders = project / "renders"
    (renders / "shots" / "memory").mkdir(parents=True)
    shots = []
    for i, beat in enumerate(("title", "sixteen-bytes")):
        clip, still = f"shots/memory/0{i}-{beat}.mp4", f"shots/memory/0{i}-{beat}.png"
        (renders / clip).write_bytes(b"clip")
        (renders / still).write_bytes(b"still")
        shot = {"beat": beat, "start": 0.0, "end": 1.0, "key": f"{i}" * 16, "clip": clip, "still": still}
        shots.append({**shot, "narration": f"What {beat} says."})
    entry = {"key": "a" * 16, "title": "The memory ledger", "shots": shots}
    (renders / "manifest.json").write_text(json.dumps({"version": 1, "film": {}, "chapters": {"memory": entry}}))
    (renders / ".dtfilm-renders").write_text("")
    return renders


def test_slides_without_python_pptx_write_nothing(tmp_path):
    import subprocess
    import sys

    project = _project(tmp_path)
    renders = _fake_renders(project)
    before = sorted(p.relative_to(renders).as_posix() for p in renders.rglob("*"))
    code = "import sys; sys.modules['pptx'] = None; from dtfilm.cli import run; sys.argv = ['dtfilm', 'slides']; run()"
    done = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "needs python-pptx" in done.stderr and "--no-pptx" in done.stderr and "nothing was written" in done.stderr
    assert "pip install 'dtfilm[slides]'" not in done.stderr  # (no index assumed: the user's own wheel)
    assert sorted(p.relative_to(renders).as_posix() for p in renders.rglob("*")) == before


def test_the_decks_record_follows_its_clips_and_notes(tmp_path):
    from dtfilm.render.cache import read_manifest
    from dtfilm.render.derived import SLIDES, deck_inputs, deck_key, deck_reasons, slides_command, slides_record

    project = _project(tmp_path)
    renders = _fake_renders(project)
    (renders / "slides.html").write_text("<html>")
    manifest = read_manifest(renders)
    key = deck_key(deck_inputs(manifest, ["memory"], "My first film", "black"))
    manifest[SLIDES] = slides_record(renders, ["memory"], key, False, False, None)
    assert deck_reasons(manifest, renders, "My first film", "black") == []
    # a render changed a shot's narration: the deck's notes are old
    manifest["chapters"]["memory"]["shots"][0]["narration"] = "Something else."
    assert deck_reasons(manifest, renders, "My first film", "black") == [
        "its clips, notes or titles changed since it was made"
    ]
    # a new clip (its cache key in its name) and a new film title do too
    manifest["chapters"]["memory"]["shots"][0]["narration"] = "What title says."
    assert deck_reasons(manifest, renders, "Another title", "black") != []
    (renders / "slides.html").write_text("<html> edited")
    assert "slides.html changed since it was rendered" in deck_reasons(manifest, renders, "My first film", "black")
    assert slides_command(manifest[SLIDES]) == "dtfilm slides memory --no-pptx"


def test_stills_and_single_shots_are_named_with_their_quality_and_recorded(tmp_path):
    from dtfilm.render.cache import chapter_key
    from dtfilm.render.derived import single_command, single_name, single_reasons, single_record
    from dtfilm.storyboard import load_chapter

    assert single_name("dp", "ring", "preview", 4.5) == "dp-ring-4.5s-preview.png"
    assert single_name("dp", "ring", "final", 4.5) == "dp-ring-4.5s-final.png"
    assert single_name("dp", "ring", "final") == "dp-ring-final.mp4"
    project = _project(tmp_path)
    renders = project / "renders"
    (renders / "one").mkdir(parents=True)
    name = single_name("memory", "title", "final", 1.0)
    (renders / "one" / name).write_bytes(b"png")
    path = project / "storyboard" / "memory.yaml"
    key = chapter_key(load_chapter(path, {"cards": 2}), "final", "dark").key
    record = single_record(renders, name, key, "memory:title", "final", None, {"cards": 2}, 1.0, None)
    assert single_reasons(project, renders, name, record) == []
    path.write_text(path.read_text().replace("count what training keeps", "count what a card keeps"))
    assert single_reasons(project, renders, name, record) == ["its chapter changed since it was made"]
    assert single_command(record) == "dtfilm still memory:title --at 1 --quality final --cards 2"


def test_the_envelope_lists_every_link_between_nodes():
    """The envelope page lacked RoCE 400G and Omni-Path, which `dtfilm paths` lists."""
    from dtfilm.cost.hardware import INTER_NODE_LINKS

    page = (Path(__file__).parent.parent / "docs" / "envelope.md").read_text()
    row = next(line for line in page.splitlines() if line.startswith("| link between nodes |"))
    listed = re.search(r"`([a-z0-9 -]+)`, and any in the catalog", row).group(1).split()
    assert listed == list(INTER_NODE_LINKS)


def test_the_readme_init_writes_assumes_no_package_index(tmp_path):
    """dtfilm came from a wheel: the README that `init` writes linked to an index's page."""
    readme = (_project(tmp_path) / "README.md").read_text()
    assert "pypi.org" not in readme and "dtfilm --help" in readme


def test_gif_and_webm_copies_made_before_follow_their_clip(tmp_path, monkeypatch):
    """A GIF made by `render --format gif` went on showing the old clip after a render without
    the flag, and `status` said nothing of it."""
    import os
    from types import SimpleNamespace

    from dtfilm.render import chapters, status

    (tmp_path / "memory.mp4").write_bytes(b"new clip")
    (tmp_path / "memory.gif").write_bytes(b"old copy")
    os.utime(tmp_path / "memory.gif", (1, 1))
    work = SimpleNamespace(chapters=[SimpleNamespace(id="memory")], job=SimpleNamespace(out_dir=tmp_path))
    assert status._copy_lines(work, set()) == [
        "gif        memory.gif: stale: older than its clip; `dtfilm render` makes it again at its end"
    ]
    made = []
    monkeypatch.setattr(chapters, "write_gif", lambda movie, target: made.append(target.name) or (1, 480, 10))
    monkeypatch.setattr(chapters, "write_webm", lambda movie, target: made.append(target.name) or 1)
    chapters._write_formats(work, ())  # no --format: the copy it made before, made again; no WebM
    assert made == ["memory.gif"]
