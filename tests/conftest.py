"""Shared fixtures: the project root, dry-run inspections of chapters (run once per session)."""

from __future__ import annotations

import atexit
import io
import json
import os
import subprocess
import sys
import wave
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from tests.dtfilm_process import FRESH_VARIABLE, ForkServer
from tests.estimate_process import EstimateProcess, estimate_flags

ROOT = Path(__file__).resolve().parent.parent
HUGE = {"model": "llama3.1-405b", "cards": 16384}
CONFIGS = {"default": {}, "huge": HUGE}
# DeepSeek-V3's published layout (its report, section 3.2; docs/cost-model.md): 2,048 H800s,
# PP16, EP64, ZeRO-1, fp8, sequences of 4K, 15,360 a step (120 micro-batches of the 128
# replicas: the decision tree's sharded plan, dp 2,048, cannot split a --global-batch 15360).
DEEPSEEK_V3 = {
    "model": "deepseek-v3", "gpu": "h800-sxm-80gb", "cards": 2048, "pp": 16, "ep": 64, "zero": 1,
    "precision": "fp8", "seq_len": 4096, "micro_batches": 120,
}  # fmt: skip
# The expert chapter's "huge" is DeepSeek-V3's layout: a dense 405B has no experts to split
# (the chapter refuses it in one line, as cp's ring refuses --cp 1).
HUGE_BY_CHAPTER = {"ep": DEEPSEEK_V3}


def config_flags(chapter: str, config: str) -> dict:
    """The flags of a (chapter, config) pair of chapter_configs."""
    return HUGE_BY_CHAPTER.get(chapter, HUGE) if config == "huge" else CONFIGS[config]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


def chapter_ids() -> list[str]:
    from dtfilm.storyboard import load_film

    return list(load_film(ROOT / "storyboard" / "film.yaml").chapters)


HUGE_DRY_RUNS = 4  # of the nine chapters' huge configurations, dry-run in CI (tests.sampling)


def chapter_configs(dry_run: bool = True) -> list:
    """(chapter, config) pairs; each pair's tests share one dry run, so they run on one worker.
    With `dry_run` (the test plays the chapter), the huge configurations are a fixed-seed sample
    of HUGE_DRY_RUNS chapters, the same for every test that asks (DTFILM_SAMPLE=all: all nine);
    without it (a test that only loads the chapter: seconds), all nine."""
    from tests.sampling import sampled

    def pair(chapter: str, config: str):
        return pytest.param(
            chapter, config, marks=pytest.mark.xdist_group(f"{chapter}-{config}"), id=f"{chapter}-{config}"
        )

    chapters = chapter_ids()
    huge = [pair(chapter, "huge") for chapter in chapters]
    if dry_run:
        huge = sampled(huge, HUGE_DRY_RUNS, "huge configuration")
    return [pair(chapter, "default") for chapter in chapters] + huge


def keep_typeset_in_the_project() -> None:
    """Keep every label typeset in the project's cache (signed, as a render keeps them), so the
    other worker and every `dtfilm` the tests run read it back instead of typesetting it again
    (about a fifth of a chapter's first dry run)."""
    from dtfilm.visuals.text import TYPESET_FOLDER, keep_typeset_in

    keep_typeset_in(ROOT / TYPESET_FOLDER)


@pytest.fixture(autouse=True)
def _typeset_in_the_project() -> None:
    """Before each test: in-process dry runs (check_chapter, dry_run) share the labels too, and
    a test that kept them elsewhere (a check in its own project) leaves no folder behind for
    the next (a function call: no cost)."""
    keep_typeset_in_the_project()


@dataclass
class Bands:
    """When a highlighter's band is on screen: after each animation that ends with one, the
    seconds into its shot, by beat (dtfilm.scene.ShotContext.highlight)."""

    at: dict[str, list[float]] = field(default_factory=dict)

    def __call__(self, scene, beat: str) -> None:
        from dtfilm.scene import HIGHLIGHT_Z

        if any(m.z_index == HIGHLIGHT_Z for m in scene.mobjects):
            self.at.setdefault(beat, []).append(scene.time - scene.beat_start)


class FirstShown:
    """When each text first shows (scene seconds, at the end of the animation that shows it)."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}

    def __call__(self, scene, beat: str) -> None:
        from dtfilm.onscreen.layout import texts_on_screen

        for text in texts_on_screen(scene):
            self.at.setdefault(text.original_text, scene.time)


class StageShapes:
    """The opening's picture: after each animation of a chapter's first OPENING_WATCH_SECONDS, the
    beat, the seconds into its shot and how many shapes stand on the stage (visible closed shapes,
    a slice or a block, at least SHAPE_SIDE across; not text, a legend's swatch or a highlighter's band)."""

    def __init__(self) -> None:
        self.at: list[tuple[str, float, int]] = []

    def __call__(self, scene, beat: str) -> None:
        if scene.time > OPENING_WATCH_SECONDS:
            return
        from manim import Polygram

        from dtfilm.onscreen.layout import pieces_on_screen
        from dtfilm.scene import HIGHLIGHT_Z

        shapes = [
            p
            for p in pieces_on_screen(scene, (Polygram,))
            if p.z_index != HIGHLIGHT_Z
            and max(p.width, p.height) >= SHAPE_SIDE
            and p.get_top()[1] <= scene.theme.stage_top + 0.01
        ]
        self.at.append((beat, scene.time - scene.beat_start, len(shapes)))


OPENING_WATCH_SECONDS = 30.0
SHAPE_SIDE = 0.4


class StatsLog:
    """The stats panel's values after each animation: (beat, seconds into its shot, values), and
    in `beside`, at the same place, the other texts on screen then."""

    def __init__(self) -> None:
        self.at: list[tuple[str, float, tuple[str, ...]]] = []
        self.beside: list[frozenset[str]] = []

    def __call__(self, scene, beat: str) -> None:
        from dtfilm.onscreen.layout import texts_on_screen
        from dtfilm.visuals.stats import StatsPanel

        for panel in (m for m in scene.mobjects if isinstance(m, StatsPanel)):
            values = tuple(getattr(s.value.phrase, "text", str(s.value.phrase)) for s in panel.stats)
            self.at.append((beat, scene.time - scene.beat_start, values))
            inside = {id(m) for m in panel.family_members_with_points()} | {id(m) for m in panel.get_family()}
            self.beside.append(frozenset(t.original_text for t in texts_on_screen(scene) if id(t) not in inside))


@cache
def inspection(chapter: str, config: str, theme: str | None = None):
    """A chapter's dry run, once per worker (a test reading it carries its `CHAPTER-CONFIG`
    xdist group, so that it runs where the dry run was made): the layout check, every text
    shown, the values drawn, and `bands` (Bands), `first_shown` (FirstShown), `stats`
    (StatsLog), `stage_shapes` (StageShapes), the scene's `track` (its narration, spoken) and
    `theme`. Theme None is film.yaml's (dark)."""
    from dtfilm.check.inspect import Inspection, TextLog, dry_run
    from dtfilm.onscreen.drawn import DrawnValues
    from dtfilm.onscreen.layout import LayoutCheck
    from dtfilm.storyboard import load_chapter

    keep_typeset_in_the_project()
    layout, texts, drawn, bands, first = LayoutCheck(), TextLog(), DrawnValues(), Bands(), FirstShown()
    stats, shapes = StatsLog(), StageShapes()
    loaded = load_chapter(chapter, config_flags(chapter, config), ROOT)
    scene = dry_run(loaded, theme, [layout, texts, drawn, bands, first, stats, shapes], moments=[drawn])
    found = Inspection(layout, texts, drawn, scene.time, scene.shot_times, scene.drawn_times)
    found.bands, found.first_shown, found.track, found.theme = bands.at, first.at, scene.track, scene.theme
    found.stats, found.stats_beside, found.stage_shapes = stats.at, stats.beside, shapes.at
    return found


@pytest.fixture(scope="session")
def dp_render(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data-parallel chapter rendered at preview into a folder of its own, once: the
    render, sidecar, gallery and slides tests all read it (they share its xdist group)."""
    out = tmp_path_factory.mktemp("renders")
    done = run_dtfilm("render", "dp", "--quality", "preview", "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


CACHE = ROOT / ".dtfilm-cache"  # what the test run has spoken (voice/) and typeset (typeset/) so far


def seed_caches(project: Path, *parts: str) -> None:
    """Give a copy of the film's storyboard what the test run has spoken (`voice`: the sentences,
    dtfilm.voice.track) or typeset (`typeset`: signed labels, dtfilm.visuals.text) so far, each
    file linked into the project's own cache folder (a folder of its own: dtfilm refuses a
    linked folder; it reads a file there as any other, and writes a new one by renaming, never
    into a linked one). Both caches are keyed by what they hold (what is said and the voice; the
    label's look, signed with this user's key), so what is read back is what the project would
    make: a cold `check dp` in a copy took 20 s of CPU, 13 s of it speaking. Only for tests that
    neither plant files in the cache nor clean it; where a link cannot be made (another
    filesystem) the project makes its own."""
    for part in parts:
        if not (CACHE / part).is_dir():
            continue
        folder = project / ".dtfilm-cache" / part
        folder.mkdir(parents=True, exist_ok=True)
        for kept in (CACHE / part).iterdir():
            if not kept.is_file() or kept.is_symlink():
                continue
            try:
                os.link(kept, folder / kept.name)
            except OSError:
                return


def run_dtfilm(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """`dtfilm ARGS` as a separate process, as a user (or an outside check) runs it: forked from
    this worker's server (tests.dtfilm_process), or a new interpreter where there is none."""
    server = _fork_server()
    if server is not None and server.alive():
        try:
            return server.run(list(args), cwd, timeout=300)
        except OSError:
            pass  # (the server stopped: this command and the rest in new interpreters)
    return subprocess.run([sys.executable, "-m", "dtfilm", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def dtfilm_shell() -> tuple[str, dict[str, str]]:
    """What a shell runs as `dtfilm` (its arguments follow it) and what its environment needs:
    forked from this worker's server (tests/fork_client.py), or a new interpreter where there is none."""
    server = _fork_server()
    if server is not None and server.alive():
        return server.shell()
    return f"{sys.executable} -m dtfilm", {}


@cache
def _fork_server() -> ForkServer | None:
    """This worker's fork server, started at its first command; None under DTFILM_TEST_FRESH=1
    or where processes cannot be forked."""
    if os.environ.get(FRESH_VARIABLE) == "1" or not hasattr(os, "fork"):
        return None
    server = ForkServer(ROOT)
    atexit.register(server.close)
    return server


@cache
def _estimate_process() -> EstimateProcess:
    """This worker's estimate process (tests.estimate_process), started at its first question."""
    process = EstimateProcess(ROOT)
    atexit.register(process.close)
    return process


def estimate_cli(*args: str) -> dict:
    """`dtfilm estimate ARGS --json`'s figures, from this worker's estimate process: the
    command's own entry point, in a process apart from the test's."""
    status, stdout, stderr = _estimate_process().run("estimate", *args, "--json")
    assert status == 0, stderr
    return json.loads(stdout)


@cache
def estimate_json(chapter: str, overrides: tuple[tuple[str, object], ...]) -> dict:
    """`dtfilm estimate CHAPTER --flag value ... --json`, in a process apart from the test's."""
    return estimate_cli(chapter, *estimate_flags(overrides))


def fake_wav(text: str, frames_a_character: int = 10) -> bytes:
    """A mono 16-bit WAV file as the voice writes one, its length from `text`: what a test's fake
    voice says (dtfilm.voice.engine.synthesize's format, without Piper)."""
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(22050)
        wav.writeframes(b"\x01\x00" * (frames_a_character * len(text) + 1))
    return out.getvalue()
