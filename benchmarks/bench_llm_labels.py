"""The cost of LLM labels: fitting fusion-llm against the default model on DL 2019.

Keeps the human judgments of the depth-k pool (``--pool``, default 3) of the 37 DL 2019
runs, attaches one LLM label file (UMBRELA, GPT-4o; ``--labels``), and times
``fit_predict`` of the default model (``fusion``), of the model with labels
(``fusion-llm``) and of it with the labels' pool (``fusion-llm, pool``:
``unlabelled="nonrelevant"``, the study's headline), best of ``--repeat`` (CPU seconds too:
the machine is shared).
Target (issue 28): fusion-llm within 2x the default model. Writes
``benchmarks/results/llm_labels.json`` and ``llm_labels.md``.

    python benchmarks/bench_llm_labels.py [--pool 3] [--repeat 3] [--name llm_labels]

OpenBLAS's threads cost CPU on a busy machine: ``OPENBLAS_NUM_THREADS=1 python ... --name
llm_labels_blas1`` measures with one (the thread settings are recorded).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

from _run_info import machine, thread_settings, utc_now, write_results

ROOT = Path(__file__).resolve().parents[1]
DL19 = ROOT.parent / "shared" / "data" / "trec-dl-2019-passage"
RESULTS = ROOT / "benchmarks" / "results"


def _best(func, repeat: int) -> tuple[float, float]:
    """Best wall and CPU seconds of ``repeat`` calls."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        func()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def main(argv=None) -> int:
    from dataclasses import replace

    from relimpute import Campaign
    from relimpute.labels import with_labels
    from relimpute.relevance import FusionLLM, load_model

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--labels", type=Path, default=DL19 / "llm" / "umbrela-gpt-4o.txt")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--name", default="llm_labels", help="results file stem (e.g. for other thread settings)")
    args = parser.parse_args(argv)
    if not (DL19 / "qrels.txt").is_file():
        print(f"DL 2019 data not found at {DL19}", file=sys.stderr)
        return 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = Campaign.from_files(DL19 / "qrels.txt", DL19 / "runs", rel_threshold=2)
    labelled = with_labels(full.pooled(args.pool), [args.labels])
    plain = replace(labelled, labels=())
    fusion = _best(lambda: load_model("fusion").fit_predict(plain, rng=1), args.repeat)
    llm = _best(lambda: load_model("fusion-llm").fit_predict(labelled, rng=1), args.repeat)
    pool = _best(lambda: FusionLLM(unlabelled="nonrelevant").fit_predict(labelled, rng=1), args.repeat)
    result = {
        "date": utc_now(),
        "machine": machine(),
        "pool_depth": args.pool,
        "labels": args.labels.name,
        "fusion_wall_s": round(fusion[0], 3),
        "fusion_cpu_s": round(fusion[1], 3),
        "fusion_llm_wall_s": round(llm[0], 3),
        "fusion_llm_cpu_s": round(llm[1], 3),
        "fusion_llm_pool_wall_s": round(pool[0], 3),
        "fusion_llm_pool_cpu_s": round(pool[1], 3),
        "ratio_cpu": round(llm[1] / fusion[1], 2),
        "ratio_cpu_pool": round(pool[1] / fusion[1], 2),
        "threads": thread_settings(),
        "target_ratio": 2.0,
    }
    markdown = (
        "# fusion-llm against the default model: fit_predict on DL 2019\n\n"
        f"`python benchmarks/bench_llm_labels.py --pool {args.pool} --repeat {args.repeat} --name {args.name}` on "
        f"{result['date']} (load {result['machine']['load_average_1min']}). Human judgments: the "
        f"depth-{args.pool} pool of the 37 runs; labels {args.labels.name}. Target: ratio <= 2.\n\n"
        "| model | wall s (best) | CPU s (best) |\n|---|---|---|\n"
        f"| fusion | {fusion[0]:.2f} | {fusion[1]:.2f} |\n"
        f"| fusion-llm | {llm[0]:.2f} | {llm[1]:.2f} |\n"
        f"| fusion-llm, pool | {pool[0]:.2f} | {pool[1]:.2f} |\n\n"
        f"CPU ratio fusion-llm / fusion: {result['ratio_cpu']:.2f}; fusion-llm, pool / fusion: "
        f"{result['ratio_cpu_pool']:.2f}. Thread settings: "
        + (", ".join(f"{k}={v}" for k, v in result["threads"].items()) or "none set") + ".\n"
    )
    write_results(result, markdown, args.out, DL19, DL19, args.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
