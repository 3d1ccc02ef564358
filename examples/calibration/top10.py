"""Why the calibration studies miss among the best runs: the top-10 slice, by judgments.

Run from the repository root, after a ``calibrate`` study per collection (:data:`STUDIES`;
DL 2019 about 40 CPU minutes, the 40-trial ones about 15)::

    python examples/calibration/top10.py dl19=/tmp/top10/dl19 dl21=/tmp/top10/dl21 trec8=/tmp/top10/trec8

Reads each study folder's ``slices.csv`` and ``top_by_judgments.csv`` (written by every
``calibrate`` report) and, from the data, how much each of the collection's 10 best runs (by
MAP at depth 100 on the official qrels) agrees with the runs of the other groups (the share
of documents in common, :func:`relimpute.calibration.trials.run_similarity`); writes
``top10.md`` beside this file. The strategies judge for two initial runs and the model fills
the rest from the runs' consensus, so a collection whose best runs agree least with the
others has its top-10 pairs ordered backwards when few documents are judged.

It also scores a forecaster calibrated by construction on the same slice rule as ``close``
(|true ΔMAP| < 0.01): true differences ΔMAP ~ N(0, τ²), an estimate with error N(0, σ²), and
the exact posterior P(ΔMAP > 0). Picking pairs by their true difference picks those whose sign
is hardest, so even this forecaster is right less often than it says there.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from relimpute import Campaign
from relimpute.calibration.metrics import W_CAP
from relimpute.calibration.trials import run_similarity, true_map

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[2] / "shared" / "data"
#: name: (folder, rel threshold)
COLLECTIONS = {"dl19": ("trec-dl-2019-passage", 2), "dl21": ("trec-dl-2021-passage", 2),
               "trec8": ("trec-8-adhoc", 1)}  # fmt: skip


#: the studies ``top10.md`` reads: ``calibrate`` with the reusability protocol of ``run.sh``
STUDIES = """\
D=../shared/data/trec-dl-2019-passage
relimpute calibrate $D/qrels.txt $D/runs --rel-threshold 2 --k 10 --c 2 --groups $D/groups.tsv \\
  --depth 100 --seed 2007 --trials 200 --strategies fusion-mc,mtc \\
  --settings-dir examples/calibration/held_out/dl19 -o /tmp/top10/dl19
# DL 2021 (held_out/dl21) and TREC-8 (trec-8-adhoc, --rel-threshold 1, held_out/trec8):
# --trials 40 --strategies fusion-mc, -o /tmp/top10/dl21 and /tmp/top10/trec8"""


def agreement(name: str) -> dict:
    """Spearman correlation of MAP@100 with the mean share of documents in common with the
    other groups' runs, among the 10 best runs and among all."""
    folder, threshold = COLLECTIONS[name]
    data = DATA / folder
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(data / "qrels.txt", data / "runs", rel_threshold=threshold)
    campaign = campaign.truncated(100, shrink=True)
    truth = true_map(campaign)
    group = pd.read_csv(data / "groups.tsv", sep="\t").set_index("run")["group"]
    sim = run_similarity(campaign)
    runs = list(campaign.systems)
    shared = pd.Series({s: np.mean([sim[i, j] for j, o in enumerate(runs) if group[o] != group[s]])
                        for i, s in enumerate(runs)})  # fmt: skip
    best = truth.rank(ascending=False, method="min") <= 10
    rho = lambda m: truth[m].corr(shared[m.index[m]], method="spearman")  # noqa: E731
    return {"collection": name, "runs": len(runs),
            "ρ(MAP, agreement), 10 best": rho(best), "ρ, all runs": rho(best | ~best),
            "agreement, 10 best": shared[best].mean(), "agreement, the others": shared[~best].mean()}  # fmt: skip


def calibrated_forecaster(tau: float, sigma: float, n: int = 1_000_000, close: float = 0.01) -> list[dict]:
    """W, accuracy and mean stated confidence of the exact posterior forecaster (module
    docstring) over all pairs and over those with |ΔMAP| < ``close``."""
    rng = np.random.default_rng(2007)
    delta = rng.normal(0.0, tau, n)
    shrink = tau**2 / (tau**2 + sigma**2)
    estimate = delta + rng.normal(0.0, sigma, n)
    p = norm.cdf(shrink * estimate / np.sqrt(shrink * sigma**2))
    conf = np.maximum(p, 1.0 - p)
    right = (p > 0.5) == (delta > 0)
    w = np.where(right, 1.0, -np.minimum(conf / np.maximum(1.0 - conf, 1e-300), W_CAP))
    rows = []
    for name, mask in (("all", np.ones(n, bool)), (f"close (<{close:g})", np.abs(delta) < close)):
        rows.append({"τ": tau, "σ": sigma, "slice": name, "accuracy": right[mask].mean(),
                     "mean_confidence": conf[mask].mean(), "w": w[mask].mean()})  # fmt: skip
    return rows


def main(argv: list[str]) -> int:
    folders = dict(a.split("=", 1) for a in argv)
    if not folders or set(folders) - set(COLLECTIONS):
        print(__doc__, file=sys.stderr)
        return 2
    slices, by_judgments, agree = [], [], []
    for name, folder in folders.items():
        folder = Path(folder)
        if not (folder / "top_by_judgments.csv").is_file():
            print(f"no top_by_judgments.csv in {folder}: run its calibrate study first", file=sys.stderr)
            return 1
        slices.append(pd.read_csv(folder / "slices.csv").assign(collection=name))
        by_judgments.append(pd.read_csv(folder / "top_by_judgments.csv").assign(collection=name))
        agree.append(agreement(name))
    table = lambda f: f.to_markdown(index=False, floatfmt=".3f")  # noqa: E731
    first = lambda f: f[["collection", *[c for c in f.columns if c != "collection"]]]  # noqa: E731
    text = [
        "# The top-10 slice of the calibration studies", "",
        f"`python examples/calibration/top10.py {' '.join(argv)}`, after", "",
        "```bash", STUDIES, "```", "",
        "## Slices (uncapped confidence)", "", table(first(pd.concat(slices))), "",
        "## The top-10 pairs by the judgments their trial made", "",
        table(first(pd.concat(by_judgments))), "",
        "## How much the best runs agree with the others", "",
        "Agreement: a run's mean share of documents in common with the other groups' runs "
        "(top 100); ρ: Spearman correlation with MAP@100 on the official qrels.", "",
        table(pd.DataFrame(agree)), "",
        "## What a calibrated forecaster scores on a slice picked by the truth", "",
        "ΔMAP ~ N(0, τ²), estimate error N(0, σ²), P(ΔMAP > 0) the exact posterior "
        "(calibrated by construction); 1,000,000 pairs.", "",
        table(pd.DataFrame([r for t, sg in ((0.05, 0.01), (0.05, 0.02), (0.08, 0.015))
                            for r in calibrated_forecaster(t, sg)])), "",
    ]  # fmt: skip
    (HERE / "top10.md").write_text("\n".join(text))
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
