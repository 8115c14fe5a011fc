"""Static furniture drawn once per animation, not once per frame.

Manim's Cairo renderer draws, before each animation, everything below the first moving mobject
into a background image, and then, on every frame, every mobject from the first moving one on,
moving or not (`Scene.get_moving_mobjects`). In dtfilm's scenes the captions, titles and stat
rows that stand still are often drawn after something that moves, so about half of what frames
drew over the background (364,000 of 756,000 outlines over the preview film) had not changed.

`StillLayer.begin` takes, from what a frame draws after the background, the mobjects that stand
still (in no animation's family) and whose footprint (their points' box, widened by their
strokes' reach and two pixels of anti-aliasing) meets nothing drawn before them that is not
taken too; it draws them once over Manim's background. Each frame then starts from that image
and draws only the rest, in Manim's order. Drawing two things whose footprints are apart in
either order gives the same pixels, so the frame is Manim's, pixel for pixel; a frame where a
moving mobject comes over a taken one, or where the order of the still ones changed, is drawn
Manim's way instead (`draw` answers False), and so is every frame while anything on screen has
an updater (which may change any mobject; dtfilm's shots use none).

FilmScene (dtfilm.engine.scene) begins each animation's layer; FilmRenderer draws its frames
from it (dtfilm.engine.renderer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from manim import VMobject
from manim.mobject.types.image_mobject import AbstractImageMobject

MITER_REACH = 5.0  # Cairo's default miter limit (10) reaches 5 line widths from a corner
SMOOTH_PIXELS = 2.0  # anti-aliasing, and rounding to the pixel grid


@dataclass
class StillLayer:
    """The still mobjects of one animation, drawn once into `image` over Manim's background."""

    scene: Any
    image: np.ndarray
    taken: frozenset[int]  # ids of the mobjects drawn into the image
    taken_boxes: np.ndarray  # their footprints, (n, 4): left, bottom, right, top
    still_order: list[int]  # ids of every still mobject the frame draws, in order, at the start
    still_ids: frozenset[int]  # the same ids
    pixel_units: float  # scene units a pixel spans

    @classmethod
    def begin(cls, scene: Any) -> StillLayer | None:
        """The layer for the animation the scene is about to play, or None when nothing still is
        drawn after the first moving mobject (or a mobject is of a kind not boxed here)."""
        renderer, camera = scene.renderer, scene.renderer.camera
        if not scene.moving_mobjects or _updated(scene):
            return None
        members = camera.get_mobjects_to_display(scene.moving_mobjects)
        if not all(isinstance(m, (VMobject, AbstractImageMobject)) for m in members):
            return None
        moving = _moving_ids(scene)
        pixel_units = camera.frame_width / camera.pixel_width
        still = [m for m in members if id(m) not in moving]
        still_ids = {id(m) for m in still}
        boxes = {id(m): _footprint(m, pixel_units) for m in members}
        taken: list[Any] = []
        drawn_before: list[np.ndarray] = []  # footprints of what is drawn before, not taken
        for mob in members:
            box = boxes[id(mob)]
            if id(mob) in still_ids and not _meets_any(box, drawn_before):
                taken.append(mob)
            else:
                drawn_before.append(box)
        if not taken:
            return None
        if renderer.static_image is not None:
            camera.set_frame_to_background(renderer.static_image)
        else:
            camera.reset()
        camera.capture_mobjects(taken, include_submobjects=False)
        return cls(
            scene,
            np.array(camera.pixel_array),
            frozenset(id(m) for m in taken),
            np.array([boxes[id(m)] for m in taken]),
            [id(m) for m in still],
            frozenset(id(m) for m in still),
            pixel_units,
        )

    def draw(self) -> bool:
        """Draw the current frame from the image and the mobjects not taken; False (nothing
        drawn) when it would not be Manim's frame."""
        camera = self.scene.renderer.camera
        members = camera.get_mobjects_to_display(self.scene.moving_mobjects)
        still_ids = self.still_ids
        if [id(m) for m in members if id(m) in still_ids] != self.still_order:
            return False
        rest, taken_at, moving_at, moving_boxes = [], [], [], []
        for index, mob in enumerate(members):
            if id(mob) in self.taken:
                taken_at.append(index)
                continue
            rest.append(mob)
            if id(mob) not in still_ids:
                moving_at.append(index)
                moving_boxes.append(_footprint(mob, self.pixel_units))
        if moving_boxes:
            boxes = np.array(moving_boxes)
            meets = (
                (boxes[:, None, 0] < self.taken_boxes[None, :, 2])
                & (boxes[:, None, 2] > self.taken_boxes[None, :, 0])
                & (boxes[:, None, 1] < self.taken_boxes[None, :, 3])
                & (boxes[:, None, 3] > self.taken_boxes[None, :, 1])
                & (np.array(moving_at)[:, None] < np.array(taken_at)[None, :])
            )
            if meets.any():
                return False
        camera.set_frame_to_background(self.image)
        camera.capture_mobjects(rest, include_submobjects=False)
        return True


def _updated(scene: Any) -> bool:
    """Whether anything on screen has an updater (dtfilm's shots use none): an updater may
    change any mobject, so its animations are drawn Manim's way."""
    return bool(scene.updaters) or any(m.updaters for m in scene.get_mobject_family_members())


def _moving_ids(scene: Any) -> set[int]:
    """Ids of every mobject an animation of the scene's current play changes: the families of
    the animations' mobjects, nested groups included, and of the foreground mobjects."""
    ids: set[int] = set()
    pending = list(scene.animations or [])
    while pending:
        animation = pending.pop()
        ids.update(id(m) for m in animation.mobject.get_family())
        pending.extend(getattr(animation, "animations", ()))
    for mob in scene.foreground_mobjects:
        ids.update(id(m) for m in mob.get_family())
    return ids


def _footprint(mob: Any, pixel_units: float) -> np.ndarray:
    """Where drawing `mob` can change pixels: its points' box, widened by its strokes' reach."""
    points = mob.points
    reach = SMOOTH_PIXELS * pixel_units
    if isinstance(mob, VMobject):
        widths = [
            float(np.max(mob.get_stroke_width(background))) * 0.01  # Camera.cairo_line_width_multiple
            for background in (False, True)
        ]
        reach += MITER_REACH * max(widths)
    low, high = points[:, :2].min(axis=0), points[:, :2].max(axis=0)
    return np.array([low[0] - reach, low[1] - reach, high[0] + reach, high[1] + reach])


def _meets_any(box: np.ndarray, others: list[np.ndarray]) -> bool:
    if not others:
        return False
    boxes = np.array(others)
    return bool(
        np.any((boxes[:, 0] < box[2]) & (boxes[:, 2] > box[0]) & (boxes[:, 1] < box[3]) & (boxes[:, 3] > box[1]))
    )
