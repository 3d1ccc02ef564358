"""Start-up time of the command line (issue 12): CPU seconds per process.

Runs, interleaved for ``--rounds`` rounds, a bare interpreter (``python -c
pass``, the floor), ``relimpute --help``, ``relimpute COMMAND --help`` for
every subcommand and ``import relimpute`` as separate processes, and reports
the median CPU time (user + system, from the children's rusage) of each.
Targets (issue 26): every ``--help`` at most 0.1 s CPU. Writes
``benchmarks/results/startup.json`` and ``startup.md``.

    python benchmarks/bench_startup.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from _run_info import machine, utc_now

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CLI = "import sys; from relimpute.cli import main; sys.exit(main())"
sys.path.insert(0, str(ROOT / "src"))
from relimpute.cli import _subcommand_index  # noqa: E402  (reads the modules' source only)

CASES = {
    "python -c pass (floor)": ["-c", "pass"],
    "relimpute --help": ["-c", CLI, "--help"],
    **{f"relimpute {c} --help": ["-c", CLI, c, "--help"] for c in sorted(_subcommand_index())},
    "import relimpute": ["-c", "import relimpute"],
}
TARGET_HELP_CPU_S = 0.1


def _cpu_seconds(args: list[str], env: dict) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, *args], env=env, stdout=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run(rounds: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(rounds):
        for name, args in CASES.items():
            times[name].append(_cpu_seconds(args, env))
    return {
        "benchmark": "startup",
        "rounds": rounds,
        "cpu_s_median": {name: statistics.median(v) for name, v in times.items()},
        "cpu_s_all": times,
        "target_help_cpu_s": TARGET_HELP_CPU_S,
        "machine": machine(),
        "date": utc_now(),
    }


def markdown(result: dict) -> str:
    median = result["cpu_s_median"]
    floor = median["python -c pass (floor)"]
    rows = "\n".join(
        f"| `{name}` | {value:.3f} | {value - floor:+.3f} |" for name, value in median.items()
    )
    m = result["machine"]
    helps = {name: v for name, v in median.items() if name.endswith("--help")}
    slow = [name for name, v in helps.items() if v > result["target_help_cpu_s"]]
    verdict = (
        f"all {len(helps)} meet" if not slow else f"{len(slow)} of {len(helps)} miss ({', '.join(slow)})"
    )
    return f"""# Start-up benchmark

`python benchmarks/bench_startup.py --rounds {result["rounds"]}` on {result["date"]}
({m["cpus"]} CPUs, 1-min load average {m["load_average_1min"]} at start, Python {m["python"]}).
Median CPU time (user + system) per process over {result["rounds"]} interleaved rounds.

| process | CPU (s) | above the bare interpreter (s) |
| --- | ---: | ---: |
{rows}

`--help` processes: {verdict} the target of {result["target_help_cpu_s"]} s CPU. Neither
`import relimpute` nor the top-level help loads numpy, pandas or pyarrow (the subcommand list
is read from the modules' source); a subcommand's help imports that subcommand's module only,
and no subcommand module imports pandas, scipy, numba or the relevance models at the top
(`tests/test_startup.py` checks the modules loaded).
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write startup.*")
    args = parser.parse_args(argv)
    result = run(args.rounds)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "startup.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "startup.md").write_text(markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
