"""Design-based and model-assisted MAP of DL 2019's 37 runs from seeded 10% samples: the
estimate, its 95% interval and whether it covers the official MAP, for HT and for PPI++ with
GPT-4o's UMBRELA labels as the control variate.

    PYTHONPATH=src python examples/design_based/run.py [--samplings 20] [--rate 0.1]

Writes ``results/samplings.tsv`` (one row per sampling, estimator and run; regenerated, not
committed) and prints the headline table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from draw_sample import DATA, draw, judged_documents  # noqa: E402

from relimpute.confidence.survey import estimate  # noqa: E402
from relimpute.confidence.survey.control import label_predictions  # noqa: E402
from relimpute.io import read_run, run_files  # noqa: E402

LABELS = DATA / "llm" / "umbrela-gpt-4o.txt"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samplings", type=int, default=20)
    parser.add_argument("--rate", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    runs = {name: read_run(path) for name, path in run_files(DATA / "runs")}
    official = pd.read_csv(DATA / "run_stats.tsv", sep="\t").set_index("run")["MAP"]
    control = label_predictions(LABELS, rel_threshold=2)
    judged = judged_documents()
    rows = []
    for i in range(args.samplings):
        sample = draw(judged, args.rate, args.seed + i)
        for name, options in (("ht", {}), ("ppi++", {"control": control,
                                                     "control_name": "umbrela-gpt-4o"})):
            table = estimate(sample.rename(columns={"inclusion_probability": "inclusion"}),
                             runs, estimator=name, rel_threshold=2, **options)
            rows.append(table.assign(sampling=i, judged=int((sample["relevance"] >= 0).sum())))
        print(f"sampling {i + 1} of {args.samplings}", file=sys.stderr, flush=True)
    frame = pd.concat(rows, ignore_index=True)
    frame["official"] = frame["run"].map(official)
    frame["covered"] = (frame["low"] <= frame["official"]) & (frame["official"] <= frame["high"])
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    frame.drop(columns=["estimand"]).to_csv(out / "samplings.tsv", sep="\t", index=False)
    error = frame["estimate"] - frame["official"]
    summary = frame.assign(error=error, abs_bias=error).groupby("estimator").agg(
        coverage=("covered", "mean"), mean_error=("error", "mean"),
        mean_se=("se", "mean"), mean_width=("high", "mean"))
    summary["mean_width"] = (frame["high"] - frame["low"]).groupby(frame["estimator"]).mean()
    bias = error.groupby([frame["estimator"], frame["run"]]).mean().abs()
    summary["mean_abs_bias_per_run"] = bias.groupby(level=0).mean()
    print(f"DL 2019, {args.samplings} samplings at {args.rate:.0%} of the judged documents, "
          f"37 runs: MAP against the official MAP (rel >= 2)")
    print(summary.round(4).to_string())


if __name__ == "__main__":
    main()
