"""The default answer's cost: ``relimpute compare`` with the default model on real collections.

Loads each collection, fits the default relevance model (``models/fusion.json``:
posterior draws included) and computes every pairwise comparison by Monte Carlo
over those draws, as ``relimpute compare QRELS RUNS`` does; reports wall and
CPU seconds of each step and the process's peak memory. Target (issue
"Believable relevance estimates"): all 37 DL 2019 runs under 60 s on 2 cores.
Writes ``benchmarks/results/compare.json`` and ``compare.md``. Collections whose
data is absent from ``../shared/data`` are skipped.

    python benchmarks/bench_compare.py [--collections dl19,dl21,trec8]
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results"
COLLECTIONS = {
    "dl19": ("trec-dl-2019-passage", 2),
    "dl21": ("trec-dl-2021-passage", 2),
    "trec8": ("trec-8-adhoc", 1),
}


def _timed(func, *args, **kwargs):
    wall, cpu = time.perf_counter(), time.process_time()
    value = func(*args, **kwargs)
    return value, time.perf_counter() - wall, time.process_time() - cpu


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(name: str) -> dict | None:
    from relimpute import Campaign
    from relimpute.confidence import ConfidenceEngine
    from relimpute.relevance import load_model

    folder, threshold = COLLECTIONS[name]
    path = DATA / folder
    if not (path / "qrels.txt").is_file():
        print(f"skipped: {path} not found")
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign, load_wall, load_cpu = _timed(
            Campaign.from_files, path / "qrels.txt", path / "runs", rel_threshold=threshold
        )
    estimate, fit_wall, fit_cpu = _timed(load_model().fit_predict, campaign, rng=0)
    result, mc_wall, mc_cpu = _timed(
        ConfidenceEngine().monte_carlo, campaign, estimate, n_draws=4000, rng=0
    )
    return {
        "collection": name,
        "runs": campaign.n_systems,
        "topics": campaign.n_topics,
        "documents": sum(t.n_docs for t in campaign.topics),
        "pairs": len(result.pairs),
        "posterior_draws": estimate.n_draws,
        "load_wall_s": load_wall,
        "load_cpu_s": load_cpu,
        "fit_wall_s": fit_wall,
        "fit_cpu_s": fit_cpu,
        "compare_wall_s": mc_wall,
        "compare_cpu_s": mc_cpu,
        "total_wall_s": load_wall + fit_wall + mc_wall,
        "peak_rss_mb_so_far": _peak_rss_mb(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", default="dl19,dl21,trec8")
    args = parser.parse_args(argv)
    rows = [row for name in args.collections.split(",") if (row := run(name))]
    if not rows:
        return 0
    header = list(rows[0])
    lines = [
        "# relimpute compare with the default model (Monte Carlo over posterior draws)",
        "",
        f"`python benchmarks/bench_compare.py --collections {args.collections}` on "
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}. Target: DL 2019 (37 runs) under 60 s on 2 cores.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for row in rows:
        lines.append("| " + " | ".join(f"{v:.1f}" if isinstance(v, float) else str(v) for v in row.values()) + " |")
    text = "\n".join(lines) + "\n"
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "compare.md").write_text(text)
    (RESULTS / "compare.json").write_text(json.dumps(rows, indent=2) + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
