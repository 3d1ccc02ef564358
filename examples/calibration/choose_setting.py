"""Choose one of fusion's settings leave-one-collection-out (the settings in models/fusion.json).

Run from the repository root::

    python examples/calibration/choose_setting.py --param run_effect_sd --grid 0,1,2,3,4 --trials 60
    python examples/calibration/choose_setting.py --param beyond_decay --grid 0,0.3,0.6,1 --trials 40
    python examples/calibration/choose_setting.py --param weight_sd --grid 2,1,0.5,0.25 --trials 40 --held-out

For every development collection and every value of the grid, a reusability
study (Carterette 2007 §4.3: k = 10 runs one per group, c = 2, α = 0.95, depth
100, seed 2007, so the trials are paired across values) of the ``fusion-mc``
strategy: MTC's judgments, the fusion model with the shipped settings except
``--param`` (``--fixed`` overrides others), confidence by Monte Carlo over its
Laplace draws. For each collection, the value chosen *for* it is the one with
the lowest log loss of the stated confidences over the *other two*
collections (a proper score: W rewards under-confidence). Writes
``choices/<param>_grid.csv`` (one row per collection and value) and
``choices/<param>_choice.md`` (not committed; condensed in ``models/provenance/``).
The data is read from ``../shared/data``.
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
from relimpute.groups import read_groups
from relimpute.cli._format import FORMATTERS
from relimpute.relevance.settings import load_settings

HERE = Path(__file__).resolve().parent
OUT = HERE / "choices"  # regenerated, not committed
DATA = HERE.parents[2] / "shared" / "data"
COLLECTIONS = {
    "dl19": ("trec-dl-2019-passage", 2),
    "dl21": ("trec-dl-2021-passage", 2),
    "trec8": ("trec-8-adhoc", 1),
}
SHIPPED = dict(load_settings("fusion").params)
SHOWN = ["w", "w_low", "w_high", "log_loss", "ece", "accuracy_conf_95", "share_conf_95", "mean_tau"]


def grid_study(
    name: str, param: str, values: list[float], fixed: dict, trials: int, held_out: bool = False
) -> pd.DataFrame:
    """Summary rows of one paired study per value of ``param`` on collection ``name``; the
    other settings are the shipped ones, or with ``held_out`` those of ``held_out/<name>/``."""
    folder, threshold = COLLECTIONS[name]
    base = dict(load_settings(HERE / "held_out" / name / "fusion.json").params) if held_out else SHIPPED
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(
            DATA / folder / "qrels.txt", DATA / folder / "runs", rel_threshold=threshold
        )
    strategies = [
        Strategy(
            f"fusion-mc {param}={value:g}",
            selector="mtc",
            model="fusion",
            model_params={**base, "n_draws": 200, **fixed, param: value},
            n_draws=4000,
        )
        for value in values
    ]
    study = run_study(
        campaign,
        strategies,
        n_trials=trials,
        groups=read_groups(DATA / folder / "groups.tsv").run_to_group(),
        seed=2007,
        jobs=2,
        progress=False,
    )
    frame = summary_frame(study)
    frame.insert(0, param, values)
    frame.insert(0, "collection", name)
    return frame


def loco_choice(grid: pd.DataFrame, param: str) -> pd.DataFrame:
    """Per collection: the value with the lowest mean log loss on the other collections."""
    rows = []
    for held_out in grid["collection"].unique():
        others = grid[grid["collection"] != held_out]
        score = others.groupby(param)["log_loss"].mean()
        chosen = float(score.idxmin())
        mine = grid[(grid["collection"] == held_out) & (grid[param] == chosen)].iloc[0]
        rows.append(
            {"collection": held_out, "fitted_on": "+".join(sorted(others["collection"].unique())),
             f"chosen_{param}": chosen, **{c: mine[c] for c in SHOWN}}
        )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--param", required=True, help="a keyword of the fusion model")
    parser.add_argument("--grid", required=True, help="comma-separated values of --param")
    parser.add_argument("--fixed", default="", help="other settings, e.g. run_effect_sd=3,beyond_decay=0")
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--collections", default="dl19,dl21,trec8")
    parser.add_argument(
        "--held-out",
        action="store_true",
        help="other settings from held_out/<collection>/fusion.json (held_out.py), not models/",
    )
    args = parser.parse_args(argv)
    values = [float(x) for x in args.grid.split(",")]
    fixed = {k: float(v) for k, v in (kv.split("=") for kv in args.fixed.split(",") if kv)}
    started = time.time()
    parts = []
    for name in args.collections.split(","):
        parts.append(grid_study(name, args.param, values, fixed, args.trials, args.held_out))
        print(parts[-1][["collection", args.param, *SHOWN]].round(3).to_string(index=False))
    grid = pd.concat(parts, ignore_index=True)
    OUT.mkdir(exist_ok=True)
    grid.to_csv(OUT / f"{args.param}_grid.csv", index=False)
    choice = loco_choice(grid, args.param)
    command = " ".join(["python examples/calibration/choose_setting.py", *(argv or sys.argv[1:])])
    text = [
        f"# fusion's {args.param}, chosen leave-one-collection-out",
        "",
        f"`{command}` ({time.time() - started:.0f} s). Strategy fusion-mc (MTC judgments, Monte Carlo"
        " over the Laplace draws) with the settings of "
        f"{'held_out/<collection>/fusion.json' if args.held_out else 'models/fusion.json'} otherwise"
        f"{' and ' + args.fixed if args.fixed else ''}, k = 10 one per group, c = 2, α = 0.95,"
        " depth 100, seed 2007.",
        "",
        "## Choice per collection (the value picked on the other two, scored on this one)",
        "",
        FORMATTERS["markdown"](choice.round(3)),
        "",
        "## Every value on every collection (development numbers)",
        "",
        FORMATTERS["markdown"](grid[["collection", args.param, *SHOWN]].round(3)),
        "",
    ]
    (OUT / f"{args.param}_choice.md").write_text("\n".join(text))
    print(choice.round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
