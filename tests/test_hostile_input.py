"""Hostile input (issue 42, findings 6 to 8): every file read bounded and only if regular, the
voice given bounded pieces, snippets escaped for their language, and each bad value one line
naming where and what is valid, exit 2, never a traceback. Each test names the probe it covers."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dtfilm.cli import build_parser, main
from dtfilm.cost.hardware import CARDS, LINKS
from dtfilm.cost.models import PRESETS
from dtfilm.errors import DtfilmError
from dtfilm.render.embed import explore_snippet, snippet
from dtfilm.voice import engine, track
from dtfilm.voice.engine import VOICE_VARIABLE, VoiceSpec
from tests.conftest import ROOT, fake_wav

GOOD_CHAPTER = """\
id: dp
title: Data parallelism
subtitle: Copy the model
shots:
  - kind: memory_bars
    beat: memory
    caption: "Per card: {memory.total:GB}"
    narration: Every card holds the whole model.
"""
voice_installed = pytest.mark.skipif(not engine.available(), reason="the voice extra (dtfilm[voice]) is not installed")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "storyboard", tmp_path / "storyboard")
    (tmp_path / "storyboard" / "dp.yaml").write_text(GOOD_CHAPTER)
    return tmp_path


@pytest.fixture(autouse=True)
def _catalogs_kept():
    """A catalog.yaml read in this process leaves the built-in catalogs as they were: a film's
    entries are its own Catalog's (issue 61; they were once added to these, and taken away here)."""
    saved = [dict(table) for table in (CARDS, LINKS, PRESETS)]
    yield
    assert [dict(table) for table in (CARDS, LINKS, PRESETS)] == saved


def dtfilm(*args: str, cwd: Path) -> tuple[int, str, str]:
    """`dtfilm ARGS` in this process (quicker than a new one): exit status, stdout, stderr.
    An exception other than the one-line error escapes, as a traceback would."""
    out, err = io.StringIO(), io.StringIO()
    here, voice = os.getcwd(), os.environ.get(VOICE_VARIABLE)
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as done:
                code = int(done.code or 0)
    finally:
        os.chdir(here)
        os.environ.pop(VOICE_VARIABLE, None)
        if voice is not None:
            os.environ[VOICE_VARIABLE] = voice
    return code, out.getvalue(), err.getvalue()


def one_line_error(done: tuple[int, str, str], *expected: str) -> str:
    code, _, err = done
    assert code == 2, done
    err = err.strip()
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("dtfilm: error: "), err
    for piece in expected:
        assert piece in err, (piece, err)
    return err


def refused_by_parser(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The flags are refused as they are read, before any chapter is loaded or frame drawn."""
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args(list(argv))
    assert done.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("dtfilm: error: "), err
    return err


def bounded_run(*args: str, cwd: Path, seconds: float = 30) -> subprocess.CompletedProcess[str]:
    """`dtfilm ARGS` in a process of at most 2 GB, for probes that hang or eat memory on bad code."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run(
        [sys.executable, "-m", "dtfilm", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=seconds,
        preexec_fn=limit,
    )


def shot_text(project: Path, extra: str) -> None:
    (project / "storyboard" / "dp.yaml").write_text(GOOD_CHAPTER + extra)


# --- finding 6: files read bounded, only regular ones ------------------------------------------


def test_a_device_is_refused_before_a_byte_is_read(project: Path):
    """Probe: `dtfilm narration /dev/zero` ran out of memory."""
    done = bounded_run("narration", "/dev/zero", cwd=project)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-500:]
    assert "is a device; valid: a storyboard, a regular file" in done.stderr


def test_a_named_pipe_is_refused_not_waited_on(project: Path):
    """Probe: `dtfilm check` on a FIFO hung, waiting for a writer."""
    fifo = project / "storyboard" / "pipe.yaml"
    os.mkfifo(fifo)
    try:
        done = bounded_run("check", str(fifo), cwd=project, seconds=20)
    except subprocess.TimeoutExpired:
        pytest.fail("dtfilm check waited on a named pipe")
    assert done.returncode == 2 and "is a named pipe" in done.stderr, done.stderr[-500:]


def test_a_long_sentence_reaches_the_voice_in_bounded_pieces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Probe: one narration sentence of 39 kB was given to Piper whole (killed at 21 GB)."""
    given: list[str] = []
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "machine"))  # (the fake voice's sentences kept apart)
    monkeypatch.setattr(engine, "identity", lambda spec: "a voice")
    monkeypatch.setattr(engine, "synthesize", lambda spec, text: given.append(text) or fake_wav(text))
    names = [a + b for a in "bcdfghjklm" for b in "aeiou"]  # every clause its own (the cache keeps repeats)
    clauses = [f"card {name} adds its share of the gradients, and passes the sum to its neighbour" for name in names]
    narration = "; ".join(clauses * 10) + "."  # one sentence of 39 kB
    _, sentences, seconds = track.joined_wav(VoiceSpec(), narration, tmp_path)
    assert len(narration) > 38_000 and len(given) > 10
    assert max(len(text) for text in given) <= engine.MAX_SPOKEN_CHARS
    assert all(text.endswith((";", ",", ".")) for text in given), "cut at clause ends and commas first"
    pieces = track.said_pieces(narration)
    assert " ".join(pieces) == track.spoken(narration) and set(given) == set(pieces)
    # the one written sentence spans all its pieces, for the subtitles
    assert len(sentences) == 1 and sentences[0].start == 0 and sentences[0].end == pytest.approx(seconds)


def test_a_narration_longer_than_its_bound_is_one_line(project: Path):
    """Probe: a narration of 39 kB was accepted: its shot's audio (33 minutes) grows the memory
    of the process that joins it, whatever the voice's pieces."""
    shot_text(project, "  - kind: memory_bars\n    narration: " + "Every card adds its share. " * 200 + "\n")
    one_line_error(
        dtfilm("estimate", "dp", cwd=project), "dp.yaml:10", "shots[1].narration", "at most 4,000 characters"
    )


def test_ordinary_sentences_keep_their_cache_keys(monkeypatch: pytest.MonkeyPatch):
    """The split leaves every sentence of the film one piece: the audio cache stays valid."""
    from dtfilm.storyboard import load_chapter, load_film
    from dtfilm.voice.cues import sentences_of
    from dtfilm.voice.speech import spoken

    monkeypatch.setattr(engine, "identity", lambda spec: "a voice")
    folder, spec = Path("cache"), VoiceSpec()
    for chapter_id in load_film(ROOT / "storyboard" / "film.yaml").chapters:
        for shot in load_chapter(chapter_id, {}, ROOT).shots:
            if shot.narration is not None:
                text = shot.narration.text
                before = [track.sentence_path(spec, spoken(s), folder) for s in sentences_of(text)]
                assert track.sentence_paths(spec, text, folder) == before, shot.beat


@voice_installed
def test_no_inference_is_given_more_than_its_phonemes(monkeypatch: pytest.MonkeyPatch):
    """Probe: text that spells out letters (four phonemes a character) grew Piper's memory past
    what its length promised: 400 characters peaked at 1.6 GB."""
    given: list[int] = []

    class Chunk:
        sample_rate = 22050
        audio_int16_bytes = b"\x00\x00"

    class Voice:
        def phonemize(self, text: str) -> list[list[str]]:
            return [list(text * 4)]

        def synthesize(self, text: str, syn_config: object) -> list[Chunk]:
            given.append(len(self.phonemize(text)[0]))
            return [Chunk()]

    monkeypatch.setattr(engine, "_load", lambda spec: Voice())
    engine.synthesize(VoiceSpec(), " ".join(["bcdfghjklm"] * 36) + " " + "x" * 300)
    assert len(given) > 3 and max(given) <= engine.MAX_PHONEMES


# --- finding 7: snippets escaped for their language ---------------------------------------------

HOSTILE_TITLE = "Evil\n\n.. include:: {secret}\n\nx\u2028.. include:: {secret}\n"


@pytest.mark.parametrize("which", ["chapter", "explore"])
def test_a_title_cannot_leave_the_rst_raw_block(tmp_path: Path, which: str):
    """Probe: a title with newlines broke out of `embed --as rst`: `.. include:: /etc/passwd` ran."""
    docutils = pytest.importorskip("docutils.core")
    secret = tmp_path / "secret.txt"
    secret.write_text("the secret words\n")
    title = HOSTILE_TITLE.format(secret=secret)
    rst = snippet("dp", title, "rst") if which == "chapter" else explore_snippet(title, "rst")
    page = docutils.publish_string(rst, writer="html", settings_overrides={"report_level": 5}).decode()
    assert "secret words" not in page
    assert all(line.startswith("   ") for line in rst.splitlines()[2:] if line), rst
    assert "include::" in page  # the title is shown, as text, inside the raw HTML


def _links(markdown: str) -> list[tuple[str, dict]]:
    markdown_it = pytest.importorskip("markdown_it")
    found, tokens = [], markdown_it.MarkdownIt().parseInline(markdown)
    while tokens:
        token = tokens.pop(0)
        tokens[:0] = token.children or []
        if token.type in ("image", "link_open"):
            found.append((token.type, dict(token.attrs)))
    return found


def test_a_title_cannot_become_the_markdown_image_or_link():
    """Probe: in `embed --as markdown`, `](javascript:...)` in a title became the image's source."""
    title = "x](javascript:alert(1)) ![y](javascript:z) <b>[w]"
    links = _links(snippet("dp", title, "markdown"))
    assert links == [("link_open", {"href": "renders/dp.mp4"}), ("image", {"src": "renders/dp.png", "alt": ""})]
    assert _links(explore_snippet(title, "markdown")) == [("link_open", {"href": "renders/explore/index.html"})]
    # a base with a space or a parenthesis stays one URL
    links = _links(snippet("dp", title, "markdown", base="../my renders (v2)"))
    assert [attrs.get("href") or attrs["src"] for _, attrs in links] == [
        "../my%20renders%20%28v2%29/dp.mp4",
        "../my%20renders%20%28v2%29/dp.png",
    ]


# --- finding 8: one line, exit 2, for each bad value ------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("    duration: !foo 4\n", ["dp.yaml:9", "shots[0].duration", "tag '!foo' is not supported"]),
        ("    duration: !!python/name:os.system\n", ["shots[0].duration", "'python/name:os.system' is not supported"]),
        ("    !foo duration: 4\n", ["dp.yaml:9", "tag '!foo' is not supported"]),
        ("    duration: " + "9" * 5000 + "\n", ["shots[0].duration", "5,000 digits; valid: a number of at most 300"]),
        ("  - kind: [memory_bars]\n", ["shots[1].kind", "unknown shot kind ['memory_bars']; valid: title"]),
        (
            "  - kind: sweep\n    set: [cluster.cards]\n    values: [2, 4]\n",
            ["shots[1].set", "['cluster.cards'] is not an input; valid:"],
        ),
        (
            '  - kind: memory_bars\n    caption: "bad \\ud800 half"\n',
            ["shots[1].caption", "U+D800", "valid: printable"],
        ),
    ],
    ids=["tag", "python tag", "tag on a key", "5000 digits", "list as kind", "list as set", "lone surrogate"],
)
def test_a_storyboard_value_is_one_line(project: Path, extra: str, expected: list[str]):
    """Probes: YAML tags, a 5,000-digit integer, a list as a shot kind or a sweep's input
    (tracebacks); a lone surrogate in a caption (accepted by estimate, a traceback in check and
    render)."""
    shot_text(project, extra)
    one_line_error(dtfilm("estimate", "dp", cwd=project), *expected)


def test_a_missing_voice_model_is_one_line(project: Path):
    """Probe: `voice:` naming a missing .onnx was a FileNotFoundError."""
    if not engine.available():
        pytest.skip("without the voice extra no voice is read")
    missing = project / "nothere.onnx"
    one_line_error(
        dtfilm("status", "--voice", str(missing), cwd=project), f"--voice: {missing}: no such file", "valid: joe"
    )


@voice_installed
@pytest.mark.parametrize("config", ["garbage", "joe's"])
def test_a_garbage_voice_model_is_one_line(tmp_path: Path, config: str):
    """Probe: a garbage .onnx (and its config) was a KeyError, or ONNX Runtime's traceback."""
    model = tmp_path / "voice.onnx"
    model.write_bytes(bytes(range(256)) * 8)
    if config == "garbage":
        (tmp_path / "voice.onnx.json").write_text("{}")
    else:
        shutil.copy(engine.model_files(VoiceSpec())[1], tmp_path / "voice.onnx.json")
    spec = engine.parse_voice(str(model))
    with pytest.raises(DtfilmError, match="not a Piper voice"):
        engine.synthesize(spec, "One card.")


@voice_installed
def test_a_relative_voice_is_the_projects_from_a_subfolder(project: Path):
    """Probe: film.yaml's `voice: voices/x.onnx` was looked for in the working folder: a
    traceback when a command ran in storyboard/."""
    (project / "voices").mkdir()
    (project / "voices" / "x.onnx").write_bytes(b"a model's bytes")
    (project / "voices" / "x.onnx.json").write_text("{}")
    film = project / "storyboard" / "film.yaml"
    film.write_text(re.sub(r"^voice: .*$", "voice: voices/x.onnx", film.read_text(), flags=re.M))
    for folder in (project, project / "storyboard"):
        code, out, err = dtfilm("status", cwd=folder)
        assert code == 0 and "dp" in out, err
    (project / "voices" / "x.onnx").unlink()
    one_line_error(dtfilm("status", cwd=project / "storyboard"), "film.yaml:", "voices/x.onnx: no such file")


@pytest.mark.parametrize(
    "argv",
    [["status"], ["clean"], ["embed", "dp"], ["render", "dp"], ["still", "dp:ring", "--at", "1"]],
    ids=lambda argv: argv[0],
)
def test_out_that_is_a_file_is_one_line(project: Path, argv: list[str]):
    """Probe: `--out /etc/passwd` was NotADirectoryError or FileExistsError."""
    (project / "passwd").write_text("root:x:0:0\n")
    one_line_error(dtfilm(*argv, "--out", str(project / "passwd"), cwd=project), "--out", "is not a folder")
    assert (project / "passwd").read_text() == "root:x:0:0\n"


def _read_only(folder: Path, argv: list[str]) -> list[str]:
    """The command run with `folder` read-only: as root (whom permissions do not stop), in a
    mount namespace of its own where the folder is mounted read-only."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return argv
    if not shutil.which("unshare"):
        pytest.skip("root, and no unshare to make a folder read-only")
    mount = 'mount --bind -o ro "$0" "$0" && exec "$@"'
    return ["unshare", "-m", "sh", "-c", mount, str(folder), *argv]


WRITING = [
    ["render", "dp"],
    ["render", "dp:ring"],
    ["still", "dp:ring", "--at", "1"],
    ["clean"],
    ["page", "--no-film"],
    ["slides", "dp"],
    ["validate"],
]


def test_a_read_only_renders_folder_is_one_line_for_every_writing_command(project: Path):
    """Probe: a read-only renders/ was a traceback (OSError) in every command that writes."""
    renders = project / "renders"
    renders.mkdir()
    try:
        probe = _read_only(renders, ["sh", "-c", 'test -w "$0" || echo read-only', str(renders)])
        if subprocess.run(probe, capture_output=True, text=True).stdout.strip() != "read-only":
            pytest.skip("cannot make a folder read-only here")
        for argv in WRITING:
            command = _read_only(renders, [sys.executable, "-m", "dtfilm", *argv])
            done = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=60)
            assert done.returncode == 2 and "Traceback" not in done.stderr, (argv, done.stderr[-800:])
            assert f"{renders}: cannot write here (read-only)" in done.stderr, (argv, done.stderr)
            assert len(done.stderr.strip().splitlines()) == 1, (argv, done.stderr)
    finally:
        renders.chmod(0o755)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["serve", "--port", "99999"], "--port: '99999' is out of range; valid: a whole number from 0 to 65,535"),
        (["render", "--jobs", "0"], "--jobs: '0' is out of range; valid: a whole number from 1 to 1,024"),
        (["page", "--jobs", "0"], "--jobs: '0' is out of range"),
        (["render", "--format", ""], "--format: '' names no format; valid: gif, webm"),
        (["still", "dp:ring", "--at", "nan"], "--at: 'nan' is not a number of seconds"),
        (["render", "--cluster", "garbage"], "--cluster: 'garbage' is not a Dask scheduler's address; valid: tcp://"),
    ],
    ids=["serve port", "render jobs", "page jobs", "empty format", "at nan", "cluster garbage"],
)
def test_a_bad_flag_is_refused_as_it_is_read(capsys: pytest.CaptureFixture[str], argv: list[str], expected: str):
    """Probes: `serve --port 99999` (OverflowError); `--jobs 0`, `--format ""`, `still --at nan`
    (writing dp-ring-nans.png) and `--cluster garbage` when nothing is stale, all accepted."""
    assert expected in refused_by_parser(capsys, *argv)


def test_a_garbage_cluster_in_the_environment_is_one_line(monkeypatch: pytest.MonkeyPatch):
    """Probe: $DTFILM_CLUSTER=garbage, like --cluster garbage, was accepted when nothing was stale."""
    from dtfilm.render.cluster import CLUSTER_VARIABLE, cluster_address

    monkeypatch.setenv(CLUSTER_VARIABLE, "garbage")
    with pytest.raises(DtfilmError, match=r"\$DTFILM_CLUSTER: 'garbage' is not a Dask scheduler's address"):
        cluster_address(None, "")


CATALOG = """\
cards:
  tiny:
    label: Tiny
    memory: 80e9
    peak_flops: {bf16: 1e15}
    intra_node_link: nvlink4
    source: probe
links:
  slow:
    label: Slow
    bandwidth: 25e9
    latency: 10e-6
    between_nodes: true
    source: probe
"""


@pytest.mark.parametrize(
    ("figure", "expected"),
    [
        ("memory: 80e9", "cards.tiny.memory: '1e-300' is not bytes, such as 40e9; valid: 1e9 to 1e13 bytes"),
        ("bf16: 1e15", "cards.tiny.peak_flops: {'bf16': '1e-300'} is not dense FLOP/s"),
        ("bandwidth: 25e9", "links.slow.bandwidth: '1e-300' is not bytes a second each way"),
        ("latency: 10e-6", "links.slow.latency: '1e-300' is not seconds per ring step"),
    ],
    ids=["memory", "peak_flops", "bandwidth", "latency"],
)
def test_a_catalog_figure_outside_its_range_is_one_line(project: Path, figure: str, expected: str):
    """Probe: catalog figures of 1e-300 made `estimate --json` print Infinity (not JSON), or an
    OverflowError."""
    tiny = figure.split(":")[0] + ": 1e-300"
    (project / "storyboard" / "catalog.yaml").write_text(CATALOG.replace(figure, tiny))
    done = dtfilm("estimate", "dp", "--gpu", "tiny", "--cards", "16", "--inter-node", "slow", "--json", cwd=project)
    one_line_error(done, "storyboard/catalog.yaml:", expected)


def test_estimate_json_is_strict(project: Path, monkeypatch: pytest.MonkeyPatch):
    """Probe: `estimate --json` printed `Infinity`, which no strict JSON reader takes."""
    numbers = {"compute": {"step_seconds": math.inf}, "ok": 1}
    monkeypatch.setattr("dtfilm.cli.cost.estimate_numbers", lambda storyboard, overrides: numbers)
    code, out, err = dtfilm("estimate", "dp", "--json", cwd=project)
    one_line_error((code, out, err), "--json", "compute.step_seconds = inf, which JSON cannot hold")
    assert out == ""
    monkeypatch.setattr("dtfilm.cli.cost.estimate_numbers", lambda storyboard, overrides: {"ok": 1.5})
    code, out, _ = dtfilm("estimate", "dp", "--json", cwd=project)
    assert code == 0 and json.loads(out, parse_constant=lambda c: pytest.fail(c)) == {"ok": 1.5}


@pytest.mark.parametrize("name", ["../../x", "a/b", ".hidden", "x" * 65])
def test_a_catalog_name_that_is_no_name_is_one_line(project: Path, name: str):
    """Probe: catalog names like `../../x` were accepted."""
    (project / "storyboard" / "catalog.yaml").write_text(CATALOG.replace("tiny:", f"'{name}':"))
    one_line_error(dtfilm("estimate", "dp", cwd=project), "storyboard/catalog.yaml:2", "is not a name; valid: letters")


@voice_installed
def test_narration_the_voice_cannot_say_is_refused_by_status_too(project: Path):
    """Probe: a narration with a symbol the voice cannot say (€): `status` accepted it, `render`
    refused it (after drawing its shots, when it joined the chapter)."""
    shot_text(project, "  - kind: memory_bars\n    narration: It costs 5 € a card.\n")
    one_line_error(dtfilm("status", cwd=project), "dp.yaml:9", "shots[1].narration", "cannot say '€'")
    code, _, err = dtfilm("status", "--voice", "none", cwd=project)  # (silent: nothing is said)
    assert code == 0, err
