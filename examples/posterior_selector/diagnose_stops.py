"""Why did the reweighting selector stop on the wrong side? Noise, the reweighting, or the model.

Replays trials of ``variants.py --update reweight --min-ess 0.5`` (run.sh's protocol: the same
run sets, initial pair, random streams and oracle, budget 300) judgment by judgment to their
stop, and at the stopping judgment writes one row per trial:

- ``stated``: the confidence the loop stopped on (weighted Monte Carlo over the latest refit's
  draws, ``n_draws`` relevance draws);
- ``se_cluster``: its Monte Carlo standard error, the delta-method variance of self-normalised
  importance sampling (Owen 2013, *Monte Carlo theory, methods and examples*, §9.2) with the
  Monte Carlo draws grouped by the posterior draw they read;
  ``se_ess``: the cruder ``sqrt(c (1 − c) / ESS)`` with the weights' effective sample size;
- ``weighted_more_mc``: the same weighted posterior draws, 10× the relevance draws (other seed):
  what remains when the relevance draws' noise is removed;
- ``unweighted``: the same draws without the weights (today's plain checks);
- ``refit_200``: the loop's own refit (200 draws, 4000 Monte Carlo draws) on the same judgments,
  three seeds: what a confirming refit would say;
- ``fresh``: a fresh refit on the same judgments with 2000 draws and 20,000 Monte Carlo draws.

Each confidence is that of the side the loop called. Writes ``results_reweight/diagnosis.csv``.

    python examples/posterior_selector/diagnose_stops.py dl21:2,18 dl19:3
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np
import pandas as pd

from _protocol import C, DEPTH, K, ROOT, SEED, held_out, load

OUT = ROOT / "examples" / "posterior_selector" / "results_reweight" / "diagnosis.csv"
BUDGET, TARGET = 300, 0.95
OWN = {"choose": "mtc", "check_every": None, "update": "reweight", "min_ess": 0.5}


def cluster_se(mean_draws: np.ndarray, pair: tuple[int, int], log_weights: np.ndarray) -> tuple[float, float]:
    """``(P, se)`` of the self-normalised weighted ``P(Δ > 0)`` (ties ½), Monte Carlo draw ``b``
    reading posterior draw ``b mod M``: the delta-method variance summed over posterior draws."""
    from relimpute.selection.posterior import normalised_weights

    m = len(log_weights)
    x = mean_draws[:, pair[0]] - mean_draws[:, pair[1]]
    y = (x > 0) + 0.5 * (x == 0)
    w = normalised_weights(log_weights)[np.arange(len(x)) % m]
    w = w / w.sum()
    p = float(w @ y)
    per_draw = np.bincount(np.arange(len(x)) % m, weights=w * (y - p), minlength=m)
    return p, float(np.sqrt(np.sum(per_draw**2)))


def replay(name: str, trial: int, campaign, groups) -> dict:
    from relimpute.calibration.strategies import get_calibration_strategy, with_settings_from
    from relimpute.calibration.trials import strategy_rng, trial_specs, true_map
    from relimpute.confidence import ConfidenceEngine
    from relimpute.selection import SimulatedAssessor
    from relimpute.selection.loop import SelectionSession
    from relimpute.selection.posterior import ConditionedDraws

    base = campaign.truncated(DEPTH, shrink=True)
    spec = trial_specs(base.systems, trial + 1, K, C, SEED, groups)[trial]
    strategy = get_calibration_strategy("posterior")
    strategy = replace(strategy, selector_params={**strategy.selector_params, **OWN})
    (strategy,) = with_settings_from([strategy], held_out(name))
    full = base.subset(list(spec.systems))
    hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
    a, b = spec.initial
    truth = true_map(full)
    start = time.process_time()
    session = SelectionSession(
        hidden.subset([a, b]), strategy.selector, (a, b), confidence=TARGET, budget=BUDGET,
        rng=strategy_rng(spec.seed, strategy.name), **strategy.selector_kwargs(),
    )  # fmt: skip
    ask = SimulatedAssessor(full).judge
    path = []
    while (reason := session.stop_reason()) is None:
        proposal = session.propose()
        if proposal is None:
            reason = "exhausted"
            break
        session.judge(*proposal, ask(*proposal))
        path.append(float(session.confidence()[0]))
    sel, state = session.strategy, session.state
    p_stated = float(sel.posterior_.p_a_better()[0])
    side = p_stated > 0.5  # the side called: a better than b
    as_called = lambda p: p if side else 1.0 - p  # noqa: E731
    row = {
        "collection": name, "trial": trial, "system_a": a, "system_b": b,
        "true_delta_map": truth[a] - truth[b], "judgments": session.n_judged, "stopped": reason,
        "called_right": side == (truth[a] - truth[b] > 0), "stated": as_called(p_stated),
        "ess": sel.ess_, "n_draws": len(sel.log_weights_), "n_fits": sel.n_fits_,
        "replay_cpu_s": time.process_time() - start,
        "checks_at_0.93_or_more": int(np.sum(np.maximum(path, 0.0) >= 0.93)),
    }  # fmt: skip
    cond = sel.conditioned_
    mean_draws = np.zeros((cond.n_draws, len(cond.rows)))
    for t in range(cond.campaign.n_topics):
        mean_draws += cond._topic(t) / cond.campaign.n_topics
    p_check, se = cluster_se(mean_draws, tuple(cond.pairs[0]), sel.log_weights_)
    row["recomputed"] = as_called(p_check)
    row["se_cluster"] = se
    row["se_ess"] = float(np.sqrt(row["stated"] * (1 - row["stated"]) / max(sel.ess_, 1.0)))
    more = ConditionedDraws(cond.campaign, cond.estimate, [(a, b)], 10 * cond.n_draws, 12345)
    row["weighted_more_mc"] = as_called(float(more.summaries(sel.log_weights_)[2][0]))
    row["unweighted"] = as_called(float(more.summaries(None)[2][0]))
    # refits on the same judgments: the loop's own size, and a fresh large one
    current = state.current_campaign()
    engine = ConfidenceEngine()
    refits = []
    for seed in (1, 2, 3):
        sel.rng_ = np.random.default_rng(seed)
        estimate = sel._fit_predict(current)
        result = engine.confidence(
            current, estimate, pairs=[(a, b)], n_draws=int(sel.n_draws), rng=seed, method="monte carlo"
        )
        refits.append(as_called(float(result.p_a_better[0])))
    row.update({f"refit_200_seed{s}": v for s, v in zip((1, 2, 3), refits)})
    sel.n_draws, sel.rng_ = 2000, np.random.default_rng(7)
    estimate = sel._fit_predict(current)
    result = engine.confidence(
        current, estimate, pairs=[(a, b)], n_draws=20_000, rng=8, method="monte carlo"
    )
    row["fresh_2000"] = as_called(float(result.p_a_better[0]))
    row["fresh_se"] = float(np.sqrt(row["fresh_2000"] * (1 - row["fresh_2000"]) / 2000))
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trials", nargs="+", help="NAME:T,T,... (e.g. dl21:2,18)")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    rows = []
    for item in args.trials:
        name, trials = item.split(":")
        campaign, groups = load(name)
        for t in trials.split(","):
            rows.append(replay(name, int(t), campaign, groups))
            print({k: round(v, 4) if isinstance(v, float) else v for k, v in rows[-1].items()}, flush=True)
            pd.DataFrame(rows).to_csv(args.out, index=False, float_format="%.4g")


if __name__ == "__main__":
    main()
