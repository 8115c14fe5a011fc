"""One seam to Manim: no module outside dtfilm/engine/ imports a private Manim name, reads Manim's
private state, overrides Manim's internal methods or patches a Manim object; the engine checks
the Manim it runs on; and its Mobject patches hold only inside `drawing()`."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from dtfilm.engine import version
from dtfilm.engine.drawing import drawing, is_drawing
from dtfilm.errors import DtfilmError
from tests.conftest import ROOT

PACKAGE = ROOT / "dtfilm"
ENGINE = PACKAGE / "engine"
# Manim's internals dtfilm leans on, by attribute: only the engine may read, set or override them
INTERNALS = frozenset(
    {
        "_original_skipping_status",
        "skip_animations",
        "file_writer",
        "static_image",
        "update_frame",
        "play_internal",
        "generate_mobject",
        "set_cairo_context_path",
        "get_family_members_with_points_fast",
        "_iter_family",
        "__deepcopy__",
    }
)
# What a scene may ask of its renderer outside the engine (FilmRenderer's own API and the camera)
RENDERER_API = frozenset(
    {
        "camera",
        "skip_frames",
        "draw_no_pixels_when_skipped",
        "set_clock",
        "drop_empty_section",
        "movie_path",
        "section_index",
        "frame_now",
    }
)
MANIM_SETTINGS = frozenset({"config", "tempconfig"})  # Manim's settings: public, set by design


def _manim_names(tree: ast.Module) -> set[str]:
    """Local names bound to Manim's modules or objects by the module's imports."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] == "manim")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "manim":
            names.update(a.asname or a.name for a in node.names)
    return names - MANIM_SETTINGS


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def seam_breaches(source: str, where: str = "<source>") -> list[str]:
    """Each place in `source` that reaches past Manim's public API, as 'where:line: what'."""
    tree = ast.parse(source)
    manim = _manim_names(tree)
    found: list[str] = []

    def breach(node: ast.AST, what: str) -> None:
        found.append(f"{where}:{getattr(node, 'lineno', 0)}: {what}")

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "manim":
            private = [p for p in node.module.split(".") if _private(p)] + [
                a.name for a in node.names if _private(a.name)
            ]
            if private:
                breach(node, f"imports Manim's private {', '.join(private)}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "manim" and any(_private(p) for p in alias.name.split(".")):
                    breach(node, f"imports Manim's private {alias.name}")
        elif isinstance(node, ast.Attribute):
            if node.attr in INTERNALS:
                breach(node, f"reaches Manim's internal .{node.attr}")
            elif isinstance(node.value, ast.Attribute) and node.value.attr == "renderer":
                if node.attr not in RENDERER_API:
                    breach(node, f"reaches the renderer's .{node.attr} (not FilmRenderer's API)")
            elif _private(node.attr) and isinstance(_root(node), ast.Name) and _root(node).id in manim:
                breach(node, f"reaches Manim's private .{node.attr}")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and isinstance(_root(target), ast.Name):
                    if _root(target).id in manim:
                        breach(node, f"patches Manim's {ast.unparse(target)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"setattr", "delattr"}:
            if node.args and isinstance(_root(node.args[0]), ast.Name) and _root(node.args[0]).id in manim:
                breach(node, f"patches Manim's {ast.unparse(node.args[0])} by {node.func.id}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in INTERNALS:
            breach(node, f"overrides Manim's internal {node.name}")
    return found


def _modules() -> Iterator[Path]:
    """dtfilm's modules outside the engine, and the chapters' scene files."""
    for path in sorted(PACKAGE.rglob("*.py")):
        if ENGINE not in path.parents:
            yield path
    yield from sorted((ROOT / "scenes").glob("*.py"))


def test_no_module_outside_the_engine_reaches_past_manims_public_api() -> None:
    breaches = [b for path in _modules() for b in seam_breaches(path.read_text(), str(path.relative_to(ROOT)))]
    assert breaches == []


@pytest.mark.parametrize(
    "source",
    [  # each what dtfilm did before the engine (commit ea0f2bb), in one line
        "from manim.mobject.mobject import _AnimationBuilder",
        "import manim._config.utils",
        "scene.renderer._original_skipping_status = True",
        "scene.renderer.update_frame = lambda *args, **kwargs: None",
        "section = self.renderer.file_writer.sections[-1]",
        "self.renderer.time = kept.time",
        "if self.renderer.skip_animations: pass",
        "from manim import Mobject\nMobject.get_family = quick_family",
        "from manim.camera.camera import Camera\nCamera.set_cairo_context_path = cached",
        "from manim import Mobject\nsetattr(Mobject, '__deepcopy__', quick)",
        "import manim\nmanim.Mobject.copy = quick",
        "from manim import Text\nclass Label(Text):\n    def generate_mobject(self): ...",
        "from manim import Scene\nclass S(Scene):\n    def play_internal(self, skip_rendering=False): ...",
        "from manim import Mobject\nMobject._iter_family(m, set())",
    ],
)
def test_the_check_sees_each_way_past_the_seam(source: str) -> None:
    assert len(seam_breaches(source)) >= 1, source


def test_the_check_lets_manims_public_api_pass() -> None:
    public = (
        "from manim import Mobject, Scene, config, tempconfig\nimport manim\n"
        "config.frame_rate = 15\nx = Mobject().get_family()\nself.camera.background_color = 'x'\n"
        "self.renderer.skip_frames(True)\nself.next_section('a', skip_animations=True)\nv = manim.__version__\n"
        "mob.points = p\n"
    )
    assert seam_breaches(public) == []


def _pinned(text: str) -> str:
    found = re.search(r"manim==([0-9][0-9A-Za-z.]*)", text)
    assert found is not None
    return found.group(1)


def test_the_engines_manim_is_the_pinned_one() -> None:
    assert _pinned((ROOT / "pyproject.toml").read_text()) == version.MANIM_VERSION
    assert _pinned((ROOT / "constraints.txt").read_text()) == version.MANIM_VERSION
    assert version.installed_manim() == version.MANIM_VERSION


def test_another_manim_is_a_one_line_error_naming_both(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dtfilm.cli import main

    monkeypatch.setattr(version, "installed_manim", lambda: "0.19.1")
    with pytest.raises(DtfilmError) as raised, drawing():
        pass
    assert "0.19.1" in str(raised.value) and version.MANIM_VERSION in str(raised.value)
    assert not is_drawing()
    monkeypatch.chdir(ROOT)
    assert main(["check", "dp", "--fresh"]) == 2  # (--fresh: it plays, whatever an earlier check kept)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("dtfilm: error: manim: Manim 0.19.1 is installed") and "manim==0.22.0" in err


def test_manims_mobject_is_patched_only_while_drawing() -> None:
    from manim import Mobject

    from dtfilm.engine import copying, family

    manims = (Mobject.__deepcopy__, Mobject.get_family)
    assert manims != (copying.quick_deepcopy, family.quick_family)
    with drawing():
        assert (Mobject.__deepcopy__, Mobject.get_family) == (copying.quick_deepcopy, family.quick_family)
        with drawing():  # (nested: a page's pictures drawn inside)
            pass
        assert Mobject.get_family is family.quick_family
    assert (Mobject.__deepcopy__, Mobject.get_family) == manims
