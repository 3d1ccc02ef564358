"""Why ``bayes-mc`` ranks DL 2019's runs worse than ``fusion-mc``: chosen trials' final fits again.

Run from the repository root (data in ``../shared/data``)::

    python examples/bayes_calibration/tau_refit.py dl19 --trials 0-59 -o /tmp/tau_dl19.csv

Each trial of the held-out study (``run.sh``: seed 2007, k = 10 one run per group, c = 2,
depth 100, ``--settings-dir examples/calibration/held_out/C``) is rebuilt from its seed with
calibration's own functions: the same MTC judgments, the same model fit, the same Monte Carlo
(so ``tau_study`` reproduces ``loco/C/trials.csv``). Beside it, the same fit's E[MAP] by other
estimators, each giving a Kendall τ against the full-qrels MAP:

- ``tau_study``: the study's, 4,000 Monte Carlo draws over the model's 200 posterior draws;
- ``tau_exact``: the mean over the same 200 posterior draws of the exact E[MAP] given each
  draw's p (the study's estimand without its Bernoulli noise);
- ``tau_reseed``: as ``tau_exact`` over other posterior draws (Laplace: another seed;
  NUTS: the draws between those the study took): the posterior-draw noise of E[MAP];
- ``tau_point``: the engine's exact E[MAP] on the point estimate's p (Laplace: the mode of θ;
  NUTS: the posterior mean of θ), no posterior draws;
- ``tau_meanp``: exact E[MAP] on the mean over the 200 draws of p;
- ``tau_many`` (``--many``): as ``tau_exact`` over 1,000 posterior draws (NUTS: thinned from
  its 4,000; Laplace: 1,000 new): posterior-draw noise down;
- ``tau_fixed`` (``--spreads-fixed``, ``bayes-mc`` only): as ``tau_exact``, the hierarchy
  refitted with its spreads fixed at their centres (``*_log_sd`` = 0: the Laplace model's
  posterior, sampled by NUTS).

With ``bayes-mc`` the row adds the posterior of each learned spread (mean, 5%, 95%) and the
fit's convergence. ``--settings-dir`` overrides the held-out folder (a candidate fix).
Writes one row per trial and strategy, with each estimator's E[MAP] of the ten runs.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute.calibration.metrics import kendall_tau
from relimpute.calibration.strategies import resolve_strategies, with_settings_from
from relimpute.calibration.trials import (
    _engine,
    _gather_judgments,
    _with_labels,
    strategy_rng,
    trial_specs,
    true_map,
)
from relimpute.data import Campaign
from relimpute.groups import read_groups

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
COLLECTIONS = {
    "dl19": ("trec-dl-2019-passage", 2),
    "dl21": ("trec-dl-2021-passage", 2),
    "trec8": ("trec-8-adhoc", 1),
}


def trial_range(text: str) -> list[int]:
    """``"0-59"`` or ``"3,7,10-12"`` as trial numbers."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def exact_map(engine, campaign, estimate, systems, p=None) -> pd.Series:
    """The engine's exact E[MAP] per system on ``p`` (default: the estimate's), no draws."""
    plain = replace(estimate, p=tuple(estimate.p if p is None else p), draws=None, grades=None)
    scores = engine.confidence(campaign, plain, systems=systems, pairs=[], method="normal").scores
    return pd.Series(np.asarray(scores.e_map, float), index=list(scores.systems))


def over_draws(engine, campaign, estimate, systems) -> pd.Series:
    """The mean over the posterior draws of the exact E[MAP] given each draw's p (the
    quantity the study's Monte Carlo estimates, without its Bernoulli noise)."""
    draws = [np.asarray(d) for d in estimate.draws]
    maps = [
        exact_map(engine, campaign, estimate, systems, [d[i] for d in draws])
        for i in range(len(draws[0]))
    ]
    return sum(maps) / len(maps)


def reseeded(model):
    """``model`` with other posterior draws: the Laplace form draws θ (and the below-pool
    effects) from another seed; the hierarchy takes the other half of its NUTS draws."""
    target = model.fusion_ if hasattr(model, "fusion_") else model
    target.draw_seed_ = (int(target.draw_seed_) + 1) % 2**63
    if hasattr(target, "theta_draws_"):
        half = len(target.theta_draws_) // (2 * int(target.n_draws))
        target.theta_draws_ = target.theta_draws_[half:]  # thinned from here: a disjoint set
    return model


def spreads(model) -> dict[str, float]:
    """Posterior mean, 5% and 95% of each learned spread, and the fit's convergence."""
    post, row = model.idata_.posterior, {}
    for name in ("sigma_alpha", "sigma_u", "sigma_w"):
        if name in post:
            x = post[name].to_numpy().ravel()
            row[name] = x.mean()
            row[f"{name}_q05"], row[f"{name}_q95"] = np.quantile(x, [0.05, 0.95])
    d = model.diagnostics_
    return row | {"converged": d.converged, "divergences": d.divergences, "rhat_max": d.rhat_max}


def refit(campaign, spec, strategy, truth, engine, *, many: bool, fixed: bool) -> dict:
    """The trial's final fit for ``strategy`` as the study ran it, and the other estimators."""
    systems = list(spec.systems)
    full = campaign.subset(systems)
    hidden = full.with_judged([np.zeros(t.n_docs, dtype=bool) for t in full.topics])
    from relimpute.selection import SimulatedAssessor

    rng = strategy_rng(spec.seed, strategy.name)
    cpu = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assessor = SimulatedAssessor(full)
        result = _gather_judgments(hidden, assessor, strategy, spec.initial, 0.95, None, rng)
        after = _with_labels(full, result.campaign_after)
        model = strategy.make_model().fit(after, rng=rng)
        estimate = model.predict(after)
        study = engine.confidence(
            after, estimate, systems=systems, n_draws=strategy.n_draws, rng=rng,
            method="monte carlo",
        ).scores
        maps = {"study": pd.Series(np.asarray(study.e_map, float), index=list(study.systems))}
        maps["exact"] = over_draws(engine, after, estimate, systems)
        maps["point"] = exact_map(engine, after, estimate, systems)
        mean_p = [np.asarray(d).mean(axis=0) for d in estimate.draws]
        maps["meanp"] = exact_map(engine, after, estimate, systems, mean_p)
        if many:
            target = model.fusion_ if hasattr(model, "fusion_") else model
            target.n_draws = 1000
            if hasattr(target, "theta_draws_"):
                target.n_draws = min(1000, len(target.theta_draws_))
            maps["many"] = over_draws(engine, after, model.predict(after), systems)
        maps["reseed"] = over_draws(engine, after, reseeded(model).predict(after), systems)
        extra = {}
        if fixed and strategy.model_params.get("return_draws"):
            params = model.get_params()
            from relimpute.relevance.bayes import DEFAULT_PRIORS

            pinned = type(model)(**{**params, "priors": dict.fromkeys(DEFAULT_PRIORS, 0.0)})
            pinned.fit(after, rng=strategy_rng(spec.seed, "fixed"))
            maps["fixed"] = over_draws(engine, after, pinned.predict(after), systems)
            extra = spreads(model)
        elif hasattr(model, "idata_"):
            extra = spreads(model)
    row = {"trial": spec.trial, "strategy": strategy.name, "judgments": result.n_judgments,
           "cpu_s": time.process_time() - cpu}  # fmt: skip
    for key, e_map in maps.items():
        row[f"tau_{key}"] = kendall_tau(e_map[systems].to_numpy(), truth[systems].to_numpy())
        row[f"map_{key}"] = ",".join(f"{v:.6f}" for v in e_map[systems])
    row["map_true"] = ",".join(f"{v:.6f}" for v in truth[systems])
    return row | extra


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("collection", choices=sorted(COLLECTIONS))
    parser.add_argument("--trials", default="0-59", help="trial numbers, e.g. 0-59 or 3,7,10-12")
    parser.add_argument("--strategies", default="fusion-mc,bayes-mc")
    parser.add_argument("--settings-dir", help="default: examples/calibration/held_out/COLLECTION")
    parser.add_argument("--many", action="store_true", help="also 1,000 posterior draws (tau_many)")
    parser.add_argument(
        "--spreads-fixed", action="store_true", help="also NUTS with the spreads fixed"
    )
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)

    folder, threshold = COLLECTIONS[args.collection]
    data = DATA / folder
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(data / "qrels.txt", data / "runs", rel_threshold=threshold)
    groups = read_groups(data / "groups.tsv").run_to_group()
    base = campaign.truncated(100, shrink=True)
    specs = trial_specs(base.systems, 200, 10, 2, 2007, groups)
    truth = true_map(base)
    settings = args.settings_dir or ROOT / "examples" / "calibration" / "held_out" / args.collection
    strategies = with_settings_from(resolve_strategies(args.strategies), settings)
    engine = _engine()
    out = Path(args.output)
    rows = pd.read_csv(out).to_dict("records") if out.exists() else []
    done = {(r["trial"], r["strategy"]) for r in rows}
    for t in trial_range(args.trials):
        for strategy in strategies:
            if (t, strategy.name) in done:
                continue
            row = refit(base, specs[t], strategy, truth, engine,
                        many=args.many, fixed=args.spreads_fixed)  # fmt: skip
            rows.append(row)
            pd.DataFrame(rows).to_csv(out, index=False)
            taus = " ".join(f"{k[4:]} {v:.3f}" for k, v in row.items() if k.startswith("tau_"))
            cpu = f"{row['cpu_s']:.1f} s"
            print(t, strategy.name, row["judgments"], taus, cpu, file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
