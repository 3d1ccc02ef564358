"""Speed of the corpus bootstrap (Cormack & Lynam 2006) on DL 2019 and TREC-8 ad hoc.

Run ``python benchmarks/bench_bootstrap.py [--resamples 2000]`` from the
repository root; writes ``benchmarks/results/bootstrap.json`` and ``.md``.
For each collection: 2,000 resamples of every run x topic (AP replicates,
BCa accelerations), then all four AP interval methods and the MAP / L-MAP
intervals from them. Targets (issue 14): DL 2019 in seconds, TREC-8 ad hoc
(129 runs, 50 topics, depth 1000) under a minute on 2 cores. Wall and CPU
time are both reported (the machine is shared); the first call, which loads
or compiles the numba kernel, is excluded.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
import warnings
from pathlib import Path

import numba

from relimpute.data import Campaign
from relimpute.precision import ap_intervals, corpus_bootstrap, mean_intervals

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data"
COLLECTIONS = {"trec-dl-2019-passage": 2, "trec-8-adhoc": 1}
TARGETS = {"trec-dl-2019-passage": 10.0, "trec-8-adhoc": 60.0}


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def all_intervals(boot) -> None:
    for method in ("normal", "logit", "percentile", "bca"):
        ap_intervals(boot, method)
    mean_intervals(boot, "MAP", "parametric")
    mean_intervals(boot, "L-MAP", "bootstrap")


def bench_collection(name: str, campaign: Campaign, resamples: int) -> dict:
    """Time the bootstrap and the intervals of one collection."""
    corpus_bootstrap(campaign.subset(topics=campaign.query_ids[:1]), 10, rng=0)  # load the kernel
    boot, wall, cpu = timed(lambda: corpus_bootstrap(campaign, resamples, rng=1))
    _, intervals_wall, _ = timed(lambda: all_intervals(boot))
    lists = campaign.n_systems * campaign.n_topics
    return {
        "collection": name,
        "runs": campaign.n_systems,
        "topics": campaign.n_topics,
        "lists": lists,
        "resamples": resamples,
        "bootstrap_wall_s": round(wall, 2),
        "bootstrap_cpu_s": round(cpu, 2),
        "intervals_wall_s": round(intervals_wall, 2),
        "target_s": TARGETS[name],
        "ns_per_list_resample": round(1e9 * wall / (lists * resamples), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap corpora per topic")
    args = parser.parse_args()
    rows = []
    for name, threshold in COLLECTIONS.items():
        if not (DATA / name / "qrels.txt").is_file():
            print(f"skipped: {DATA / name} not found")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            campaign = Campaign.from_files(
                DATA / name / "qrels.txt", DATA / name / "runs", rel_threshold=threshold
            )
        rows.append(bench_collection(name, campaign, args.resamples))
        print(rows[-1])
    if not rows:
        return
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    meta = {
        "machine": platform.machine(),
        "python": platform.python_version(),
        "numba_threads": numba.get_num_threads(),
    }
    (out / "bootstrap.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    header = list(rows[0])
    lines = [
        "# Corpus bootstrap speed",
        "",
        (
            f"`python benchmarks/bench_bootstrap.py` on {meta['machine']}, "
            f"{meta['numba_threads']} numba threads (shared machine: wall includes waiting)."
        ),
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    lines += ["| " + " | ".join(str(r[h]) for h in header) + " |" for r in rows]
    (out / "bootstrap.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
