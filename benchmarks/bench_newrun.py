"""``relimpute newrun`` for one run against the default ``relimpute compare`` on DL 2019.

The check of one new run against the 36 other runs costs the load, the default model's fit,
one Monte Carlo pass over its posterior draws (the new run against every other) and the
trec_eval scores; ``compare`` costs the load, the fit and the pass for all 666 pairs. Times,
in a child process each and alternating (compare, newrun, compare, ...): wall, CPU (user +
system) and peak memory; the run of median CPU of ``--repeats`` is kept.

    python benchmarks/bench_newrun.py [--repeats 3] [--src src]

Target: the new-run check within 2x the default compare's time (CPU; wall beside).
Prints ``skipped: ...`` and exits 0 without ``../shared/data``.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np

from _run_info import cli_child, machine, utc_now

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DL19 = ROOT.parent / "shared" / "data" / "trec-dl-2019-passage"
TARGET_RATIO = 2.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per command (median CPU kept)")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the source tree to time")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write newrun.*")
    args = parser.parse_args(argv)
    if not (DL19 / "qrels.txt").is_file():
        print(f"skipped: {DL19} is absent")
        return 0
    base = [str(DL19 / "qrels.txt"), str(DL19 / "runs"), "--rel-threshold", "2", "--seed", "1", "-Q",
            "-f", "tsv"]  # fmt: skip
    cases = {
        "compare": ["compare", *base],
        "newrun --new p_bert": ["newrun", *base, "--new", str(DL19 / "runs" / "p_bert.gz")],
    }
    start = {**machine(), "time": utc_now()}
    runs: dict[str, list[dict]] = {case: [] for case in cases}
    for _ in range(args.repeats):
        for case, command in cases.items():  # alternating: the machine's drift is shared
            runs[case].append(cli_child(command, args.src))
    found = {}
    for case, got in runs.items():
        order = np.argsort([r["cpu_s"] for r in got], kind="stable")
        found[case] = {**got[order[len(got) // 2]], "cpu_runs": [r["cpu_s"] for r in got]}
    ratio = round(found["newrun --new p_bert"]["cpu_s"] / found["compare"]["cpu_s"], 2)
    wall = round(found["newrun --new p_bert"]["wall_s"] / found["compare"]["wall_s"], 2)
    result = {"machine": start, "end_load_average_1min": round(os.getloadavg()[0], 2),
              "repeats": args.repeats, "cases": found, "cpu_ratio": ratio, "wall_ratio": wall,
              "target": f"newrun <= {TARGET_RATIO}x compare"}  # fmt: skip
    lines = [
        "# the new-run check against compare (DL 2019, 37 runs)",
        "",
        f"{start['time']}; Python {start['python']}, {start['cpus']} CPUs, load "
        f"{start['load_average_1min']} at start, {result['end_load_average_1min']} at end; "
        f"median CPU of {args.repeats} runs each, alternating.",
        "",
        "| command | CPU s | wall s | peak MB |",
        "| --- | --- | --- | --- |",
    ]
    for case, got in found.items():
        lines.append(f"| `{case}` | {got['cpu_s']:.1f} ({', '.join(f'{c:.1f}' for c in got['cpu_runs'])}) "
                     f"| {got['wall_s']:.1f} | {got['peak_mb']:.0f} |")  # fmt: skip
    lines += ["", f"Target: newrun within {TARGET_RATIO:g}x the default compare's CPU: "
                  f"{'met' if ratio <= TARGET_RATIO else 'not met'} ({ratio:.2f}x; wall {wall:.2f}x).",
              ""]  # fmt: skip
    markdown = "\n".join(lines)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "newrun.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "newrun.md").write_text(markdown)
    print(markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
