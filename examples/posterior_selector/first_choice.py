"""Before any label: the refit's p against the posterior predictive p the choice can read.

``PosteriorSelection(choose_from="predictive")`` ranks the candidates with the mean of the
refit's posterior draws (weighted by the labels since); the default reads the refit's
estimate, the default model's fit at the posterior mode. The two differ already at the first
refit, before any label has weighted the draws. For each trial of run.sh's protocol on a
collection (the same trial seeds, run sets and random stream as the posterior selector's),
this starts the guarded reweighting selector both ways on the initial pair and writes, per
trial, how far apart the two p are on the pair's candidate documents and whether the first
document chosen is the same (``results_reweight/first_choice_NAME.csv``).

    python examples/posterior_selector/first_choice.py dl19
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from _protocol import C, COLLECTIONS, DEPTH, K, SEED, held_out, load

OUT = Path(__file__).resolve().parent / "results_reweight"


def main(argv: list[str] | None = None) -> None:
    from relimpute.calibration.strategies import get_calibration_strategy, with_settings_from
    from relimpute.calibration.trials import strategy_rng, trial_specs
    from relimpute.selection import SelectionSession

    argv = sys.argv[1:] if argv is None else argv
    name = argv[0] if argv else "dl19"
    if name not in COLLECTIONS:
        raise SystemExit(f"first_choice.py: unknown collection {name!r} (one of {', '.join(COLLECTIONS)})")
    campaign, groups = load(name)
    base = campaign.truncated(DEPTH, shrink=True)
    (strategy,) = with_settings_from([get_calibration_strategy("posterior")], held_out(name))
    rows = []
    for spec in trial_specs(base.systems, 20, K, C, SEED, groups):
        pair = list(spec.initial)
        full = base.subset(list(spec.systems))
        hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics]).subset(pair)
        chosen, p = {}, {}
        for choose_from in ("refit", "predictive"):
            params = {**strategy.selector_kwargs(), "update": "reweight", "min_ess": 0.5, "confirm": True,
                      "choose_from": choose_from}  # fmt: skip
            session = SelectionSession(hidden, strategy.selector, pair, confidence=0.95,
                                       rng=strategy_rng(spec.seed, strategy.name), **params)  # fmt: skip
            candidates = np.concatenate(session.state.candidates)
            p[choose_from] = np.concatenate(session.strategy.choice_p_)[candidates]
            chosen[choose_from] = session.propose()
        gap = p["predictive"] - p["refit"]
        rows.append({
            "trial": spec.trial, "candidates": len(gap),
            "median_abs_gap": float(np.median(np.abs(gap))), "max_abs_gap": float(np.max(np.abs(gap))),
            "mean_refit_p": float(p["refit"].mean()), "mean_predictive_p": float(p["predictive"].mean()),
            "same_first_document": chosen["refit"] == chosen["predictive"],
        })  # fmt: skip
        print(rows[-1], flush=True)
    frame = pd.DataFrame(rows)
    frame.to_csv(OUT / f"first_choice_{name}.csv", index=False, float_format="%.4g")
    print(f"{COLLECTIONS[name][0]}: median |predictive p − refit p| over trials "
          f"{frame['median_abs_gap'].median():.3f}; the same first document in "
          f"{int(frame['same_first_document'].sum())} of {len(frame)} trials")


if __name__ == "__main__":
    main()
