"""The default model's ordinal fit against its binary fit on DL 2019 (issue 25: ≤ 1.5×).

Both fit ``Fusion()`` (the shipped settings) on the same judged documents of DL 2019
(rel ≥ 2 relevant): once with the official grades 0-3 (the logistic fit of relevance,
then the cut-points of the cumulative logits given its log-odds) and once with the grades
collapsed to 0/1 (the logistic fit alone, what the model ran before grades). Judgments: the official qrels, and the depth-10 pool of all 37 runs.
CPU seconds of ``fit`` with the cut-points read (median of ``--repeats``; the evidence and
design are built in both), the two fits alternating so that a load that comes and goes
weighs on both; the cut-points' own CPU seconds beside them. Writes
benchmarks/results/ordinal.{md,json} (every repeat in the json).

    python benchmarks/bench_ordinal.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
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


def _cpu(campaign: Campaign) -> tuple[float, float, Fusion]:
    """CPU seconds of one fit with its cut-points read, and of the cut-points alone."""
    start = time.process_time()
    model = Fusion().fit(campaign, rng=0)
    fitted = time.process_time()
    model.topic_cuts_  # noqa: B018  (the cut-points are fitted when first read)
    end = time.process_time()
    return end - start, end - fitted, model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_collection_arguments(parser, DL19, OUT, "ordinal")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    official = Campaign.from_files(args.data / "qrels.txt", args.data / "runs", rel_threshold=2)
    rows = []
    info = machine()
    for name, campaign in (("official qrels", official), ("depth-10 pool", _pool(official, 10))):
        binary_campaign = _binary(campaign)
        Fusion().fit(campaign, rng=0).topic_cuts_  # noqa: B018  (warm-up: imports, caches)
        ordinal, cuts, binary = [], [], []
        for _ in range(args.repeats):
            seconds, cut_seconds, model = _cpu(campaign)
            ordinal.append(seconds)
            cuts.append(cut_seconds)
            binary.append(_cpu(binary_campaign)[0])
        rows.append({
            "judgments": name, "n_fit": model.n_fit_, "levels": [int(v) for v in model.grade_levels_],
            "ordinal_cpu_s": round(float(np.median(ordinal)), 3), "cuts_cpu_s": round(float(np.median(cuts)), 3),
            "binary_cpu_s": round(float(np.median(binary)), 3),
            "ratio": round(float(np.median(ordinal) / np.median(binary)), 2),
            "repeats_cpu_s": {"ordinal": [round(v, 3) for v in ordinal], "cuts": [round(v, 3) for v in cuts],
                              "binary": [round(v, 3) for v in binary]},
        })  # fmt: skip
    info["load_average_1min_end"] = round(os.getloadavg()[0], 2)
    result = {"machine": info, "date": utc_now(), "repeats": args.repeats, "rows": rows}
    lines = [
        f"# Ordinal against binary fit of the default model ({args.data.name}, rel >= 2)",
        "",
        f"{result['date']}; {result['machine']}; median of {args.repeats} fits of each, alternating; "
        "target ratio <= 1.5.",
        "",
        "| judgments | fitted on | levels | ordinal CPU s | of which cut-points | binary CPU s | ratio |",
        "|---|---|---|---|---|---|---|",
        *(f"| {r['judgments']} | {r['n_fit']} | {r['levels']} | {r['ordinal_cpu_s']} | {r['cuts_cpu_s']} | "
          f"{r['binary_cpu_s']} | {r['ratio']} |" for r in rows),
        "",
    ]  # fmt: skip
    write_results(result, "\n".join(lines), args.out, args.data, DL19, "ordinal")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
