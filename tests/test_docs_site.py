"""dtfilm's own docs site (issue 47): mkdocs.yml builds with `--strict`, the film's clip embedded
by dtfilm's own plugin and the reference pages generated from the code; and every command and
storyboard block on its pages runs, in a copy of the film with the dp chapter rendered."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, dtfilm_shell

READS_THE_DP_RENDER = (pytest.mark.render, pytest.mark.xdist_group("dp-default"))
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
NOT_RUN = "*Not run by the docs tests: "
SKIPPED_AT_MOST = 5  # blocks that need the network or a cluster; the list stays tiny


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence
    lang: str
    text: str
    note: str  # the paragraph before the fence, on one line: a marker, or prose

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def fenced_blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a Markdown page, dedented, with the marker line before each."""
    lines = page.read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        opening = re.match(r"^ *(`{3,}|~{3,})\s*([\w{}-]*)", lines[i])
        if not opening:
            i += 1
            continue
        fence, lang = opening.groups()
        end = i + 1
        while end < len(lines) and not re.match(rf"^ *{fence[0]}{{{len(fence)},}}\s*$", lines[end]):
            end += 1
        start = i
        while start > 0 and not lines[start - 1].strip():
            start -= 1
        paragraph: list[str] = []
        while start > 0 and lines[start - 1].strip() and not lines[start - 1].lstrip().startswith(("```", "~~~")):
            start -= 1
            paragraph.insert(0, lines[start].strip())
        text = textwrap.dedent("\n".join(lines[i + 1 : end])) + "\n"
        found.append(Block(page, i + 1, lang, text, " ".join(paragraph)))
        i = end + 1
    return found


def kind_of(block: Block) -> str:
    """What the docs tests do with a block: `run` (a command), `storyboard` (checked), `catalog`
    (written as the film's catalog before the page's commands), `output` (compared with what its
    command prints), `wheel` (run in a fresh venv by test_project_anywhere), `guide` (run by
    test_guide), `skip` (needs the network or a cluster, said on the page), `example` (text)."""
    if block.note.startswith(NOT_RUN):
        return "skip"
    if block.lang == "sh":
        return "wheel" if block.note == "<!-- docs-test: wheel -->" else "run"
    if block.note.startswith("<!-- docs-test: output of"):
        return "output"
    if block.lang == "yaml":
        if block.text.startswith("# guide:"):
            return "guide"
        data = yaml.safe_load(block.text)
        assert isinstance(data, dict), f"{block.where}: a YAML block that is neither a storyboard nor a catalog"
        if "shots" in data:
            return "storyboard"
        if set(data) <= {"cards", "links", "models"}:
            return "catalog"
        if set(data) == {"plugins"}:
            return "example"  # mkdocs.yml's plugin entry: the strict build below uses the real one
        raise AssertionError(f"{block.where}: a YAML block that is neither a storyboard nor a catalog")
    return "example"


ALL = [block for page in PAGES for block in fenced_blocks(page)]
RUN_KINDS = ("run", "storyboard", "catalog", "output")


def test_the_blocks_not_run_here_are_few_and_say_why():
    kinds = [kind_of(block) for block in ALL]
    skipped = [block for block, kind in zip(ALL, kinds, strict=True) if kind == "skip"]
    assert len(skipped) <= SKIPPED_AT_MOST, [b.where for b in skipped]
    for block in skipped:
        reason = block.note.removeprefix(NOT_RUN)
        assert re.search(r"network|cluster|GPU|CI itself", reason), (block.where, reason)
    assert kinds.count("wheel") == 1  # the install block, run in a fresh venv (test_project_anywhere)
    assert kinds.count("run") >= 10 and kinds.count("storyboard") >= 3


def _shim(path: Path, command: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\nexec {command} "$@"\n')
    path.chmod(0o755)


def film_copy(tmp_path: Path, renders: Path | None) -> tuple[Path, dict[str, str]]:
    """The film's storyboards, scenes and benchmarks in a folder of their own, its renders/ the dp
    render (hard links: dtfilm replaces a file by renaming, never writes into one), and `dtfilm`
    and `python` on the PATH (also as .venv/bin/, as a clone has them) running this checkout."""
    project = tmp_path / "film"
    for name in ("storyboard", "scenes", "benchmarks"):
        shutil.copytree(ROOT / name, project / name, ignore=shutil.ignore_patterns("__pycache__"))
    if renders is None:
        (project / "renders").mkdir()
    else:
        shutil.copytree(renders, project / "renders", copy_function=os.link)
    if (ROOT / ".dtfilm-cache").is_dir():  # the voice's sentences, spoken once for the dp render
        shutil.copytree(ROOT / ".dtfilm-cache", project / ".dtfilm-cache", copy_function=os.link)
    # the user's own file a page names: "your own runs, in the same format" (published-runs.md)
    runs = yaml.safe_load((ROOT / "dtfilm" / "data" / "published_runs.yaml").read_text())["runs"]
    (project / "my_runs.yaml").write_text(yaml.safe_dump({"runs": {"bloom-176b": runs["bloom-176b"]}}))
    command, forks = dtfilm_shell()  # (forked from this worker's server: tests/fork_client.py)
    for folder in (tmp_path / "bin", project / ".venv" / "bin"):
        _shim(folder / "dtfilm", command)
        _shim(folder / "python", sys.executable)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}", **forks)
    env.pop("DTFILM_CLUSTER", None)
    return project, env


def _script(blocks: list[Block], project: Path) -> str:
    """One bash process for a page's commands; each block in a subshell of its own that stops at
    its first failing command and names the block."""
    parts = ["set -u", "PS4='+ ${EPOCHREALTIME} '", f"cd {project}"]  # each command's start time, in its trace
    for block in blocks:
        parts += [
            f"echo '== {block.where}' >&2",
            f"(\nset -ex\n{block.text})",
            f"rc=$?; [ $rc = 0 ] || {{ echo '{block.where}: the block failed (exit status '$rc')' >&2; exit 1; }}",
        ]
    return "\n".join(parts) + "\n"


RUN_PAGES = [page for page in PAGES if any(kind_of(b) in RUN_KINDS for b in fenced_blocks(page))]
# a page whose commands read or make renders runs beside the dp render (its xdist group); the
# others (checks, estimates, the planner) need none, so they spread over the workers
READS_RENDERS = re.compile(r"dtfilm (render|still|status|embed|sheet|pacing) [^#\n]*\bdp\b|renders/dp\.")


def _reads_renders(page: Path) -> bool:
    return any(
        READS_RENDERS.search(b.text if kind_of(b) == "run" else b.note if kind_of(b) == "output" else "")
        for b in fenced_blocks(page)
    )


def _page_param(page: Path) -> object:
    marks = READS_THE_DP_RENDER if _reads_renders(page) else (pytest.mark.render,)
    return pytest.param(page, marks=marks, id=str(page.relative_to(DOCS)))


@pytest.mark.parametrize("page", [_page_param(page) for page in RUN_PAGES])
def test_every_command_and_storyboard_on_the_page_runs(page: Path, tmp_path: Path, request: pytest.FixtureRequest):
    started = time.monotonic()
    blocks = fenced_blocks(page)
    project, env = film_copy(tmp_path, request.getfixturevalue("dp_render") if _reads_renders(page) else None)
    for block in (b for b in blocks if kind_of(b) == "catalog"):
        (project / "storyboard" / "catalog.yaml").write_text(block.text)
    storyboards = [b for b in blocks if kind_of(b) == "storyboard"]
    if storyboards:
        (project / "talk").mkdir()
        paths = []
        for block in storyboards:
            path = project / "talk" / f"{yaml.safe_load(block.text)['id']}.yaml"
            path.write_text(block.text)
            paths.append(str(path.relative_to(project)))
        checked = subprocess.run(["dtfilm", "check", *paths], cwd=project, env=env, capture_output=True, text=True)
        where = ", ".join(b.where for b in storyboards)
        assert checked.returncode == 0, f"{where}:\n{checked.stdout}{checked.stderr}"
        assert checked.stdout.count(": clean") == len(storyboards), checked.stdout
    commands = [b for b in blocks if kind_of(b) == "run"]
    if commands:
        done = subprocess.run(
            ["bash", "-c", _script(commands, project)], env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr[-6000:]
        print(done.stderr)
    for block in (b for b in blocks if kind_of(b) == "output"):
        command = re.search(r"output of `([^`]+)`", block.note).group(1)
        printed = subprocess.run(["bash", "-c", command], cwd=project, env=env, capture_output=True, text=True)
        assert printed.returncode == 0, printed.stderr
        assert printed.stdout == block.text, f"{block.where}: the page shows what `{command}` no longer prints"
    print(f"{page.relative_to(ROOT)}: {time.monotonic() - started:.1f} s")


def _text(path: Path) -> str:
    """A built page's text: tags out, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text()))


@READS_THE_DP_RENDER[0]
@READS_THE_DP_RENDER[1]
def test_the_site_builds_strict_with_its_clip_and_generated_reference(tmp_path: Path, dp_render: Path):
    from dtfilm.shots.registry import KINDS
    from dtfilm.units import UNITS

    site = tmp_path / "site"
    env = dict(os.environ, DTFILM_DOCS_RENDERS=str(dp_render), PYTHONPATH=str(ROOT))
    started = time.monotonic()
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    seconds = time.monotonic() - started
    assert built.returncode == 0, built.stderr
    pages = sorted(p for p in site.rglob("index.html") if p.parent.name != "404")
    print(f"the docs site: {len(pages)} pages in {seconds:.1f} s")
    for page in PAGES:
        stem = page.relative_to(DOCS).with_suffix("")
        built_page = site / ("index.html" if stem.name == "index" else stem / "index.html")
        assert built_page.is_file(), f"{page} was not built"
    assert sorted(p.name for p in (site / "_dtfilm").iterdir()) == [
        "dp.mp4",
        "dp.numbers.json",
        "dp.png",
        "dp.vtt",
        "kinds",
    ]
    # the gallery's stills, kept from the dp render: one for each kind dp uses, shown on the page
    from dtfilm.storyboard.film import load_film
    from dtfilm.storyboard.gallery import all_uses

    uses = all_uses(ROOT / "storyboard", list(load_film(ROOT / "storyboard" / "film.yaml").chapters))
    in_dp = sorted(kind for kind, shots in uses.items() if any(chapter == "dp" for chapter, _ in shots))
    assert sorted(p.stem for p in (site / "_dtfilm" / "kinds").iterdir()) == in_dp
    assert all((site / "_dtfilm" / "kinds" / f"{k}.png").read_bytes().startswith(b"\x89PNG") for k in in_dp)
    home = (site / "index.html").read_text()
    assert home.count("<video") == 1 and 'poster="_dtfilm/dp.png"' in home  # the marker, not its example
    embedding = (site / "embedding" / "index.html").read_text()
    assert embedding.count("<video") == 1 and 'poster="../_dtfilm/dp.png"' in embedding
    assert "![dtfilm](dp)" in _text(site / "embedding" / "index.html")  # the example, shown as written
    kinds = _text(site / "reference" / "kinds" / "index.html")
    for name, spec in KINDS.items():
        assert re.search(rf"^{re.escape(name)}\s+{re.escape(spec.summary)}", kinds, re.M), name
        # in full, in the gallery: its heading, then its summary and its keys as a table
        assert re.search(rf"^{re.escape(name)}¶?\n+{re.escape(spec.summary)}\.$", kinds, re.M), name
    gallery = (site / "reference" / "kinds" / "index.html").read_text()
    assert gallery.count('class="dtfilm-kind" src="../../_dtfilm/kinds/') == len(in_dp)
    assert gallery.count("<th>key</th>") == len(KINDS) and "data-md-color-scheme" in (site / "index.html").read_text()
    paths_html = (site / "reference" / "paths" / "index.html").read_text()
    listed = [html.unescape(u) for u in re.findall(r"<tr>\s*<td><code>([^<]+)</code></td>", paths_html)]
    assert sorted(listed) == sorted(UNITS), listed  # the unit table, row by row
    assert re.search(r"^\{memory\.total:bytes\}\s+\S+\sGB$", _text(site / "reference" / "paths" / "index.html"), re.M)


def test_the_plugin_leaves_its_marker_in_code_as_written(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    """A page that shows the marker's syntax (in a code span or a fenced block) had its example
    replaced by a player, and `--strict` failed on the example's clip."""
    from types import SimpleNamespace

    from dtfilm.publish.mkdocs import DtfilmPlugin

    plugin = DtfilmPlugin()
    plugin.root, plugin.renders, plugin.used = ROOT, tmp_path, set()  # no clip rendered there
    page = SimpleNamespace(url="", file=SimpleNamespace(src_uri="index.md"))
    markdown = "Write `![dtfilm](dp)`:\n\n````markdown\n```\n![dtfilm](dp)\n```\n````\n\n![dtfilm](dp)\n"
    with caplog.at_level("WARNING", logger="mkdocs.plugins.dtfilm"):
        out = plugin.on_page_markdown(markdown, page, None, None)
    assert out.count("![dtfilm](dp)") == 2  # the two examples, as written
    assert [r.getMessage() for r in caplog.records if "index.md:" in r.getMessage()] == [
        f"dtfilm: index.md:9: {tmp_path}/dp.mp4 is not rendered (dtfilm render dp)"
    ]  # only the marker itself, on line 9


def test_the_readme_is_a_front_page_into_the_site():
    readme = (ROOT / "README.md").read_text()
    assert len(readme) < 8000, len(readme)  # it was 73 KB of reference
    assert "./dev.sh test" in readme  # the test command .ci/run runs
    links = re.findall(r"\]\(((?:docs/)[^)#\s]+)", readme)
    assert len(links) >= 15
    for link in links:
        assert (ROOT / link).is_file(), link
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in PAGES:  # every page is in the site's navigation, and the front page links to it
        name = str(page.relative_to(DOCS))
        assert f": {name}" in nav, name
        assert f"docs/{name}" in readme or name == "index.md", name
