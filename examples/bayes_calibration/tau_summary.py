"""``tau_refit.py``'s rows as tables: τ by estimator, paired, and where the discordant pairs lie.

    python examples/bayes_calibration/tau_summary.py examples/bayes_calibration/tau_dl19/refits.csv.gz

Only trials with both strategies' rows count. Discordant pairs (E[MAP] orders them against the
full-qrels MAP) are split by whether one of the two runs is an initial one (the runs MTC judged
for: the first two of the trial's runs, which the rows keep first).
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
from scipy import stats

PAIR = ("fusion-mc", "bayes-mc")


def values(text: str) -> np.ndarray:
    return np.array([float(x) for x in text.split(",")])


def discordant(row: pd.Series, key: str) -> dict[str, int]:
    """Pairs ordered wrongly by ``map_<key>``: initial against other runs, and the rest."""
    truth, est = values(row["map_true"]), values(row[f"map_{key}"])
    out = {"initial": 0, "other": 0}
    for a in range(len(truth)):
        for b in range(a + 1, len(truth)):
            if (truth[a] - truth[b]) * (est[a] - est[b]) < 0:
                out["initial" if a < 2 <= b else "other"] += 1
    return out


def tau_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean τ per estimator and strategy; ``bayes-mc`` minus ``fusion-mc`` on the same trials."""
    table = []
    for key in [c[4:] for c in rows.columns if c.startswith("tau_")]:
        wide = rows.pivot(index="trial", columns="strategy", values=f"tau_{key}")
        line = {"estimator": key}
        for s in PAIR:
            if s in wide and wide[s].notna().any():
                line[f"{s} τ"] = wide[s].mean()
                line[f"{s} n"] = int(wide[s].notna().sum())
        if all(s in wide for s in PAIR):
            d = (wide[PAIR[1]] - wide[PAIR[0]]).dropna()
            if len(d) > 1:
                line["paired"], line["p"] = d.mean(), stats.ttest_1samp(d, 0).pvalue
                line["worse"], line["better"] = int((d < -1e-9).sum()), int((d > 1e-9).sum())
        if key == "reseed":  # the draw noise: τ over two disjoint sets of posterior draws
            for s in PAIR:
                ex = rows.pivot(index="trial", columns="strategy", values="tau_exact")[s]
                gap = (wide[s] - ex).dropna() if s in wide else pd.Series(dtype=float)
                if len(gap):
                    line[f"{s} draw-noise sd"] = float(np.sqrt((gap**2).mean() / 2))
        table.append(line)
    return pd.DataFrame(table)


def pair_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean discordant pairs per trial, by estimator and strategy."""
    out = []
    for key in ("study", "exact", "fixed"):
        for _, row in rows.iterrows():
            if isinstance(row.get(f"map_{key}"), str):
                out.append({"estimator": key, "strategy": row["strategy"], **discordant(row, key)})
    return pd.DataFrame(out).groupby(["estimator", "strategy"]).mean().round(2)


def main(paths) -> int:
    rows = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
    both = rows.groupby("trial")["strategy"].nunique() == 2
    rows = rows[rows["trial"].isin(both[both].index)]
    print(f"{rows['trial'].nunique()} trials\n")
    print(tau_table(rows).round(4).to_markdown(index=False), "\n")
    print(pair_table(rows).to_markdown(), "\n")
    spread = rows[rows["strategy"] == "bayes-mc"]
    cols = [c for c in spread.columns if c.startswith("sigma_")]
    cols += ["divergences", "rhat_max"]
    print(spread[cols].describe().round(3).to_markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
