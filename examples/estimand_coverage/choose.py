"""Choose the spreads below the pool leave-one-collection-out, on the coverage study.

Run from the repository root, after the grid (seed 0, one pool depth per collection)::

    for c in "1.25 1" "0.5 2" ...; do set -- $c
      python examples/estimand_coverage/run.py --collection trec8 --depths 10 --seeds 0 \\
        --set beyond_decay_sd=$1 --set beyond_run_sd=$2 --out results/grid/ds$1_rs$2
    done   # and --collection dl19 / dl21 --depths 3
    python examples/estimand_coverage/choose.py
    python examples/estimand_coverage/choose.py --grid results/carry --shipped b0   # the carry

A candidate's loss on a collection is how far it is from sharp and right:
``|log E[z²] runs| + |log E[z²] pairs| + |logit(pair coverage) − logit(0.95)|`` (0 when both
sds are right and the pairs are covered 95% of the time). A candidate whose W or accuracy at
P ≥ 0.95 is below the shipped settings' on a collection is out on it. For each held-out
collection the candidate with the lowest mean loss on the other two is chosen and scored on
it. A summary with several rows (pool depths) counts their mean loss, W and accuracy. Writes
``losses.csv`` and ``choice.csv`` in the grid (the grid's own folders keep only their
``summary.csv`` in the repository).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import logit

HERE = Path(__file__).resolve().parent
GRID = HERE / "results" / "grid"
SHIPPED = "ds1.25_rs1"  # beyond_decay_sd=1.25, beyond_run_sd=1 (models/fusion.json)
FOLDERS = {"trec8": ".", "dl19": "dl19", "dl21": "dl21"}


def loss(row) -> float:
    """Distance from sharp and right (module docstring); a coverage of 0 or 1 counts as
    0.001 or 0.999 (every pair covered is too wide, not infinitely wrong)."""
    coverage = min(max(row["pair_coverage"], 0.001), 0.999)
    return float(abs(np.log(row["run_ez2"])) + abs(np.log(row["pair_ez2"]))
                 + abs(logit(coverage) - logit(0.95)))  # fmt: skip


def losses(grid: Path = GRID, shipped: str = SHIPPED) -> pd.DataFrame:
    """One row per candidate and collection: its summary (the mean over its rows, the pool
    depths), loss (the mean of theirs) and whether it is eligible."""
    rows = []
    for folder in sorted(p for p in grid.iterdir() if p.is_dir()):
        for collection, sub in FOLDERS.items():
            path = folder / sub / "summary.csv"
            if path.is_file():
                summary = pd.read_csv(path)
                row = {**summary.mean().to_dict(), "loss": summary.apply(loss, axis=1).mean()}
                rows.append({"candidate": folder.name, "collection": collection, **row})
    frame = pd.DataFrame(rows)
    base = frame[frame["candidate"] == shipped].set_index("collection")
    frame["eligible"] = [
        r.w >= base.at[r.collection, "w"] - 1e-9
        and r.accuracy_95 >= base.at[r.collection, "accuracy_95"] - 1e-9
        for r in frame.itertuples()
    ]  # fmt: skip
    return frame


def choose(frame: pd.DataFrame, shipped_name: str = SHIPPED) -> pd.DataFrame:
    """For each held-out collection: the choice from the others and its held-out numbers."""
    everywhere = frame.groupby("candidate")["collection"].nunique() == frame["collection"].nunique()
    frame = frame[frame["candidate"].isin(everywhere[everywhere].index)]
    rows = []
    for held in sorted(frame["collection"].unique()):
        dev = frame[frame["collection"] != held]
        ok = dev.groupby("candidate")["eligible"].all()
        mean = dev.groupby("candidate")["loss"].mean()[ok[ok].index]
        pick = mean.idxmin()
        out = frame[(frame["collection"] == held) & (frame["candidate"] == pick)].iloc[0]
        shipped = frame[(frame["collection"] == held) & (frame["candidate"] == shipped_name)].iloc[0]
        rows.append({"held_out": held, "chosen": pick, "dev_loss": mean[pick],
                     "held_out_loss": out["loss"], "shipped_loss": shipped["loss"],
                     **{f"held_out_{k}": out[k] for k in
                        ("run_ez2", "pair_coverage", "pair_ez2", "accuracy_95", "w")}})  # fmt: skip
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--grid", type=Path, default=GRID, help="the candidates' folders")
    parser.add_argument("--shipped", default=SHIPPED, help="the folder of the shipped settings")
    args = parser.parse_args(argv)
    grid = args.grid if args.grid.is_absolute() else HERE / args.grid
    if not grid.is_dir():
        print(f"no grid at {grid}; run the grid first (module docstring)", file=sys.stderr)
        return 1
    frame = losses(grid, args.shipped)
    frame.to_csv(grid / "losses.csv", index=False, float_format="%.4f")
    choice = choose(frame, args.shipped)
    choice.to_csv(grid / "choice.csv", index=False, float_format="%.4f")
    table = frame.pivot(index="candidate", columns="collection", values="loss")
    print(table.assign(mean=table.mean(axis=1)).sort_values("mean").to_string(float_format="%.3f"))
    print(choice.to_string(float_format="%.3f"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
