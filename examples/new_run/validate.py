"""Is the new-run check right about runs that were left out of the pool? Leave-one-group-out.

Run from the repository root::

    python examples/new_run/validate.py                     # DL 2019, DL 2021, TREC-8
    python examples/new_run/validate.py --collections dl19 --quick   # 3 groups, seconds

For each group of a collection, the documents only its runs brought into the pool (in their
top K, K the collection's pool depth, and in no other run's top K) lose their judgments; the
default model is fitted on what is left, with every run's ranking as evidence, and each of the
group's runs is checked as a new run (:func:`relimpute.bias.newrun.check_new_runs`) against the
others. The truth is its MAP on the full qrels (TREC-8: its 71 pooled runs cut at rank 100, so
the full qrels judge everything they retrieve and the truth is the complete MAP; DL: the
official MAP, a shallow pool) and its rank by that MAP among the others' full-qrels MAPs.
Every check is run for each ``pool_group_sd`` of ``--shifts`` (the log-odds shift of the documents
only the held-out runs found, :func:`relimpute.confidence.estimands.pool_estimate`), and each collection's
is chosen on the other two (``results/held_out.md``). Writes ``results/summary.csv`` and
``.md`` (per collection and shift), ``results/held_out.md`` and, not committed,
``results/runs.csv`` (one row per held-out run, seed and shift) and ``results/pairs.csv.gz``
(P(beats) of every held-out run against every other run, with the truth).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute import Campaign
from relimpute.calibration.metrics import bookmaker_w, orient
from relimpute.measures import evaluate
from relimpute.bias.newrun import check_new_runs
from relimpute.relevance import load_model

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[2] / "shared" / "data"
#: name: (folder, rel threshold, pool depth K, runs cut at, pooled runs only)
COLLECTIONS = {
    "dl19": ("trec-dl-2019-passage", 2, 10, None, False),
    "dl21": ("trec-dl-2021-passage", 2, 10, None, False),
    "trec8": ("trec-8-adhoc", 1, 100, 100, True),
}


def load(name: str) -> tuple[Campaign, pd.Series]:
    """The collection's campaign and each run's group."""
    folder, threshold, _, cut, pooled_only = COLLECTIONS[name]
    data = DATA / folder
    groups = pd.read_csv(data / "groups.tsv", sep="\t", dtype=str)
    if pooled_only:
        groups = groups[groups["pooled"] == "yes"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(
            data / "qrels.txt", [data / "runs" / f"{run}.gz" for run in groups["run"]],
            rel_threshold=threshold,
        )  # fmt: skip
    if cut is not None:
        campaign = campaign.truncated(cut, shrink=True)
    return campaign, groups.set_index("run")["group"]


def without_group(campaign: Campaign, held: list[str], depth: int) -> Campaign:
    """The judgments of the documents only ``held`` brought into the depth-``depth`` pool
    hidden (Zobel 1998's leave-one-group-out)."""
    rows = campaign.system_rows(held)
    others = campaign.system_rows([s for s in campaign.systems if s not in held])
    return campaign.with_judged(
        [t.judged & ~(t.retrieved(rows, depth) & ~t.retrieved(others, depth))
         for t in campaign.topics]  # fmt: skip
    )


def study(name: str, *, seed: int, quick: bool, n_draws: int,
          shifts: tuple[float, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    campaign, group_of = load(name)
    depth = COLLECTIONS[name][2]
    truth = evaluate(campaign, ["AP"], missing="zero").set_index("system")["value"]
    groups = sorted(group_of.loc[list(campaign.systems)].unique())
    if quick:
        groups = groups[:3]
    runs, pairs = [], []
    for group in groups:
        held = [s for s in campaign.systems if group_of[s] == group]
        if len(held) == len(campaign.systems):
            continue
        reduced = without_group(campaign, held, depth)
        estimate = load_model().fit(reduced, rng=seed).predict(reduced, grades=False)
        others = [s for s in campaign.systems if s not in held]
        for shift in shifts:
            check = check_new_runs(reduced, held, estimate, top=len(campaign.systems),
                                   n_draws=n_draws, rng=seed, pool_group_sd=shift)  # fmt: skip
            add_rows(runs, pairs, check, name, seed, group, shift, truth, others)
        print(f"  {name} {group}: {len(held)} run(s)", file=sys.stderr, flush=True)
    return pd.DataFrame(runs), pd.DataFrame(pairs)


def add_rows(runs, pairs, check, name, seed, group, shift, truth, others) -> None:
    """One row per held-out run of ``check`` into ``runs``, one per (run, other) into ``pairs``."""
    for row in check.table.to_dict("records"):
        true = truth[row["run"]]
        rank = 1 + int((truth[others] > true + 1e-12).sum())
        half = (row["ci_high"] - row["ci_low"]) / 2
        runs.append({
            "collection": name, "seed": seed, "pool_group_sd": shift, "group": group,
            "run": row["run"],
            "truth": true, "truth_rank": rank, "E": row["E"], "sd": row["sd"],
            "ci_low": row["ci_low"], "ci_high": row["ci_high"],
            "covered": row["ci_low"] - 1e-9 <= true <= row["ci_high"] + 1e-9,
            "z": (true - row["E"]) / row["sd"] if row["sd"] > 0 else np.nan,
            "rank_low": row["rank_low"], "rank_high": row["rank_high"],
            "rank_covered": row["rank_low"] <= rank <= row["rank_high"],
            "rank_pit": rank_pit(check.ranks.loc[row["run"]].to_numpy(), rank, [seed, len(runs)]),
            "rank_pit_inside": pit_inside(check.ranks.loc[row["run"]].to_numpy(), rank),
            "reliable": half <= check.tolerance, "half": half,
            "trec_eval": row["trec_eval"], "judged@10": row["judged@10"],
            "holes@100": 1 - row["judged@100"],
        })  # fmt: skip
        for other in others:
            pairs.append({
                "collection": name, "seed": seed, "pool_group_sd": shift, "run": row["run"],
                "other": other,
                "p": row[f"P(beats {other})"], "delta": true - truth[other],
            })  # fmt: skip


def rank_pit(shares: np.ndarray, rank: int, seed) -> float:
    """The randomised probability integral transform of the true rank under the stated rank
    distribution: P(rank < true) + U · P(rank = true), U uniform. Uniform on (0, 1) when the
    distribution is calibrated, whatever its discreteness (a 90% interval of a discrete rank
    holds at least 90%, so its coverage cannot show over-confidence alone)."""
    u = np.random.default_rng(seed).random()
    return float(shares[: rank - 1].sum() + u * shares[rank - 1])


def pit_inside(shares: np.ndarray, rank: int, low: float = 0.05, high: float = 0.95) -> float:
    """P(low < PIT < high) over the PIT's uniform U (:func:`rank_pit`): the share of
    ``[P(rank < true), P(rank ≤ true)]`` inside ``(low, high)``. Its mean over runs is the
    share :func:`rank_pit` estimates with one U per run, without that draw's noise (at 37
    runs one draw moves the share by ±7 points)."""
    below, upto = float(shares[: rank - 1].sum()), float(shares[:rank].sum())
    if upto - below <= 1e-12:
        return float(low < below < high)
    return max(0.0, min(upto, high) - max(below, low)) / (upto - below)


def summarise(runs: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (name, shift), part in runs.groupby(["collection", "pool_group_sd"], sort=False):
        p = pairs[(pairs["collection"] == name) & (pairs["pool_group_sd"] == shift)]
        prob, outcome = orient(p["p"].to_numpy(), p["delta"].to_numpy() > 0)
        sure = prob >= 0.95
        holes = part["holes@100"].to_numpy()
        slope = lambda y: 0.1 * np.polyfit(holes, y, 1)[0] if np.ptp(holes) > 0 else np.nan  # noqa: E731
        reliable = part[part["reliable"]]
        rows.append({
            "collection": name, "pool_group_sd": shift, "held-out runs": len(part),
            "MAP covered": part["covered"].mean(), "E[z²]": np.nanmean(part["z"] ** 2),
            "mean E − truth": (part["E"] - part["truth"]).mean(),
            "rank in 90% interval": part["rank_covered"].mean(),
            "rank PIT in (0.05, 0.95)": part["rank_pit"].between(0.05, 0.95).mean(),
            "same, expected over U": part["rank_pit_inside"].mean(),
            "called reliable": len(reliable),
            "reliable right": reliable["covered"].mean() if len(reliable) else np.nan,
            "pairs": len(p), "pairs at ≥ 0.95": int(sure.sum()),
            "right there": outcome[sure].mean() if sure.any() else np.nan,
            "W": bookmaker_w(prob, outcome),
            "E bias per 0.1 holes": slope((part["E"] - part["truth"]).to_numpy()),
            "trec_eval bias per 0.1 holes": slope((part["trec_eval"] - part["truth"]).to_numpy()),
        })  # fmt: skip
    return pd.DataFrame(rows)


def absent(collections) -> bool:
    """Whether a collection's data is missing (then say which, for the study to skip)."""
    missing = [c for c in collections if not (DATA / COLLECTIONS[c][0]).is_dir()]
    if missing:
        print(f"skipped: {', '.join(missing)} not found under {DATA}", file=sys.stderr)
    return bool(missing)


def leave_one_collection_out(summary: pd.DataFrame) -> pd.DataFrame:
    """Per collection, the row of the ``pool_group_sd`` whose coverage over the OTHER collections'
    held-out runs (pooled, each run once) is nearest 0.95 (the smaller on a tie)."""
    if summary["collection"].nunique() < 2:
        return summary.iloc[0:0]
    chosen = []
    for name in summary["collection"].unique():
        others = summary[summary["collection"] != name]
        pooled = others.groupby("pool_group_sd").apply(
            lambda g: np.average(g["MAP covered"], weights=g["held-out runs"]),
            include_groups=False,
        )
        best = (pooled - 0.95).abs().sort_index().idxmin()
        row = summary[(summary["collection"] == name) & (summary["pool_group_sd"] == best)]
        chosen.append(row.assign(**{"chosen on": ", ".join(others["collection"].unique())}))
    return pd.concat(chosen, ignore_index=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", nargs="+", default=list(COLLECTIONS),
                        choices=list(COLLECTIONS))  # fmt: skip
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="3 groups per collection")
    parser.add_argument("--shifts", type=float, nargs="+", default=[0.0, 0.5, 1.0, 1.25, 1.5, 2.0],
                        help="pool_group_sd values (the log-odds shift of the pool's unjudged documents)")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    if absent(args.collections):
        return 0
    start = time.process_time()
    parts = [study(c, seed=s, quick=args.quick, n_draws=args.draws, shifts=tuple(args.shifts))
             for c in args.collections for s in range(args.seeds)]  # fmt: skip
    runs = pd.concat([r for r, _ in parts], ignore_index=True)
    pairs = pd.concat([p for _, p in parts], ignore_index=True)
    summary = summarise(runs, pairs)
    args.out.mkdir(parents=True, exist_ok=True)
    runs.to_csv(args.out / "runs.csv", index=False, float_format="%.6g")
    pairs.to_csv(args.out / "pairs.csv.gz", index=False, float_format="%.6g")
    summary.to_csv(args.out / "summary.csv", index=False, float_format="%.6g")
    (args.out / "summary.md").write_text(summary.to_markdown(index=False, floatfmt=".3f") + "\n")
    print(summary.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    held_out = leave_one_collection_out(summary)
    if len(held_out):
        (args.out / "held_out.md").write_text(held_out.to_markdown(index=False, floatfmt=".3f")
                                              + "\n")  # fmt: skip
        print("\npool_group_sd chosen on the other collections:")
        print(held_out.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(f"CPU {time.process_time() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
