"""The stopping rules replayed on study.py's looks: coverage at the stop, judgments, and MTC's
and the posterior selector's judgments on the same pairs.

MTC's and the posterior selector's rows come from one run per pair: they decide on their
model's confidence, which is not a coverage guarantee. A look where some topic has no judged
document cannot stop judging (its ΔAP is the model's prediction alone, with no variance
estimate), as ``judge --looks`` refuses it too.

    python examples/guided_stopping/summarize.py   # results/summary.md, summary.csv, stops.png
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE.parents[1] / "src"))

QUARTERS = (0.25, 0.5, 0.75, 1.0)
COLLECTIONS = {"dl19": "DL 2019", "dl19_b1000": "DL 2019, budget 1000", "synthetic": "synthetic",
               "close": "synthetic, closest pairs"}
#: the same looks read by the survey estimator before its AP bias correction (merge 091a3fb)
COLLECTIONS.update({f"{k}_before": f"{v}, earlier estimator" for k, v in list(COLLECTIONS.items())})


def rules():
    """name -> (looks, z): each rule's fractions and the half-width of its intervals in se."""
    from relimpute.selection.looks import Looks

    z95 = float(norm.ppf(0.975))
    return {
        "fixed: the whole design, 95%": ((1.0,), z95),
        "each look alone: 25%, 95%": ((0.25,), z95),
        "naive: 4 looks, each 95%": (QUARTERS, z95),
        "Bonferroni: 4 looks, each 98.75%": (QUARTERS, Looks(4).z),
    }


def replay(looks: pd.DataFrame, at: tuple, z: float) -> pd.DataFrame:
    """One row per (trial, draw): the look the rule stops at and its interval."""
    rows = []
    for (trial, draw), one in looks.groupby(["trial", "draw"], sort=True):
        one = one.set_index("fraction")
        for f in at:
            row = one.loc[f]
            low, high = row["estimate"] - z * row["se"], row["estimate"] + z * row["se"]
            usable = row["empty_topics"] == 0 and row["se"] > 0
            if (usable and (low > 0 or high < 0)) or f == at[-1]:
                break
        truth = row["true_delta"]
        decided = bool(usable and (low > 0 or high < 0))
        rows.append({"trial": trial, "draw": draw, "fraction": f, "judged": row["judged"],
                     "covered": low <= truth <= high, "decided": decided,
                     "right": decided and np.sign(row["estimate"]) == np.sign(truth)})  # fmt: skip
    return pd.DataFrame(rows)


def summary() -> pd.DataFrame:
    rows = []
    for name, label in COLLECTIONS.items():
        path = RESULTS / f"looks_{name}.csv"
        if not path.exists():
            continue
        looks = pd.read_csv(path)
        for rule, (at, z) in rules().items():
            stops = replay(looks, at, z)
            n = len(stops)
            cover = stops["covered"].mean()
            rows.append({
                "collection": label, "rule": rule, "trials": n, "pairs": looks["trial"].nunique(),
                "coverage": cover, "coverage_mc_se": np.sqrt(cover * (1 - cover) / n),
                "decided": stops["decided"].mean(),
                "right_when_decided": stops.loc[stops["decided"], "right"].mean(),
                "median_judgments": stops["judged"].median(),
                "mean_judgments": stops["judged"].mean(),
            })  # fmt: skip
    return pd.DataFrame(rows)


def selectors() -> pd.DataFrame:
    """MTC's and the posterior selector's judgments to a 95% call on the same pairs (budget
    300): DL 2019 from examples/posterior_selector, the synthetic pairs from
    selector_judgments.py (right: the sign of study.py's ΔMAP of the pair's universe)."""
    frames = []
    yard = RESULTS.parent.parent / "posterior_selector" / "results" / "yardstick_dl19.csv"
    if yard.exists():
        wide = pd.read_csv(yard)
        for key in ("mtc", "posterior"):
            frames.append(pd.DataFrame({
                "collection": "DL 2019", "strategy": key, "judgments": wide[f"{key}_judgments"],
                "decided": wide[f"{key}_stopped"] == "confidence",
                "right": wide[f"{key}_right"].astype(bool)}))  # fmt: skip
    ours = RESULTS / "selectors_synthetic.csv"
    if ours.exists() and (RESULTS / "looks_synthetic.csv").exists():
        runs = pd.read_csv(ours)
        truth = pd.read_csv(RESULTS / "looks_synthetic.csv").groupby("trial")["true_delta"].first()
        called = np.where(runs["p_a_better"] > 0.5, 1.0, -1.0)
        frames.append(pd.DataFrame({
            "collection": "synthetic", "strategy": runs["strategy"], "judgments": runs["judgments"],
            "decided": runs["stopped"] == "confidence",
            "right": called == np.sign(truth.loc[runs["trial"]].to_numpy())}))  # fmt: skip
    rows = []
    labels = {"mtc": "MTC (p = 1/2), 95% confidence", "posterior": "posterior selector, 95%"}
    for (label, key), part in pd.concat(frames).groupby(["collection", "strategy"], sort=False):
        rows.append({"collection": label, "rule": labels[key], "trials": len(part),
                     "pairs": len(part), "decided": part["decided"].mean(),
                     "right_when_decided": part.loc[part["decided"], "right"].mean(),
                     "median_judgments": part["judgments"].median(),
                     "mean_judgments": part["judgments"].mean()})  # fmt: skip
    return pd.DataFrame(rows)


def figure(table: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ours = table[table["coverage"].notna()]
    labels = list(ours["collection"].unique())
    cols = (len(labels) + 1) // 2
    fig, axes = plt.subplots(2, cols, figsize=(3.2 * cols + 2, 6), sharey=True, squeeze=False)
    for ax, label in zip(axes.T.ravel(), labels):
        part = ours[ours["collection"] == label]
        y = np.arange(len(part))
        ax.errorbar(part["coverage"], y, xerr=2 * part["coverage_mc_se"], fmt="o")
        ax.axvline(0.95, ls="--", color="grey")
        ax.set_yticks(y, part["rule"])
        ax.set_title(label, fontsize=8)
        ax.set_xlabel("coverage of ΔMAP at the stop")
    fig.tight_layout()
    from relimpute._files import save_figure

    save_figure(fig, path, dpi=120, colors=64)  # a plot's few colours: a third of the bytes


def main() -> None:
    table = pd.concat([summary(), selectors()], ignore_index=True)
    table.to_csv(RESULTS / "summary.csv", index=False, float_format="%.4g")
    (RESULTS / "summary.md").write_text(table.to_markdown(index=False, floatfmt=".3g") + "\n")
    figure(table, RESULTS / "stops.png")
    print(table.to_markdown(index=False, floatfmt=".3g"))


if __name__ == "__main__":
    main()
