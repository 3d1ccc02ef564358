"""MTC against the posterior selector with each way of choosing documents, paired trial by trial.

For the given trials of run.sh's protocol (seed 2007, k = 10 one run per group, c = 2, runs
cut at rank 100, the default model's settings chosen without the collection) the judging
loop alone runs on the initial pair, an oracle reading the official qrels, until 0.95 or the
budget, for ``mtc`` and for ``PosteriorSelection(choose=...)`` with every ``choose``; one
line per trial and selector: judgments, why it stopped, P(ΔMAP > 0) of the pair at the end,
the true ΔMAP, CPU seconds, refits and refits whose Monte Carlo was screened out. No
generalisation to the other runs (that is ``variants.py``), so it is cheap enough for a
loaded machine.

    python examples/posterior_selector/paired_choice.py dl19 --trials 0,1,2,3,4,5,6,7
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from _protocol import C, COLLECTIONS, DEPTH, K, SEED, held_out, load


def main(argv: list[str] | None = None) -> None:
    from relimpute.calibration.strategies import get_calibration_strategy, with_settings_from
    from relimpute.calibration.trials import trial_specs, true_map
    from relimpute.selection import MTC, PosteriorSelection, SelectionSession, SimulatedAssessor
    from relimpute.selection.posterior import CHOOSE

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection", choices=sorted(COLLECTIONS))
    parser.add_argument("--trials", default="0,1,2,3,4,5,6,7", help="comma-separated trial numbers")
    parser.add_argument("--budget", type=int, default=300)
    args = parser.parse_args(argv)
    campaign, groups = load(args.collection)
    base = campaign.truncated(DEPTH, shrink=True)
    trials = [int(t) for t in args.trials.split(",")]
    specs = trial_specs(base.systems, max(trials) + 1, K, C, SEED, groups)
    settings = held_out(args.collection)
    kwargs = with_settings_from([get_calibration_strategy("posterior")], settings)[0].selector_kwargs()
    print("trial selector judgments stopped p_a_better true_delta_map cpu_s fits screened", flush=True)
    for t in trials:
        spec = specs[t]
        full = base.subset(list(spec.systems))
        a, b = spec.initial
        hidden = full.with_judged([np.zeros(x.n_docs, dtype=bool) for x in full.topics]).subset([a, b])
        truth = true_map(full)
        selectors = [("mtc", MTC())] + [(f"posterior-{c}", PosteriorSelection(**kwargs, choose=c)) for c in CHOOSE]
        for label, selector in selectors:
            start = time.process_time()
            session = SelectionSession(hidden, selector, (a, b), confidence=0.95, budget=args.budget, rng=1)
            oracle = SimulatedAssessor(full)
            while session.stop_reason() is None:
                q, d = session.propose()
                session.judge(q, d, oracle.judge(q, d))
            p = float(session.tracker.p_a_better()[0])
            print(t, label, session.n_judged, session.stop_reason(), f"{p:.3f}", f"{truth[a] - truth[b]:.4f}",
                  f"{time.process_time() - start:.1f}", getattr(selector, "n_fits_", 0),
                  getattr(selector, "n_screened_", 0), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
