"""The headline table of the held-out bayes-mc vs fusion-mc studies ``run.sh`` wrote.

Run from the repository root: ``python examples/bayes_calibration/summarize.py [OUT]``
(default ``examples/bayes_calibration/loco``). Reads each ``OUT/<collection>/``
(``summary.csv``, ``table2_bins.csv``, ``trials.csv`` or ``trials.csv.gz``, ``paired_tests.csv``) and writes
``OUT/headline.md``: per collection and strategy, W with its 95% interval, accuracy and
share of pairs stated at >= 0.95, the worst confidence bin's shortfall below its lower edge,
Kendall tau, and for bayes-mc the share of trials whose NUTS fit passed the convergence
checks (R-hat, bulk/tail ESS, no divergence; a failed fit is a ConvergenceWarning recorded
in its trial row's ``warning_messages`` and its trial is kept, not dropped), with the paired
W and tau differences on the same trials and judgments.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "calibration"))
from cross_collection import COLLECTIONS, worst_bin_shortfall  # noqa: E402

#: the start of the ConvergenceWarning the hierarchy raises when a fit fails its checks
NOT_CONVERGED = "bayes relevance model:"


def converged_share(trials: pd.DataFrame, strategy: str) -> tuple[int, int]:
    """(fits that passed the checks, fits) of ``strategy``'s trials."""
    rows = trials[trials["strategy"] == strategy]
    failed = rows["warning_messages"].fillna("").str.contains(NOT_CONVERGED, regex=False)
    return int((~failed).sum()), len(rows)


def read_trials(folder: Path) -> pd.DataFrame:
    """The study's ``trials.csv``; kept as ``trials.csv.gz`` (the committed copy, without the
    run list, which the seed regenerates), written here from a fresh study's ``trials.csv``."""
    fresh, kept = folder / "trials.csv", folder / "trials.csv.gz"
    if fresh.is_file():
        trials = pd.read_csv(fresh, dtype={"warning_messages": "string"})
        trials.drop(columns=["systems"], errors="ignore").to_csv(
            kept, index=False, compression={"method": "gzip", "mtime": 0}
        )
        return trials
    return pd.read_csv(kept, dtype={"warning_messages": "string"})


def collection_rows(folder: Path, name: str) -> list[dict]:
    summary = pd.read_csv(folder / "summary.csv").set_index("strategy")
    shortfall = worst_bin_shortfall(pd.read_csv(folder / "table2_bins.csv"))
    trials = read_trials(folder)
    paired = pd.read_csv(folder / "paired_tests.csv").set_index("outcome")
    rows = []
    for strategy, row in summary.iterrows():
        ok, n = converged_share(trials, strategy)
        rows.append(
            {
                "collection": name,
                "strategy": strategy,
                "trials": int(row["trials"]),
                "W": f"{row['w']:+.2f}",
                "W 95% CI": f"({row['w_low']:+.2f}, {row['w_high']:+.2f})",
                "acc >= .95": f"{row['accuracy_conf_95']:.1%}",
                "share >= .95": f"{row['share_conf_95']:.1%}",
                "worst bin below edge": f"{shortfall.get(strategy, float('nan')):+.3f}",
                "tau": f"{row['mean_tau']:.3f}",
                "converged": f"{ok}/{n}" if strategy.startswith("bayes") else "",
            }
        )
    bayes = next(r for r in rows if r["strategy"] == "bayes-mc")
    for outcome in ("w", "tau"):
        if outcome in paired.index:
            p = paired.loc[outcome]  # strategy_a minus strategy_b: said as bayes-mc minus fusion-mc
            sign = 1 if p["strategy_a"] == "bayes-mc" else -1
            bayes[f"paired {outcome}"] = f"{sign * p['mean_difference']:+.3f} (p {p['pvalue']:.2f})"
    return rows


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path(__file__).resolve().parent / "loco"
    rows = []
    for name in COLLECTIONS:
        if (out / name / "summary.csv").is_file():
            rows += collection_rows(out / name, name)
        else:
            print(f"no study in {out / name}", file=sys.stderr)
    if not rows:
        return 1
    table = pd.DataFrame(rows).fillna("")
    text = table.to_markdown(index=False, disable_numparse=True)
    (out / "headline.md").write_text(
        "bayes-mc (paired columns: bayes-mc minus fusion-mc on the same trials)\n\n" + text + "\n",
        encoding="utf-8",
    )
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
