"""Choose fusion's run-effect spread leave-one-collection-out (the setting in models/fusion.json).

Run from the repository root::

    python examples/calibration/choose_run_effect.py [--trials 60] [--grid 0,1,2,3,4]

For every development collection and every ``run_effect_sd`` of the grid, a
reusability study (Carterette 2007 §4.3: k = 10 runs one per group, c = 2, α =
0.95, depth 100, seed 2007, so the trials are paired across settings) of the
``fusion-mc`` strategy: MTC's judgments, the fusion model with that spread,
confidence by Monte Carlo over its Laplace draws. For each collection, the
spread chosen *for* it is the one with the lowest log loss of the stated
confidences over the *other two* collections (a proper score: W rewards
under-confidence). Writes ``run_effect_grid.csv`` (one row per collection and
spread) and ``run_effect_choice.md`` beside this file. The data is read from
``../shared/data``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

from relimpute import Campaign
from relimpute.calibration import run_study
from relimpute.calibration.report import summary_frame
from relimpute.calibration.strategies import Strategy
from relimpute.calibration.trials import read_groups
from relimpute.cli._format import FORMATTERS

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[2] / "shared" / "data"
COLLECTIONS = {
    "dl19": ("trec-dl-2019-passage", 2),
    "dl21": ("trec-dl-2021-passage", 2),
    "trec8": ("trec-8-adhoc", 1),
}
SHOWN = ["w", "w_low", "w_high", "log_loss", "ece", "accuracy_conf_95", "share_conf_95", "mean_tau"]


def grid_study(name: str, spreads: list[float], trials: int) -> pd.DataFrame:
    """Summary rows of one paired study per spread on collection ``name``."""
    folder, threshold = COLLECTIONS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(
            DATA / folder / "qrels.txt", DATA / folder / "runs", rel_threshold=threshold
        )
    strategies = [
        Strategy(
            f"fusion-mc sd={sd:g}",
            selector="mtc",
            model="fusion",
            model_params={"n_draws": 200, "run_effect_sd": sd},
            monte_carlo_draws=4000,
        )
        for sd in spreads
    ]
    study = run_study(
        campaign,
        strategies,
        n_trials=trials,
        groups=read_groups(DATA / folder / "groups.tsv"),
        seed=2007,
        jobs=2,
        progress=False,
    )
    frame = summary_frame(study)
    frame.insert(0, "run_effect_sd", spreads)
    frame.insert(0, "collection", name)
    return frame


def loco_choice(grid: pd.DataFrame) -> pd.DataFrame:
    """Per collection: the spread with the lowest mean log loss on the other collections."""
    rows = []
    for held_out in grid["collection"].unique():
        others = grid[grid["collection"] != held_out]
        score = others.groupby("run_effect_sd")["log_loss"].mean()
        chosen = float(score.idxmin())
        mine = grid[(grid["collection"] == held_out) & (grid["run_effect_sd"] == chosen)].iloc[0]
        rows.append(
            {"collection": held_out, "fitted_on": "+".join(sorted(others["collection"].unique())),
             "chosen_sd": chosen, **{c: mine[c] for c in SHOWN}}
        )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--grid", default="0,1,2,3,4")
    parser.add_argument("--collections", default="dl19,dl21,trec8")
    args = parser.parse_args(argv)
    spreads = [float(x) for x in args.grid.split(",")]
    started = time.time()
    parts = []
    for name in args.collections.split(","):
        parts.append(grid_study(name, spreads, args.trials))
        print(parts[-1][["collection", "run_effect_sd", *SHOWN]].round(3).to_string(index=False))
    grid = pd.concat(parts, ignore_index=True)
    grid.to_csv(HERE / "run_effect_grid.csv", index=False)
    choice = loco_choice(grid)
    text = [
        "# fusion's run-effect spread, chosen leave-one-collection-out",
        "",
        f"`python examples/calibration/choose_run_effect.py --trials {args.trials} --grid {args.grid}`"
        f" ({time.time() - started:.0f} s). Strategy fusion-mc (MTC judgments, Monte Carlo over the"
        " Laplace draws), k = 10 one per group, c = 2, α = 0.95, depth 100, seed 2007.",
        "",
        "## Choice per collection (the spread picked on the other two, scored on this one)",
        "",
        FORMATTERS["markdown"](choice.round(3)),
        "",
        "## Every spread on every collection (development numbers)",
        "",
        FORMATTERS["markdown"](grid[["collection", "run_effect_sd", *SHOWN]].round(3)),
        "",
    ]
    (HERE / "run_effect_choice.md").write_text("\n".join(text))
    print(choice.round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
