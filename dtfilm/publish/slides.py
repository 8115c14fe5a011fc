"""`dtfilm slides`: the film as a talk, one slide per shot, the narration as speaker notes.

Two files beside the clips in renders/: slides.html, a reveal.js deck that works offline
(reveal.js comes from the npm registry once, is cached, and is copied into renders/reveal/),
and slides.pptx for PowerPoint and Keynote (python-pptx, the `slides` extra). Each slide
plays its shot's clip (renders/shots/<chapter>/NN-<beat>.mp4, cut by Manim as it draws)
and holds on its last frame, so a speaker steps through the film shot by shot.

manim-slides does the same for Manim scenes, but its current release fails on manim 0.22;
building from the per-shot clips needs neither a second render nor a pin to an older manim.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import tempfile
from pathlib import Path
from typing import Any

from dtfilm import beneath
from dtfilm.errors import DtfilmError, Where
from dtfilm.publish.npm import npm_package
from dtfilm.render.cache import read_manifest, write_manifest
from dtfilm.render.derived import SLIDES, deck_inputs, deck_key, deck_reasons, deck_record, deck_theme, slides_record
from dtfilm.render.lock import render_lock
from dtfilm.storyboard import find_root, load_film
from dtfilm.storyboard.film import film_titles
from dtfilm.system.atomic import atomic_path, write_text_atomic
from dtfilm.system.video import remux_faststart

REVEAL_VERSION = "6.0.2"
# Each file of reveal.js 6.0.2 the deck bundles, with its SHA-256 (from the registry's tarball,
# reveal.js-6.0.2.tgz): the machine cache is not trusted, so a file there that differs (a
# planted dist/*.js would run in every deck) is refused before it is copied.
REVEAL_DIGESTS = {
    "dist/reveal.js": "aa1bbbf2617b23a623b23612cb3c5bdb63de512e652bf20fcfa832b045d37844",
    "dist/reveal.css": "615ee850cbbb98a0f688b60ed37b21819a3f54c9f3e6f20e33e63693ab74a0c0",
    "dist/reset.css": "39413c3490fdcf826427c26ff4c1ee59ea961a0aa8507c18454e0c6dc96c12d8",
    "dist/theme/black.css": "c29c9689e8f3b277aa66edc01ed2ef97981a6768b05ad750582eac068d9705c3",
    "dist/theme/white.css": "41e9507d97eb13ce6804645a9ce9f16220ddc3bfd6e7888aa3a0b5f61777d8f3",
    "dist/plugin/notes.js": "447c42f365876e41853de81453d0c53c580c5b2099132e8f61200de4a0ba2af3",
    "LICENSE": "b2883e4b610bfa1b4d8fff84c4d4b825cc7d553cbd9fec4777c04068a2859dc0",
}
REVEAL_FILES = tuple(REVEAL_DIGESTS)
REVEAL_MAX_BYTES = 2 * 2**20  # each of those files (the largest is 0.6 MB)


def reveal_bundle() -> Path:
    """The reveal.js files, fetched with npm from its registry the first time, then cached."""
    return npm_package("reveal.js", REVEAL_VERSION, REVEAL_FILES, "the deck bundles")


def pinned_reveal(bundle: Path) -> dict[str, bytes]:
    """Every file of the deck's reveal.js, read beneath the machine cache's folder (no link
    followed, regular files only) and checked against its pinned digest; else a one-line error
    saying to remove the cached copy (fetched again next time)."""
    files = {}
    for name, digest in REVEAL_DIGESTS.items():
        try:
            data = beneath.read(bundle, name, REVEAL_MAX_BYTES)
        except beneath.Refused as refused:
            raise refused.line_error(
                f"reveal.js {REVEAL_VERSION}'s own file; remove {bundle} to fetch it again"
            ) from None
        except OSError as error:
            raise DtfilmError(
                f"cannot read: {error.strerror}; remove {bundle} to fetch it again", Where(str(bundle / name))
            ) from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise DtfilmError(
                f"is not reveal.js {REVEAL_VERSION}'s file (its SHA-256 differs from the pinned one);"
                f" valid: remove {bundle} to fetch it again",
                Where(str(bundle / name)),
            )
        files[name] = data
    return files


def deck_shots(out_dir: Path, chapter_ids: list[str], film: Any) -> list[dict[str, Any]]:
    """Every shot of the chapters asked for, in film order, from the manifest of out_dir."""
    manifest = read_manifest(out_dir)
    shots = []
    for chapter in chapter_ids:
        entry = manifest["chapters"].get(chapter)
        if entry is None or not entry.get("shots"):
            raise DtfilmError(
                f"chapter {chapter!r} has no per-shot clips in {out_dir}; run dtfilm render {chapter} first",
                Where(str(out_dir)),
            )
        for shot in entry["shots"]:
            missing = [name for name in (shot["clip"], shot["still"]) if not (out_dir / name).is_file()]
            if missing:
                raise DtfilmError(
                    f"{out_dir / missing[0]} is missing; run dtfilm render {chapter}", Where(str(out_dir))
                )
            shots.append({**shot, "chapter": chapter, "title": entry.get("title", chapter)})
    return shots


_DECK = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<link rel="stylesheet" href="reveal/dist/reset.css">
<link rel="stylesheet" href="reveal/dist/reveal.css">
<link rel="stylesheet" href="reveal/dist/theme/{theme}.css">
<style>
  .reveal section.shot {{ padding: 0; height: 100%; }}
  .reveal section.shot video {{ width: 100%; height: 100%; max-height: none; margin: 0; object-fit: contain; }}
</style>
</head>
<body>
<div class="reveal"><div class="slides">
{slides}
</div></div>
<script src="reveal/dist/reveal.js"></script>
<script src="reveal/dist/plugin/notes.js"></script>
<script>
Reveal.initialize({{ width: 1920, height: 1080, margin: 0, hash: true, controls: true, progress: true,
  autoPlayMedia: true, transition: "none", backgroundTransition: "none", plugins: [RevealNotes] }});
</script>
</body>
</html>
"""


def deck_html(title: str, theme: str, shots: list[dict[str, Any]], voice: bool = False) -> str:
    """The reveal.js deck: one slide per shot, its clip muted (a speaker talks over slides)
    unless `voice`."""
    slides = []
    sound = "" if voice else " muted"
    background = "#0e1117" if theme == "black" else "#ffffff"
    for shot in shots:
        slides.append(
            f'<section class="shot" data-chapter="{html.escape(shot["chapter"])}"'
            f' data-beat="{html.escape(shot["beat"])}" data-background-color="{background}">\n'
            f'  <video src="{html.escape(shot["clip"])}" poster="{html.escape(shot["still"])}"'
            f' data-autoplay{sound} playsinline preload="auto"></video>\n'
            f'  <aside class="notes">{html.escape(shot["title"])}: {html.escape(shot["narration"])}</aside>\n'
            "</section>"
        )
    return _DECK.format(title=html.escape(title), theme=theme, slides="\n".join(slides))


# Said when python-pptx is missing: installed as dtfilm was (a wheel, a checkout, an index of one's
# own), so the hint names the extra, not a package index.
PPTX_HINT = (
    "the PowerPoint file needs python-pptx, which dtfilm's `slides` extra pins: install dtfilm again"
    " as you installed it with [slides] after its name or wheel (pip install 'WHEEL_OR_NAME[slides]'),"
    " or pass --no-pptx; nothing was written"
)


def _pptx_module() -> Any:
    """python-pptx, or a one-line error before anything is written."""
    try:
        # (here: python-pptx, only for --pptx)
        import pptx
        import pptx.util
    except ImportError:
        raise DtfilmError(PPTX_HINT, Where(flag="slides")) from None
    return pptx


def write_pptx(target: Path, shots: list[dict[str, Any]], out_dir: Path, voice: bool = False) -> None:
    """One 16:9 slide per shot: the clip as an embedded movie with its last frame as the
    poster, and the narration in the speaker notes. Without `voice` the movies are the clips'
    pictures alone (PowerPoint has no muted flag a file can set). `target` is written as it
    stands (the caller's temporary path)."""
    pptx = _pptx_module()
    Presentation, Emu = pptx.Presentation, pptx.util.Emu
    deck = Presentation()
    deck.slide_width, deck.slide_height = Emu(12192000), Emu(6858000)  # 13.33 x 7.5 in, 16:9
    blank = deck.slide_layouts[6]
    with tempfile.TemporaryDirectory() as silent:
        for shot in shots:
            clip = out_dir / shot["clip"]
            if not voice:
                clip = Path(silent) / f"{shot['chapter']}-{Path(shot['clip']).name}"
                remux_faststart(out_dir / shot["clip"], clip)
            _add_slide(deck, blank, shot, clip, out_dir)
        deck.save(str(target))


def _add_slide(deck: Any, layout: Any, shot: dict[str, Any], clip: Path, out_dir: Path) -> None:
    """A slide filled by the shot's movie, poster from its last frame, narration in the notes."""
    slide = deck.slides.add_slide(layout)
    slide.shapes.add_movie(
        str(clip),
        0,
        0,
        deck.slide_width,
        deck.slide_height,
        poster_frame_image=str(out_dir / shot["still"]),
        mime_type="video/mp4",
    )
    slide.notes_slide.notes_text_frame.text = f"{shot['title']}: {shot['narration']}"


def build_slides(
    chapter_ids: list[str], out_dir: Path | None = None, pptx: bool = True, voice: bool = False
) -> list[Path]:
    """slides.html (and slides.pptx) in the renders folder, from the clips rendered there;
    muted unless `voice` (the presenter speaks)."""
    root = find_root()
    film = load_film(root / "storyboard" / "film.yaml")
    for chapter in chapter_ids:
        if chapter not in film.chapters:
            raise DtfilmError(
                f"no chapter {chapter!r}; valid: {', '.join(film.chapters)}", Where("storyboard/film.yaml")
            )
    out = out_dir or root / "renders"
    chapters = chapter_ids or list(film.chapters)
    shots = deck_shots(out, chapters, film)
    beneath.check_renders_folder(out, given=False, may_make=False, writes=True, where=Where(str(out)))
    if pptx:
        _pptx_module()  # (missing: said before a file is written, not after the deck's first half)
    reveal = pinned_reveal(reveal_bundle())
    theme, title = deck_theme(film.theme), film_titles(film)[0].text
    written = [out / "slides.html", *([out / "slides.pptx"] if pptx else [])]
    with render_lock(out):
        with contextlib.ExitStack() as stack:
            # all or nothing: the PowerPoint file first, into a temporary path renamed at the end
            if pptx:
                write_pptx(stack.enter_context(atomic_path(written[1])), shots, out, voice)
            for name, data in reveal.items():  # (written beneath renders/: a link
                with atomic_path(out / "reveal" / name) as temp:  # planted there is replaced, not written through)
                    temp.write_bytes(data)
            write_text_atomic(written[0], deck_html(title, theme, shots, voice))
        # its record: what it was made from, so that `status` and `render` know when it no longer follows
        manifest = read_manifest(out)
        key = deck_key(deck_inputs(manifest, chapters, title, theme) or [])
        manifest[SLIDES] = slides_record(out, chapters, key, pptx, voice, manifest.get(SLIDES))
        write_manifest(out, manifest)
    sound = "with the narration's voice" if voice else "muted (--voice for the narration's voice)"
    for path in written:
        print(f"{path}: {len(shots)} slides, one per shot, {sound}")
    return written


def rebuild_stale_slides(out_dir: Path | None = None) -> list[Path]:
    """The deck made again as it was made, once, when a render changed what it shows (the end
    of `dtfilm render`); nothing when no deck was made or it still follows the renders."""
    root = find_root()
    out = out_dir or root / "renders"
    film = load_film(root / "storyboard" / "film.yaml")
    manifest = read_manifest(out)
    record = deck_record(manifest)
    reasons = deck_reasons(manifest, out, film_titles(film)[0].text, deck_theme(film.theme))
    if record is None or not reasons:
        return []
    chapters = [c for c in record["chapters"] if c in film.chapters]
    if not chapters:
        return []
    print(f"slides: made again ({'; '.join(reasons)})")
    return build_slides(chapters, out, pptx=record["pptx"], voice=record["voice"])
