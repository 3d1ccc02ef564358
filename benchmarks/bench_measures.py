"""Speed of relimpute.measures: scoring DL 2019 and the Monte Carlo kernels.

Run ``python benchmarks/bench_measures.py``; writes
``benchmarks/results/measures.json`` and ``.md``. Two parts:

1. ``evaluate`` on the 37 DL 2019 runs x 43 topics (skipped when
   ../shared/data is absent; the campaign load is not timed here, see
   bench_load.py).
2. Kernel throughput on a synthetic DL-sized topic (37 systems x depth 1000,
   20,000 documents) with B binary relevance draws: time per draw.
"""

from __future__ import annotations

import json
import platform
import time
import warnings
from pathlib import Path

import numpy as np

from relimpute.measures import evaluate, parse_measure

HERE = Path(__file__).resolve().parent
DL19 = HERE.parent.parent / "shared" / "data" / "trec-dl-2019-passage"
MEASURES = ["AP", "P@10", "nDCG@10", "Rprec", "Judged@10", "RBP(p=0.8)", "RBPres(p=0.8)"]


def best_of(fn, repeat=3) -> dict[str, float]:
    """Best wall and CPU seconds of ``repeat`` calls (wall includes waiting for a core)."""
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return {"wall_s": min(wall), "cpu_s": min(cpu)}


def bench_dl19() -> dict | None:
    if not (DL19 / "qrels.txt").is_file():
        print(f"skipped: DL 2019 data not found at {DL19}")
        return None
    from relimpute.data import Campaign

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(DL19 / "qrels.txt", DL19 / "runs", rel_threshold=2)
    out = {
        "runs": campaign.n_systems,
        "topics": campaign.n_topics,
        "measures": MEASURES,
        "means": best_of(lambda: evaluate(campaign, MEASURES)),
        "per topic": best_of(lambda: evaluate(campaign, MEASURES, per_topic=True)),
        "condensed lists": best_of(lambda: evaluate(campaign, MEASURES, condensed=True)),
    }
    return out


def bench_kernels(n_draws: int = 500) -> dict:
    rng = np.random.default_rng(0)
    n_docs, n_systems, depth = 20_000, 37, 1000
    ranking = np.stack([rng.choice(n_docs, depth, replace=False) for _ in range(n_systems)])
    ranking = ranking.astype(np.int32)
    draws = rng.random((n_draws, n_docs)) < 0.1
    out = {"systems": n_systems, "depth": depth, "documents": n_docs, "draws": n_draws}
    per_draw = {}
    for name in ["AP", "Rprec", "P@10", "nDCG@10", "nDCG", "RBP(p=0.8)"]:
        measure = parse_measure(name)
        seconds = best_of(lambda m=measure: m.score(ranking, draws), repeat=2)
        per_draw[name] = {k.replace("_s", "_us"): v / n_draws * 1e6 for k, v in seconds.items()}
    out["per_draw"] = per_draw
    return out


def main() -> None:
    results = {
        "machine": f"{platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, numpy {np.__version__}",
        "dl19": bench_dl19(),
        "kernels": bench_kernels(),
    }
    target = HERE / "results"
    target.mkdir(exist_ok=True)
    (target / "measures.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = ["# relimpute.measures speed", "", f"Machine: {results['machine']}", ""]
    if results["dl19"]:
        d = results["dl19"]
        lines += [
            (
                f"## evaluate on DL 2019 ({d['runs']} runs x {d['topics']} topics, "
                f"{len(d['measures'])} measures, best of 3)"
            ),
            "",
            "| call | wall s | CPU s |",
            "|---|---|---|",
        ]
        lines += [
            f"| {call} | {d[call]['wall_s']:.3f} | {d[call]['cpu_s']:.3f} |"
            for call in ("means", "per topic", "condensed lists")
        ]
        lines.append("")
    k = results["kernels"]
    lines += [
        (
            f"## Kernels with a draw axis ({k['systems']} systems x depth {k['depth']}, "
            f"{k['documents']} documents, {k['draws']} binary draws)"
        ),
        "",
        "| measure | wall µs per draw (all systems) | CPU µs per draw |",
        "|---|---|---|",
    ]
    lines += [
        f"| {name} | {t['wall_us']:.0f} | {t['cpu_us']:.0f} |" for name, t in k["per_draw"].items()
    ]
    (target / "measures.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
