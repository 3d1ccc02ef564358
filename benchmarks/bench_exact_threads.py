"""The exact engine at 500 systems: every pair's P(ΔMAP > 0) on one thread and on two.

A synthetic campaign of ``--systems`` runs x ``--topics`` topics x depth 1,000 (20,000
documents a topic; :func:`relimpute.simulate.simulate_campaign`, seeded, a depth-10 pool
judged, p = 1/2 for the rest) and ``ConfidenceEngine().confidence(..., method="normal",
jobs=J)`` for every pair (124,750 at 500 systems), J = 1 and each of ``--jobs``, in turn
within each round. Checks that every array of the answer (P, E and Var of ΔAP per pair and
topic, of AP per system and topic) is the serial one, bit for bit. Records wall and CPU
seconds (CPU: every thread of this process) and the load average; on a shared machine the
wall ratio within a round is the figure, the seconds move with the load.

Writes ``benchmarks/results/exact_threads.json`` and ``exact_threads.md``.

    python benchmarks/bench_exact_threads.py [--systems 500] [--topics 50] [--jobs 2] [--rounds 1]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _run_info import machine, utc_now

RESULTS = Path(__file__).resolve().parent / "results"


def arrays(comparison) -> dict[str, np.ndarray]:
    s = comparison.scores
    return {"p_a_better": comparison.p_a_better, "e_delta_ap": comparison.e_delta_ap,
            "var_delta_ap": comparison.var_delta_ap, "e_ap": s.e_ap,
            "var_ap": s.var_ap}  # fmt: skip


def run(n_systems: int, n_topics: int, jobs: list[int], rounds: int) -> dict:
    from relimpute.confidence import ConfidenceEngine
    from relimpute.relevance import Uniform
    from relimpute.simulate import simulate_campaign

    at_start = machine()  # the load average before the first child
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = simulate_campaign(n_topics=n_topics, n_systems=n_systems, n_docs=20_000,
                                depth=1000, short_fraction=0.0, rng=2007)  # fmt: skip
    campaign = sim.campaign.pooled(10)
    estimate = Uniform(0.5).fit_predict(campaign)
    build = time.perf_counter() - start
    engine = ConfidenceEngine()
    small = campaign.subset(systems=campaign.systems[:2], topics=campaign.query_ids[:2])
    for j in [1, *jobs]:  # numba loads its kernels, the threads start once
        engine.confidence(small, Uniform(0.5).fit_predict(small), method="normal", jobs=j)
    table, serial = [], None
    for _ in range(rounds):
        row = {}
        for j in [1, *jobs]:
            load = machine()["load_average_1min"]
            wall, cpu = time.perf_counter(), time.process_time()
            result = engine.confidence(campaign, estimate, method="normal", jobs=j)
            row[j] = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu,
                      "load_average_1min": load}  # fmt: skip
            got = arrays(result)
            if serial is None:
                serial = got
            row[j]["bit_identical_to_serial"] = all(
                np.array_equal(got[k], serial[k]) and got[k].dtype == serial[k].dtype
                for k in serial
            )
            del result, got
        table.append(row)
    return {
        "benchmark": "exact_threads",
        "systems": n_systems,
        "topics": n_topics,
        "depth": 1000,
        "docs_per_topic": 20_000,
        "pairs": n_systems * (n_systems - 1) // 2,
        "build_seconds": build,
        "rounds": table,
        "summary": {
            str(j): {
                "wall_s_median": statistics.median(r[j]["wall_s"] for r in table),
                "cpu_s_median": statistics.median(r[j]["cpu_s"] for r in table),
                "wall_ratio_to_serial_median": statistics.median(
                    r[j]["wall_s"] / r[1]["wall_s"] for r in table
                ),
                "bit_identical_to_serial": all(r[j]["bit_identical_to_serial"] for r in table),
            }
            for j in [1, *jobs]
        },
        "machine": at_start,
        "load_average_1min_end": machine()["load_average_1min"],
        "date": utc_now(),
    }


def markdown(result: dict, argv: list[str]) -> str:
    m = result["machine"]
    rows = "\n".join(
        f"| {j} | {s['wall_s_median']:.1f} | {s['cpu_s_median']:.1f} | "
        f"{s['wall_ratio_to_serial_median']:.3f} | {s['bit_identical_to_serial']} |"
        for j, s in result["summary"].items()
    )
    return f"""# The exact engine on threads: {result["systems"]} systems x {result["topics"]} topics x depth 1000

`python benchmarks/bench_exact_threads.py {" ".join(argv)}` on {result["date"]} ({m["cpus"]} CPUs,
1-min load average {m["load_average_1min"]} at start, {result["load_average_1min_end"]} at the
end; Python {m["python"]}). `ConfidenceEngine().confidence(campaign, Uniform(0.5), method="normal",
jobs=J)` over all {result["pairs"]:,} pairs (20,000 documents a topic, a depth-10 pool judged; the
campaign built in {result["build_seconds"]:.0f} s, not timed). Median over {len(result["rounds"])}
round(s), J = 1 first in each; CPU counts every thread.

| jobs | wall s | CPU s | wall / serial wall (same round) | every array bit-identical to serial |
| --- | ---: | ---: | ---: | --- |
{rows}

The machine is shared: wall seconds include waiting for a core, so the wall ratio within a
round is the figure; on an idle 2-core machine the threaded wall is about half its CPU.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--systems", type=int, default=500)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--jobs", type=int, nargs="+", default=[2])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    result = run(args.systems, args.topics, args.jobs, args.rounds)
    text = markdown(result, sys.argv[1:])
    args.out.mkdir(parents=True, exist_ok=True)
    result["rounds"] = [{str(j): v for j, v in r.items()} for r in result["rounds"]]
    (args.out / "exact_threads.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "exact_threads.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
