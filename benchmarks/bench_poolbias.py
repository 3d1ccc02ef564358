"""The leave-one-group-out pool-bias study on TREC-8 ad hoc (issue 13): wall and CPU time.

Loads the 71 pooled runs (full depth 1000) and the official qrels, then runs
:func:`relimpute.bias.study.run_pool_bias_study` at pool depth 10 and 100 with every
published corrector (reduced, condensed, Webber & Park Algorithms 1 and 2,
Lipani 2016, Lipani 2015) and every study measure; with ``--models fusion``
also the model-based corrector (one model fit per group). Writes
``benchmarks/results/poolbias.json`` and ``poolbias.md``; skips (exit 0)
when ``../shared/data`` is absent.

    python benchmarks/bench_poolbias.py [--depths 10 100] [--models fusion]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "trec-8-adhoc"
RESULTS = ROOT / "benchmarks" / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--depths", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--models", nargs="*", default=[])
    args = parser.parse_args()
    if not (DATA / "qrels.txt").is_file():
        print(f"skipped: {DATA} not found")
        return
    from relimpute.bias import read_groups
    from relimpute.bias.study import run_pool_bias_study
    from relimpute.data import Campaign

    wall, cpu = time.perf_counter(), time.process_time()
    groups = read_groups(DATA / "groups.tsv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        campaign = Campaign.from_files(DATA / "qrels.txt", DATA / "runs")
    campaign = campaign.subset(list(groups.pooled_runs(campaign.systems)))
    rows = [
        {"step": "load", "wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}
    ]
    for depth in args.depths:
        wall, cpu = time.perf_counter(), time.process_time()
        study = run_pool_bias_study(campaign, groups, pool_depth=depth, models=args.models, progress=False)
        rows.append(
            {
                "step": f"study depth {depth}",
                "wall_s": time.perf_counter() - wall,
                "cpu_s": time.process_time() - cpu,
                "per_corrector_wall_s": {k: round(v, 1) for k, v in study.timing.items()},
            }
        )
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    RESULTS.mkdir(parents=True, exist_ok=True)
    info = {
        "machine": platform.platform(),
        "load_1min_at_end": load,
        "models": args.models,
        "rows": rows,
    }
    (RESULTS / "poolbias.json").write_text(json.dumps(info, indent=2) + "\n")
    lines = [
        "# Pool-bias study on TREC-8 (71 pooled runs, 50 topics, 40 groups with a pooled run)",
        "",
        f"Models: {args.models or 'none (published correctors only)'}; load average at the end {load}.",
        "",
        "| step | wall s | CPU s | per corrector (wall s) |",
        "| --- | --- | --- | --- |",
    ]
    for row in rows:
        detail = ", ".join(f"{k} {v}" for k, v in row.get("per_corrector_wall_s", {}).items())
        lines.append(f"| {row['step']} | {row['wall_s']:.1f} | {row['cpu_s']:.1f} | {detail} |")
    text = "\n".join(lines) + "\n"
    (RESULTS / "poolbias.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
