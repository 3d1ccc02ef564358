"""The default model's ordinal fit against its binary fit on DL 2019 (issue 25: ≤ 1.5×).

Both fit ``Fusion()`` (the shipped settings) on the same judged documents of DL 2019
(rel ≥ 2 relevant): once with the official grades 0-3 (the logistic fit of relevance,
then the cut-points of the cumulative logits given its log-odds) and once with the grades
collapsed to 0/1 (the logistic fit alone, what the model ran before grades). Judgments: the official qrels, and the depth-10 pool of all 37 runs.
CPU seconds of ``fit`` (median of ``--repeats``; the evidence and design are built in
both). Writes benchmarks/results/ordinal.{md,json}.

    python benchmarks/bench_ordinal.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np

from _run_info import add_collection_arguments, machine, utc_now, write_results
from relimpute.data import Campaign
from relimpute.relevance import Fusion

ROOT = Path(__file__).resolve().parents[1]
DL19 = ROOT.parent / "shared" / "data" / "trec-dl-2019-passage"
OUT = ROOT / "benchmarks" / "results"


def _binary(campaign: Campaign) -> Campaign:
    """The campaign with its judged grades collapsed to 0/1 at its threshold (threshold 1)."""
    topics = [
        dataclasses.replace(t, grades=np.where(t.judged, t.relevant(campaign.rel_threshold), t.grades).astype(np.int16))
        for t in campaign.topics
    ]
    return dataclasses.replace(campaign, topics=topics, rel_threshold=1)


def _pool(campaign: Campaign, depth: int) -> Campaign:
    judged = []
    for t in campaign.topics:
        mask = np.zeros(t.n_docs, dtype=bool)
        top = t.ranking[:, :depth]
        mask[top[top >= 0]] = True
        judged.append(mask & t.judged)
    return campaign.with_judged(judged)


def _cpu(campaign: Campaign, repeats: int) -> tuple[float, Fusion]:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        model = Fusion().fit(campaign, rng=0)
        model.topic_cuts_  # noqa: B018  (the cut-points are fitted when first read)
        times.append(time.process_time() - start)
    return float(np.median(times)), model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_collection_arguments(parser, DL19, OUT, "ordinal")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    official = Campaign.from_files(args.data / "qrels.txt", args.data / "runs", rel_threshold=2)
    rows = []
    for name, campaign in (("official qrels", official), ("depth-10 pool", _pool(official, 10))):
        Fusion().fit(campaign, rng=0)  # warm-up (imports, caches)
        ordinal, model = _cpu(campaign, args.repeats)
        binary, _ = _cpu(_binary(campaign), args.repeats)
        rows.append({
            "judgments": name, "n_fit": model.n_fit_, "levels": [int(v) for v in model.grade_levels_],
            "ordinal_cpu_s": round(ordinal, 3), "binary_cpu_s": round(binary, 3),
            "ratio": round(ordinal / binary, 2),
        })  # fmt: skip
    result = {"machine": machine(), "date": utc_now(), "repeats": args.repeats, "rows": rows}
    lines = [
        "# Ordinal against binary fit of the default model (DL 2019, rel >= 2)",
        "",
        f"{result['date']}; {result['machine']}; median of {args.repeats} fits; target ratio <= 1.5.",
        "",
        "| judgments | fitted on | levels | ordinal CPU s | binary CPU s | ratio |",
        "|---|---|---|---|---|---|",
        *(f"| {r['judgments']} | {r['n_fit']} | {r['levels']} | {r['ordinal_cpu_s']} | "
          f"{r['binary_cpu_s']} | {r['ratio']} |" for r in rows),
        "",
    ]  # fmt: skip
    write_results(result, "\n".join(lines), args.out, args.data, DL19, "ordinal")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
