"""How long the 200-trial reproduction of Carterette (2007) takes (issue 24: under an hour on 2 cores).

Runs ``examples/rtc_paper/reproduce.py --readings paper --trials N --jobs 2`` (TREC-8 ad hoc,
the paper's RTC: its loop, refit every 10 judgments, then the generalisation to 10 runs) as a
child process, N trials (default 20), and records wall and CPU seconds (the child's rusage,
workers included) and the projection to the 200 trials the issue names (a linear projection:
trials are independent and run 2 at a time). Writes ``benchmarks/results/rtc_paper.{json,md}``.

    python benchmarks/bench_rtc_paper.py [--trials 20]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _run_info import machine, utc_now

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DATA = ROOT.parent / "shared" / "data" / "trec-8-adhoc"
TARGET_S = 3600.0  # 200 trials, 2 cores


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        raise SystemExit(f"TREC-8 ad hoc not found at {DATA} (see examples/README.md)")
    info = machine()
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, str(ROOT / "examples" / "rtc_paper" / "reproduce.py"),
                   "--readings", "paper", "--trials", str(args.trials), "--jobs", "2", "-o", out]  # fmt: skip
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    projected = wall * 200 / args.trials
    result = {
        "date": utc_now(), "machine": info, "trials": args.trials, "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1), "projected_200_wall_s": round(projected, 1),
        "target_200_wall_s": TARGET_S, "met": projected <= TARGET_S,
    }  # fmt: skip
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "rtc_paper.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "# The 200-trial reproduction of Carterette (2007), timed",
        "",
        "`python benchmarks/bench_rtc_paper.py` (module docstring). Trials run 2 at a time; the",
        "projection to 200 trials is linear in the trials measured.",
        "",
        "| trials | wall (s) | CPU (s) | projected 200 trials (min) | target (min) | |",
        "| ---: | ---: | ---: | ---: | ---: | --- |",
        f"| {args.trials} | {wall:.1f} | {cpu:.1f} | {projected / 60:.1f} | {TARGET_S / 60:.0f} | "
        f"{'met' if projected <= TARGET_S else 'missed'} |",
        "",
        f"Run {result['date']} on {info['platform']}, {info['cpus']} CPUs, Python {info['python']}, "
        f"1-minute load average {info['load_average_1min']} at the start.",
    ]
    (RESULTS / "rtc_paper.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
