"""One table across the three collections from the studies ``run.sh`` wrote.

Run from the repository root: ``python examples/calibration/cross_collection.py``. Reads
``<collection>/summary.csv`` and ``<collection>/table2_bins.csv`` and writes
``cross_collection.md`` beside this file: per collection and strategy, W with its 95%
interval, accuracy and share of pairs stated at >= 0.95, the worst shortfall of a
confidence bin below its lower edge, Kendall tau and judgments, and the issue's targets.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from relimpute.cli._format import FORMATTERS

HERE = Path(__file__).resolve().parent
COLLECTIONS = ("dl19", "dl21", "trec8")


def worst_bin_shortfall(bins: pd.DataFrame) -> pd.Series:
    """Per strategy, the largest (lower bin edge - accuracy) over bins holding pairs."""
    short = (bins["lower"] - bins["accuracy"]).where(bins["n"] > 0)
    return short.groupby(bins["strategy"]).max()


def fitted_on(spec: dict, collection: str) -> str:
    """Which collections the strategy's model settings were chosen on."""
    model = spec.get("model", "")
    if model.endswith(".json"):  # held-out settings: chosen without this collection
        return "+".join(c for c in COLLECTIONS if c != collection)
    return "nothing (no learned setting)"


def main() -> int:
    rows = []
    for name in COLLECTIONS:
        folder = HERE / name
        if not (folder / "summary.csv").is_file():
            print(f"no study in {folder}; run run.sh first", file=sys.stderr)
            continue
        summary = pd.read_csv(folder / "summary.csv").set_index("strategy")
        specs = json.loads((folder / "report.json").read_text())["config"]["strategy_specs"]
        shortfall = worst_bin_shortfall(pd.read_csv(folder / "table2_bins.csv"))
        for strategy, row in summary.iterrows():
            rows.append(
                {
                    "collection": name,
                    "strategy": strategy,
                    "settings fitted on": fitted_on(specs.get(strategy, {}), name),
                    "trials": int(row["trials"]),
                    "W": row["w"],
                    "W 95% CI": f"({row['w_low']:.2f}, {row['w_high']:.2f})",
                    "acc >= .95": row["accuracy_conf_95"],
                    "share >= .95": row["share_conf_95"],
                    "worst bin below edge": shortfall.get(strategy, float("nan")),
                    "tau": row["mean_tau"],
                    "judgments (median)": row["median_judgments"],
                }
            )
    table = pd.DataFrame(rows)
    table["targets met"] = (
        (table["W"] >= -0.5) & (table["acc >= .95"] >= 0.93) & (table["worst bin below edge"] <= 0.05)
    ).map({True: "yes", False: "no"})
    (HERE / "cross_collection.md").write_text(
        "# Calibration across the development collections\n\n"
        "Targets (issue 'Calibrated confidence'): W >= -0.5, accuracy >= 93% among pairs stated at "
        ">= 0.95, no confidence bin more than 5 points below its lower edge. 'settings fitted on': "
        "the collections the strategy's learned settings were chosen on (fusion: "
        "held_out/<collection>/fusion.json, chosen without the collection scored).\n\n"
        + FORMATTERS["markdown"](table.round(3))
    )
    print(table.round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
