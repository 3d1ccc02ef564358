"""The label-aware selector against MTC and the default model's selector in a calibration study.

    relimpute calibrate ../shared/data/trec-dl-2019-passage/qrels.txt ../shared/data/trec-dl-2019-passage/runs \\
        --rel-threshold 2 --k 10 --c 2 --groups ../shared/data/trec-dl-2019-passage/groups.tsv --depth 100 \\
        --seed 2007 --jobs 2 --trials 20 --budget 300 --strategies mtc,fusion-mc,posterior,llm \\
        --llm-labels ../shared/data/trec-dl-2019-passage/llm/umbrela-gpt-4o.txt --quiet -o OUT
    python examples/llm_evidence/selection_summary.py OUT [--out examples/llm_evidence/results]

Reads the finished trials of the study folder (``trials.csv`` and ``pairs.csv.gz``, or the
trials kept in ``.resume/`` while a study runs) and writes ``selection_calibrate.csv``: per
strategy the judgments the initial pair needed to reach 0.95 (median, mean, share stopped at
the budget), and over every pair of the k runs the bookmaker W, the share stated at >= 0.95
and its accuracy (Carterette 2007 §4.4), and the mean τ of E[MAP] against the true MAP.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute.calibration.metrics import bookmaker_w, orient

LEVEL = 0.95


def read_trials(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(trials, pairs)`` of a finished study, else of the trials it has kept so far."""
    if (folder / "trials.csv").is_file():
        return pd.read_csv(folder / "trials.csv"), pd.read_csv(folder / "pairs.csv.gz")
    trials, pairs = [], []
    for path in sorted((folder / ".resume").glob("trial-*.json")):
        body = json.loads(path.read_text())
        trials.append(pd.DataFrame(body["trials"]["rows"], columns=body["trials"]["columns"]))
        pairs.append(pd.DataFrame(body["pairs"]["rows"], columns=body["pairs"]["columns"]))
    if not trials:
        raise SystemExit(f"no finished trial in {folder}")
    return pd.concat(trials, ignore_index=True), pd.concat(pairs, ignore_index=True)


def summary(trials: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for strategy, part in trials.groupby("strategy", sort=False):
        scored = pairs[(pairs["strategy"] == strategy) & (pairs["true_delta_map"] != 0)]
        confidence, correct = orient(scored["p_a_better"].to_numpy(), scored["true_delta_map"].to_numpy() > 0)
        sure = confidence >= LEVEL
        rows.append({
            "strategy": strategy,
            "trials": len(part),
            "median_judgments": float(part["judgments"].median()),
            "mean_judgments": float(part["judgments"].mean()),
            "stopped_at_budget": float((part["stopped_because"] == "budget").mean()),
            "W": bookmaker_w(confidence, correct),
            "share_sure": float(sure.mean()),
            "accuracy_sure": float(correct[sure].mean()) if sure.any() else np.nan,
            "mean_tau": float(part["tau"].mean()),
            "median_seconds": float(part["seconds"].median()),
        })  # fmt: skip
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", help="a relimpute calibrate output folder")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)
    table = summary(*read_trials(Path(args.study)))
    table.to_csv(Path(args.out) / "selection_calibrate.csv", index=False, float_format="%.4f")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
