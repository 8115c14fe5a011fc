"""The `dtfilm` command: estimate, plan, render, status. One module a group of commands, each
with the parser it adds and the functions it runs; the flags and value types they share; the
folder checks every command passes before it starts."""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
from importlib import metadata

from dtfilm.cli.authoring import add_authoring_commands
from dtfilm.cli.cost import add_cost_commands, add_validate_command
from dtfilm.cli.flags import INPUT_FLAGS, SWITCHES, Parser
from dtfilm.cli.folders import NAME_TEXT, check_out, note_caches, shown_name, unwritable
from dtfilm.cli.project import add_project_commands
from dtfilm.cli.publishing import add_publishing_commands
from dtfilm.cli.renders import add_render_command, add_renders_commands
from dtfilm.cli.sharing import add_sharing_commands
from dtfilm.errors import DtfilmError
from dtfilm.system.unwritable import UNWRITABLE, unwritable_cause
from dtfilm.voice.engine import VOICE_VARIABLE, voice_from_flag

__all__ = ["INPUT_FLAGS", "SWITCHES", "build_parser", "main", "run"]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="dtfilm", description="Explainer films about distributed training.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    add_cost_commands(sub)
    add_authoring_commands(sub)
    add_render_command(sub)
    add_renders_commands(sub)
    add_sharing_commands(sub)
    add_validate_command(sub)
    add_publishing_commands(sub)
    add_project_commands(sub)
    return parser


def _version() -> str:
    return f"dtfilm {metadata.version('dtfilm')} (Manim {metadata.version('manim')})"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if isinstance(getattr(args, "voice", None), str):  # (`slides --voice` is a switch, not a voice)
        # read where the command loads its film (drawing processes are handed the voice read
        # then: RenderJob.voice); a model's path as from here, wherever they run
        voice = os.path.abspath(os.path.expanduser(args.voice)) if args.voice.endswith(".onnx") else args.voice
        os.environ[VOICE_VARIABLE] = voice
        voice_from_flag(voice)
    else:
        voice_from_flag(None)
    try:
        check_out(args)
        note_caches()
        return int(args.func(args))
    except DtfilmError as error:
        print(f"dtfilm: error: {error.line()}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `dtfilm paths | head`: the reader has what it wanted
        # (before OSError, which it is: there it was re-raised as a traceback)
        sys.stderr.close()
        return 0
    except OSError as error:
        if error.errno == errno.ENAMETOOLONG:  # a name given (--out, a chapter, a sheet) longer than a folder takes
            print(f"dtfilm: error: {shown_name(error.filename)}: {error.strerror}; valid: {NAME_TEXT}", file=sys.stderr)
            return 2
        if error.errno not in UNWRITABLE:
            raise
        return unwritable(error)
    except Exception as error:  # a library's wrapper of one (Manim's encoder: "Failed to finish video segment")
        cause = unwritable_cause(error)
        if cause is None:
            raise
        return unwritable(cause)
    except KeyboardInterrupt:
        print("dtfilm: interrupted; earlier renders are untouched", file=sys.stderr)
        return 130


def run() -> None:
    """The command line (`dtfilm`, `python -m dtfilm`): `main`, then out at once. A render that
    drew leaves Manim, PyAV and numpy loaded, and tearing the interpreter down took 0.2 to 0.4 s
    after it; by now every file dtfilm writes is closed (atomic renames), every lock released
    and every worker process gone. A command that fails unexpectedly exits as Python does."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # (stderr is closed after a broken pipe)
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
