"""Reweighting between refits against today's selector and MTC, paired trial by trial.

Reads the studies ``variants.py --update reweight --min-ess X --strategies posterior --out
results_reweight/essXX`` writes (run.sh's protocol, trials and random streams, budget 300),
and pairs each trial with MTC's and with today's selector (``check_every=1``, refitting every
10 judgments). MTC's and today's selector's per-trial judgments come from
``results/yardstick_NAME.csv`` (mtc_yardstick.py: the judging loops of run.sh's study), with
the trials the checks between refits moved (the README's "Checking after every judgment":
their per-trial files were not kept), and their summary rows from ``results_checked/checks.csv``.
The setting of each collection is chosen leave-one-collection-out: among the settings whose
W ≥ 0 and accuracy at ≥ 0.95 ≥ 95% hold on every other measured collection, the one with the
fewest judgments over them (median per collection, summed). Writes
``results_reweight/reweight.csv`` and prints the tables of the README.

    python examples/posterior_selector/reweight.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from summarize import COLLECTIONS, MARKER, collection_rows

HERE = Path(__file__).resolve().parent
OUT = HERE / "results_reweight"
#: trials whose judgments the checks between refits changed: {collection: {trial: judgments}}
#: (README, "Checking after every judgment"; the yardstick's loops check at refits only)
CHECKED = {"dl19": {5: 32, 7: 102, 12: 82}, "trec8": {10: 259, 19: 25}}
#: MTC's median judgments without the budget's censoring (README: DL 2021 at a budget of 3000)
MTC_MEDIAN = {"dl21": 602.0}
#: the heading of the reweighting selector's section of results/summary.md
HEADING = MARKER + ('"reweight" (min_ess: reweight.csv\'s chosen setting; '
                    "examples/posterior_selector/reweight.py)")


def today(name: str) -> pd.DataFrame | None:
    """Per trial: MTC's judgments and today's selector's (check_every=1), or None."""
    path = HERE / "results" / f"yardstick_{name}.csv"
    if not path.is_file():
        return None
    frame = pd.read_csv(path).set_index("trial")
    out = frame[["true_delta_map", "mtc_judgments"]].copy()
    out["today_judgments"] = frame["posterior_judgments"]
    for trial, judgments in CHECKED.get(name, {}).items():
        out.loc[trial, "today_judgments"] = judgments
    return out


def settings() -> list[Path]:
    return sorted(p for p in OUT.iterdir() if p.is_dir()) if OUT.is_dir() else []


def main() -> None:
    checks = pd.read_csv(HERE / "results_checked" / "checks.csv")
    checks = checks[checks["budget"].astype(str) == "300"].set_index("collection")
    rows, paired, per_trial = [], [], {}
    for setting in settings():
        for name in COLLECTIONS:
            folder = setting / name
            if not (folder / "report.json").is_file():
                continue
            summary = collection_rows(folder, name).set_index("strategy").loc["posterior"]
            trials = pd.read_csv(folder / "trials.csv").set_index("trial")["judgments"]
            base = checks.loc[COLLECTIONS[name]]
            mtc_median = MTC_MEDIAN.get(name, float(base["mtc_median"]))
            row = {
                "setting": setting.name, "collection": COLLECTIONS[name], "trials": len(trials),
                "median": float(trials.median()), "at_budget": summary["stopped_at_budget"],
                "W": summary["W"], "W_low": summary["W_low"], "W_high": summary["W_high"],
                "accuracy_95": summary["accuracy_conf_95"], "share_95": summary["share_conf_95"],
                "initial_right": summary["initial_right_when_decided"],
                "median_seconds": summary["median_seconds"], "mtc_median": mtc_median,
                "half_mtc": mtc_median / 2, "today_median": float(base["after_median"]),
                "today_W": float(base["W_after"]), "today_accuracy_95": float(base["accuracy_after"]),
            }  # fmt: skip
            row["met"] = bool(
                row["median"] <= row["half_mtc"] and row["W"] >= 0 and row["accuracy_95"] >= 0.95
                and row["at_budget"] < 0.5
            )  # fmt: skip
            rows.append(row)
            pair = today(name)
            if pair is not None:
                both = pair.join(trials.rename("reweight"), how="inner")
                per_trial.setdefault(name, both.drop(columns="reweight"))[setting.name] = both["reweight"]
                diff = both["reweight"] - both["today_judgments"]
                paired.append(
                    f"{setting.name}, {COLLECTIONS[name]}: {len(both)} trials; against today's selector "
                    f"fewer judgments in {int((diff < 0).sum())}, more in {int((diff > 0).sum())} "
                    f"(total {int(both['today_judgments'].sum())} → {int(both['reweight'].sum())}); "
                    f"at most half of MTC's in {int((both['reweight'] <= both['mtc_judgments'] / 2).sum())}. "
                    + ", ".join(f"{t}: {a}→{b}" for t, a, b in
                                both[["today_judgments", "reweight"]].itertuples() if a != b)
                )  # fmt: skip
    if not rows:
        print("no reweighting study found under", OUT)
        return
    table = pd.DataFrame(rows)
    picks = {c: chosen(table, c) for c in table["collection"].unique()}
    table["chosen"] = [r.setting in picks[r.collection] for r in table.itertuples()]
    table["tied"] = [len(picks[r.collection]) > 1 for r in table.itertuples()]
    table.to_csv(OUT / "reweight.csv", index=False, float_format="%.4g")
    write_summary(table[table["chosen"]])
    lines = [
        "| collection | setting | median judgments (at budget) | half of MTC | today's selector | W (95% interval) "
        "| right at ≥ 0.95 | initial pair right | chosen held-out | target |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table.itertuples():
        lines.append(
            f"| {r.collection} | {r.setting} | {r.median:g} ({r.at_budget:.0%}) | {r.half_mtc:g} | {r.today_median:g} "
            f"| {r.W:+.2f} ({r.W_low:+.2f}, {r.W_high:+.2f}) | {r.accuracy_95:.1%} | {r.initial_right:.0%} "
            f"| {('yes, tied' if r.tied else 'yes') if r.chosen else ''} | {'met' if r.met else 'not met'} |"
        )  # fmt: skip
    print("\n".join(lines))
    print()
    print("\n".join(paired))
    for name, frame in per_trial.items():
        print(f"\n{COLLECTIONS[name]}, judgments per trial:\n")
        shown = frame.rename(columns={"true_delta_map": "true ΔMAP", "mtc_judgments": "MTC",
                                      "today_judgments": "today"})  # fmt: skip
        shown["true ΔMAP"] = shown["true ΔMAP"].map("{:+.3f}".format)
        print(shown.astype({c: "Int64" for c in shown.columns if c != "true ΔMAP"}).to_markdown())


def write_summary(chosen_rows: pd.DataFrame) -> None:
    """``results/summary.md`` with a section for the reweighting selector at its held-out
    setting (replacing the section an earlier run wrote; summarize.py keeps it)."""
    path = HERE / "results" / "summary.md"
    text = path.read_text().split(MARKER)[0].rstrip("\n") if path.is_file() else ""
    shown = chosen_rows[["collection", "setting", "trials", "median", "at_budget", "W", "accuracy_95",
                         "share_95", "median_seconds"]].rename(columns={"median": "median_judgments",
                         "at_budget": "stopped_at_budget", "accuracy_95": "accuracy_conf_95",
                         "share_95": "share_conf_95"})  # fmt: skip
    path.write_text(f"{text}\n\n{HEADING}\n\n" + shown.to_markdown(index=False, floatfmt=".3g") + "\n")


def chosen(table: pd.DataFrame, collection: str) -> list[str]:
    """The settings chosen without ``collection`` (the module docstring), on the other
    collections measured with every setting: several when they tie; none if none holds."""
    n_settings = table["setting"].nunique()
    if n_settings == 1:  # one setting, fixed before any study: nothing chosen on data
        return [str(table["setting"].iloc[0])]
    complete = table.groupby("collection")["setting"].nunique() == n_settings
    others = table[table["collection"].isin(complete[complete].index) & (table["collection"] != collection)]
    totals = {}
    for setting, part in others.groupby("setting"):
        if (part["W"] < 0).any() or (part["accuracy_95"] < 0.95).any():
            continue
        totals[setting] = float(part["median"].sum())
    best = min(totals.values(), default=None)
    return [s for s, total in totals.items() if total == best]


if __name__ == "__main__":
    main()
