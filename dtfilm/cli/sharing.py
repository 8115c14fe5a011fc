"""`embed`, `serve` and `preview`: the clips in a page, and a shot drawn as it is edited."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from dtfilm.cli import values
from dtfilm.cli.flags import add_input_flags, add_verbose_flag, add_voice_flag, input_overrides, show_manim_lines
from dtfilm.errors import DtfilmError, Where
from dtfilm.publish.serve import serve
from dtfilm.storyboard.film import film_titles, find_root, load_film
from dtfilm.storyboard.load import chapter_titles


def add_sharing_commands(sub: Any) -> None:
    """`embed`, `serve` and `preview`: the clips in a page, and a shot drawn as it is edited."""
    emb = sub.add_parser("embed", help="print the snippet that embeds a chapter's clip in a docs page")
    emb.add_argument("chapter", help="chapter id, or explore for the explorer page (dtfilm page)")
    emb.add_argument("--as", dest="as_", choices=("html", "markdown", "rst"), default="html")
    emb.add_argument(
        "--base", default="renders", help="URL of the renders folder, resolved against the built page's URL"
    )
    emb.add_argument("--out", help="the renders folder (default: renders/ of the project; alone, it is enough)")
    emb.set_defaults(func=cmd_embed)

    srv = sub.add_parser("serve", help="serve renders/ over HTTP (browsers refuse subtitles from file://)")
    srv.add_argument("--out", help="folder to serve (default: renders/ of the project)")
    srv.add_argument("--host", type=values.host, default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    srv.add_argument("--port", type=values.port, default=8000, help="port (default 8000; 0 picks a free one)")
    srv.set_defaults(func=cmd_serve)

    pvw = sub.add_parser(
        "preview",
        help="a page on 127.0.0.1 showing one shot, drawn again at preview quality on every save, with its numbers,"
        " claims and errors",
        description="Serves a page on 127.0.0.1 showing the shot at the moment it shows everything (before its"
        " caption leaves), drawn again at preview quality whenever a storyboard or storyboard/catalog.yaml is saved;"
        " beside it the texts, the estimate values they show and the claims they draw; a save that does not load"
        " shows its one-line error and keeps the last frame. The frame is written under renders/one/.",
    )
    pvw.add_argument("shot", help="CHAPTER:SHOT (dp:ring), or CHAPTER for its first shot")
    pvw.add_argument("--port", type=values.port, default=8001, help="port (default 8001; 0 picks a free one)")
    pvw.add_argument("--out", help="renders folder the frame is written to (default: renders/ of the project)")
    pvw.add_argument("--theme", choices=("dark", "light"), help="default: film.yaml's")
    add_voice_flag(pvw)
    add_input_flags(pvw)
    add_verbose_flag(pvw)
    pvw.set_defaults(func=cmd_preview)


def cmd_embed(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.render.cache import read_manifest
    from dtfilm.render.embed import EXPLORE, clip_size, copy_hint, explore_snippet, explore_title, snippet

    try:
        root: Path | None = find_root()
    except DtfilmError:
        if not args.out:
            raise
        root = None  # a renders folder alone: titles come from its manifest
    out = Path(args.out) if args.out else root / "renders"  # type: ignore[operator]
    manifest = read_manifest(out)
    if root is not None:
        film = load_film(root / "storyboard" / "film.yaml")
        titles = chapter_titles(film)
        where = Where("storyboard/film.yaml")
    else:
        titles = {c: e.get("title", c) for c, e in manifest["chapters"].items()}
        where = Where(str(out / "manifest.json"))
    if args.chapter == EXPLORE and EXPLORE not in titles:
        if not (out / EXPLORE / "index.html").is_file():
            print(f"dtfilm: warning: {out / EXPLORE}/index.html is not built yet (dtfilm page)", file=sys.stderr)
        title = explore_title(film_titles(film)[0].text) if root is not None else "Explore the rack"
        print(explore_snippet(title, args.as_, args.base))
        print(
            f"dtfilm: copy the folder {out / EXPLORE} (all of it) to the folder that '{args.base}/{EXPLORE}' names,"
            " resolved against the built page's URL",
            file=sys.stderr,
        )
        return 0
    if args.chapter not in titles:
        raise DtfilmError(f"no chapter {args.chapter!r}; valid: {', '.join(titles) or 'none rendered'}", where)
    if not (out / f"{args.chapter}.mp4").is_file():
        print(
            f"dtfilm: warning: {out / args.chapter}.mp4 is not rendered yet (dtfilm render {args.chapter})",
            file=sys.stderr,
        )
    size = clip_size(manifest["chapters"].get(args.chapter))
    print(snippet(args.chapter, titles[args.chapter], args.as_, args.base, size))
    print(copy_hint(args.chapter, out, args.as_, args.base), file=sys.stderr)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    folder = Path(args.out) if args.out else find_root() / "renders"
    if not folder.is_dir():
        raise DtfilmError("no such folder; render first (dtfilm render)", Where(str(folder)))
    return serve(folder, args.host, args.port)


def cmd_preview(args: argparse.Namespace) -> int:
    # (here: the preview draws with Manim, which `serve` does without)
    from dtfilm.publish.preview.server import preview

    show_manim_lines(args)
    out = Path(args.out) if args.out else None
    return preview(args.shot, input_overrides(args), args.theme, args.port, out)
