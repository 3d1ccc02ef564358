"""Plot MAE and SRE* per corrector and measure from the study's metrics tables.

python examples/poolbias/plot.py trec8_d10 trec8_d100
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent / "results"


def main(stems: list[str]) -> None:
    fig, axes = plt.subplots(len(stems), 2, figsize=(13, 3.6 * len(stems)), squeeze=False)
    for row, stem in enumerate(stems):
        metrics = pd.read_csv(HERE / f"{stem}_metrics.tsv", sep="\t")
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
    fig.savefig(HERE / "poolbias_trec8.png", dpi=110)


if __name__ == "__main__":
    main(sys.argv[1:])
