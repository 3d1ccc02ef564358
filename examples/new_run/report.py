"""The figure of the new-run validation: coverage of each held-out run's MAP against pool_group_sd.

    python examples/new_run/report.py        # reads results/summary.csv, writes coverage.png
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from relimpute._files import save_figure  # noqa: E402

HERE = Path(__file__).resolve().parent
NAMES = {"dl19": "DL 2019", "dl21": "DL 2021", "trec8": "TREC-8"}


def main() -> None:
    summary = pd.read_csv(HERE / "results" / "summary.csv")
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
    for name, part in summary.groupby("collection", sort=False):
        label = NAMES.get(name, name)
        left.plot(part["pool_group_sd"], part["MAP covered"], marker="o", label=label)
        right.plot(part["pool_group_sd"], part["rank in 90% interval"], marker="o", label=label)
    left.axhspan(0.93, 0.97, color="0.85", zorder=0)
    right.axhspan(0.88, 0.95, color="0.85", zorder=0)
    left.set(xlabel="pool_group_sd (log-odds)", ylabel="share covered",
             title="official MAP in the 95% interval")  # fmt: skip
    right.set(xlabel="pool_group_sd (log-odds)", title="official rank in the 90% rank interval")
    left.legend(frameon=False)
    fig.tight_layout()
    save_figure(fig, HERE / "coverage.png", colors=32)


if __name__ == "__main__":
    main()
