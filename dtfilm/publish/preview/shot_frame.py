"""One shot's frame for the preview: the moment it has shown everything, before its caption
leaves (DrawPlan.at_shot_end), drawn without drawing the frames before it.

Every shot plays with its animations skipped and no pixels (a dry run, from a state a render
kept at the shot's start when there is one); when the shot has shown everything, one frame is
drawn and the scene stops there, so a save costs a dry run and a single frame, not a clip."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from PIL import Image

from dtfilm.draw_plan import chapter_plan
from dtfilm.phrases import Fact
from dtfilm.render.manim_log import manim_log
from dtfilm.storyboard import Chapter
from dtfilm.storyboard.load import spoken_and_written
from dtfilm.system.quality import QUALITY

PREVIEW_QUALITY = "preview"  # the lowest: 854x480 (dtfilm.system.quality)


class _Shown(Exception):
    """The shot has shown everything and its frame is drawn: the scene plays no further."""

    def __init__(self, image: Image.Image) -> None:
        super().__init__("shown")
        self.image = image


def shot_frame(chapter: Chapter, beat: str, theme: str | None, renders: Path) -> Image.Image:
    """The frame of shot `beat` once it shows everything, at preview quality."""
    # (here: Manim, which only drawing needs)
    from manim import tempconfig

    from dtfilm.render.cache import chapter_key
    from dtfilm.render.shot_render import KeptStates
    from dtfilm.scene import ChapterScene
    from dtfilm.shots import SHOTS

    named_theme = theme or chapter.film.theme
    index = next(shot.index for shot in chapter.shots if shot.beat == beat)

    def draw(scene: Any, played: str) -> None:
        if played != beat:
            return
        scene.renderer.pixels_when_skipped = True
        scene.renderer.update_frame(scene, ignore_skipping=True)
        raise _Shown(Image.fromarray(scene.renderer.get_frame()).convert("RGB"))

    plan = chapter_plan(
        chapter,
        SHOTS,
        theme,
        quality=QUALITY[PREVIEW_QUALITY],
        choose_drawn=lambda scene, shot, screen: False,  # every shot skipped: no frames drawn
        at_shot_end=draw,
        chapter_parts=chapter_key(chapter, PREVIEW_QUALITY, named_theme).parts,
        start_from=KeptStates(chapter, PREVIEW_QUALITY, named_theme, renders, index).start_from,
        with_sound=False,
    )
    settings = {
        **plan.quality.manim_settings(),
        "disable_caching": True,
        "verbosity": "WARNING",
        "progress_bar": "none",
        "write_to_movie": False,
    }
    with (
        tempfile.TemporaryDirectory(prefix=f"dtfilm-preview-{chapter.id}-") as media,
        manim_log(renders, f"{chapter.id}:{beat} (preview)"),
        tempconfig({**settings, "media_dir": media}),
    ):
        try:
            ChapterScene(plan).render()
        except _Shown as shown:
            return shown.image
    raise AssertionError(f"{chapter.id}:{beat} played to its end without reaching its last moment")


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
