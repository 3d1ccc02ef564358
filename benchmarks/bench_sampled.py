"""Inferred measures of sampled qrels: ``relimpute evaluate`` against NIST's ``sample_eval.pl``.

On the bioCADDIE 2016 sampled qrels (142,805 lines), 37 seeded runs of 1,000 documents a topic
over its docnos (written to a temporary folder, not kept), three commands, each a child process
timed by its rusage (CPU = user + system), in interleaved rounds:

- ``sample_eval.pl QRELS RUN`` once per run file (how the script is used), the 37 summed;
- ``relimpute evaluate QRELS-SAMPLED RUNS/`` with every inferred measure;
- ``relimpute evaluate QRELS RUNS/`` on the same qrels as ordinary four-column qrels
  (``-1`` kept: the same size), with AP, P@10, nDCG@10, NumRel and NumRelRet.

Targets: relimpute at least 10× less CPU than the script, and within 1.5× of the ordinary
evaluate. Needs perl and ../shared; prints ``skipped: ...`` and exits 0 without them.

    python benchmarks/bench_sampled.py [--rounds 3] [--runs 37]

Writes ``benchmarks/results/sampled.json`` and ``sampled.md``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from _run_info import machine, timed_child, utc_now, write_results

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
QRELS = SHARED / "data" / "biocaddie-2016-sampled" / "qrels-sampled.txt"
SCRIPT = SHARED / "oracles" / "sample_eval.pl"
RESULTS = ROOT / "benchmarks" / "results"
INFERRED = ["xinfAP", "infNDCG", "iP@10", "iP@50", "iP@1000", "iNumRel", "iNumRelRet"]
ORDINARY = ["AP", "P@10", "nDCG@10", "NumRel", "NumRelRet"]


def _write_inputs(folder: Path, n_runs: int) -> tuple[Path, Path]:
    """Ordinary qrels of the same lines, and ``n_runs`` runs of 1,000 documents a topic."""
    rows = [line.split() for line in QRELS.read_text().splitlines() if line.strip()]
    ordinary = folder / "qrels-ordinary.txt"
    ordinary.write_text("".join(f"{t} 0 {d} {r}\n" for t, _, d, _, r in rows))
    by_topic: dict[str, list[str]] = {}
    for topic, _, doc, _, _ in rows:
        by_topic.setdefault(topic, []).append(doc)
    runs = folder / "runs"
    runs.mkdir()
    rng = np.random.default_rng(41)
    for i in range(n_runs):
        lines = []
        for topic, docs in by_topic.items():
            picked = rng.choice(len(docs), size=min(1000, len(docs)), replace=False)
            scores = np.sort(rng.normal(size=len(picked)))[::-1]
            lines += [f"{topic} Q0 {docs[j]} {r + 1} {s:.6f} run{i:02d}\n"
                      for r, (j, s) in enumerate(zip(picked, scores))]
        (runs / f"run{i:02d}.txt").write_text("".join(lines))
    return ordinary, runs


def _relimpute(*argv) -> list[str]:
    return [sys.executable, "-m", "relimpute", "evaluate", *map(str, argv), "-f", "tsv", "-Q"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=37)
    args = parser.parse_args()
    if shutil.which("perl") is None or not QRELS.is_file() or not SCRIPT.is_file():
        print(f"skipped: needs perl, {QRELS} and {SCRIPT}")
        return 0
    times: dict[str, list[float]] = {"script": [], "sampled": [], "ordinary": []}
    with tempfile.TemporaryDirectory() as tmp:
        ordinary, runs = _write_inputs(Path(tmp), args.runs)
        files = sorted(runs.iterdir())
        measures = [a for m in INFERRED for a in ("-m", m)]
        plain = [a for m in ORDINARY for a in ("-m", m)]
        for _ in range(args.rounds):
            times["script"].append(sum(
                timed_child(["perl", str(SCRIPT), str(QRELS), str(f)],
                            stdout=subprocess.DEVNULL)["cpu_s"] for f in files))
            times["sampled"].append(timed_child(_relimpute(QRELS, runs, *measures),
                                                stdout=subprocess.DEVNULL)["cpu_s"])
            times["ordinary"].append(timed_child(_relimpute(ordinary, runs, *plain),
                                                 stdout=subprocess.DEVNULL)["cpu_s"])
    median = {k: round(statistics.median(v), 2) for k, v in times.items()}
    faster = median["script"] / median["sampled"]
    versus = median["sampled"] / median["ordinary"]
    result = {"when": utc_now(), "machine": machine(), "runs": args.runs, "rounds": args.rounds,
              "cpu_s": times, "median_cpu_s": median, "script_over_sampled": round(faster, 2),
              "sampled_over_ordinary": round(versus, 2)}
    markdown = f"""# Inferred measures: `relimpute evaluate` against `sample_eval.pl`

{utc_now()}; bioCADDIE 2016 sampled qrels (142,805 lines), {args.runs} seeded runs of 1,000
documents a topic; CPU seconds (user + system), median of {args.rounds} interleaved rounds;
load at start {result["machine"]["load_average_1min"]}.

| command | CPU s | target |
|---|---|---|
| `sample_eval.pl` once per run ({args.runs} processes) | {median["script"]} | |
| `relimpute evaluate` sampled qrels, {len(INFERRED)} inferred measures | {median["sampled"]} | ≥ 10× less than the script: **{faster:.1f}×** ({"met" if faster >= 10 else "not met"}) |
| `relimpute evaluate` the same lines as ordinary qrels, {len(ORDINARY)} measures | {median["ordinary"]} | sampled ≤ 1.5× this: **{versus:.2f}×** ({"met" if versus <= 1.5 else "not met"}) |
"""
    write_results(result, markdown, RESULTS, QRELS, QRELS, "sampled")
    return 0




if __name__ == "__main__":
    sys.exit(main())
