"""Split-corpus validation of corpus-bootstrap intervals (Cormack & Lynam 2006, Tables 1-4).

Run from the repository root (a few minutes per collection on 2 busy cores):

    PYTHONPATH=src python examples/precision/split_corpus.py --splits 20 trec-dl-2019-passage
    PYTHONPATH=src python examples/precision/split_corpus.py --splits 10 trec-8-adhoc

The paper's split (MD5 of the docno) gives the AP tables; MAP and L-MAP are
also checked over further random splits (MD5 of salt + docno), because one
split moves every system's mean the same way and 1 split x S systems is
closer to one observation than to S. Writes, per collection, into results/:
``split_<c>_ap.md`` (AP, all lists and R > 5), ``split_<c>_means.md`` (MAP and
L-MAP, the paper's split and the average over splits), ``split_<c>_variance.md``
(observed / predicted variance of the halves' difference) and the per-list
``split_<c>_lists.tsv.gz``.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import pandas as pd

from relimpute.cli._format import FORMATTERS
from relimpute.data import Campaign
from relimpute.precision.split import split_validation

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1].parent / "shared" / "data"
COLLECTIONS = {"trec-8-adhoc": 1, "trec-dl-2019-passage": 2}  # name: rel threshold
N_RESAMPLES = 2000
SEED = 20060806


def run(name: str, n_splits: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(
            DATA / name / "qrels.txt", DATA / name / "runs", rel_threshold=COLLECTIONS[name]
        )
    results = [
        split_validation(campaign, N_RESAMPLES, rng=SEED + i, salt="" if i == 0 else f"split-{i}")
        for i in range(n_splits)
    ]
    paper_split = results[0]
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    markdown = FORMATTERS["markdown"]
    ap = (
        f"# {name}: AP intervals from one half, value from the other (the paper's MD5 split)\n\n"
        f"{paper_split}\n\nAll lists:\n\n{markdown(paper_split.ap_table())}\n"
        f"Lists with R > 5 on the interval's half:\n\n{markdown(paper_split.ap_table(5))}"
    )
    over_splits = (
        pd.concat([r.mean_table().assign(split=i) for i, r in enumerate(results)])
        .groupby(["measure", "method", "direction"])[["below", "in", "above"]]
        .agg(["mean", "min", "max"])
    )
    over_splits.columns = [f"{a}_{b}" for a, b in over_splits.columns]
    means = (
        f"# {name}: MAP and L-MAP intervals\n\nThe paper's split:\n\n"
        f"{markdown(paper_split.mean_table())}\n"
        f"Over {n_splits} random splits (mean, min, max of the shares):\n\n"
        f"{markdown(over_splits.reset_index())}"
    )
    variance = pd.concat([r.variance_ratio().assign(split=i) for i, r in enumerate(results)])
    variance_text = (
        f"# {name}: observed / predicted variance of the difference between the halves\n\n"
        "variance_ratio = mean((x_B - x_A)^2) / mean(sd_A^2 + sd_B^2); 1 = standard errors right "
        "on average. mean_difference = the split's shift common to all systems.\n\n"
        f"{markdown(variance)}"
    )
    (out / f"split_{name}_ap.md").write_text(ap)
    (out / f"split_{name}_means.md").write_text(means)
    (out / f"split_{name}_variance.md").write_text(variance_text)
    paper_split.lists.to_csv(
        out / f"split_{name}_lists.tsv.gz",
        sep="\t",
        index=False,
        float_format="%.6g",
        compression={"method": "gzip", "mtime": 0},  # same bytes for the same numbers
    )
    print(ap, means, variance_text, sep="\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collections", nargs="*", default=list(COLLECTIONS), help="collections")
    parser.add_argument("--splits", type=int, default=5, help="the paper's split + salted ones")
    args = parser.parse_args()
    for collection in args.collections:
        run(collection, args.splits)
