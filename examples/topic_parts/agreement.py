"""How far a compare in topic parts moves from one fit, on any collection (no truth needed).

Run from the repository root::

    python examples/topic_parts/agreement.py [--data ../shared/data/trec-dl-2019-passage]
        [--rel-threshold 2] [--parts 2 4] [--seed 0]

Every pair of the collection's runs compared by the default model (Monte Carlo, 4,000 draws) in
one part and in each number of parts (``relimpute.confidence.compare_in_parts``), and in one part
at seed + 1 (the answer's own noise). Prints per number of parts: mean and max |ΔP(A beats B)|,
mean |ΔE[ΔMAP]|, the median sd(ΔMAP) ratio to one part's, and the pairs that cross the 0.95 line.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from relimpute import Campaign
from relimpute.confidence.parts import compare_in_parts

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "trec-dl-2019-passage"


def moved(result, one) -> dict:
    both = (one.var_delta_map > 0) & (result.var_delta_map > 0)
    dp = np.abs(result.p_a_better - one.p_a_better)
    sure = [np.maximum(r.p_a_better, 1 - r.p_a_better) >= 0.95 for r in (result, one)]
    return {"mean_abs_dP": round(float(dp.mean()), 4), "max_abs_dP": round(float(dp.max()), 3),
            "mean_abs_dE": round(float(np.abs(result.e_delta_map - one.e_delta_map).mean()), 4),
            "sd_ratio": round(float(np.median(np.sqrt(result.var_delta_map[both]
                                                      / one.var_delta_map[both]))), 3),
            "cross_0.95": int((sure[0] != sure[1]).sum()), "pairs": len(dp)}  # fmt: skip


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="a folder with qrels.txt and runs/")
    parser.add_argument("--rel-threshold", type=int, default=2)
    parser.add_argument("--parts", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    campaign = Campaign.from_files(args.data / "qrels.txt", args.data / "runs",
                                   rel_threshold=args.rel_threshold)  # fmt: skip
    one = compare_in_parts(campaign, 1, seed=args.seed, progress=False)
    again = compare_in_parts(campaign, 1, seed=args.seed + 1, progress=False)
    print(f"{args.data.name}: {campaign.n_topics} topics, one part at seed {args.seed + 1}:",
          moved(again, one))  # fmt: skip
    for parts in args.parts:
        result = compare_in_parts(campaign, parts, seed=args.seed, progress=False)
        print(f"{parts} parts of about {campaign.n_topics // parts} topics:", moved(result, one))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
