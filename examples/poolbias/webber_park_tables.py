"""Webber & Park (2009) on TREC-8: Table 1 (right columns) and Table 4.

Manual runs as the new runs, RBP(p=0.8) at depth 10.

The new, unpooled run is drawn from the 11 best manual runs (by official
RBP(p=0.8)@10); the pool is the depth-10 pool of ``w`` runs drawn from the
116 automatic runs. Table 1: MAE of the raw (reduced-pool) and the
Algorithm 1 adjusted score (inference from the pooled systems, with add-back)
against the full-judgment score, 100 draws per pool width. Table 4: the
same draws adjusted by Algorithm 2 from ``n`` random common topics (200
topic draws each), and the "mixed" score (true on the ``n`` common topics,
raw elsewhere). Manual/automatic is NIST's ``runs_table.adhoc`` of the
``isoboroff/trec8-scores`` snapshot the data came from (13 manual runs).

    nice -n 10 python examples/poolbias/webber_park_tables.py ../shared/data/trec-8-adhoc
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute.bias import (
    PoolContext,
    common_topic_adjustment,
    get_corrector,
    topic_scores,
)
from relimpute.cli._format import FORMATTERS
from relimpute.data import Campaign
from relimpute.measures import parse_measure

HERE = Path(__file__).resolve().parent
MANUAL = [
    "orcl99man",
    "READWARE",
    "READWARE2",
    "iit99ma1",
    "8manexT3D1N0",
    "disco1",
    "GE8MTD2",
    "cirtrc82",
    "CL99XT",
    "CL99SD",
    "CL99SDopt1",
    "CL99SDopt2",
    "CL99XTopt",
]
WIDTHS = (2, 4, 10, 20, 40)
PAPER_T1 = {
    2: (0.451, 0.302),
    4: (0.384, 0.294),
    10: (0.283, 0.237),
    20: (0.231, 0.203),
    40: (0.177, 0.159),
}
PAPER_T4 = {  # unadjusted, mixed 10, adjusted 10 / 15 / 20
    2: (0.451, 0.361, 0.060, 0.046, 0.037),
    4: (0.384, 0.308, 0.059, 0.045, 0.037),
    10: (0.283, 0.226, 0.054, 0.041, 0.033),
    20: (0.231, 0.185, 0.050, 0.038, 0.031),
    40: (0.177, 0.141, 0.045, 0.035, 0.028),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("collection")
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--topic-draws", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2009)
    args = parser.parse_args()
    root = Path(args.collection)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        campaign = Campaign.from_files(root / "qrels.txt", root / "runs")
    measure = parse_measure("RBP(p=0.8)@10")
    automatic = [s for s in campaign.systems if s not in MANUAL]
    manual_rows = campaign.system_index(MANUAL)
    official = topic_scores(campaign, [measure], manual_rows)[0]
    best = [MANUAL[i] for i in np.argsort(-official.mean(axis=1))[:11]]
    rng = np.random.default_rng(args.seed)
    corrector = get_corrector("webber-park")
    t1, t4 = [], []
    for width in WIDTHS:
        raw_err, adj_err, mixed_err = [], [], []
        adjusted = {n: [] for n in (10, 15, 20)}
        for _ in range(args.draws):
            new = str(rng.choice(best))
            pooled = list(rng.choice(automatic, size=width, replace=False))
            sub = campaign.subset(pooled + [new])
            true = topic_scores(sub, [measure], sub.system_index(new))[0, 0]
            reduced = sub.pooled(10, pooled)
            context = PoolContext.build(reduced, pooled, 10)
            row = corrector.correct_context(context, new, [measure]).table.iloc[0]
            raw_err.append(abs(true.mean() - row["reduced"]))
            adj_err.append(abs(true.mean() - row["estimate"]))
            unpooled = topic_scores(reduced, [measure], reduced.system_index(new))[0, 0]
            for n, errors in adjusted.items():
                for _ in range(args.topic_draws):
                    common = np.sort(rng.choice(len(true), size=n, replace=False))
                    fit = common_topic_adjustment(true[common], unpooled, common)
                    errors.append(abs(true.mean() - fit.estimate))
                    if n == 10:
                        mixed = unpooled.copy()
                        mixed[common] = true[common]
                        mixed_err.append(abs(true.mean() - mixed.mean()))
        t1.append(
            {
                "pool_width": width,
                "raw": np.mean(raw_err),
                "adjusted": np.mean(adj_err),
                "paper_raw": PAPER_T1[width][0],
                "paper_adjusted": PAPER_T1[width][1],
            }
        )
        paper = PAPER_T4[width]
        t4.append(
            {
                "pool_width": width,
                "unadjusted": np.mean(raw_err),
                "mixed_10": np.mean(mixed_err),
                **{f"adjusted_{n}": np.mean(v) for n, v in adjusted.items()},
                "paper_unadjusted": paper[0],
                "paper_mixed_10": paper[1],
                "paper_adjusted_10": paper[2],
                "paper_adjusted_15": paper[3],
                "paper_adjusted_20": paper[4],
            }
        )
        print(t1[-1], t4[-1], flush=True)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    text = "## Table 1 (right columns): inference from systems\n\n" + FORMATTERS["markdown"](
        pd.DataFrame(t1)
    )
    text += "\n## Table 4: inference from common topics\n\n" + FORMATTERS["markdown"](
        pd.DataFrame(t4)
    )
    text += f"\nBest 11 manual runs (official RBP(p=0.8)@10): {', '.join(best)}\n"
    (out / "webber_park_tables.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
