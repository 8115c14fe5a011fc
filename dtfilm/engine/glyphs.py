"""Glyphs placed from Pango's SVG without parsing it whole: what Manim's SVGMobject makes of a
Text's SVG, for the SVGs Pango writes (symbols of glyph outlines, each placed by a <use> at x, y
inside one styled group), with each outline parsed once per process.

Manim parses every label's SVG with svgelements and turns every glyph's path into points again:
about half of the 40-50 ms a label costs. A film typesets about 1,200 labels, most of them the
values a counting stat passes, made of the same few dozen glyphs. The first label of each glyph
style also goes through Manim's own parse, for its first glyph: the template whose style every
placed glyph copies. Templates are kept on disk beside the typeset labels (`keep_templates_by`),
so a drawing process that reads every label it shows from there, but typesets a new caption,
reads its style's template too, where Manim's parse of the caption took it 0.15-0.2 s. An SVG
of another shape is Manim's parse alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import svgelements as se
from manim import RIGHT, Text
from manim.mobject.svg.svg_mobject import VMobjectFromSVGPath

from dtfilm.system.pickled import read_pickled, write_pickled

if TYPE_CHECKING:
    from manim import SVGMobject, VMobject

_SYMBOL = re.compile(r'<symbol overflow="visible" id="([^"]+)">\s*<path style="([^"]*)" d="([^"]*)"/>\s*</symbol>')
_BODY = re.compile(r'</defs>\s*<g id="[^"]+">\s*<g style="([^"]*)">((?:\s*<use [^>]*/>)*)\s*</g>\s*</g>\s*</svg>\s*$')
_USE = re.compile(r'<use xlink:href="#([^"]+)" x="([^"]+)" y="([^"]+)"/>')

Style = tuple[str, str, tuple[tuple[str, str], ...]]  # the group's style, the glyph's, Manim's config
_OUTLINES: dict[str, np.ndarray] = {}  # a glyph's path data -> its points at the origin
_TEMPLATES: dict[Style, VMobject] = {}  # styled glyphs
_template_file: Callable[[Style], Path] | None = None


def keep_templates_by(file: Callable[[Style], Path] | None) -> None:
    """Keep each style's template in the file `file` names (None: in this process only)."""
    global _template_file
    _template_file = file


def _template(style: Style) -> VMobject | None:
    template = _TEMPLATES.get(style)
    if template is None and _template_file is not None:
        stored = read_pickled(_template_file(style))
        if stored is not None:
            template = _TEMPLATES[style] = stored
    return template


def placed_glyphs(svg: SVGMobject) -> list[VMobject] | None:
    """The glyph mobjects Manim's SVGMobject.get_mobjects_from would make of `svg`'s file, or
    None where this reader does not know the file's shape or the glyphs' style yet."""
    text, body, config = _read(svg)
    if body is None:
        return None
    symbols = {name: (style, d) for name, style, d in _SYMBOL.findall(text)}
    group_style, uses = body.group(1), _USE.findall(body.group(2))
    glyphs = []
    for name, x, y in uses:
        if name not in symbols:
            return None
        path_style, d = symbols[name]
        outline = _outline(d)
        if not len(outline):
            continue  # (a space: no points, so no mobject, as in Manim's parse)
        template = _template((group_style, path_style, config))
        if template is None:
            return None
        glyph = template.copy()
        glyph.points = outline + np.array([float(x), float(y), 0.0])
        glyphs.append(glyph)
    return glyphs


def keep_template(svg: SVGMobject, glyphs: list[VMobject]) -> bool:
    """After Manim's own parse of `svg`'s file: keep its first glyph as the template of its
    style. Whether `placed_glyphs` can now place this file's glyphs."""
    text, body, config = _read(svg)
    path_styles = {style for _, style, _ in _SYMBOL.findall(text)}
    if not glyphs or body is None or len(path_styles) != 1:
        return False
    template = glyphs[0].copy()
    template.path_obj = None
    style = (body.group(1), path_styles.pop(), config)
    if style not in _TEMPLATES:
        _TEMPLATES[style] = template
        if _template_file is not None:
            write_pickled(_template_file(style), template)
    return True


def _read(svg: SVGMobject) -> tuple[str, re.Match[str] | None, tuple[tuple[str, str], ...]]:
    """`svg`'s file, its body of placed glyphs (None: another shape), and the style Manim gives
    the file's mobjects, which a template is kept under with the body's and the glyph's."""
    text = svg.get_file_path().read_text(encoding="utf-8")
    return text, _BODY.search(text), tuple(sorted(svg.generate_config_style_dict().items()))


def _outline(d: str) -> np.ndarray:
    """A glyph's points at the origin, as Manim's VMobjectFromSVGPath makes them."""
    points = _OUTLINES.get(d)
    if points is None:
        points = _OUTLINES[d] = VMobjectFromSVGPath(se.Path(d)).points.copy()
    return points


class GlyphText(Text):
    """Manim's Text, its glyphs placed by `placed_glyphs` (dtfilm.visuals.text.Label is one)."""

    def generate_mobject(self) -> GlyphText:
        """Manim's parse of the SVG Pango wrote, with each glyph's outline parsed once: the same
        glyphs, in about a fifth of the time. Every label's points come from that one reader, the
        first of each style too (Manim's parse then gives only the style): Manim's points differ
        in the last bits, and a shot's key, which digests what it draws, must not depend on which
        label a process typeset first."""
        glyphs = placed_glyphs(self)
        if glyphs is None:
            super().generate_mobject()
            if not keep_template(self, self.submobjects):
                return self  # an SVG this reader does not know: Manim's parse, as it is
            glyphs = placed_glyphs(self)
            assert glyphs is not None, "a style just kept is known"
            self.remove(*self.submobjects)
        self.add(*glyphs)
        self.id_to_vgroup_dict = {}
        self.flip(RIGHT)
        return self
