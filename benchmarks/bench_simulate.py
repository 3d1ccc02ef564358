"""Speed of the campaign simulator and depth-k pooling (issue 2).

Times :func:`relimpute.simulate.simulate_campaign` for the size the
confidence benchmark uses (100 systems x 50 topics x depth 1000 over 2000
documents per topic) and :meth:`~relimpute.data.Campaign.pooled` at depths
10 and 100, best and median of ``--repeat`` rounds (wall and CPU). Writes
``benchmarks/results/simulate.json`` and ``simulate.md``.

    python benchmarks/bench_simulate.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from _run_info import machine, utc_now

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
SIZE = {"n_topics": 50, "n_systems": 100, "n_docs": 2000, "depth": 1000}


def _timed(func, *args, **kwargs):
    """``func(*args, **kwargs)`` with its wall and CPU seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = func(*args, **kwargs)
    return value, time.perf_counter() - wall, time.process_time() - cpu


def run(repeat: int) -> dict:
    from relimpute.simulate import simulate_campaign

    steps: dict[str, list[tuple[float, float]]] = {
        "simulate": [],
        "pooled(10)": [],
        "pooled(100)": [],
    }
    for seed in range(repeat):
        sim, wall, cpu = _timed(simulate_campaign, **SIZE, rng=seed)
        steps["simulate"].append((wall, cpu))
        for k in (10, 100):
            _, wall, cpu = _timed(sim.campaign.pooled, k)
            steps[f"pooled({k})"].append((wall, cpu))
    return {
        "benchmark": "simulate",
        "size": SIZE,
        "repeat": repeat,
        "example": str(sim),
        "seconds": {
            name: {
                "wall_best": min(w for w, _ in times),
                "wall_median": statistics.median(w for w, _ in times),
                "cpu_best": min(c for _, c in times),
            }
            for name, times in steps.items()
        },
        "machine": machine(),
        "date": utc_now(),
    }


def markdown(result: dict) -> str:
    rows = "\n".join(
        f"| {name} | {s['wall_best']:.2f} | {s['wall_median']:.2f} | {s['cpu_best']:.2f} |"
        for name, s in result["seconds"].items()
    )
    m = result["machine"]
    return f"""# Simulator benchmark

`python benchmarks/bench_simulate.py --repeat {result["repeat"]}` on {result["date"]}
({m["cpus"]} CPUs, 1-min load average {m["load_average_1min"]} at start, Python {m["python"]}).

Size: {result["size"]}. Example: {result["example"]}.

| step | wall best (s) | wall median (s) | CPU best (s) |
| --- | ---: | ---: | ---: |
{rows}
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds to time (default 3)")
    parser.add_argument(
        "--out", type=Path, default=RESULTS, help="where to write simulate.json/.md"
    )
    args = parser.parse_args(argv)
    result = run(args.repeat)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "simulate.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "simulate.md").write_text(markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
