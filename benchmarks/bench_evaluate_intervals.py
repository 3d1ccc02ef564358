"""``relimpute evaluate --intervals`` against the default ``relimpute compare`` on DL 2019.

Each run's E[MAP] and 95% interval from the default model's posterior draws costs a load,
the fit and one Monte Carlo pass per measure; ``compare`` costs the load, the fit and one
pass for every pair. Times, in a child process each and alternating (compare, evaluate,
compare, ...), default ``relimpute compare --rel-threshold 2 --seed 1`` and ``relimpute
evaluate --rel-threshold 2 --seed 1 --intervals`` (MAP; and ``-m AP -m P@10`` as a second
case) over the 37 runs: wall, CPU (user + system) and peak memory; the run of median CPU
of ``--repeats`` is kept. Also ``evaluate --estimate FILE`` from a ``fit -o`` file with its
posterior draws, and the size of that file and of its draws.

    python benchmarks/bench_evaluate_intervals.py [--repeats 3] [--src src]

Target: evaluate with intervals within 2x the default compare's time (CPU; wall beside).
Prints ``skipped: ...`` and exits 0 without ``../shared/data``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import numpy as np

from _run_info import cli_child, machine, utc_now

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DL19 = ROOT.parent / "shared" / "data" / "trec-dl-2019-passage"
TARGET_RATIO = 2.0


def _median(runs: list[dict]) -> dict:
    order = np.argsort([r["cpu_s"] for r in runs], kind="stable")
    return {**runs[order[len(runs) // 2]], "cpu_runs": [r["cpu_s"] for r in runs]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per command (median CPU kept)")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the source tree to time")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write evaluate_intervals.*")
    args = parser.parse_args(argv)
    if not (DL19 / "qrels.txt").is_file():
        print(f"skipped: {DL19} is absent")
        return 0
    base = [str(DL19 / "qrels.txt"), str(DL19 / "runs"), "--rel-threshold", "2", "--seed", "1", "-Q"]
    with tempfile.TemporaryDirectory() as tmp:
        est = Path(tmp) / "estimate.tsv"
        cases = {
            "compare": ["compare", *base, "-f", "tsv"],
            "evaluate --intervals": ["evaluate", *base, "--intervals", "-f", "tsv"],
            "evaluate --intervals -m AP -m P@10": ["evaluate", *base, "--intervals", "-m", "AP",
                                                   "-m", "P@10", "-f", "tsv"],  # fmt: skip
            "fit -o": ["fit", *base, "-o", str(est), "-f", "tsv"],
            "evaluate --estimate": ["evaluate", *base, "--estimate", str(est), "-f", "tsv"],
        }
        start = {**machine(), "time": utc_now()}
        runs: dict[str, list[dict]] = {case: [] for case in cases}
        for _ in range(args.repeats):
            for case, command in cases.items():  # alternating: the machine's drift is shared
                runs[case].append(cli_child(command, args.src))
        sizes = {"estimate_mb": round(est.stat().st_size / 2**20, 1),
                 "draws_mb": round(Path(str(est) + ".draws.npz").stat().st_size / 2**20, 1)}  # fmt: skip
    found = {case: _median(r) for case, r in runs.items()}
    ratio = {case: round(found[case]["cpu_s"] / found["compare"]["cpu_s"], 2) for case in found}
    wall_ratio = {case: round(found[case]["wall_s"] / found["compare"]["wall_s"], 2) for case in found}
    result = {"machine": start, "end_load_average_1min": round(os.getloadavg()[0], 2),
              "repeats": args.repeats, "cases": found, "cpu_ratio_to_compare": ratio,
              "wall_ratio_to_compare": wall_ratio, "files": sizes,
              "target": f"evaluate --intervals <= {TARGET_RATIO}x compare"}  # fmt: skip
    lines = [
        "# evaluate with intervals against compare (DL 2019, 37 runs)",
        "",
        f"{start['time']}; Python {start['python']}, {start['cpus']} CPUs, load "
        f"{start['load_average_1min']} at start, {result['end_load_average_1min']} at end; "
        f"median CPU of {args.repeats} runs each, alternating.",
        "",
        "| command | CPU s | wall s | peak MB | CPU / compare | wall / compare |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for case, got in found.items():
        lines.append(
            f"| `{case}` | {got['cpu_s']:.1f} ({', '.join(f'{c:.1f}' for c in got['cpu_runs'])}) "
            f"| {got['wall_s']:.1f} | {got['peak_mb']:.0f} | {ratio[case]:.2f} | {wall_ratio[case]:.2f} |"
        )
    met = ratio["evaluate --intervals"] <= TARGET_RATIO
    lines += [
        "",
        f"Target: `evaluate --intervals` within {TARGET_RATIO:g}x the default compare's time: "
        f"{'met' if met else 'not met'} ({ratio['evaluate --intervals']:.2f}x CPU). "
        f"`fit -o`'s file: {sizes['estimate_mb']} MB, its posterior draws beside it "
        f"{sizes['draws_mb']} MB.",
        "",
    ]
    markdown = "\n".join(lines)
    args.out.mkdir(parents=True, exist_ok=True)
    import json

    (args.out / "evaluate_intervals.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "evaluate_intervals.md").write_text(markdown)
    print(markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
