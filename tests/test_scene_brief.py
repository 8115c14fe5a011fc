"""The brief a scene draws by (dtfilm.scene_brief): one frozen value handed to the scene, with the
shot registry and the voice in it; no configuration left on the scene's class."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import pytest

from dtfilm.errors import DtfilmError
from dtfilm.scene_brief import SceneBrief, chapter_brief
from dtfilm.storyboard import load_chapter
from dtfilm.voice.engine import VOICE_VARIABLE, VoiceSpec

ROOT = Path(__file__).resolve().parent.parent


def test_the_plan_is_frozen():
    brief = SceneBrief("dp", {})
    with pytest.raises(dataclasses.FrozenInstanceError):
        brief.draw_window = (0.0, 1.0)  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        brief.choose_drawn = None  # type: ignore[misc]


def test_the_scene_class_holds_no_configuration_but_a_scene_files_frozen_plan():
    from dtfilm.scene import ChapterScene

    configuration = {
        name: value
        for name, value in vars(ChapterScene).items()
        if not name.startswith("__") and not callable(value) and not isinstance(value, (property, staticmethod))
    }
    assert configuration == {"default_brief": None}  # (it held 17 class variables a render set)
    for path in sorted((ROOT / "scenes").glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"scene_file_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        scenes = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, ChapterScene)]
        (scene,) = [s for s in scenes if s is not ChapterScene]
        brief = scene.default_brief
        assert isinstance(brief, SceneBrief) and dataclasses.is_dataclass(brief), path
        assert (ROOT / "storyboard" / f"{brief.chapter_id}.yaml").is_file() and brief.project_root == ROOT, path


def test_the_scene_plays_the_shot_functions_its_plan_hands_it(tmp_path: Path):
    # the registry comes with the brief (the scene imports no shot): a stand-in registry is what plays
    from manim import tempconfig

    from dtfilm.scene import ChapterScene

    chapter = load_chapter("dp", {}, ROOT)
    played: list[tuple[str, str]] = []

    def stand_in(ctx, shot) -> None:
        played.append((shot.kind, shot.beat))
        ctx.scene.wait(0.5)

    shots = {shot.kind: stand_in for shot in chapter.shots}
    brief = chapter_brief(chapter, shots, voice=VoiceSpec("none"), digests=True)
    with tempconfig({"dry_run": True, "media_dir": str(tmp_path), "verbosity": "ERROR", "disable_caching": True}):
        scene = ChapterScene(brief)
        scene.renderer.skip_animations = scene.renderer._original_skipping_status = True
        scene.render()
    assert scene.brief is brief
    assert played == [(shot.kind, shot.beat) for shot in chapter.shots]
    assert set(scene.records) == {shot.beat for shot in chapter.shots}


def test_a_drawing_process_takes_the_voice_it_is_handed_not_the_environment(monkeypatch: pytest.MonkeyPatch):
    # DTFILM_VOICE is the user's, read where the command starts; a drawing process is handed the
    # voice (RenderJob.voice, SceneBrief.voice) and does not read it again
    monkeypatch.setenv(VOICE_VARIABLE, "no-such-voice")
    with pytest.raises(DtfilmError, match="no-such-voice"):
        load_chapter("dp", {}, ROOT)
    handed = load_chapter("dp", {}, ROOT, voice=VoiceSpec("none"))
    assert handed.film.voice == VoiceSpec("none")
