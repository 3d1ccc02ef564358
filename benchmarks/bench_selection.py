"""Speed of the MTC loop on DL 2019, and a short run of the reference protocol.

Run ``python benchmarks/bench_selection.py [--trials N]`` (a few minutes on
2 cores); writes ``benchmarks/results/selection.json`` and ``.md``. Parts:

1. MTC judgments per second on DL 2019 (43 topics, oracle from the official
   qrels, every judgment hidden first, rel >= 2) at full depth: for one pair
   and for the 37-run set (weights summed over undecided pairs, confidence
   of all 666 pairs kept up to date). Each judgment updates the MTC sums of
   the systems retrieving the judged document (O(depth) each) and
   recomputes the moments of the touched pairs on that one topic. The loop
   is timed after its set-up, which is reported separately.
2. The reference protocol of docs/math/reference-points.md (runs
   cut at 100, 10 runs one per group, the first two the initial pair, MTC
   with p = ½, stop at 0.95; a budget cap of 3,000) for ``--trials`` trials:
   median / mean judgments and the share stopping at 0 judgments, beside
   the reference numbers (69 / 296 / 36% over 1,000 trials); the same
   trials with IP (rank order, confidence with p = ½) and the size of the
   pair's depth-100 pool.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute.data import Campaign
from relimpute.selection import SelectionSession, SimulatedAssessor, run_selection

HERE = Path(__file__).resolve().parent
DL19 = HERE.parent.parent / "shared" / "data" / "trec-dl-2019-passage"
REFERENCE = {"median": 69, "mean": 296, "zero_share": 0.36, "trials": 1000}


def time_loop(hidden, oracle, systems, n):
    start = time.perf_counter()
    session = SelectionSession(hidden, "mtc", systems, confidence=None)
    setup = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(n):
        query_id, doc_id = session.propose()
        session.judge(query_id, doc_id, oracle.judge(query_id, doc_id))
    loop = time.perf_counter() - start
    return {
        "systems": len(session.state.systems),
        "pairs": len(session.state.pairs),
        "judgments": n,
        "setup_s": setup,
        "loop_s": loop,
        "judgments_per_s": n / loop,
    }


def protocol(campaign, hidden, oracle, n_trials, seed=2007):
    frame = pd.read_csv(DL19 / "groups.tsv", sep="\t")
    groups = {g: sorted(rows["run"]) for g, rows in frame.groupby("group")}
    pool = campaign.truncated(100)
    rows = []
    for child in np.random.SeedSequence(seed).spawn(n_trials):
        rng = np.random.default_rng(child)
        chosen = rng.choice(sorted(groups), size=10, replace=False)
        runs = [str(rng.choice(groups[g])) for g in chosen]
        trial = hidden.subset(systems=runs)
        mtc = run_selection(trial, "mtc", oracle, runs[:2], depth=100, budget=3000)
        ip = run_selection(trial, "ip", oracle, runs[:2], depth=100, budget=3000, prior=0.5)
        index = pool.system_index(runs[:2])
        rows.append(
            {
                "pair": f"{runs[0]} vs {runs[1]}",
                "mtc": mtc.n_judgments,
                "mtc_stop": mtc.stopped_because,
                "ip": ip.n_judgments,
                "depth100_pool": sum(int(t.retrieved(index).sum()) for t in pool.topics),
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--pair-judgments", type=int, default=500)
    parser.add_argument("--set-judgments", type=int, default=100)
    args = parser.parse_args()
    if not (DL19 / "qrels.txt").is_file():
        raise SystemExit(f"DL 2019 data not found at {DL19}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(DL19 / "qrels.txt", DL19 / "runs", rel_threshold=2)
    hidden = campaign.with_judged([np.zeros(t.n_docs, bool) for t in campaign.topics])
    oracle = SimulatedAssessor(campaign)
    time_loop(hidden, oracle, ("bm25base_p", "idst_bert_p1"), 5)  # load numba caches
    speed = {
        "pair": time_loop(hidden, oracle, ("bm25base_p", "idst_bert_p1"), args.pair_judgments),
        "run_set_37": time_loop(hidden, oracle, None, args.set_judgments),
    }
    start = time.perf_counter()
    study = protocol(campaign, hidden, oracle, args.trials)
    study_s = time.perf_counter() - start
    summary = {
        "trials": args.trials,
        "mtc_median": float(study["mtc"].median()),
        "mtc_mean": float(study["mtc"].mean()),
        "mtc_zero_share": float((study["mtc"] == 0).mean()),
        "mtc_capped": int((study["mtc_stop"] == "budget").sum()),
        "ip_median": float(study["ip"].median()),
        "ip_mean": float(study["ip"].mean()),
        "depth100_pool_median": float(study["depth100_pool"].median()),
        "seconds": study_s,
    }
    results = {
        "machine": platform.platform(),
        "speed": speed,
        "protocol": summary,
        "reference": REFERENCE,
    }
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "selection.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = [
        "# Selection benchmark (DL 2019 passage, rel >= 2, oracle from the official qrels)",
        "",
        (
            "Command: `python benchmarks/bench_selection.py "
            f"--trials {args.trials} --pair-judgments {args.pair_judgments} "
            f"--set-judgments {args.set_judgments}`"
        ),
        f"on {platform.platform()} (shared machine, wall clock).",
        "",
        "## MTC speed at full depth",
        "",
        "| compared | pairs | judgments | set-up (s) | loop (s) | judgments / s |",
        "|---|---|---|---|---|---|",
    ]
    for name, row in speed.items():
        lines.append(
            f"| {name} ({row['systems']} runs) | {row['pairs']} | {row['judgments']} | {row['setup_s']:.2f} "
            f"| {row['loop_s']:.2f} | {row['judgments_per_s']:.1f} |"
        )
    lines += [
        "",
        f"## Reference protocol, {args.trials} trials "
        f"(docs/math/reference-points.md: {REFERENCE['trials']} trials)",
        "",
        "| measure | relimpute | reference |",
        "|---|---|---|",
        f"| MTC median judgments | {summary['mtc_median']:.0f} | {REFERENCE['median']} |",
        (
            f"| MTC mean judgments (cap 3,000; {summary['mtc_capped']} capped) "
            f"| {summary['mtc_mean']:.0f} | {REFERENCE['mean']} |"
        ),
        f"| trials stopping at 0 judgments | {summary['mtc_zero_share']:.0%} | {REFERENCE['zero_share']:.0%} |",
        f"| IP (p = ½ for confidence) median / mean | {summary['ip_median']:.0f} / {summary['ip_mean']:.0f} | |",
        f"| depth-100 pool of the pair, median | {summary['depth100_pool_median']:.0f} | |",
        "",
        f"Study time: {study_s:.0f} s.",
    ]
    (out / "selection.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
