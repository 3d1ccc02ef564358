"""Load-and-convert time for the TREC DL 2019 passage runs (issue 2).

Reads the 37 official runs and the qrels (parse + validate), then builds the
:class:`~relimpute.data.Campaign` arrays, and reports wall and CPU time of each
step (best and median of ``--repeat`` rounds) and the process's peak memory.
Writes ``benchmarks/results/load.json`` and ``load.md``. Skips cleanly (exit 0)
when ``../shared/data`` is absent.

    python benchmarks/bench_load.py [--repeat 3] [--data PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "trec-dl-2019-passage"
RESULTS = ROOT / "benchmarks" / "results"


def _timed(func, *args, **kwargs):
    """``func(*args, **kwargs)`` with its wall and CPU seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = func(*args, **kwargs)
    return value, time.perf_counter() - wall, time.process_time() - cpu


def _peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return peak / (1024**2 if sys.platform == "darwin" else 1024)


def run(data: Path, repeat: int) -> dict:
    import pyarrow as pa

    from relimpute.data import Campaign
    from relimpute.io import read_qrels, read_runs

    rss_before = _peak_rss_mb()
    rounds = []
    for _ in range(repeat):
        (runs, qrels), parse_wall, parse_cpu = _timed(
            lambda: (read_runs(data / "runs"), read_qrels(data / "qrels.txt"))
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            campaign, build_wall, build_cpu = _timed(
                Campaign.from_frames, qrels, runs, rel_threshold=2, validate=False
            )
        rounds.append(
            {
                "parse_s": parse_wall,
                "build_s": build_wall,
                "total_s": parse_wall + build_wall,
                "parse_cpu_s": parse_cpu,
                "build_cpu_s": build_cpu,
                "total_cpu_s": parse_cpu + build_cpu,
            }
        )
    lines = sum(len(r) for r in runs.values()) + len(qrels)
    summary = {
        key: {
            "best": min(r[key] for r in rounds),
            "median": statistics.median(r[key] for r in rounds),
        }
        for key in rounds[0]
    }
    return {
        "benchmark": "load",
        "data": str(data),
        "runs": len(runs),
        "input_lines": lines,
        "campaign": repr(campaign),
        "repeat": repeat,
        "seconds": summary,
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "rss_before_mb": round(rss_before, 1),
        "arrow_peak_mb": round(pa.default_memory_pool().max_memory() / 2**20, 1),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_average_1min": round(os.getloadavg()[0], 2),
        },
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    }


def markdown(result: dict) -> str:
    rows = [
        ("parse + validate (37 runs + qrels)", "parse_s", "parse_cpu_s"),
        ("build Campaign arrays", "build_s", "build_cpu_s"),
        ("total", "total_s", "total_cpu_s"),
    ]
    sec = result["seconds"]
    table = "\n".join(
        f"| {label} | {sec[w]['best']:.2f} | {sec[w]['median']:.2f} | {sec[c]['best']:.2f} |"
        for label, w, c in rows
    )
    m = result["machine"]
    return f"""# Load benchmark: TREC DL 2019 passage

`python benchmarks/bench_load.py --repeat {result["repeat"]}` on {result["date"]}
({m["cpus"]} CPUs, 1-min load average {m["load_average_1min"]} at start, Python {m["python"]}).

{result["runs"]} runs + qrels, {result["input_lines"]:,} input lines -> {result["campaign"]}.

| step | wall best (s) | wall median (s) | CPU best (s) |
| --- | ---: | ---: | ---: |
{table}

Peak resident memory {result["peak_rss_mb"]:.0f} MB (of which {result["rss_before_mb"]:.0f} MB
before loading: interpreter and imports); pyarrow pool peak {result["arrow_peak_mb"]:.0f} MB.
On a shared machine wall time includes waiting for a core; CPU time does not.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds to time (default 3)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="DL 2019 folder")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write load.json/.md")
    args = parser.parse_args(argv)
    if not (args.data / "qrels.txt").is_file():
        print(f"skipped: DL 2019 data not found at {args.data}")
        return 0
    result = run(args.data, args.repeat)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "load.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "load.md").write_text(markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
