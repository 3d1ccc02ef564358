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
fewest judgments over them (median per collection, summed): between the refit schedules
(``SCHEDULES``, column ``chosen``) and, by the same rule, between the schedule on the ESS
without and with the guard ``confirm`` (``GUARDS``, column ``chosen_guard``). Writes
``results_reweight/reweight.csv`` (a setting whose study folder is absent keeps its committed
rows: the folders are regenerated, not committed) and prints the tables of the README.

A study run with ``--confirm`` logs each confirming refit (``confirms.jsonl``); before a
trial's first confirm its loop is that of the same setting without ``confirm``, which stops
there. Paired trial by trial, ``results_reweight/confirm_trials.csv`` holds both (and
``confirms.csv.gz`` every confirm), per setting: the trial's
judgments and call with the guard, and where the selector without it stopped and which way
its check called the pair (its stop without a confirm is the same as with the guard). A call
is the side the stopping confidence took where the log has it (a check or a confirming refit),
else that of the model fitted at the end of the trial (summarize.py's). With ``--jobs 1``,
variants.py logs each trial's CPU seconds (``cpu.jsonl``; column ``cpu_s``).

The levers on top of the guard (``LEVERS``: ``--choose-from predictive``, ``--n-draws 1000``,
and ``--choose-from draws``, which separates the draws' mean at refits from its weighting) are
paired with ``confirm`` on the trials both ran: ``results_reweight/levers.csv`` holds, for
each and for ``confirm`` on the same trials, the median judgments, the pairs decided within
the budget, the wrong calls, W with its 95% interval and the share right at ≥ 0.95 (the
report's, recomputed on those trials) and the median CPU seconds per trial.

    python examples/posterior_selector/reweight.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from summarize import COLLECTIONS, MARKER, collection_rows

HERE = Path(__file__).resolve().parent
OUT = HERE / "results_reweight"
#: every confirming refit of the --confirm studies, one row each (a log: gzipped)
CONFIRMS = "confirms.csv.gz"
#: trials whose judgments the checks between refits changed: {collection: {trial: judgments}}
#: (README, "Checking after every judgment"; the yardstick's loops check at refits only)
CHECKED = {"dl19": {5: 32, 7: 102, 12: 82}, "trec8": {10: 259, 19: 25}}
#: MTC's median judgments without the budget's censoring (README: DL 2021 at a budget of 3000)
MTC_MEDIAN = {"dl21": 602.0}
#: the refit schedules chosen between (refits on the ESS, every 10), as before the guard
SCHEDULES = ("ess50", "every10")
#: refits on the ESS without and with ``confirm``: chosen between by the same rule
GUARDS = ("ess50", "confirm")
#: on top of ``confirm``: the choice from the weighted draws' p, 1000 draws per refit, and the
#: choice from the draws' mean at refits, unweighted between them
LEVERS = ("predictive", "draws1000", "mean_at_refits")
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
                "median_seconds": summary["median_seconds"], "median_cpu_s": trial_cpu(folder).median(),
                "mtc_median": mtc_median,
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
    table = committed_rows(pd.DataFrame(rows))
    schedules = table[table["setting"].isin(SCHEDULES)]
    picks = {c: chosen(schedules, c) for c in table["collection"].unique()}
    table["chosen"] = [r.setting in picks[r.collection] for r in table.itertuples()]
    table["tied"] = [r.setting in SCHEDULES and len(picks[r.collection]) > 1 for r in table.itertuples()]
    guards = table[table["setting"].isin(GUARDS)]
    if guards["setting"].nunique() == len(GUARDS):
        guard_picks = {c: chosen(guards, c) for c in table["collection"].unique()}
        table["chosen_guard"] = [
            r.setting in GUARDS and r.setting in guard_picks[r.collection] for r in table.itertuples()
        ]  # fmt: skip
    table.to_csv(OUT / "reweight.csv", index=False, float_format="%.4g")
    write_summary(table[table["chosen"]])
    lines = [
        "| collection | setting | median judgments (at budget) | half of MTC | today's selector | W (95% interval) "
        "| right at ≥ 0.95 | initial pair right | chosen held-out | guard chosen held-out | target |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table.itertuples():
        lines.append(
            f"| {r.collection} | {r.setting} | {r.median:g} ({r.at_budget:.0%}) | {r.half_mtc:g} | {r.today_median:g} "
            f"| {r.W:+.2f} ({r.W_low:+.2f}, {r.W_high:+.2f}) | {r.accuracy_95:.1%} | {r.initial_right:.0%} "
            f"| {('yes, tied' if r.tied else 'yes') if r.chosen else ''} "
            f"| {'yes' if getattr(r, 'chosen_guard', False) else ''} | {'met' if r.met else 'not met'} |"
        )  # fmt: skip
    print("\n".join(lines))
    print()
    print("\n".join(paired))
    confirm_rows = [confirm_trials(setting / name, name) for setting in settings() for name in COLLECTIONS]
    confirm_rows = [frame for frame in confirm_rows if frame is not None]
    if confirm_rows:
        print(confirm_table(pd.concat(confirm_rows, ignore_index=True)))
    levers = lever_rows()
    if levers is not None:
        print(lever_table(levers))
    for name, frame in per_trial.items():
        print(f"\n{COLLECTIONS[name]}, judgments per trial:\n")
        shown = frame.rename(columns={"true_delta_map": "true ΔMAP", "mtc_judgments": "MTC",
                                      "today_judgments": "today"})  # fmt: skip
        shown["true ΔMAP"] = shown["true ΔMAP"].map("{:+.3f}".format)
        print(shown.astype({c: "Int64" for c in shown.columns if c != "true ΔMAP"}).to_markdown())


def committed_rows(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with the rows of ``reweight.csv`` whose (setting, collection) it lacks."""
    path = OUT / "reweight.csv"
    if not path.is_file():
        return table
    old = pd.read_csv(path).drop(columns=["chosen", "tied", "chosen_guard"], errors="ignore")
    have = set(zip(table["setting"], table["collection"]))
    kept = old[[(s, c) not in have for s, c in zip(old["setting"], old["collection"])]]
    return pd.concat([kept, table], ignore_index=True).sort_values(["setting", "collection"], ignore_index=True)


def confirm_trials(folder: Path, name: str) -> pd.DataFrame | None:
    """Per trial of a ``--confirm`` study: the guard's judgments and stop, the confirms (failed:
    the refit below 0.95), and the stop and call of the same setting without the guard."""
    log = folder / "confirms.jsonl"
    if not (folder / "trials.csv").is_file() or not log.is_file():
        return None
    confirms: dict[tuple[str, str], dict[int, dict]] = {}
    for line in log.read_text().splitlines():  # a resumed trial logs its confirms again: dedupe
        entry = json.loads(line)
        confirms.setdefault(tuple(entry["systems"]), {})[entry["judgments"]] = entry
    trials = pd.read_csv(folder / "trials.csv")
    pairs = pd.read_csv(folder / "pairs.csv.gz")
    cpu = trial_cpu(folder)
    setting = folder.parent.name
    rows, log_rows = [], []
    for t in trials.itertuples():
        a, b = t.initial.split(",")
        pair = pairs[(pairs["trial"] == t.trial) & (pairs["system_a"] == a) & (pairs["system_b"] == b)]
        if len(pair) != 1:
            pair = pairs[(pairs["trial"] == t.trial) & (pairs["system_a"] == b) & (pairs["system_b"] == a)]
            truth, p_end = -pair["true_delta_map"].iloc[0], 1 - pair["p_a_better"].iloc[0]
        else:
            truth, p_end = pair["true_delta_map"].iloc[0], pair["p_a_better"].iloc[0]
        mine = [c for j, c in sorted(confirms.get((a, b), {}).items()) if j <= t.judgments]
        failed = sum(max(c["refit"][0], 1 - c["refit"][0]) < 0.95 for c in mine)
        if t.stopped_because == "confidence" and mine and mine[-1]["judgments"] == t.judgments:
            p_end = mine[-1]["refit"][0]  # stopped on a confirm: the side its refit called
        row = {"setting": setting, "collection": COLLECTIONS[name], "trial": t.trial, "system_a": a,
               "system_b": b, "true_delta_map": truth, "judgments": t.judgments, "stopped": t.stopped_because,
               "right": (p_end > 0.5) == (truth > 0), "confirms": len(mine), "failed_confirms": failed,
               "cpu_s": cpu.get(t.trial, np.nan)}  # fmt: skip
        if mine:  # without the guard: stopped on the first check that reached 0.95
            first = mine[0]
            row.update(without_judgments=first["judgments"], without_stopped="confidence",
                       without_right=(first["check"][0] > 0.5) == (truth > 0))  # fmt: skip
        else:
            row.update(without_judgments=t.judgments, without_stopped=t.stopped_because,
                       without_right=row["right"])  # fmt: skip
        rows.append(row)
        for c in mine:  # each confirm: the check's and the refit's confidence in the check's call
            side = c["check"][0] > 0.5
            log_rows.append({"setting": setting, "collection": COLLECTIONS[name], "trial": t.trial,
                             "judgments": c["judgments"],
                             "check": c["check"][0] if side else 1 - c["check"][0],
                             "refit": c["refit"][0] if side else 1 - c["refit"][0]})  # fmt: skip
    frame = pd.DataFrame(rows)
    for out, new in ((OUT / "confirm_trials.csv", frame), (OUT / CONFIRMS, pd.DataFrame(log_rows))):
        old = read_logged(out) if out.is_file() else new.iloc[:0]
        old = old[(old["setting"] != setting) | (old["collection"] != COLLECTIONS[name])]
        pd.concat([old, new], ignore_index=True).to_csv(
            out, index=False, float_format="%.4g", compression={"method": "infer", "mtime": 0}
        )  # (gzip without a time stamp: a rerun with the same rows writes the same bytes)
    return frame


def read_logged(path: Path) -> pd.DataFrame:
    """``confirm_trials.csv`` or ``confirms.csv.gz``; rows written before the column ``setting``
    are ``confirm``'s (the only study with the guard then)."""
    frame = pd.read_csv(path)
    if "setting" not in frame:
        frame.insert(0, "setting", "confirm")
    return frame


def trial_cpu(folder: Path) -> pd.Series:
    """Per trial the CPU seconds variants.py logged (``cpu.jsonl``; a trial run again: its
    last line), empty when not logged."""
    path = folder / "cpu.jsonl"
    if not path.is_file():
        return pd.Series(dtype=float)
    cpu = {}
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        cpu[entry["trial"]] = entry["cpu_s"]
    return pd.Series(cpu, dtype=float)


def lever_rows() -> pd.DataFrame | None:
    """Each lever of ``LEVERS`` and ``confirm`` on the trials both ran (the module docstring),
    for every collection where both folders hold a study; None when there is none. Written to
    ``results_reweight/levers.csv`` (a lever whose folder is absent keeps its committed rows)."""
    from relimpute.calibration import CalibrationReport
    from relimpute.calibration.study import CalibrationStudy, read_study

    logged = read_logged(OUT / "confirm_trials.csv")
    rows = []
    for lever in LEVERS:
        for name in COLLECTIONS:
            folders = {s: OUT / s / name for s in ("confirm", lever)}
            if not all((f / "report.json").is_file() for f in folders.values()):
                continue
            studies = {s: read_study(f) for s, f in folders.items()}
            common = set(studies["confirm"].trials["trial"]) & set(studies[lever].trials["trial"])
            for setting, study in studies.items():
                part = CalibrationStudy(pairs=study.pairs[study.pairs["trial"].isin(common)],
                                        trials=study.trials[study.trials["trial"].isin(common)],
                                        config=study.config)  # fmt: skip
                summary = CalibrationReport.from_study(part, cap=0.95).summary["raw"].iloc[0]
                per_trial = logged[(logged["setting"] == setting) & (logged["collection"] == COLLECTIONS[name])
                                   & logged["trial"].isin(common)].set_index("trial")  # fmt: skip
                if setting == "confirm":
                    paired = per_trial["judgments"]
                diff = per_trial["judgments"] - paired.reindex(per_trial.index)
                decided = per_trial["stopped"] == "confidence"
                rows.append({
                    "lever": lever, "setting": setting, "collection": COLLECTIONS[name], "trials": len(common),
                    "median": float(per_trial["judgments"].median()), "total": int(per_trial["judgments"].sum()),
                    "fewer_than_confirm": int((diff < 0).sum()), "more_than_confirm": int((diff > 0).sum()),
                    "decided": int(decided.sum()),
                    "wrong": int((decided & ~per_trial["right"].astype(bool)).sum()),
                    "W": summary["w"], "W_low": summary["w_low"], "W_high": summary["w_high"],
                    "accuracy_95": summary["accuracy_conf_95"], "median_cpu_s": float(per_trial["cpu_s"].median()),
                })  # fmt: skip
    path = OUT / "levers.csv"
    table = pd.DataFrame(rows)
    if path.is_file():
        old = pd.read_csv(path)
        have = set(zip(table.get("lever", []), table.get("collection", [])))
        old = old[[(lv, c) not in have for lv, c in zip(old["lever"], old["collection"])]]
        table = pd.concat([old, table], ignore_index=True)
    if table.empty:
        return None
    table.to_csv(path, index=False, float_format="%.4g")
    return table


def lever_table(table: pd.DataFrame) -> str:
    """The README's table of the levers, each beside ``confirm`` on the same trials."""
    lines = ["| collection | setting | trials | median judgments (total) | fewer / more than confirm "
             "| decided within 300 | wrong calls | W (95% interval) | right at ≥ 0.95 | CPU s per trial (median) |",
             "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in table.itertuples():
        paired = "" if r.setting == "confirm" else f"{r.fewer_than_confirm} / {r.more_than_confirm}"
        lines.append(
            f"| {r.collection} | {r.setting} | {r.trials} | {r.median:g} ({r.total}) | {paired} | {r.decided} | {r.wrong} "
            f"| {r.W:+.2f} ({r.W_low:+.2f}, {r.W_high:+.2f}) | {r.accuracy_95:.1%} | {r.median_cpu_s:.1f} |"
        )  # fmt: skip
    return "\n".join(lines)


def confirm_table(frame: pd.DataFrame) -> str:
    """Per collection: stops with and without the guard, wrong calls among them, confirms and
    the mean confidence of their checks and refits (``confirms.csv.gz``)."""
    log = read_logged(OUT / CONFIRMS).groupby(["setting", "collection"])[["check", "refit"]].mean()
    lines = ["| setting | collection | trials | median without / with | decided without / with | wrong calls "
             "without / with | confirms (failed) | mean check / refit at a confirm |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for (setting, name), part in frame.groupby(["setting", "collection"], sort=False):
        decided = part["stopped"] == "confidence"
        decided_without = part["without_stopped"] == "confidence"
        wrong = f"{int((decided_without & ~part['without_right']).sum())} / {int((decided & ~part['right']).sum())}"
        lines.append(
            f"| {setting} | {name} | {len(part)} | {part['without_judgments'].median():g} / {part['judgments'].median():g} "
            f"| {int(decided_without.sum())} / {int(decided.sum())} | {wrong} "
            f"| {int(part['confirms'].sum())} ({int(part['failed_confirms'].sum())}) "
            f"| {log.loc[(setting, name), 'check']:.3f} / {log.loc[(setting, name), 'refit']:.3f} |"
        )  # fmt: skip
    return "\n".join(lines)


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
