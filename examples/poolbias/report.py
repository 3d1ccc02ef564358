"""The aim table (model-based against the best published corrector) and the TREC-8 plot.

    python examples/poolbias/report.py trec8_d10 trec8_d100 dl19_d10 dl21_d10

Studies run with several between-group spreads (``--group-sds``) are read at the spread
chosen without their collection (``results/group_sd_choice.json``, written by
``choose_group_sd.py``), relabelled ``model:<name>``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from relimpute._files import save_figure

HERE = Path(__file__).resolve().parent / "results"


#: the published corrector to beat per measure family (Lipani for P@n, Webber & Park otherwise)
RIVAL = {"P": "lipani"}


def read_metrics(stem: str) -> pd.DataFrame:
    """A study's metrics with each model at its held-out spread, labelled ``model:<name>``."""
    metrics = pd.read_csv(HERE / f"{stem}_metrics.tsv", sep="\t")
    found = metrics["corrector"].str.extract(r"^(model:[^\[]+)\[group_sd=([0-9.eE+-]+)\]$")
    if found[0].isna().all():
        return metrics
    chosen = json.loads((HERE / "group_sd_choice.json").read_text())[stem.split("_d")[0]]
    keep = found[0].isna() | (found[1].astype(float) == chosen)
    metrics = metrics[keep].copy()
    metrics["corrector"] = found[0][keep].fillna(metrics["corrector"])
    return metrics


def aim_table(stems: list[str]) -> pd.DataFrame:
    """Per collection/depth, measure and filter: model-based against the published rival."""
    rows = []
    for stem in stems:
        metrics = read_metrics(stem)
        for (measure, filt), sub in metrics.groupby(["measure", "filter"], sort=False):
            sub = sub.set_index("corrector")
            rival = RIVAL.get(measure.split("@")[0].split("(")[0], "webber-park")
            if "model:fusion" not in sub.index or rival not in sub.index:
                continue
            model, other = sub.loc["model:fusion"], sub.loc[rival]
            rows.append(
                {
                    "study": stem,
                    "measure": measure,
                    "filter": filt,
                    "rival": rival,
                    "mae_model": model["mae"],
                    "mae_rival": other["mae"],
                    "sre*_model": model["sre_star"],
                    "sre*_rival": other["sre_star"],
                    "tau_model": model["tau"],
                    "tau_rival": other["tau"],
                    "coverage_95": model["coverage"],
                    "beats_on_both": bool(
                        model["mae"] < other["mae"] and model["sre_star"] <= other["sre_star"]
                    ),
                }
            )
    return pd.DataFrame(rows)


def main(stems: list[str]) -> None:
    from relimpute.cli._format import FORMATTERS

    aim = aim_table(stems)
    (HERE / "aim.md").write_text(FORMATTERS["markdown"](aim), encoding="utf-8")
    stems = [s for s in stems if s.startswith("trec8")]
    fig, axes = plt.subplots(len(stems), 2, figsize=(13, 3.6 * len(stems)), squeeze=False)
    for row, stem in enumerate(stems):
        metrics = read_metrics(stem)
        metrics = metrics[metrics["filter"] == "all"]
        measures = list(dict.fromkeys(metrics["measure"]))
        correctors = list(dict.fromkeys(metrics["corrector"]))
        width = 0.8 / len(correctors)
        for col, (metric, label) in enumerate([("mae", "MAE"), ("sre_star", "SRE* (p < 0.05)")]):
            ax = axes[row, col]
            for k, corrector in enumerate(correctors):
                sub = metrics[metrics["corrector"] == corrector].set_index("measure")
                values = [sub[metric].get(m, np.nan) for m in measures]
                ax.bar(np.arange(len(measures)) + k * width, values, width, label=corrector)
            ax.set_xticks(np.arange(len(measures)) + 0.4 - width / 2, measures)
            ax.set_title(f"{stem}: {label}")
        axes[row, 0].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    save_figure(fig, HERE / "poolbias_trec8.png", dpi=100, colors=256)


if __name__ == "__main__":
    main(sys.argv[1:])
