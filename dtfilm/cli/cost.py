"""`estimate`, `plan` and `validate`: the cost model's numbers, its planner, and its check against PyTorch."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dtfilm import beneath
from dtfilm.cli.flags import add_input_flags, estimate_numbers, film_values, input_overrides, print_json
from dtfilm.cost.planner import FIXABLE, no_layout_reason, plan
from dtfilm.cost.published import check_run
from dtfilm.cost.published_runs import runs_named
from dtfilm.cost.rank import rank, rank_lines
from dtfilm.cost.report import compare_table, estimate_table, plan_table
from dtfilm.cost.setup_checks import build_setup
from dtfilm.errors import DtfilmError, Where
from dtfilm.storyboard.film import find_root
from dtfilm.storyboard.layers import flag_layer
from dtfilm.storyboard.load import load_chapter
from dtfilm.validate import STRATEGIES
from dtfilm.validate.run import REPORT, parse_strategies, table, validate


def add_cost_commands(sub: Any) -> None:
    """`estimate` and `plan`: the cost model's numbers and its planner."""
    est = sub.add_parser("estimate", help="the cost model's numbers for a storyboard and flags")
    est.add_argument("storyboard", nargs="?", help="chapter id or path to its YAML")
    est.add_argument("--json", action="store_true", help="print the contract's JSON object")
    add_input_flags(est)
    est.set_defaults(func=cmd_estimate)

    pln = sub.add_parser("plan", help="every plan for a model on N cards, ranked, with the reason for the pick")
    pln.add_argument("storyboard", nargs="?", help="chapter id or path to its YAML")
    pln.add_argument("--top", type=int, default=10, help="plans to list (default 10)")
    pln.add_argument(
        "--rank",
        action="store_true",
        help="search every plan and say where the one given by --dp/--tp/--pp/--cp/--zero ranks, what the"
        " faster plans change and why the pick is faster (without it those flags restrict the search)",
    )
    pln.add_argument("--json", action="store_true")
    pln.add_argument(
        "--compare",
        metavar="RUN|FILE|all",
        help="a published run (dtfilm/data/published_runs.yaml) or a file of runs beside the planner's pick",
    )
    add_input_flags(pln)
    pln.set_defaults(func=cmd_plan)


def cmd_estimate(args: argparse.Namespace) -> int:
    numbers = estimate_numbers(args.storyboard, input_overrides(args))
    if args.json:
        print_json(numbers)
    else:
        print(estimate_table(numbers))
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    if args.compare:
        return _compare(args)
    overrides = input_overrides(args)
    # --global-batch is the batch the planner searches within, for any dp: the configuration it
    # starts from resolves without it (its own dp need not divide it)
    searched = overrides.pop("global_batch", None)
    if args.storyboard:
        chapter = load_chapter(args.storyboard, overrides, drawable=False)
        values, catalog = chapter.values, chapter.film.catalog
    else:
        values, catalog = film_values(overrides)
    setup, _ = build_setup(values, catalog)
    where = Where(flag="--global-batch")
    # without it: the inputs' own (training.global_batch, else dp x micro_batches x micro_batch_size)
    global_batch = setup.dp * setup.micro_batches * setup.micro_batch_size
    if searched is not None:
        try:
            global_batch = flag_layer({"global_batch": searched})["global_batch"].value.whole_sequences(setup.seq_len)
        except ValueError as error:
            raise DtfilmError(str(error), where) from None
    reason = no_layout_reason(setup, global_batch)
    if reason is not None:  # nothing to evaluate: the question has no layout, not a layout that does not fit
        raise DtfilmError(reason, where if searched is not None else Where(flag="--cards"))
    # degrees (and ZeRO's stage) given as flags restrict the search; a storyboard's plan: does not
    fixed = {name: int(overrides[name]) for name in FIXABLE if name in overrides}
    if args.rank and not fixed:
        raise DtfilmError(
            "needs the plan to rank; valid: its degrees as flags, such as --rank --dp 8 --tp 8 --pp 4 --zero 1",
            Where(flag="--rank"),
        )
    # --rank: every plan is searched, and the given degrees are placed among them
    result = plan(setup, global_batch, top=args.top, fixed={} if args.rank else fixed)
    if args.rank:
        result["rank"] = rank(setup, global_batch, fixed)
    if args.json:
        print_json(result)
    else:
        print(plan_table(setup, result))
        if args.rank:
            print("", *rank_lines(result["rank"]), sep="\n")
    return 0 if result["pick"] is not None else 1  # layouts exist, but none fits


def _compare(args: argparse.Namespace) -> int:
    if args.storyboard or input_overrides(args):
        raise DtfilmError("takes a run or a runs file alone; its settings are the run's", Where(flag="--compare"))
    checks = [check_run(run) for run in runs_named(args.compare).values()]
    if args.json:
        print_json([c.as_json() for c in checks])
    else:
        print("\n\n".join(compare_table(c) for c in checks))
    return 0


def add_validate_command(sub: Any) -> None:
    """`validate`: the cost model against PyTorch distributed."""
    val = sub.add_parser("validate", help="check the cost model against PyTorch distributed on CPU ranks")
    val.add_argument("--ranks", type=int, default=4, help="processes (default 4)")

    every = ",".join(STRATEGIES)
    val.add_argument("--strategies", default=every, help=f"default: {every}")
    val.add_argument("--json", action="store_true", help="print the report as JSON")
    val.add_argument(
        "--gpu",
        action="store_true",
        help="also measure one bf16 step of a ~1B model on a CUDA card, and the overlap check on NCCL (2+ cards)",
    )
    val.add_argument("--out", help="folder for validation.json (default: renders/ of the project)")
    val.set_defaults(func=cmd_validate)


def cmd_validate(args: argparse.Namespace) -> int:
    # (here: it loads PyAV, which `estimate`, `plan` and `kinds` do without)
    from dtfilm.system.atomic import write_text_atomic

    if args.ranks < 2:
        raise DtfilmError(f"{args.ranks} is not enough ranks; valid: 2 or more", Where(flag="--ranks"))
    report = validate(args.ranks, parse_strategies(args.strategies), gpu=args.gpu)
    if args.out:
        out = Path(args.out)
    else:
        try:
            out = find_root() / "renders"
        except DtfilmError:
            out = Path("renders")
    beneath.mark(out)  # (a folder given is checked first: check_out)
    write_text_atomic(out / REPORT, json.dumps(report, indent=2))
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(table(report))
        print(f"report: {out / REPORT}")
    return 0 if report["all_agree"] else 1
