"""Is half of MTC's judgments a yardstick a calibrated selector can meet? Trial by trial.

For every trial of run.sh's protocol on one collection (seed 2007, k = 10 one run per group,
c = 2, runs cut at rank 100, budget 300, the default model's settings chosen without the
collection) the judging loops of ``mtc`` and ``posterior`` run on the initial pair exactly as
``relimpute calibrate`` runs them (the same strategies, rng streams and oracle: the judgments
of ``results/NAME``'s trials); one row per trial: the pair's true ΔMAP, MTC's judgments, its
stated confidence and whether it calls the pair the right way, and the same for the posterior
selector, and the posterior predictive confidence of the default model before any judgment.
Writes ``results/yardstick_NAME.csv`` and prints the table and the medians (all trials, and
the trials MTC decides the right way).

    python examples/posterior_selector/mtc_yardstick.py dl19 [--trials 20]
    # or split over two processes, then merge
    python examples/posterior_selector/mtc_yardstick.py dl19 --only 0,2,4,6,8,10,12,14,16,18 --out a.csv
    python examples/posterior_selector/mtc_yardstick.py dl19 --only 1,3,5,7,9,11,13,15,17,19 --out b.csv
    python examples/posterior_selector/mtc_yardstick.py dl19 --merge a.csv b.csv
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from _protocol import C, COLLECTIONS, DEPTH, K, ROOT, SEED, held_out, load

BUDGET = 300
RESULTS = ROOT / "examples" / "posterior_selector" / "results"


def main(argv: list[str] | None = None) -> None:
    from relimpute.calibration.strategies import get_calibration_strategy, with_settings_from
    from relimpute.confidence import ConfidenceEngine
    from relimpute.calibration.trials import _gather_judgments, strategy_rng, trial_specs, true_map
    from relimpute.selection import SimulatedAssessor

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection", choices=sorted(COLLECTIONS))
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--only", help="comma-separated trial numbers (default: all)")
    parser.add_argument("--out", type=Path, help="the CSV, written trial by trial")
    parser.add_argument("--merge", type=Path, nargs="+", help="merge these CSVs into --out")
    args = parser.parse_args(argv)
    out = args.out or RESULTS / f"yardstick_{args.collection}.csv"
    if args.merge:
        frame = pd.concat([pd.read_csv(f) for f in args.merge])
        frame = frame.drop_duplicates("trial").sort_values("trial")
        frame.to_csv(out, index=False, float_format="%.6g")
        print(table(frame))
        return
    campaign, groups = load(args.collection)
    base = campaign.truncated(DEPTH, shrink=True)
    specs = trial_specs(base.systems, args.trials, K, C, SEED, groups)
    strategies = with_settings_from(
        [get_calibration_strategy(s) for s in ("mtc", "posterior")], held_out(args.collection)
    )
    only = None if args.only is None else [int(t) for t in args.only.split(",")]
    rows = []
    for spec in specs if only is None else [specs[t] for t in only]:
        full = base.subset(list(spec.systems))
        hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
        a, b = spec.initial
        truth = true_map(full)
        row = {"trial": spec.trial, "system_a": a, "system_b": b}
        row["true_delta_map"] = truth[a] - truth[b]
        for strategy in strategies:
            start = time.process_time()
            result = _gather_judgments(
                hidden, SimulatedAssessor(full), strategy, spec.initial, 0.95, BUDGET,
                strategy_rng(spec.seed, strategy.name),
            )  # fmt: skip
            p = float(result.pairs["p_a_better"].iloc[0])
            key = strategy.name.replace("-", "_")
            row.update({
                f"{key}_judgments": result.n_judgments, f"{key}_stopped": result.stopped_because,
                f"{key}_p_a_better": p, f"{key}_confidence": max(p, 1 - p),
                f"{key}_right": (p > 0.5) == (row["true_delta_map"] > 0) if p != 0.5 else False,
                f"{key}_cpu_s": time.process_time() - start,
            })  # fmt: skip
            if strategy.name == "posterior":  # what the default model says before any judgment
                pair = hidden.subset([a, b])
                estimate = strategy.make_model().fit(pair, rng=1).predict(pair)
                engine = ConfidenceEngine()
                at_0 = engine.confidence(
                    pair, estimate, pairs=[(a, b)], n_draws=4000, rng=2, method="monte carlo"
                )
                p0 = at_0.p_a_better[0]
                row["posterior_confidence_at_0"] = max(p0, 1 - p0)
        rows.append(row)
        pd.DataFrame(rows).to_csv(out, index=False, float_format="%.6g")  # a killed run keeps them
        print({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}, flush=True)
    print(table(pd.DataFrame(rows)))


def table(frame: pd.DataFrame) -> str:
    """The markdown table of the README and the medians under it."""
    lines = [  # fmt: skip
        "| trial | true ΔMAP | MTC judgments | MTC stated confidence | MTC call | posterior judgments "
        "| posterior confidence | posterior call | posterior confidence at 0 judgments |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def call(r, key):
        if r[f"{key}_stopped"] != "confidence":
            return "budget, leaning " + ("right" if r[f"{key}_right"] else "wrong")
        return "right" if r[f"{key}_right"] else "**wrong**"

    for _, r in frame.iterrows():
        lines.append(  # fmt: skip
            f"| {r.trial} | {r.true_delta_map:+.3f} | {r.mtc_judgments} | {r.mtc_confidence:.3f} | {call(r, 'mtc')} "
            f"| {r.posterior_judgments} | {r.posterior_confidence:.3f} | {call(r, 'posterior')} "
            f"| {r.posterior_confidence_at_0:.3f} |"
        )  # fmt: skip
    decided = frame[(frame.mtc_stopped == "confidence") & frame.mtc_right]
    med = lambda s: float(np.median(s))  # noqa: E731
    lines += [  # fmt: skip
        "",
        f"MTC median judgments, all {len(frame)} trials (as published): {med(frame.mtc_judgments):g}; "
        f"over the {len(decided)} trials MTC decides the right way: {med(decided.mtc_judgments):g}. "
        f"Posterior selector: {med(frame.posterior_judgments):g} over all trials, "
        f"{med(decided.posterior_judgments):g} over those {len(decided)}.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
