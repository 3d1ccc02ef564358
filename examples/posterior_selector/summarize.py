"""The posterior selector against MTC on each collection: judgments, calibration, time.

Reads the ``relimpute calibrate`` folders ``run.sh`` writes (one per collection) and writes
``summary.csv`` (one row per collection and strategy), ``summary.md`` (the headline table),
``initial_pairs.csv`` (how far apart the initial pair truly is, by how each trial stopped: a
selector cannot decide a pair whose true ΔMAP is nearly 0 within a budget) and ``judgments.png`` (judgments per trial, MTC against the posterior selector).

    python examples/posterior_selector/summarize.py [RESULTS]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute._files import save_figure

COLLECTIONS = {"dl19": "DL 2019", "dl21": "DL 2021", "trec8": "TREC-8"}
#: where reweight.py's section of summary.md starts (kept when the table is rewritten)
MARKER = "## posterior, update="


def collection_rows(folder: Path, name: str) -> pd.DataFrame:
    """One row per strategy of one collection's study."""
    report = json.loads((folder / "report.json").read_text())
    trials = pd.read_csv(folder / "trials.csv")
    summary = pd.DataFrame(report["summary"]["raw"]).set_index("strategy")
    pairs = pd.read_csv(folder / "pairs.csv.gz")
    rows = []
    for strategy, part in trials.groupby("strategy", sort=False):
        initial = _initial_pair_calls(pairs[pairs["strategy"] == strategy], part)
        s = summary.loc[strategy]
        rows.append({
            "collection": COLLECTIONS.get(name, name),
            "strategy": strategy,
            "trials": len(part),
            "median_judgments": float(part["judgments"].median()),
            "mean_judgments": float(part["judgments"].mean()),
            "stopped_at_budget": float((part["stopped_because"] == "budget").mean()),
            "initial_decided": float((part["stopped_because"] == "confidence").mean()),
            "initial_right_when_decided": initial,
            "W": _number(s["w"]),
            "W_low": _number(s["w_low"]),
            "W_high": _number(s["w_high"]),
            "share_conf_95": _number(s["share_conf_95"]),
            "accuracy_conf_95": _number(s["accuracy_conf_95"]),
            "mean_tau": _number(s["mean_tau"]),
            "median_seconds": float(part["seconds"].median()),
        })
    return pd.DataFrame(rows)


def _number(value) -> float:
    """A report.json number; NaN where the report has none (null: no pair in that bin)."""
    return float("nan") if value is None else float(value)


def _initial_pair_calls(pairs: pd.DataFrame, trials: pd.DataFrame) -> float:
    """Share of the trials stopped at the confidence whose initial pair is called right."""
    decided = trials[trials["stopped_because"] == "confidence"]
    right = []
    for _, t in decided.iterrows():
        a, b = t["initial"].split(",")
        row = pairs[(pairs["trial"] == t["trial"]) & pairs["system_a"].isin([a, b]) & pairs["system_b"].isin([a, b])]
        if len(row) and row["true_delta_map"].iloc[0] != 0:
            r = row.iloc[0]
            right.append((r["p_a_better"] > 0.5) == (r["true_delta_map"] > 0))
    return float(np.mean(right)) if right else float("nan")


def initial_pair_rows(folder: Path, name: str) -> pd.DataFrame:
    """Per strategy and stop reason: trials, and the median and quartiles of the initial
    pair's true |ΔMAP| (official qrels, runs cut at the study's depth)."""
    trials = pd.read_csv(folder / "trials.csv")
    pairs = pd.read_csv(folder / "pairs.csv.gz")
    initial = pairs[pairs["n_initial"] == 2].drop_duplicates("trial").set_index("trial")["true_delta_map"]
    trials = trials.assign(true_abs_delta_map=trials["trial"].map(initial).abs())
    rows = []
    for (strategy, reason), part in trials.groupby(["strategy", "stopped_because"], sort=False):
        d = part["true_abs_delta_map"]
        rows.append({
            "collection": COLLECTIONS.get(name, name), "strategy": strategy, "stopped_because": reason,
            "trials": len(part), "median_judgments": float(part["judgments"].median()),
            "true_abs_delta_map_median": float(d.median()), "true_abs_delta_map_q25": float(d.quantile(0.25)),
            "true_abs_delta_map_q75": float(d.quantile(0.75)), "below_0.01": int((d < 0.01).sum()),
        })
    return pd.DataFrame(rows)


def plot(trials: dict[str, pd.DataFrame], path: Path) -> None:
    """Judgments per trial: MTC (x) against the posterior selector (y), one panel per collection."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(trials), figsize=(4 * len(trials), 3.8), squeeze=False)
    for ax, (name, frame) in zip(axes[0], trials.items()):
        wide = frame.pivot(index="trial", columns="strategy", values="judgments")
        if not {"mtc", "posterior"} <= set(wide.columns):  # a study of the selector alone
            ax.set_visible(False)
            continue
        x, y = wide["mtc"] + 1, wide["posterior"] + 1
        top = float(max(x.max(), y.max())) * 1.5
        ax.plot([1, top], [1, top], color="grey", lw=0.8, label="equal")
        ax.plot([1, top], [0.5, top / 2], color="grey", lw=0.8, ls="--", label="half of MTC")
        ax.scatter(x, y, s=14)
        ax.set(xscale="log", yscale="log", title=COLLECTIONS.get(name, name),
               xlabel="MTC judgments + 1", ylabel="posterior selector judgments + 1")
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    save_figure(fig, path, dpi=120, colors=256)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    results = Path(argv[0]) if argv else Path(__file__).resolve().parent / "results"
    frames, initial, trials = [], [], {}
    for name in COLLECTIONS:
        folder = results / name
        if not (folder / "report.json").is_file():
            print(f"{folder}: no finished study, left out", file=sys.stderr)
            continue
        frames.append(collection_rows(folder, name))
        initial.append(initial_pair_rows(folder, name))
        trials[name] = pd.read_csv(folder / "trials.csv")
    if not frames:
        raise SystemExit(f"no study under {results}: run examples/posterior_selector/run.sh first")
    table = pd.concat(frames, ignore_index=True)
    table.to_csv(results / "summary.csv", index=False, float_format="%.4g")
    shown = table[["collection", "strategy", "trials", "median_judgments", "mean_judgments", "stopped_at_budget",
                   "W", "accuracy_conf_95", "share_conf_95", "mean_tau", "median_seconds"]]
    old = (results / "summary.md").read_text() if (results / "summary.md").is_file() else ""
    kept = old[old.index(MARKER) - 2:] if MARKER in old else ""  # reweight.py's section
    (results / "summary.md").write_text(shown.to_markdown(index=False, floatfmt=".3g") + "\n" + kept)
    hard = pd.concat(initial, ignore_index=True)
    hard.to_csv(results / "initial_pairs.csv", index=False, float_format="%.4g")
    plot(trials, results / "judgments.png")
    print(shown.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print(hard.to_string(index=False, float_format=lambda v: f"{v:.3g}"))


if __name__ == "__main__":
    main()
