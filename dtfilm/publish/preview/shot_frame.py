"""One shot's frame for the preview: the moment it has shown everything, before its caption
leaves (SceneBrief.at_shot_end), drawn without drawing the frames before it.

Every shot plays with its animations skipped and no pixels (a dry run, from a state a render
kept at the shot's start when there is one); when the shot has shown everything, one frame is
drawn and the scene stops there, so a save costs a dry run and a single frame, not a clip.

The state at the shot's start is kept in the preview's memory between saves (StartMemo): a
caption's save then plays the shot alone. On dp:ring, the dry run of the three shots before it
was about half of a save's CPU."""

from __future__ import annotations

import hashlib
import json
import pickle
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from dtfilm.phrases import Fact
from dtfilm.render.manim_log import manim_log
from dtfilm.scene_brief import chapter_brief
from dtfilm.storyboard import Chapter
from dtfilm.storyboard.load import spoken_and_written
from dtfilm.system.quality import QUALITY
from dtfilm.system.yamlsrc import load_yaml

PREVIEW_QUALITY = "preview"  # the lowest: 854x480 (dtfilm.system.quality)


class _Shown(Exception):
    """The shot has shown everything and its frame is drawn: the scene plays no further."""

    def __init__(self, image: Image.Image) -> None:
        super().__init__("shown")
        self.image = image


@dataclass
class StartMemo:
    """The scene's state at the previewed shot's start, from the last drawing, with what made it
    (`made_by`). Pickled in this process's memory, never written or read from disk (so nothing
    untrusted is unpickled), and unpickled afresh for each drawing, which changes what it holds."""

    made_by: str | None = None
    state: bytes | None = None

    def start_from(self, made_by: str) -> Any:
        return pickle.loads(self.state) if self.state is not None and self.made_by == made_by else None

    def keep(self, made_by: str, start: Any) -> None:
        if self.made_by != made_by:
            self.made_by, self.state = made_by, pickle.dumps(start, protocol=pickle.HIGHEST_PROTOCOL)


def _made_by(chapter: Chapter, index: int, parts: dict[str, str]) -> str:
    """What the screen at shot `index`'s start follows from: the chapter's key's parts but the
    storyboard's, and of the storyboard the chapter's keys and the shots before it only."""
    data = load_yaml(chapter.path).data
    before = {**data, "shots": data.get("shots", [])[:index]} if isinstance(data, dict) else data
    drawn = {name: value for name, value in parts.items() if name != "storyboard"}
    text = json.dumps([drawn, before, index], sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def shot_frame(
    chapter: Chapter, beat: str, theme: str | None, renders: Path, memo: StartMemo | None = None
) -> Image.Image:
    """The frame of shot `beat` once it shows everything, at preview quality; `memo` keeps the
    state at its start for the next drawing."""
    # (here: Manim, which only drawing needs)
    from manim import tempconfig

    from dtfilm.render.cache import chapter_key
    from dtfilm.render.shot_render import KeptStates
    from dtfilm.scene import ChapterScene
    from dtfilm.shots.plays import SHOTS

    named_theme = theme or chapter.film.theme
    index = next(shot.index for shot in chapter.shots if shot.beat == beat)
    position = next(i for i, shot in enumerate(chapter.shots) if shot.beat == beat)
    parts = chapter_key(chapter, PREVIEW_QUALITY, named_theme).parts
    made_by = _made_by(chapter, index, parts)
    kept = KeptStates(chapter, PREVIEW_QUALITY, named_theme, renders, index)

    def start_from(scene: Any) -> Any:
        remembered = memo.start_from(made_by) if memo is not None else None
        return remembered if remembered is not None else kept.start_from(scene)

    def keep_start(scene: Any, at: int, start: Any) -> None:
        if memo is not None and at == position:
            memo.keep(made_by, start())

    def draw(scene: Any, played: str) -> None:
        if played != beat:
            return
        raise _Shown(Image.fromarray(scene.renderer.frame_now(scene)).convert("RGB"))

    brief = chapter_brief(
        chapter,
        SHOTS,
        theme,
        quality=QUALITY[PREVIEW_QUALITY],
        choose_drawn=lambda scene, shot, screen: False,  # every shot skipped: no frames drawn
        at_shot_end=draw,
        chapter_parts=parts,
        start_from=start_from,
        keep_start=keep_start,
        with_sound=False,
    )
    with (
        tempfile.TemporaryDirectory(prefix=f"dtfilm-preview-{chapter.id}-") as media,
        manim_log(renders, f"{chapter.id}:{beat} (preview)"),
        tempconfig({**_settings(brief), "media_dir": media}),
    ):
        try:
            ChapterScene(brief).render()
        except _Shown as shown:
            return shown.image
    raise AssertionError(f"{chapter.id}:{beat} played to its end without reaching its last moment")


def _settings(brief: Any) -> dict[str, Any]:
    """Manim's settings for a preview: the brief's quality, no cache, no movie written."""
    return {
        **brief.quality.manim_settings(),
        "disable_caching": True,
        "verbosity": "WARNING",
        "progress_bar": "none",
        "write_to_movie": False,
    }


def _fact_entry(fact: Fact) -> dict[str, str]:
    return {"path": fact.path, "shown": fact.shown.replace("\xa0", " "), "unit": fact.unit or ""}


def shot_facts(chapter: Chapter, beat: str) -> dict[str, list[dict[str, Any]]]:
    """What the shot's texts say (caption, narration, labels), the estimate values they show
    (path, as shown, unit) and the claims they draw (words, condition, whether it holds)."""
    texts: list[dict[str, Any]] = []
    numbers: list[dict[str, str]] = []
    claims: list[dict[str, Any]] = []
    for played, which, phrase in spoken_and_written(chapter):
        if played != beat or (which in ("title", "subtitle") and beat != "title"):
            continue
        texts.append({"which": which, "text": phrase.text.replace("\xa0", " ")})
        for fact in phrase.facts:
            if fact.kind == "claim":
                result = fact.value
                claims.append(
                    {
                        "in": which,
                        "text": result.text.replace("\xa0", " ").lstrip(" ,;:"),
                        "condition": result.condition,
                        "holds": bool(result.holds),
                        "values": result.contradiction(),
                    }
                )
            elif fact.kind == "cost" and _fact_entry(fact) not in numbers:
                numbers.append(_fact_entry(fact))
    return {"texts": texts, "numbers": numbers, "claims": claims}
