"""The plan a scene draws by (dtfilm.draw_plan): one frozen value handed to the scene, with the
shot registry and the voice in it; no configuration left on the scene's class."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import pytest

from dtfilm.draw_plan import DrawPlan, chapter_plan
from dtfilm.errors import DtfilmError
from dtfilm.storyboard import load_chapter
from dtfilm.voice.engine import VOICE_VARIABLE, VoiceSpec

ROOT = Path(__file__).resolve().parent.parent


def test_the_plan_is_frozen():
    plan = DrawPlan("dp", {})
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.draw_window = (0.0, 1.0)  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.choose_drawn = None  # type: ignore[misc]


def test_the_scene_class_holds_no_configuration_but_a_scene_files_frozen_plan():
    from dtfilm.scene import ChapterScene

    configuration = {
        name: value
        for name, value in vars(ChapterScene).items()
        if not name.startswith("__") and not callable(value) and not isinstance(value, (property, staticmethod))
    }
    assert configuration == {"default_plan": None}  # (it held 17 class variables a render set)
    for path in sorted((ROOT / "scenes").glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"scene_file_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        scenes = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, ChapterScene)]
        (scene,) = [s for s in scenes if s is not ChapterScene]
        plan = scene.default_plan
        assert isinstance(plan, DrawPlan) and dataclasses.is_dataclass(plan), path
        assert (ROOT / "storyboard" / f"{plan.chapter_id}.yaml").is_file() and plan.project_root == ROOT, path


def test_the_scene_plays_the_shot_functions_its_plan_hands_it(tmp_path: Path):
    # the registry comes with the plan (the scene imports no shot): a stand-in registry is what plays
    from manim import tempconfig

    from dtfilm.scene import ChapterScene

    chapter = load_chapter("dp", {}, ROOT)
    played: list[tuple[str, str]] = []

    def stand_in(ctx, shot) -> None:
        played.append((shot.kind, shot.beat))
        ctx.scene.wait(0.5)

    shots = {shot.kind: stand_in for shot in chapter.shots}
    plan = chapter_plan(chapter, shots, voice=VoiceSpec("none"), digests=True)
    with tempconfig({"dry_run": True, "media_dir": str(tmp_path), "verbosity": "ERROR", "disable_caching": True}):
        scene = ChapterScene(plan)
        scene.renderer.skip_animations = scene.renderer._original_skipping_status = True
        scene.render()
    assert scene.plan is plan
    assert played == [(shot.kind, shot.beat) for shot in chapter.shots]
    assert set(scene.records) == {shot.beat for shot in chapter.shots}


def test_a_drawing_process_takes_the_voice_it_is_handed_not_the_environment(monkeypatch: pytest.MonkeyPatch):
    # DTFILM_VOICE is the user's, read where the command starts; a drawing process is handed the
    # voice (ShotJob.voice, DrawPlan.voice) and does not read it again
    monkeypatch.setenv(VOICE_VARIABLE, "no-such-voice")
    with pytest.raises(DtfilmError, match="no-such-voice"):
        load_chapter("dp", {}, ROOT)
    handed = load_chapter("dp", {}, ROOT, voice=VoiceSpec("none"))
    assert handed.film.voice == VoiceSpec("none")
