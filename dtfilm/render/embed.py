"""Snippets that embed a rendered chapter in a docs page, and the gallery page of the film.

`dtfilm embed CHAPTER --as html|markdown|rst` prints one; every render writes
renders/index.html, which embeds each rendered chapter with its poster, title and subtitles.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from dtfilm.storyboard.film import film_titles
from dtfilm.system.atomic import write_text_atomic
from dtfilm.system.quality import CLIP_SIZES
from dtfilm.system.report_schema import read_report
from dtfilm.userfile import read_back

SNIPPET_FORMATS = ("html", "markdown", "rst")


# The clip's pixel size at each quality: what dtfilm.render.chapters renders, and the player's attributes.
FILES = ("mp4", "png", "vtt", "numbers.json")  # what a page needs beside it: clip, poster, subtitles, numbers


def _join(base: str, name: str) -> str:
    return f"{base.rstrip('/')}/{name}" if base else name


# Every character str.splitlines (and so docutils) ends a line at: in a title or a URL, one would
# end the RST directive's indented block and start markup of its own (`.. include::`).
_LINE_BREAKS = re.compile(r"[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]+")
# ASCII punctuation, each of which CommonMark lets a backslash make literal.
_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def one_line(text: str) -> str:
    """`text` with its line breaks as spaces."""
    return _LINE_BREAKS.sub(" ", text)


def markdown_text(text: str) -> str:
    """Text shown as itself in Markdown: one line, every punctuation mark escaped, so a title
    cannot close the link's brackets or start markup (`](javascript:...)` stays words)."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", one_line(text))


def markdown_url(url: str) -> str:
    """A URL as a Markdown link's destination: spaces, brackets, parentheses, quotes and line
    breaks percent-encoded, so it ends where the snippet ends it."""
    return quote(one_line(url), safe="/:#?&=@%+~.,;!$*_-")


def clip_size(entry: dict[str, Any] | None) -> tuple[int, int]:
    """A rendered chapter's width and height, from its manifest entry (preview if unknown)."""
    quality = ((entry or {}).get("parts") or {}).get("quality", "preview")
    return CLIP_SIZES.get(quality, CLIP_SIZES["preview"])


def video_tag(
    chapter_id: str, title: str, base: str, indent: str = "", size: tuple[int, int] = CLIP_SIZES["preview"]
) -> str:
    """An HTML5 video with the clip, its poster and its subtitles (WebVTT, off until the viewer
    turns them on: the voice speaks the narration and the burned-in caption is its headline).
    Responsive: the clip's own width and height (so the page keeps its room before it loads),
    never wider than the column it sits in."""
    title, base = one_line(title), one_line(base)  # (a raw RST block ends at a line break)
    src, poster, vtt = (_join(base, f"{chapter_id}.{ext}") for ext in ("mp4", "png", "vtt"))
    width, height = size
    lines = [
        f'<video controls preload="metadata" playsinline width="{width}" height="{height}"'
        f' style="max-width:100%;height:auto" poster="{html.escape(poster)}" title="{html.escape(title)}">',
        f'  <source src="{html.escape(src)}" type="video/mp4">',
        f'  <track kind="subtitles" src="{html.escape(vtt)}" srclang="en" label="English">',
        f'  <a href="{html.escape(src)}">{html.escape(title)} (MP4)</a>',
        "</video>",
    ]
    return "\n".join(indent + line for line in lines)


def snippet(
    chapter_id: str, title: str, fmt: str, base: str = "renders", size: tuple[int, int] = CLIP_SIZES["preview"]
) -> str:
    """The snippet for one chapter; `base` is the renders folder as a URL resolved against the
    built page's URL. Markdown: the poster linking to the clip, one thing that every Markdown
    renderer shows (GitHub strips <video>); sites that pass HTML through take `html`.
    reStructuredText: a raw HTML block (for Sphinx, the `dtfilm` directive does better), every
    line of it indented, so nothing in the title or `base` ends it."""
    if fmt == "html":
        return video_tag(chapter_id, title, base, size=size)
    if fmt == "markdown":
        poster, src = _join(base, f"{chapter_id}.png"), _join(base, f"{chapter_id}.mp4")
        return f"[![{markdown_text(title)}]({markdown_url(poster)})]({markdown_url(src)})"
    if fmt == "rst":
        return ".. raw:: html\n\n" + video_tag(chapter_id, title, base, indent="   ", size=size)
    raise ValueError(f"{fmt!r} is not a snippet format; valid: {', '.join(SNIPPET_FORMATS)}")


EXPLORE = "explore"  # `dtfilm embed explore`: the explorer page (dtfilm page), not a chapter


def explore_title(film_title: str) -> str:
    """The explorer page's title (its <title>, its heading, the iframe's title)."""
    return f"{film_title}: explore the rack"


def explore_snippet(title: str, fmt: str, base: str = "renders", height_px: int = 1800) -> str:
    """The explorer page in a docs page: an iframe (html; rst as a raw block), or for Markdown a
    link, since GitHub's renderer strips iframes (sites that pass HTML through take `html`)."""
    title, src = one_line(title), _join(one_line(base), f"{EXPLORE}/index.html")
    frame = (
        f'<iframe src="{html.escape(src)}" title="{html.escape(title)}" loading="lazy"'
        f' style="width:100%;height:{height_px}px;border:0"></iframe>'
    )
    if fmt == "html":
        return frame
    if fmt == "markdown":
        return f"[{markdown_text(title)}]({markdown_url(src)})"
    if fmt == "rst":
        return ".. raw:: html\n\n   " + frame
    raise ValueError(f"{fmt!r} is not a snippet format; valid: {', '.join(SNIPPET_FORMATS)}")


def copy_hint(chapter_id: str, renders: Path, fmt: str, base: str) -> str:
    """Which files the snippet points at, and where they must sit for its `base` to find them."""
    names = [f"{chapter_id}.{ext}" for ext in (("png", "mp4") if fmt == "markdown" else FILES)]
    return (
        f"dtfilm: copy {', '.join(names)} from {renders} to the folder that '{base}' names, resolved"
        " against the built page's URL (a page in docs/guide/ with base ../renders reads docs/renders/)"
    )


_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
  body {{ background: #0e1117; color: #f2f4f8; font-family: Inter, system-ui, sans-serif; margin: 0 auto;
         max-width: 1000px; padding: 2rem 1.5rem; }}
  h1 {{ margin-bottom: 0.2rem; }} .subtitle, .meta {{ color: #a9b1be; }}
  section {{ margin: 2.5rem 0; }} video {{ width: 100%; height: auto; border-radius: 8px; background: #000; }}
  a {{ color: #ffd166; }} code {{ color: #ffd166; }}
  table {{ border-collapse: collapse; font-size: 0.85rem; }} td, th {{ padding: 0.2rem 0.6rem; text-align: left; }}
  th {{ color: #a9b1be; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p class="subtitle">{subtitle}</p>
{explore}
{sections}
{validation}
<p class="meta">{small_print}</p>
<pre id="selftest" hidden></pre>
<script>
// Opened as index.html#selftest (the test suite does, in headless Chromium): play every clip
// muted for a moment and write what each reported into #selftest.
if (location.hash === "#selftest") {{
  const out = document.getElementById("selftest");
  const videos = [...document.querySelectorAll("video")];
  Promise.all(videos.map(v => new Promise(done => {{
    const report = {{id: v.id, duration: null, advanced: null, seeked: null, error: null}};
    v.muted = true;
    v.addEventListener("error", () => {{ report.error = String(v.error && v.error.code); done(report); }});
    const measure = () => {{
      report.duration = v.duration;
      // First a frame further in must decode (seek to it); then the clip must play. Headless
      // Chromium without a sound device never starts the clock of a clip with sound, so a
      // clip that decodes but does not advance there is reported, not failed, by the page.
      v.addEventListener("seeked", () => {{
        report.seeked = v.readyState >= 2 ? v.currentTime : 0;
        const before = v.currentTime;
        let settled = false;
        const settle = () => {{
          if (settled) return;
          settled = true; report.advanced = v.currentTime - before; v.pause(); done(report);
        }};
        const timer = setTimeout(settle, 10000);  // a busy machine decodes slowly: wait up to 10 s
        const moved = () => {{ if (v.currentTime - before >= 0.5) {{ clearTimeout(timer); settle(); }} }};
        v.addEventListener("timeupdate", moved);
        v.play().catch(e => {{ clearTimeout(timer); report.error = String(e); settled = true; done(report); }});
      }}, {{once: true}});
      v.currentTime = Math.min(1.5, v.duration / 2);
    }};
    v.addEventListener("loadedmetadata", measure, {{once: true}});
    v.preload = "auto";  // a seek in a clip loaded for its metadata only stalls headless
    v.load();  // from the start, so that loadedmetadata comes after the listener
  }}))).then(reports => {{ out.textContent = JSON.stringify(reports); out.hidden = false; }});
}}
</script>
</body>
</html>
"""


def validation_html(report: dict[str, Any] | None) -> str:
    """The last `dtfilm validate` report as a table (nothing when there is none). It is read back
    from the renders folder (dtfilm.system.report_schema checks its shape): every field of it is
    escaped here as text, numbers too."""
    if not report:
        return ""
    rows = "\n".join(
        f"<tr><td>{html.escape(r['strategy'])}</td><td>{html.escape(r['quantity'])}</td>"
        f"<td>{html.escape(format(r['model'], ',.0f'))}</td><td>{html.escape(format(r['measured'], ',.0f'))}</td>"
        f"<td>{html.escape(r['verdict'])}</td>"
        f"<td>{html.escape(r['note'] if r['verdict'] == 'explained' else '')}</td></tr>"
        for r in report["rows"]
    )
    return (
        f'<section id="validation">\n<h2>Checked against PyTorch</h2>\n<p class="meta">dtfilm validate:'
        f" {html.escape(str(report['ranks']))} ranks, {html.escape(report['backend'])},"
        f" torch {html.escape(report['torch'])},"
        f" {html.escape(report['measured_at'])}</p>\n<table>\n<tr><th>strategy</th><th>quantity</th>"
        f"<th>cost model</th><th>measured</th><th>verdict</th><th>why</th></tr>\n{rows}\n</table>\n</section>"
    )


def gallery_html(
    film_title: str,
    subtitle: str,
    small_print: str,
    chapters: list[dict[str, Any]],
    report: dict[str, Any] | None = None,
    explore: bool = False,
) -> str:
    """The page: every rendered chapter (id, title, duration) in film order, then the last
    validation report; with `explore`, a link to the explorer page (dtfilm page) first."""
    sections = []
    for chapter in chapters:
        minutes, seconds = divmod(round(chapter["duration"]), 60)
        size = chapter.get("size", CLIP_SIZES["preview"])
        tag = video_tag(chapter["id"], chapter["title"], "", size=size)
        tag = tag.replace("<video ", f'<video id="{chapter["id"]}" ', 1)
        # a chapter's subtitle, under its heading (a title card drew it; the page says it too)
        below_title = chapter.get("subtitle") or ""
        below = f'<p class="subtitle">{html.escape(below_title)}</p>\n' if below_title else ""
        sections.append(
            f"<section>\n<h2>{html.escape(chapter['title'])}</h2>\n{below}{tag}\n"
            f'<p class="meta">{minutes}:{seconds:02d} · <a href="{chapter["id"]}.mp4">MP4</a> ·'
            f' <a href="{chapter["id"]}.vtt">subtitles</a> · <a href="{chapter["id"]}.numbers.json">numbers</a></p>\n'
            "</section>"
        )
    return _PAGE.format(
        title=html.escape(film_title),
        subtitle=html.escape(subtitle),
        small_print=html.escape(small_print),
        sections="\n".join(sections),
        validation=validation_html(report),
        explore=(
            f'<p><a href="{EXPLORE}/index.html">Explore the rack</a>: the strategies on a rack of cards,'
            " with the cost model's numbers for every setting.</p>"
            if explore
            else ""
        ),
    )


def write_gallery(
    out_dir: Path, film: Any, manifest: dict[str, Any], overrides: dict[str, Any] | None = None
) -> Path | None:
    """renders/index.html for the chapters of the film that are rendered there; the film's title
    and subtitle as templates under its defaults and `overrides` (the flags the render took).
    None when the file there already says exactly that (read back as any file there is: nothing
    written)."""
    chapters = [
        {
            "id": c,
            "title": manifest["chapters"][c].get("title", c),
            "subtitle": manifest["chapters"][c].get("subtitle", ""),
            "duration": manifest["chapters"][c]["duration"],
            "size": clip_size(manifest["chapters"][c]),
        }
        for c in film.chapters
        if c in manifest["chapters"] and (out_dir / f"{c}.mp4").is_file()
    ]
    target = out_dir / "index.html"
    report = read_report(out_dir)
    explore = (out_dir / EXPLORE / "index.html").is_file()
    title, subtitle = film_titles(film, overrides)
    page = gallery_html(title.text, subtitle.text if subtitle else "", film.small_print, chapters, report, explore)
    if read_back(target, MAX_GALLERY_BYTES) == page.encode():
        return None
    write_text_atomic(target, page)
    return target


MAX_GALLERY_BYTES = 4 * 2**20  # a gallery of a few dozen chapters is some tens of kB
