"""Draw a seeded Poisson sample of DL 2019's judged documents and write it as qrels with
inclusion probabilities (the form ``relimpute evaluate --estimator`` reads).

The universe of each topic is every document NIST judged for it, so the estimand (every
universe document judged) is the official MAP (rel >= 2). π ∝ statAP's AP-prior weight of
the document's ranks in the depth-100 pool of the 37 runs, floored at half the rate, scaled so that the
expected sample is RATE of the universe (``relimpute.selection.designs.pps_inclusion``).

    python examples/design_based/draw_sample.py OUT.tsv [--rate 0.1] [--seed 1]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute.data import Campaign
from relimpute.selection.designs import pool_table, pps_inclusion

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "trec-dl-2019-passage"
#: π floor: half the mean rate, so that no judged document weighs more than 2 / rate
FLOOR_SHARE = 0.5


def judged_documents() -> pd.DataFrame:
    """Every judged document with its grade and AP-prior weight in the depth-100 pool."""
    if not (DATA / "qrels.txt").exists():
        sys.exit(f"DL 2019 data not found at {DATA}: see the README of ../shared/data")
    campaign = Campaign.from_files(DATA / "qrels.txt", DATA / "runs", rel_threshold=2)
    pool = pool_table(campaign, 100)
    return pool[pool["relevance"] >= 0]


def draw(judged: pd.DataFrame, rate: float, seed: int) -> pd.DataFrame:
    """The sample: ``query_id doc_id relevance inclusion_probability`` (−1: not drawn)."""
    rng = np.random.default_rng(seed)
    parts = []
    for topic, docs in judged.groupby("query_id", sort=True):
        pi = pps_inclusion(docs["weight"].to_numpy(), rate * len(docs), FLOOR_SHARE * rate)
        drawn = rng.random(len(docs)) < pi
        parts.append(pd.DataFrame({"query_id": topic, "doc_id": docs["doc_id"].to_numpy(),
                                   "relevance": np.where(drawn, docs["relevance"], -1),
                                   "inclusion_probability": pi}))
    return pd.concat(parts, ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--rate", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    sample = draw(judged_documents(), args.rate, args.seed)
    sample.to_csv(args.out, sep=" ", index=False, float_format="%.6g")
    drawn = (sample["relevance"] >= 0).sum()
    print(f"{drawn} of {len(sample)} judged documents drawn ({drawn / len(sample):.1%}) over "
          f"{sample['query_id'].nunique()} topics -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
