"""Benchmark: the reusability study on DL 2019 (Carterette 2007 §4.3 protocol, 2 cores).

Run ``python benchmarks/bench_calibration.py [--trials N] [--strategies S] [--jobs J] [--name NAME]``;
writes ``benchmarks/results/NAME.md`` and ``.json`` with the wall time, the
time per trial and strategy (selection, fit and confidence together), and the
study's headline numbers (so the benchmark doubles as a check against
docs/math/reference-points.md). Targets: 200 trials of the default
strategy (``fusion-mc``) under 20 minutes; a ``bayes`` trial under 2 s after
each worker's first (which compiles the model).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
DL19 = HERE.parent.parent / "shared" / "data" / "trec-dl-2019-passage"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--strategies", default="mtc,rtc,bayes")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2007)
    parser.add_argument("--output", help="also write the study's report into this folder")
    parser.add_argument("--name", default="calibration", help="results file name (no suffix)")
    args = parser.parse_args()

    from relimpute.calibration import CalibrationReport, run_study
    from relimpute.groups import read_groups
    from relimpute.data import Campaign

    if not (DL19 / "qrels.txt").is_file():
        raise SystemExit(f"DL 2019 data not found at {DL19}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(DL19 / "qrels.txt", DL19 / "runs", rel_threshold=2)
    started = time.perf_counter()
    study = run_study(
        campaign, args.strategies, n_trials=args.trials, k=10, c=2, depth=100,
        groups=read_groups(DL19 / "groups.tsv").run_to_group(), seed=args.seed, jobs=args.jobs,
    )
    wall = time.perf_counter() - started
    report = CalibrationReport.from_study(study)
    if args.output:
        report.write(args.output, study=study)
    per_strategy = study.trials.groupby("strategy")["seconds"].agg(["mean", "median", "max", "sum"])
    summary = report.summary["raw"].set_index("strategy")
    result = {
        "trials": args.trials,
        "strategies": study.strategies,
        "jobs": args.jobs,
        "seed": args.seed,
        "wall_seconds": wall,
        "projected_seconds_100_trials": wall * 100 / args.trials,
        "target_seconds_default_200_trials": 1200,
        "target_bayes_seconds_per_trial": 2.0,
        "load_average_at_end": os.getloadavg(),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "seconds_per_trial": per_strategy.to_dict(orient="index"),
        "headline": summary[["w", "w_low", "w_high", "accuracy_conf_95", "share_conf_95",
                             "median_judgments", "mean_judgments", "share_zero_judgments",
                             "mean_tau"]].to_dict(orient="index"),
    }
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / f"{args.name}.json").write_text(json.dumps(result, indent=2, default=float) + "\n")
    lines = [
        "# Calibration study benchmark (DL 2019, k = 10 one per group, c = 2, depth 100, rel >= 2)",
        "",
        (
            f"Command: `python benchmarks/bench_calibration.py --trials {args.trials} "
            f"--strategies {args.strategies} --jobs {args.jobs} --seed {args.seed}"
            + (f" --name {args.name}`" if args.name != "calibration" else "`")
        ),
        "",
        (
            "The study uses the shipped settings (`models/`, fitted on DL 2019 among others), so "
            "its W and accuracy are development numbers; the held-out study is "
            "`examples/calibration/`."
        ),
        "",
        (
            f"Wall time: **{wall:.0f} s** for {args.trials} trials x {len(study.strategies)} "
            f"strategies with {args.jobs} workers; load average at the end "
            f"{os.getloadavg()[0]:.1f} (the machine is shared). Targets on 2 cores: 200 trials of "
            "the default strategy (fusion-mc) under 1,200 s; a bayes trial under 2 s after each "
            "worker's first, which compiles the model (the max column)."
        ),
        "",
        "| strategy | mean s/trial | median | max | total s |",
        "|---|---|---|---|---|",
    ]
    for name, row in per_strategy.iterrows():
        lines.append(f"| {name} | {row['mean']:.2f} | {row['median']:.2f} | {row['max']:.2f} | {row['sum']:.0f} |")
    lines += ["", "```", report.terminal_summary(), "```", ""]
    (out / f"{args.name}.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
