"""Checks between refits: the posterior selector before and after, against MTC, per collection.

Reads the studies of run.sh (``results/``: MTC and the posterior selector checking at its refits
only, budget 300), of ``variants.py --check-every 1`` (``results_checked/``: the selector
checking after every judgment, budget 300) and, on DL 2021, MTC alone at a budget of 3000
(``results_mtc3000/dl21``: ``relimpute calibrate ... --strategies mtc --budget 3000``). Every
study uses run.sh's trials and random streams, so the runs pair trial by trial.
Writes ``results_checked/checks.csv`` and prints the table of the README and, per collection,
the trials whose judgments the checks changed.

    python examples/posterior_selector/checks.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from summarize import COLLECTIONS, collection_rows

HERE = Path(__file__).resolve().parent
#: (collection, budget, folders of MTC, of the selector before and of the selector after)
STUDIES = [
    ("dl19", 300, HERE / "results", HERE / "results", HERE / "results_checked" / "dl19"),
    ("trec8", 300, HERE / "results", HERE / "results", HERE / "results_checked" / "trec8"),
    ("dl21", 300, HERE / "results", HERE / "results", HERE / "results_checked" / "dl21"),
    ("dl21", 3000, HERE / "results_mtc3000" / "dl21", None, None),
    # the selector at 300 against MTC's median without the censoring (its budget 3000)
    ("dl21", "300 (MTC 3000)", HERE / "results_mtc3000" / "dl21", HERE / "results", HERE / "results_checked" / "dl21"),
]


def rows_of(folder: Path, name: str) -> pd.DataFrame | None:
    """The strategies' summary rows of one study (summarize.py's), or None if not run."""
    if (folder / "report.json").is_file():
        return collection_rows(folder, name).set_index("strategy")
    summary = folder / "summary.csv"  # run.sh's committed summary of all collections
    if summary.is_file() and folder.name == "results":
        table = pd.read_csv(summary)
        return table[table["collection"] == COLLECTIONS[name]].set_index("strategy")
    return None


def per_trial(folder: Path, strategy: str) -> pd.Series | None:
    """Judgments per trial of one strategy, when the study's trials.csv is there."""
    path = folder / "trials.csv"
    if not path.is_file():
        return None
    trials = pd.read_csv(path)
    return trials[trials["strategy"] == strategy].set_index("trial")["judgments"]


def main() -> None:
    lines = [
        "| collection | budget | MTC median (at budget) | half of MTC | selector before (at budget) "
        "| selector after (at budget) | W: MTC; selector before → after (95% interval) "
        "| right at ≥ 0.95: MTC; selector before → after | met after |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    out, paired = [], []
    for name, budget, mtc_folder, before_folder, after_folder in STUDIES:
        mtc = rows_of(mtc_folder, name)
        if mtc is not None and before_folder is None:  # MTC alone
            m = mtc.loc["mtc"]
            lines.append(f"| {COLLECTIONS[name]} | {budget} | {m['median_judgments']:g} ({m['stopped_at_budget']:.0%}) "
                         f"| {m['median_judgments'] / 2:g} | | | MTC {m['W']:+.2f} | MTC {m['accuracy_conf_95']:.1%} | |")  # fmt: skip
            continue
        before, after = rows_of(before_folder, name), rows_of(after_folder, name)
        if mtc is None or before is None or after is None:
            print(f"{COLLECTIONS[name]} at {budget}: not run yet, left out")
            continue
        mtc, old, new = mtc.loc["mtc"], before.loc["posterior"], after.loc["posterior"]
        half = mtc["median_judgments"] / 2
        met = (new["median_judgments"] <= half) and new["W"] >= 0 and new["accuracy_conf_95"] >= 0.95
        met = met and new["stopped_at_budget"] < 0.5  # a median at the budget is a lower bound
        verdict = "yes" if met else "no"
        if mtc["stopped_at_budget"] >= 0.5:
            verdict = "not measured: MTC's median is its budget"
        out.append({
            "collection": COLLECTIONS[name], "budget": budget, "mtc_median": mtc["median_judgments"],
            "mtc_at_budget": mtc["stopped_at_budget"], "half_mtc": half,
            "before_median": old["median_judgments"], "before_at_budget": old["stopped_at_budget"],
            "after_median": new["median_judgments"], "after_at_budget": new["stopped_at_budget"],
            "W_mtc": mtc["W"], "W_before": old["W"], "W_after": new["W"], "W_after_low": new["W_low"],
            "W_after_high": new["W_high"], "accuracy_mtc": mtc["accuracy_conf_95"],
            "accuracy_before": old["accuracy_conf_95"], "accuracy_after": new["accuracy_conf_95"],
            "share_95_after": new["share_conf_95"], "initial_right_after": new["initial_right_when_decided"],
            "met": verdict,
        })  # fmt: skip
        r = out[-1]
        lines.append(
            f"| {r['collection']} | {budget} | {r['mtc_median']:g} ({r['mtc_at_budget']:.0%}) | {half:g} "
            f"| {r['before_median']:g} ({r['before_at_budget']:.0%}) | {r['after_median']:g} ({r['after_at_budget']:.0%}) "
            f"| MTC {r['W_mtc']:+.2f}; {r['W_before']:+.2f} → {r['W_after']:+.2f} ({r['W_after_low']:+.2f}, {r['W_after_high']:+.2f}) "
            f"| MTC {r['accuracy_mtc']:.1%}; {r['accuracy_before']:.1%} → {r['accuracy_after']:.1%} | {verdict} |"
        )  # fmt: skip
        old_trials = per_trial(before_folder, "posterior")
        yardstick = HERE / "results" / f"yardstick_{name}.csv"  # mtc_yardstick.py's loops
        if old_trials is None and yardstick.is_file():  # run.sh's per-trial files are not kept
            old_trials = pd.read_csv(yardstick).set_index("trial")["posterior_judgments"]
        new_trials = per_trial(after_folder, "posterior")
        if old_trials is not None and new_trials is not None and isinstance(budget, int):
            both = pd.DataFrame({"before": old_trials, "after": new_trials}).dropna().astype(int)
            paired.append(
                f"{COLLECTIONS[name]}, budget {budget}: {len(both)} trials, fewer judgments in "
                f"{int((both.after < both.before).sum())}, more in {int((both.after > both.before).sum())}; "
                f"saved per trial: median {float(np.median(both.before - both.after)):g}, "
                f"total {int((both.before - both.after).sum())} of {int(both.before.sum())}. "
                + ", ".join(f"{t}: {b}→{a}" for t, b, a in both.itertuples() if a != b)
            )
    (HERE / "results_checked").mkdir(exist_ok=True)
    pd.DataFrame(out).to_csv(HERE / "results_checked" / "checks.csv", index=False, float_format="%.4g")
    print("\n".join(lines))
    print()
    print("\n".join(paired))


if __name__ == "__main__":
    main()
