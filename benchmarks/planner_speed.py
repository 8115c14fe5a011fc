"""How long the planner takes to evaluate every plan (target: 1024 cards well under 1 s), and
for a mixture-of-experts model the cost of searching expert parallelism: each MoE case is timed
with EP searched (every ep dividing dp and the experts, as `dtfilm plan` does) and without (every
plan's ep 1, as the planner searched before issue 60).

    .venv/bin/python benchmarks/planner_speed.py [--no-ep]

`--no-ep` times every case without the EP search only. CPU seconds (user + sys of this process),
not wall time: the machine may be shared. Prints figures; asserts nothing (speed targets live
here, not in timed tests).
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any

from dtfilm.cost import build_setup, builtin_layer, parse_value, resolve
from dtfilm.cost.planner import plan
from dtfilm.errors import Where

# (label, settings, global batch in sequences)
CASES: list[tuple[str, dict[str, Any], int]] = [
    ("llama-7b", {"model": "llama-7b", "cards": 8}, 64),
    ("llama2-70b", {"model": "llama2-70b", "cards": 1024}, 1024),
    ("llama3.1-405b", {"model": "llama3.1-405b", "cards": 16384}, 16384),
    # mixture of experts (issue 60): the planner searches every ep dividing dp and the experts too
    ("mixtral-8x7b", {"model": "mixtral-8x7b", "cards": 1024}, 1024),
    # DeepSeek-V3 on its published cluster (dtfilm/data/published_runs.yaml, deepseek-v3-2048):
    # 2,048 H800s, InfiniBand NDR, 4K sequences in fp8, 15,360 a step
    (
        "deepseek-v3",
        {
            "model": "deepseek-v3",
            "gpu": "h800-sxm-80gb",
            "cards": 2048,
            "inter_node": "infiniband-ndr",
            "seq_len": 4096,
            "precision": "fp8",
        },
        15360,
    ),
]
RUNS = 3


def _timed(setup: Any, batch: int, search_ep: bool) -> tuple[dict[str, Any], list[float]]:
    """The planner's answer and the CPU seconds of each of RUNS runs."""
    seconds = []
    for _ in range(RUNS):
        started = time.process_time()
        result = plan(setup, batch, search_ep=search_ep)
        seconds.append(time.process_time() - started)
    return result, seconds


def main(argv: list[str]) -> None:
    only_without = "--no-ep" in argv
    print(f"{'model':<15}{'cards':>7}{'batch':>7}{'EP':>5}{'plans':>11}{'fitting':>10}{'median':>10}{'best':>10}  pick")
    for name, settings, batch in CASES:
        layer = {key: parse_value(key, value, "flag", Where(flag=f"--{key}")) for key, value in settings.items()}
        setup, _ = build_setup(resolve([builtin_layer(), layer]))
        searches = (True, False) if setup.shape.moe and not only_without else (False,)
        for search_ep in searches:
            result, seconds = _timed(setup, batch, search_ep)
            pick = result["pick"] or {}
            shape = " x ".join(f"{g} {pick[g]}" for g in ("dp", "tp", "pp", "cp", "ep") if g in pick)
            print(
                f"{name:<15}{setup.cards:>7}{batch:>7}{'yes' if search_ep and setup.shape.moe else 'no':>5}"
                f"{result['evaluated']:>11,}{result['fitting']:>10,}"
                f"{statistics.median(seconds) * 1000:>8.0f}ms{min(seconds) * 1000:>8.0f}ms  {shape}"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
