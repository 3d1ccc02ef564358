"""Where does design-based MAP's bias come from? Per topic, over B seeded samplings of one
design: the relative bias of statAP's N̂ and R̂ (HT totals: unbiased by construction, so a
check), of their ratio AP̂ = N̂/R̂ (mean over runs), the share of samplings with R̂ = 0 (AP̂ = 0
then) and the ratio's bias when R̂ > 0, with and without the second-order correction
(the package's Taylor correction, capped at ½ se);
summed into MAP's bias by the topics' number of relevant documents.

    python examples/design_based/decompose.py dl19 --budget 0.05 --samplings 200
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute.confidence.survey.batched import TopicSamplings
from relimpute.selection.designs import design_floor

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from study import DESIGNS, FLOOR, SEED, Universe, draw, inclusion, load, pilot_model  # noqa: E402

BINS = (0, 10, 30, 100, 10**9)


def topic_rows(universe, design, rate, estimate, B, rng, floor_share=0.0):
    """One row per topic: truth R, the relevant documents at the design's π floor, mean AP,
    and the moments of N̂, R̂, AP̂ over B samplings."""
    rows = []
    plan = inclusion(universe, design, rate, estimate, floor_share)
    floor = design_floor(FLOOR, floor_share, rate)
    for top, (pi, stratum, stratified), truth in zip(universe.topics, plan, universe.truth_ap):
        x = top["x"]
        d = draw(pi, stratum, stratified, rate, B, rng)
        parts = TopicSamplings(d, x, top["ranks"])
        G = parts.gram
        R = x.sum()
        n_true = truth * R
        runs = np.arange(parts.nx.shape[1])
        value, a, b = parts.ratio(np.zeros(parts.nx.shape), runs)[:3]
        g_nn = G[:, runs, runs]
        g_nx = G[:, runs, -2]
        g_xx = G[:, -2, -2][:, None]
        var = a**2 * g_nn + 2 * a * b * g_nx + b**2 * g_xx
        r_hat = parts.rx[:, None]
        ok = r_hat > 0
        bias = np.where(ok, (value * g_xx - g_nx) / np.where(ok, r_hat, 1.0) ** 2, 0.0)
        se = np.sqrt(np.maximum(var, 0))
        corrected = value - np.clip(bias, -0.5 * se, 0.5 * se)
        zero = ~ok[:, 0]
        rows.append(dict(
            query_id=top["query_id"], relevant=int(R), pool=len(x),
            relevant_at_floor=0 if pi is None else int(((x > 0) & (pi <= floor * 1.000001)).sum()),
            judged_rel=float((d.drawn @ x).mean()), mean_ap=float(truth.mean()),
            n_relbias=float(np.nanmean(parts.nx.mean(0) / np.where(n_true > 0, n_true, np.nan) - 1)
                            if (n_true > 0).any() else np.nan),
            r_relbias=float(parts.rx.mean() / R - 1) if R else np.nan,
            p_r_zero=float(zero.mean()),
            ap_bias=float((value.mean(0) - truth).mean()),
            ap_bias_from_zero=float((zero[:, None] * (0 - truth)).mean(0).mean()),
            ap_bias_when_found=float(((~zero[:, None]) * (value - truth)).mean(0).mean()),
            corrected_bias=float((corrected.mean(0) - truth).mean()),
            coverage=float((np.abs(value - truth) <= 1.96 * se).mean()),
            corrected_coverage=float((np.abs(corrected - truth) <= 1.96 * se).mean()),
            sd=float(value.std(0).mean()), mean_se=float(se.mean())))
    return pd.DataFrame(rows)


def by_relevant(table):
    """MAP's bias (= the mean over topics of AP's) split by the topics' number of relevant."""
    T = len(table)
    group = pd.cut(table["relevant"], BINS, right=True,
                   labels=[f"{a + 1}-{b}" if b < 10**9 else f">{a}" for a, b in
                           zip(BINS[:-1], BINS[1:])])
    out = table.groupby(group, observed=True).agg(
        topics=("query_id", "size"), at_floor=("relevant_at_floor", "sum"),
        p_r_zero=("p_r_zero", "mean"),
        **{k: (k, lambda s: s.sum() / T) for k in ("ap_bias", "ap_bias_from_zero",
                                                  "ap_bias_when_found", "corrected_bias")},
        topic_coverage=("coverage", "mean"))
    biases = ("ap_bias", "ap_bias_from_zero", "ap_bias_when_found", "corrected_bias")
    out.loc["all"] = [T, table["relevant_at_floor"].sum(), table["p_r_zero"].mean()] + \
        [table[k].sum() / T for k in biases] + [table["coverage"].mean()]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("collection")
    parser.add_argument("--budget", type=float, default=0.05)
    parser.add_argument("--samplings", type=int, default=200)
    parser.add_argument("--designs", nargs="+", choices=DESIGNS, default=list(DESIGNS))
    parser.add_argument("--floor-share", type=float, default=0.0,
                        help="the Poisson designs' π floor, max(0.01, share × budget)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    universe = Universe(load(args.collection))
    rng = np.random.default_rng([SEED, int(args.budget * 1000)])
    estimate = pilot_model(universe, args.collection, args.budget, rng)[1] \
        if "guided" in args.designs else None
    tables = []
    for design in args.designs:
        rng = np.random.default_rng([SEED, int(args.budget * 1000), DESIGNS.index(design), 7])
        table = topic_rows(universe, design, args.budget, estimate, args.samplings, rng,
                           args.floor_share)
        tables.append(table.assign(design=design))
        print(f"\n{args.collection}, {design}, {args.budget:.0%} of the pool, "
              f"{args.samplings} samplings (HT, statAP's ratio): bias of MAP by topics' R")
        print(by_relevant(table).round(4).to_string())
    if args.out:
        pd.concat(tables).to_csv(args.out, sep="\t", index=False, float_format="%.5f")


if __name__ == "__main__":
    main()
