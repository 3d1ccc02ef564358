"""Peak memory of the design-based estimators on a large stratified sample.

A census of TREC-8's depth-100 pool (every document one of the 71 pooled runs ranks in its top
6 judged, 13.6% of the rest drawn uniformly: 20% of the pool, seed 1,
``examples/design_based/study.py``'s census design) is written as sampled qrels in
``sample_eval.pl``'s five columns, with the 71 runs cut at 100, and each round runs as a child
process:

- ``evaluate``: ``relimpute evaluate QRELS RUNS -m AP`` on the whole pool's judgments (the
  yardstick: loading and scoring the same runs);
- ``evaluate-ht``: ``relimpute evaluate SAMPLE RUNS -m AP --estimator ht``: the default reading
  of a stratified sample, the jackknife's corrected ratio (delete-two values, runs × judged²
  floats a topic);
- ``compare-ht``: ``relimpute compare SAMPLE RUNS --estimator ht --systems`` (10 runs, 45 pairs).

Peak resident memory (MB) and CPU seconds of each child. Target: the estimators' peak within
1 GB of the yardstick's (one topic's delete-two values held at a time, not every topic's).
``--src`` times another checkout's ``src`` (before/after). Writes
``benchmarks/results/survey_memory.json`` and ``.md``.

    python benchmarks/bench_survey_memory.py [--rounds 2] [--src PATH]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

from _run_info import cli_child, machine, utc_now, write_results

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DATA = ROOT.parent / "shared" / "data" / "trec-8-adhoc"
TARGET_MB = 1024


def _write_inputs(folder: Path) -> tuple[Path, Path, Path, list[str]]:
    """The whole pool's qrels, the census sample as sampled qrels, the runs cut at 100."""
    sys.path.insert(0, str(ROOT / "examples" / "design_based"))
    import study

    universe = study.Universe(study.load("trec8"))
    plan = study.inclusion(universe, "census", 0.2, None)
    rng = np.random.default_rng(1)
    draws = [study.draw(pi, s, st, 1, rng) for pi, s, st in plan]
    whole, sample = [], []
    for top, d in zip(universe.topics, draws):
        q = top["query_id"]
        for doc, x, h, drawn in zip(top["doc_ids"], top["x"], d.stratum, d.drawn[0]):
            whole.append(f"{q} 0 {doc} {int(x)}\n")
            sample.append(f"{q} 0 {doc} {h} {int(x) if drawn else -1}\n")
    qrels, sampled, runs = folder / "qrels.txt", folder / "sample.txt", folder / "runs"
    qrels.write_text("".join(whole))
    sampled.write_text("".join(sample))
    runs.mkdir()
    names = [f"run{r:02d}" for r in range(universe.truth_ap.shape[1])]
    for r, name in enumerate(names):
        lines = []
        for top in universe.topics:
            at = np.flatnonzero(top["ranks"][r] > 0)
            for i in at[np.argsort(top["ranks"][r][at])]:
                rank = int(top["ranks"][r][i])
                lines.append(f"{top['query_id']} Q0 {top['doc_ids'][i]} {rank} {-rank} {name}\n")
        (runs / name).write_text("".join(lines))
    return qrels, sampled, runs, names


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"skipped: needs {DATA}")
        return 0
    found: dict[str, list[dict]] = {"evaluate": [], "evaluate-ht": [], "compare-ht": []}
    with tempfile.TemporaryDirectory() as tmp:
        qrels, sampled, runs, names = _write_inputs(Path(tmp))
        cases = {
            "evaluate": ["evaluate", qrels, runs, "-m", "AP", "-f", "tsv"],
            "evaluate-ht": ["evaluate", sampled, runs, "-m", "AP", "--estimator", "ht", "-f",
                            "tsv"],
            "compare-ht": ["compare", sampled, runs, "--estimator", "ht", "-f", "tsv",
                           "--systems", *names[:10]],
        }
        for _ in range(args.rounds):
            for name, argv in cases.items():
                found[name].append(cli_child([str(a) for a in argv], args.src))
    peak = {k: statistics.median(r["peak_mb"] for r in v) for k, v in found.items()}
    cpu = {k: statistics.median(r["cpu_s"] for r in v) for k, v in found.items()}
    over = {k: round(peak[k] - peak["evaluate"], 1) for k in ("evaluate-ht", "compare-ht")}
    met = all(v <= TARGET_MB for v in over.values())
    result = {"when": utc_now(), "machine": machine(), "src": str(args.src),
              "rounds": args.rounds, "runs": found, "median_peak_mb": peak,
              "median_cpu_s": cpu, "peak_over_evaluate_mb": over, "target_mb": TARGET_MB}
    rows = "\n".join(f"| `{k}` | {peak[k]:.0f} | {cpu[k]:.1f} | "
                     f"{'' if k == 'evaluate' else f'+{over[k]:.0f}'} |" for k in found)
    markdown = f"""# Peak memory of the design-based estimators (TREC-8 census sample, 20%)

{utc_now()}; TREC-8's depth-100 pool of its 71 pooled runs, top 6 judged whole and 13.6% of
the rest drawn (about 350 judged a topic); median of {args.rounds} rounds; src `{args.src}`;
load at start {result["machine"]["load_average_1min"]}.

| command | peak MB | CPU s | peak over `evaluate` (MB) |
|---|---|---|---|
{rows}

Target: within {TARGET_MB} MB of `evaluate`'s peak: **{"met" if met else "not met"}**.
"""
    write_results(result, markdown, RESULTS, DATA, DATA, "survey_memory")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
