"""Power and bias of pooling strategies against judging effort (Cormack & Lynam 2007).

Run from the repository root (several minutes on 2 busy cores):

    PYTHONPATH=src python examples/precision/power_study.py            # both collections
    PYTHONPATH=src python examples/precision/power_study.py trec-8-adhoc

TREC-8 ad hoc: the gold standard is the official qrels, the depth-100 pool of
the 71 pooled runs; pools are drawn from those 71 runs, all 129 runs are
evaluated. DL 2019 passage: the gold standard is the official qrels (a
depth-10 pool of all 37 runs plus active learning); pools of depth <= 10 are
fully judged. Writes results/power_<c>.tsv (the curves), power_<c>.png and
power_<c>_plan.md (what a budget buys), the same tables
`relimpute power ... -o` and `relimpute plan` give.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pandas as pd

from relimpute.cli._format import FORMATTERS
from relimpute.data import Campaign
from relimpute.precision.power import power_curves
from relimpute.precision.power_plots import plot_power_curves

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1].parent / "shared" / "data"
STUDIES = {
    "trec-8-adhoc": {
        "rel_threshold": 1,
        "depths": (1, 2, 5, 10, 20, 50, 100),
        "topic_counts": (10, 20, 30, 40, 50),
    },
    "trec-dl-2019-passage": {
        "rel_threshold": 2,
        "depths": (1, 2, 3, 5, 7, 10),
        "topic_counts": (10, 20, 30, 43),
    },
}
#: MTC replays its choice over the whole depth-100 pool of TREC-8 (86,830 judgments, ~11 min)
STRATEGIES = ("depth", "mtf", "mtc")
REPETITIONS = 20
SEED = 2007
BUDGETS = {
    "trec-8-adhoc": (2000, 5000, 10000, 20000),
    "trec-dl-2019-passage": (300, 600, 1200, 2400),
}


def run(name: str) -> None:
    study = STUDIES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(
            DATA / name / "qrels.txt", DATA / name / "runs", rel_threshold=study["rel_threshold"]
        )
    groups = pd.read_csv(DATA / name / "groups.tsv", sep="\t", dtype=str)
    pooled = list(groups.loc[groups["pooled"].str.lower() == "yes", "run"])
    result = power_curves(
        campaign,
        depths=study["depths"],
        topic_counts=study["topic_counts"],
        pool_systems=pooled,
        strategies=STRATEGIES,
        repetitions=REPETITIONS,
        rng=SEED,
        progress=None,
    )
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    result.curves.to_csv(out / f"power_{name}.tsv", sep="\t", index=False, float_format="%.4g")
    plot_power_curves(
        result.curves,
        out / f"power_{name}.png",
        title=f"{name}: {len(pooled)} pooled runs, {campaign.n_systems} evaluated",
    )
    markdown = FORMATTERS["markdown"]
    plans = []
    for budget in BUDGETS[name]:
        best = result.plan(budget).head(1)
        plans.append(best.assign(budget=budget))
    columns = [
        "budget",
        "strategy",
        "measure",
        "depth",
        "n_topics",
        "effort",
        "power",
        "bias",
        "tau",
    ]
    text = (
        f"# {name}: the most powerful design within a budget (MAP, bias < 0.05)\n\n"
        f"{markdown(pd.concat(plans)[columns])}"
    )
    (out / f"power_{name}_plan.md").write_text(text)
    print(text)


if __name__ == "__main__":
    for collection in sys.argv[1:] or list(STUDIES):
        run(collection)
