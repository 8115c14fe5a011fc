"""How long the planner takes to evaluate every plan (target: 1024 cards well under 1 s).

    .venv/bin/python benchmarks/planner_speed.py

Prints figures; asserts nothing (speed targets live here, not in timed tests).
"""

from __future__ import annotations

import statistics
import time

from dtfilm.cost import build_setup, builtin_layer, parse_value, resolve
from dtfilm.cost.planner import plan
from dtfilm.errors import Where

CASES = [
    ("llama-7b", 8, 64),
    ("llama2-70b", 1024, 1024),
    ("llama3.1-405b", 16384, 16384),
    # mixture of experts (issue 60): the planner searches every ep dividing dp and the experts too
    ("mixtral-8x7b", 1024, 1024),
    ("deepseek-v3", 2048, 15360),
]


def main() -> None:
    print(f"{'model':<16}{'cards':>7}{'batch':>7}{'plans':>9}{'fitting':>9}{'median':>10}{'best':>10}")
    for model, cards, batch in CASES:
        layer = {
            "model": parse_value("model", model, "flag", Where(flag="--model")),
            "cards": parse_value("cards", cards, "flag", Where(flag="--cards")),
        }
        setup, _ = build_setup(resolve([builtin_layer(), layer]))
        times = []
        for _ in range(5):
            started = time.perf_counter()
            result = plan(setup, batch)
            times.append(time.perf_counter() - started)
        print(
            f"{model:<16}{cards:>7}{batch:>7}{result['evaluated']:>9,}{result['fitting']:>9,}"
            f"{statistics.median(times) * 1000:>8.0f}ms{min(times) * 1000:>8.0f}ms"
        )


if __name__ == "__main__":
    main()
