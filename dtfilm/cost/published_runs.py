"""The published runs file (dtfilm/data/published_runs.yaml): each run's configuration, its set, and
what its paper reports, checked where it is written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dtfilm.cost.inputs import SPECS, parse_value
from dtfilm.errors import DtfilmError, Where
from dtfilm.system.yamlsrc import Located, dotted, load_yaml

RUNS_FILE = Path(__file__).resolve().parent.parent / "data" / "published_runs.yaml"


FLOPS_CONVENTIONS = ("megatron", "palm")


# `fit`: runs a fitted constant was fitted on (FITTED_ON); `test`: held out, nothing fitted on them.
# A run that does not say is a test run: nothing is fitted on a run unless it is named below.
RUN_SETS = ("fit", "test", "moe")  # moe: mixture-of-experts runs, not fitted (issue 60)


@dataclass(frozen=True)
class PublishedRun:
    name: str
    label: str
    source: str
    settings: dict[str, Any]  # dtfilm inputs, without global_batch
    global_batch: int  # sequences per optimizer step
    not_given: tuple[str, ...]
    reported_tflops: float | None  # TFLOP/s per card, counted as flops_counted says
    reported_mfu: float | None  # as the paper states it, on its own FLOPs basis
    flops_counted: str | None  # FLOPS_CONVENTIONS; None where the paper gives the iteration time
    where: Where
    disagreement: str = ""  # why the planner finds a faster plan than practice ran, where it does
    run_set: str = "fit"  # RUN_SETS
    iteration_seconds: float | None = None  # the step's wall time, where the paper gives it
    # why the predicted step stays more than STEP_TOLERANCE off: the mechanism the model lacks,
    # with a source (`disagreement` is the planner beating practice, a different thing)
    error_reason: str = ""

    @property
    def stated(self) -> str:
        """What the paper reports, in its own terms."""
        said = (
            f"{self.iteration_seconds:g} s per iteration"
            if self.iteration_seconds is not None
            else f"{self.reported_tflops:g} TFLOP/s per card ({self.flops_counted} FLOPs counted)"
        )
        return said + (f", {100 * self.reported_mfu:.1f}% MFU as stated" if self.reported_mfu else "")


def _run(doc: Located, name: str, raw: Any) -> PublishedRun:
    base = ("runs", name)

    def need(mapping: Any, path: tuple[str, ...], key: str, what: str) -> Any:
        if not isinstance(mapping, dict) or key not in mapping:
            raise DtfilmError(f"missing {key!r} ({what})", doc.where(path), dotted(path))
        return mapping[key]

    settings = dict(need(raw, base, "settings", "the run's inputs"))
    global_batch = need(settings, (*base, "settings"), "global_batch", "sequences per step")
    del settings["global_batch"]
    for key, value in settings.items():
        path = (*base, "settings", key)
        if key not in SPECS:
            raise DtfilmError(f"unknown input {key!r}; valid: {', '.join(SPECS)}", doc.where(path), dotted(path))
        parse_value(key, value, "storyboard", doc.where(path))  # a bad value fails here, with its line
    run_set = raw.get("set", "test")
    if run_set not in RUN_SETS:
        set_path = (*base, "set")
        raise DtfilmError(f"{run_set!r}; valid: {', '.join(RUN_SETS)}", doc.where(set_path), dotted(set_path))
    where_reported = (*base, "reported")
    reported = need(raw, base, "reported", "iteration_seconds, or tflops_per_card and flops_counted")
    seconds, tflops, counted = None, None, None
    if isinstance(reported, dict) and "iteration_seconds" in reported:
        seconds = _positive(doc, (*where_reported, "iteration_seconds"), reported["iteration_seconds"], "seconds")
        if "tflops_per_card" in reported:
            raise DtfilmError(
                "give iteration_seconds or tflops_per_card, not both", doc.where(where_reported), dotted(where_reported)
            )
    else:
        given = need(reported, where_reported, "tflops_per_card", "TFLOP/s per card (or iteration_seconds)")
        tflops = _positive(doc, (*where_reported, "tflops_per_card"), given, "TFLOP/s")
        counted = need(reported, where_reported, "flops_counted", "megatron or palm")
        if counted not in FLOPS_CONVENTIONS:
            path = (*where_reported, "flops_counted")
            raise DtfilmError(f"{counted!r}; valid: {', '.join(FLOPS_CONVENTIONS)}", doc.where(path), dotted(path))
    mfu = reported.get("mfu")
    if mfu is not None and not (isinstance(mfu, (int, float)) and not isinstance(mfu, bool) and 0 < mfu <= 1):
        path = (*where_reported, "mfu")
        raise DtfilmError(f"{mfu!r}; valid: a fraction above 0, at most 1", doc.where(path), dotted(path))
    return PublishedRun(
        name=name,
        label=need(raw, base, "label", "what the run is"),
        source=need(raw, base, "source", "paper and table"),
        settings=settings,
        global_batch=int(global_batch),
        not_given=tuple(raw.get("not_given") or ()),
        reported_tflops=tflops,
        reported_mfu=mfu,
        flops_counted=counted,
        where=doc.where((*base, "settings")),
        disagreement=_text(doc, base, raw, "disagreement"),
        run_set=run_set,
        iteration_seconds=seconds,
        error_reason=_text(doc, base, raw, "error_reason"),
    )


def _text(doc: Located, base: tuple[str, ...], raw: dict[str, Any], key: str) -> str:
    """An optional line of prose, its whitespace folded."""
    value = raw.get(key, "")
    if not isinstance(value, str):
        path = (*base, key)
        raise DtfilmError(f"{key} is {type(value).__name__}; valid: text", doc.where(path), dotted(path))
    return " ".join(value.split())


def _positive(doc: Located, path: tuple[str, ...], value: Any, unit: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise DtfilmError(f"{value!r}; valid: a number of {unit} above 0", doc.where(path), dotted(path))
    return float(value)


def load_runs(path: Path = RUNS_FILE) -> dict[str, PublishedRun]:
    """Every run of a published-runs file (a `runs:` mapping of names to runs)."""
    doc = load_yaml(path, what="a runs file")
    runs = doc.data.get("runs") if isinstance(doc.data, dict) else None
    if not isinstance(runs, dict) or not runs:
        raise DtfilmError("expected a mapping 'runs:' of names to runs", doc.where(()))
    return {str(name): _run(doc, str(name), raw) for name, raw in runs.items()}


def runs_named(name: str) -> dict[str, PublishedRun]:
    """`all`, one run of the shipped file by name, or every run of a file of runs."""
    shipped = load_runs()
    if name == "all":
        return shipped
    if name in shipped:
        return {name: shipped[name]}
    path = Path(name)
    if path.suffix in (".yaml", ".yml") or path.exists():
        return load_runs(path)
    raise DtfilmError(
        f"no published run {name!r}; valid: all, a runs file, or one of {', '.join(shipped)}", Where(flag="--compare")
    )
