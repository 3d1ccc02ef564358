"""Why the ``complete`` intervals are wider (or narrower) than their error: R, topic by topic.

Run from the repository root (seed 0, a few minutes on 2 cores)::

    python examples/estimand_coverage/diagnose.py --collection trec8 --depths 10
    python examples/estimand_coverage/diagnose.py --collection dl19 --depths 3

For one pool depth of a collection of :mod:`run` it writes to ``results/diagnosis/``:

- ``r_by_topic.csv``: per topic the true R (relevant documents of the complete judgments), the
  model's E[R] and sd[R] and z = (true − E)/sd, for the default model and for it with each part
  of its posterior draws' spread removed (``variant``: ``default``; ``no_decay_sd``: the shared
  decay γ fixed, ``beyond_decay_sd=0``; ``no_hyper``: γ fixed and no per-run effect below the
  pool, ``beyond_run_sd=0`` too; ``bernoulli``: the point estimate's p alone, no draws);
  ``r_summary.csv`` one row per variant (E[z²], mean z, the share of topics with E below truth);
- ``map_variance.csv``: per run, the Monte Carlo variance of its MAP and the share of it that
  goes when each topic's R is held at its mean (R's share), with the same for every pair;
- ``missed_by_run.csv``: per run, the relevant documents of its top ranks the depth-k pool left
  unjudged (those the truth has and the model must guess), the number the model expects there
  (sum of p), where they sit (ranks), how many other runs retrieve them, and the run's fitted
  effect (log-odds, learned in the pool).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from run import COLLECTIONS, HERE, SHARED, load, model  # noqa: I001  (the study beside it)

VARIANTS = {
    "default": {},
    "no_decay_sd": {"beyond_decay_sd": 0.0},
    "no_hyper": {"beyond_decay_sd": 0.0, "beyond_run_sd": 0.0},
    "bernoulli": {"n_draws": 0},
}


def r_moments(cut, estimate) -> pd.DataFrame:
    """Per topic: judged relevant, E[R] and sd[R] over the draws and Bernoulli(p) relevance."""
    rows = []
    for t, (topic, rel) in enumerate(zip(cut.topics, cut.relevant())):
        open_ = ~topic.judged
        if estimate.draws is not None:
            p = np.asarray(estimate.draws[t])[:, open_]
            sums = p.sum(axis=1)
            mean, var = sums.mean(), sums.var() + (p * (1 - p)).sum(axis=1).mean()
        else:
            p = np.asarray(estimate.p[t])[open_]
            mean, var = p.sum(), (p * (1 - p)).sum()
        rows.append({"topic": topic.query_id, "judged_r": int(rel.sum()),
                     "e_r": rel.sum() + mean, "sd_r": float(np.sqrt(var))})  # fmt: skip
    return pd.DataFrame(rows)


def r_by_topic(campaign, cut, full) -> pd.DataFrame:
    """:func:`r_moments` of every variant against the true R."""
    truth = np.array([r.sum() for r in full.relevant()])
    frames = []
    for name, overrides in VARIANTS.items():
        estimate = model(overrides).fit_predict(cut, rng=0)
        frame = r_moments(cut, estimate).assign(variant=name, true_r=truth)
        frame["z"] = (frame["true_r"] - frame["e_r"]) / frame["sd_r"]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def map_variance(campaign, cut, estimate, n_bernoulli: int = 20, seed: int = 0) -> pd.DataFrame:
    """Per run (and ``A − B`` per pair of the first rows) Var[MAP] over the draws × Bernoulli
    samples, and the share that goes when each topic's R is its mean."""
    rng = np.random.default_rng(seed)
    n_runs = campaign.n_systems
    full_ap, fixed_ap = [], []
    for t, (topic, rel) in enumerate(zip(cut.topics, cut.relevant())):
        p = np.asarray(estimate.draws[t])
        p = np.repeat(p, n_bernoulli, axis=0)
        sample = np.where(topic.judged, rel, rng.random(p.shape) < p)
        r = sample.sum(axis=1).astype(float)
        mean_r = r.mean()
        numerators = np.zeros((len(r), n_runs))
        for s in range(n_runs):
            row = topic.ranking[s, : topic.depth[s]]
            hits = sample[:, row].astype(float)
            precision = np.cumsum(hits, axis=1) / np.arange(1, len(row) + 1)
            numerators[:, s] = (hits * precision).sum(axis=1)
        full_ap.append(numerators / np.where(r > 0, r, 1.0)[:, None])
        fixed_ap.append(numerators / max(mean_r, 1.0))
    full_map, fixed_map = np.mean(full_ap, axis=0), np.mean(fixed_ap, axis=0)
    frame = pd.DataFrame({"system": list(campaign.systems), "var_map": full_map.var(axis=0),
                          "var_map_r_fixed": fixed_map.var(axis=0)})  # fmt: skip
    frame["r_share"] = 1 - frame["var_map_r_fixed"] / frame["var_map"]
    a, b = np.triu_indices(n_runs, 1)
    pair_var = (full_map[:, a] - full_map[:, b]).var(axis=0)
    pair_fixed = (fixed_map[:, a] - fixed_map[:, b]).var(axis=0)
    varied = pair_var > 0  # a pair of runs with nothing unjudged has no variance to share
    share = np.median(1 - pair_fixed[varied] / pair_var[varied])
    pairs = pd.DataFrame({"system": "pairs (median)", "var_map": [np.median(pair_var)],
                          "var_map_r_fixed": [np.median(pair_fixed)],
                          "r_share": [share]})  # fmt: skip
    return pd.concat([frame, pairs], ignore_index=True)


def missed_by_run(campaign, cut, full, estimate) -> pd.DataFrame:
    """Per run: relevant documents of its ranking the pool left unjudged, and the model's guess."""
    rows = []
    for s, system in enumerate(campaign.systems):
        found, expected, ranks, others = 0, 0.0, [], []
        for t, (topic, truth) in enumerate(zip(cut.topics, full.relevant())):
            row = topic.ranking[s, : topic.depth[s]]
            open_ = ~topic.judged[row]
            expected += float(np.asarray(estimate.p[t])[row][open_].sum())
            hit = open_ & truth[row]
            found += int(hit.sum())
            ranks.extend(np.flatnonzero(hit) + 1)
            retrieved = (topic.ranking[:, :, None] == row[hit][None, None, :]).any(axis=1)
            others.extend(retrieved.sum(axis=0) - 1)
        ranks = np.array(ranks)
        rows.append({
            "system": system, "unjudged_relevant": found, "expected": expected,
            "median_rank": float(np.median(ranks)) if found else np.nan,
            "share_below_50": float((ranks > 50).mean()) if found else np.nan,
            "median_other_runs": float(np.median(others)) if found else np.nan,
            "share_no_other_run": float((np.array(others) == 0).mean()) if found else np.nan,
        })  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["found_over_expected"] = frame["unjudged_relevant"] / frame["expected"]
    effects = estimate.params.get("run_effects", {})  # the fitted u_j (log-odds, in the pool)
    frame["run_effect"] = [effects.get(system, np.nan) for system in frame["system"]]
    return frame.sort_values("found_over_expected", ascending=False).reset_index(drop=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--collection", choices=sorted(COLLECTIONS), default="trec8")
    parser.add_argument("--depths", type=int, nargs="+", default=None)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "diagnosis")
    args = parser.parse_args(argv)
    collection = COLLECTIONS[args.collection]
    data = SHARED / collection.folder
    if not (data / "qrels.txt").is_file():
        print(f"{args.collection} data not found at {data}; nothing to do", file=sys.stderr)
        return 1
    campaign, _ = load(data, False, collection)
    full = campaign.pooled(collection.truth_depth)
    args.out.mkdir(parents=True, exist_ok=True)
    for k in args.depths or collection.depths[:1]:
        stem = f"{args.collection}_k{k}"
        cut = campaign.pooled(k)
        topics = r_by_topic(campaign, cut, full)
        topics.to_csv(args.out / f"r_by_topic_{stem}.csv", index=False, float_format="%.3f")
        summary = topics.groupby("variant", sort=False).agg(
            topics=("z", "size"), ez2=("z", lambda z: float(np.mean(z**2))),
            mean_z=("z", "mean"), share_e_below=("z", lambda z: float((z > 0).mean())),
            mean_sd_r=("sd_r", "mean"), mean_abs_error=("z", lambda z: 0.0),
        )  # fmt: skip
        error = (topics["true_r"] - topics["e_r"]).abs().groupby(topics["variant"], sort=False)
        summary["mean_abs_error"] = error.mean()
        summary.to_csv(args.out / f"r_summary_{stem}.csv", float_format="%.3f")
        print(summary.to_string(float_format="%.3f"), flush=True)
        estimate = model().fit_predict(cut, rng=0)
        variance = map_variance(campaign, cut, estimate)
        variance.to_csv(args.out / f"map_variance_{stem}.csv", index=False, float_format="%.6f")
        print(variance.describe().to_string(float_format="%.4f"), flush=True)
        missed = missed_by_run(campaign, cut, full, estimate)
        missed.to_csv(args.out / f"missed_by_run_{stem}.csv", index=False, float_format="%.3f")
        print(missed.head(10).to_string(float_format="%.3f"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
