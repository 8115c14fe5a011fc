"""How much of the envelope each chapter refuses, and whether its claims hold there (figures
printed, not asserted).

A chapter refuses a setting only through a shot kind's needs (`needs`, `at_most`) or the plan's
divisibility, never because its words would be false (issue "Claims are checked": a claim false
at a setting is reworded by the numbers). This samples settings as the sampled check does
(dtfilm.check.envelope_sample, a fixed seed), loads each chapter at each, and prints the share it
refuses; on the settings it takes, every claim is evaluated and every conclusion word looked for
outside a claim.

Usage: python benchmarks/envelope_refusals.py [--settings 30] [--seed 20261130] [CHAPTER ...]
"""

from __future__ import annotations

import argparse
import random
from collections import Counter

from dtfilm.check.chapters import spoken_and_written
from dtfilm.check.envelope_sample import sampled_flags
from dtfilm.errors import DtfilmError
from dtfilm.storyboard import find_root, load_chapter, load_film
from dtfilm.storyboard.claims import chapter_claims
from dtfilm.textcheck import unclaimed_conclusions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*")
    parser.add_argument("--settings", type=int, default=30, help="settings sampled per chapter (default 30)")
    parser.add_argument("--seed", type=int, default=20261130)
    args = parser.parse_args()
    root = find_root()
    chapters = args.chapters or list(load_film(root / "storyboard" / "film.yaml").chapters)
    rng = random.Random(args.seed)
    claims, wrong = 0, []
    for chapter in chapters:
        refused: Counter[str] = Counter()
        for _ in range(args.settings):
            flags = sampled_flags(rng.choice, lambda: rng.random() < 0.5)
            try:
                loaded = load_chapter(chapter, flags, root=root)
            except DtfilmError as error:
                refused[error.key or error.message.split(";")[0][:60]] += 1
                continue
            for record in chapter_claims(loaded):
                claims += 1
                if not record.holds:
                    wrong.append(f"{chapter} {flags}: {record.line()}")
            for beat, which, phrase in spoken_and_written(loaded):
                wrong += [f"{chapter}:{beat} {which}: {p}" for p in unclaimed_conclusions(phrase.text, phrase)]
        share = sum(refused.values()) / args.settings
        top = ", ".join(f"{why} {n}" for why, n in refused.most_common(3))
        print(f"{chapter:<8} refuses {sum(refused.values())}/{args.settings} ({100 * share:.0f}%)  {top}")
    print(f"claims evaluated on the settings taken: {claims}; false or unclaimed: {len(wrong)}")
    for line in wrong[:20]:
        print(f"    {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
