"""The flags many commands share: the cost model's inputs, the voice, --verbose, and JSON out."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from typing import Any, NoReturn

from dtfilm.cost import BUILTIN_CATALOG, Catalog, builtin_layer, estimate, resolve
from dtfilm.cost.inputs import BUILTIN, SPECS
from dtfilm.errors import DtfilmError, Where
from dtfilm.render.manim_log import VERBOSE_VARIABLE
from dtfilm.storyboard.film import find_root, load_film
from dtfilm.storyboard.layers import flag_layer
from dtfilm.storyboard.load import load_chapter

# Every input of the cost model has a flag, so any storyboard value can be reproduced.
_FLAG_TYPES: dict[str, Any] = {"zero": int, "mfu": float, "routing_imbalance": float}


# Yes/no inputs are --name / --no-name switches (`--checkpointing`, `--no-flash-attention`).
SWITCHES = tuple(name for name in SPECS if isinstance(BUILTIN.get(name), bool))


INPUT_FLAGS: dict[str, tuple[str, Any]] = {
    "--" + name.replace("_", "-"): (name, _FLAG_TYPES.get(name, str)) for name in SPECS if name not in SWITCHES
}


class Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # `--seq-len -4K` and `--params -7B` are values (refused by their ranges in one line), not
        # flags: argparse takes only -5 and -0.5 for numbers, and said "expected one argument".
        self._negative_number_matcher = re.compile(r"^-[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?[KMBGTkmbgt]?$")

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"dtfilm: error: {message} (see {self.prog} --help)\n")


def add_input_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("inputs (a flag left out takes the storyboard's value)")
    for flag, (name, kind) in INPUT_FLAGS.items():
        extra = ""
        if name == "model":
            extra = f" ({', '.join(BUILTIN_CATALOG.models)}, or any in storyboard/catalog.yaml)"
        elif name == "gpu":
            extra = f" ({', '.join(BUILTIN_CATALOG.cards)}, or any in storyboard/catalog.yaml)"
        elif name == "global_batch":
            extra = "; micro-batches per replica follow (for plan: the batch it searches within, default the inputs')"
        group.add_argument(flag, dest=f"in_{name}", type=kind, metavar=name.upper(), help=f"{SPECS[name].help}{extra}")
    for name in SWITCHES:
        flag = name.replace("_", "-")
        group.add_argument(
            f"--{flag}",
            dest=f"in_{name}",
            action=argparse.BooleanOptionalAction,
            help=f"{SPECS[name].help}, or --no-{flag}",
        )


def add_voice_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--voice",
        help="the narrator instead of film.yaml's: joe, a Piper .onnx model, or none for silent clips",
    )


def add_verbose_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show Manim's own log lines as well (they are kept in renders/logs/manim.log)",
    )


def show_manim_lines(args: argparse.Namespace) -> None:
    """--verbose, for the drawing processes too (they inherit the environment)."""
    if args.verbose:
        os.environ[VERBOSE_VARIABLE] = "1"


def input_overrides(args: argparse.Namespace) -> dict[str, Any]:
    out = {}
    for key, value in vars(args).items():
        if key.startswith("in_") and value is not None:
            out[key[3:]] = value
    if "zero" in out:
        out["zero"] = int(out["zero"])
    return out


def film_values(overrides: dict[str, Any]) -> tuple[dict[str, Any], Catalog]:
    """Inputs without a chapter, and the catalog their names are read in: the film's defaults
    and catalog when inside a project, else the built-in ones."""
    try:
        root = find_root()
    except DtfilmError:
        return resolve([builtin_layer(), flag_layer(overrides)]), BUILTIN_CATALOG
    film = load_film(root / "storyboard" / "film.yaml")
    return resolve([builtin_layer(), film.defaults, flag_layer(overrides, film.catalog)], film.catalog), film.catalog


def estimate_numbers(storyboard: str | None, overrides: dict[str, Any]) -> dict[str, Any]:
    if storyboard:
        return load_chapter(storyboard, overrides, drawable=False).numbers.data
    return estimate(*film_values(overrides))


def _nonfinite(value: Any, path: str = "") -> str | None:
    """The dotted path of the first number in `value` that is NaN or infinite, if any."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{path or 'the value'} = {value}"
    if isinstance(value, dict):
        items = ((f"{path}.{k}" if path else str(k), v) for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    return next((found for key, v in items if (found := _nonfinite(v, key))), None)


def print_json(value: Any) -> None:
    """Strict JSON (RFC 8259 has no NaN or Infinity), whole or not at all."""
    found = _nonfinite(value)
    if found is not None:
        raise DtfilmError(
            f"{found}, which JSON cannot hold; valid: inputs and catalog figures inside their supported ranges",
            Where(flag="--json"),
        )
    sys.stdout.write(json.dumps(value, indent=2, allow_nan=False) + "\n")
