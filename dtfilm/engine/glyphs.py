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

import os
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import manimpango
import numpy as np
import svgelements as se
from manim import RIGHT, Text, config
from manim.mobject.svg.svg_mobject import VMobjectFromSVGPath
from manim.mobject.text.text_mobject import START_X, START_Y, TEXT2SVG_ADJUSTMENT_FACTOR

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
        stored = read_pickled(_template_file(style), "glyph template")
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
            write_pickled(_template_file(style), template, "glyph template")
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


SVG_END = b"</svg>"  # the last tag of a whole file Pango wrote


def _private_name(shared: Path) -> Path:
    """A file beside `shared` that no other process or Text names."""
    return shared.with_name(f".{shared.stem}.{os.getpid()}-{secrets.token_hex(4)}{shared.suffix}")


class GlyphText(Text):
    """Manim's Text, its glyphs placed by `placed_glyphs` (dtfilm.visuals.text.Label is one)."""

    _private_svg: Path | None = None

    def _text2svg(self, color: str) -> str:
        """Manim's Text._text2svg, safe beside other processes typesetting the same text into the
        same folder (test workers, render workers, two renders): Manim reads a file that exists
        while another process may be halfway through writing it, rewrites it in place after
        (PangoUtils.remove_last_M truncates it first) and parses a copy written beside it
        (`<name>_.svg`) that the first process to finish deletes. Two processes typesetting one
        new caption at once failed one in three. Here Pango writes a private file, renamed into
        the shared place whole, and this Text reads and rewrites a private copy of it, removed
        once parsed; a shared file that is not whole (a process killed mid-write by Manim's own
        Text) is typeset again."""
        folder = config.get_dir("text_dir")
        folder.mkdir(parents=True, exist_ok=True)
        shared = folder / (self._text2hash(color) + ".svg")
        svg = shared.read_bytes() if shared.is_file() else b""
        if not svg.rstrip().endswith(SVG_END):
            fresh = _private_name(shared)
            try:
                manimpango.text2svg(
                    self._text2settings(color),
                    self._font_size / TEXT2SVG_ADJUSTMENT_FACTOR,
                    self.line_spacing / TEXT2SVG_ADJUSTMENT_FACTOR,
                    self.disable_ligatures,
                    str(fresh),
                    START_X,
                    START_Y,
                    config["pixel_width"],
                    config["pixel_height"],
                    self.text,
                )
                manimpango.PangoUtils.remove_last_M(str(fresh))
                svg = fresh.read_bytes()
                os.replace(fresh, shared)
            finally:
                fresh.unlink(missing_ok=True)
        self._private_svg = _private_name(shared)
        self._private_svg.write_bytes(svg)
        return str(self._private_svg)

    def generate_mobject(self) -> GlyphText:
        try:
            return self._generate_mobject()
        finally:
            if self._private_svg is not None:
                self._private_svg.unlink(missing_ok=True)
                self._private_svg = None

    def _generate_mobject(self) -> GlyphText:
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
