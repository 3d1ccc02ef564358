"""How far apart the initial pairs of the study truly are, whatever the selector.

A selector stops when it is confident of the sign of ΔMAP of the trial's two initial runs; a
pair whose true ΔMAP is nearly 0 is a coin flip that no selector can decide within a budget.
For the first N trials of run.sh's protocol (seed 2007, k = 10 one run per group, c = 2,
runs cut at rank 100) this writes the initial pair's true ΔMAP (official qrels) per
collection and trial to ``results/initial_pairs_truth.csv`` and prints its distribution.

    python examples/posterior_selector/initial_pairs.py [--trials 20]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from _protocol import C, DEPTH, K, SEED, load

HERE = Path(__file__).resolve().parent
LABELS = {"dl19": "DL 2019", "dl21": "DL 2021", "trec8": "TREC-8"}


def main(argv: list[str] | None = None) -> None:
    from relimpute.calibration.trials import trial_specs, true_map

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    args = parser.parse_args(argv)
    rows = []
    for name, label in LABELS.items():
        campaign, groups = load(name)
        base = campaign.truncated(DEPTH, shrink=True)
        truth = true_map(base)
        for spec in trial_specs(base.systems, args.trials, K, C, SEED, groups):
            a, b = spec.initial
            rows.append({"collection": label, "trial": spec.trial, "system_a": a, "system_b": b,
                         "true_delta_map": float(truth[a] - truth[b])})  # fmt: skip
    frame = pd.DataFrame(rows)
    frame.to_csv(HERE / "results" / "initial_pairs_truth.csv", index=False, float_format="%.5f")
    for label, part in frame.groupby("collection", sort=False):
        d = part["true_delta_map"].abs()
        print(f"{label}: median |ΔMAP| {d.median():.3f}; below 0.01: {int((d < 0.01).sum())}, "
              f"below 0.03: {int((d < 0.03).sum())} of {len(d)}")  # fmt: skip
    print(np.round(frame.pivot(index="trial", columns="collection", values="true_delta_map"), 3).to_string())


if __name__ == "__main__":
    main()
