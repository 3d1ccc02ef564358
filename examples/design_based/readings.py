"""Which reading of statAP's AP covers? HT (no control), per sampling and run: the ratio
N̂/R̂ with or without the second-order bias correction, with the linearised variance, the
delete-one jackknife as the package has it (AP's pair terms counted once) or with the pairs
counted twice (the earlier jackknife), or the jackknife plus the squared estimated bias;
scored by coverage of MAP and ΔMAP (95%, ± 1.96 se), mean |bias| of MAP. Poisson designs.

    python examples/design_based/readings.py dl19 --budget 0.05 --samplings 200
"""

from __future__ import annotations

import argparse
import sys
import time
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from relimpute.confidence.survey.batched import TopicSamplings

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from study import DESIGNS, SEED, Z, Universe, draw, inclusion, load, pilot_model  # noqa: E402


def topic_readings(x, ranks, draws, pairs):
    """Per sampling: value (plain, corrected) and variances (lin, jk1, jk2) for runs and pairs."""
    parts = TopicSamplings(draws, x, ranks)
    G = parts.gram
    B, R = parts.nx.shape
    runs = np.arange(R)
    value, a, b = parts.ratio(np.zeros((B, R)), runs)[:3]
    g_nn, g_nx, g_xx = G[:, runs][:, :, runs], G[:, runs, -2], G[:, -2, -2]
    # linearised variables z_r = a_r dN_r + b_r x: covariances of every pair of runs
    cov = (a[:, :, None] * a[:, None, :] * g_nn + a[:, :, None] * b[:, None, :] * g_nx[:, :, None]
           + b[:, :, None] * a[:, None, :] * g_nx[:, None, :]
           + b[:, :, None] * b[:, None, :] * g_xx[:, None, None])
    lin = cov[:, runs, runs]
    i, j = pairs[:, 0], pairs[:, 1]
    dlin = lin[:, i] + lin[:, j] - 2 * cov[:, i, j]
    r_hat = parts.rx
    bias = np.where(r_hat[:, None] > 0, (value * g_xx[:, None] - g_nx)
                    / np.where(r_hat > 0, r_hat, 1.0)[:, None] ** 2, 0.0)
    zero_run, zero_pair = np.zeros((B, R)), np.zeros((B, len(pairs)))
    members = [(runs, 1.0)], [(i, 1.0), (j, -1.0)]
    jk1 = parts.jackknife(zero_run, members[0], value)
    djk1 = parts.jackknife(zero_pair, members[1], value[:, i] - value[:, j])
    jk2 = jk1 + parts.pair_overcount(zero_run, members[0])  # the pairs counted twice
    djk2 = djk1 + parts.pair_overcount(zero_pair, members[1])
    jk_bias = jackknife_bias(parts, value, a, b)
    return dict(value=value, bias=bias, jk_bias=jk_bias, lin=lin, jk1=jk1, jk2=jk2, dlin=dlin, djk1=djk1,
                djk2=djk2)


def deletions(draws):
    """The jackknife's replicates per sampling: the drawn documents with π < 1 gathered
    (B, m) (padded), their weights and coefficients 1 − π (0 on the padding)."""
    inside = draws.drawn & (draws.weight > 1)
    m = max(int(inside.sum(1).max()), 1)
    idx = np.argsort(~inside, axis=1, kind="stable")[:, :m]
    valid = np.take_along_axis(inside, idx, 1)
    w = np.take_along_axis(draws.weight, idx, 1)
    return idx, w, np.where(valid, 1.0 - 1.0 / np.where(valid, w, 1.0), 0.0)


def r_moments(draws, x, p):
    """(Ĉov(R̂_x, R̂_p), V̂ar(R̂_p)) per sampling (B,): the pieces of R̂'s own λ."""
    c = draws.var_coef
    return c @ (x * p), c @ (p * p)


def assisted_r(x, p, ranks, draws, pairs, lam):
    """AP̂ = N̂ / R̂(λ) with N̂ HT and only R̂ model-assisted, R̂(λ) = Σ_S w x + λ (Σ_U p −
    Σ_S w p) held at least at the relevant judged; its delete-one jackknife variance (the
    pair terms counted once). Returns value (B, R), variance (B, R), Δ variance (B, P)."""
    parts = TopicSamplings(draws, x, ranks)
    d = draws
    B, R = parts.nx.shape
    least = d.drawn @ x
    r_lam = np.maximum(parts.rx + lam * (p.sum() - d.weight @ p), least)
    ok = r_lam > 0
    safe = np.where(ok, r_lam, 1.0)
    value = np.where(ok[:, None], parts.nx / safe[:, None], 0.0)
    idx, w, coef = deletions(d)
    n_rep = parts.nx[:, :, None] - w[:, None] * np.take_along_axis(parts.dnx, idx[:, None], 2)
    r_rep = np.maximum(r_lam[:, None] - w * (x[idx] - lam[:, None] * p[idx]), least[:, None])
    okr = r_rep > 0
    rep = np.where(okr[:, None], n_rep / np.where(okr, r_rep, 1.0)[:, None], 0.0)
    over_run = parts.pair_overcount(np.zeros((B, R)), [(np.arange(R), 1.0)])
    over_pair = parts.pair_overcount(np.zeros((B, len(pairs))),
                                     [(pairs[:, 0], 1.0), (pairs[:, 1], -1.0)])
    scale = np.where(ok, (parts.rx / safe) ** 2, 0.0)[:, None]
    var = (coef[:, None] * (rep - value[..., None]) ** 2).sum(-1) - scale * over_run
    i, j = pairs[:, 0], pairs[:, 1]
    delta = rep[:, i] - rep[:, j]
    dvar = (coef[:, None] * (delta - (value[:, i] - value[:, j])[..., None]) ** 2).sum(-1) \
        - scale * over_pair
    return value, np.maximum(var, 0), np.maximum(dvar, 0)


def jackknife_bias(parts, value, a, b):
    """The delete-one jackknife's estimate of the ratio's bias under Poisson sampling,
    Σ_d (1 − π_d)(θ̂_(d) − θ̂ + w_d z_d) (z_d = ∂θ̂/∂w_d the linearised variable): the
    replicates' spread less its linear part, i.e. ½ f'' V̂ to second order without the Taylor
    step (the exact ratio at each deleted point). (B, R)."""
    d = parts.s
    idx, w, coef = deletions(d)
    dn = np.take_along_axis(parts.dnx, idx[:, None], 2)  # (B, R, m)
    xs = parts.x[idx]
    n_rep = parts.nx[:, :, None] - w[:, None] * dn
    r_rep = parts.rx[:, None] - w * xs
    ok = r_rep > 0
    rep = np.where(ok[:, None], n_rep / np.where(ok, r_rep, 1.0)[:, None], 0.0)
    z = a[..., None] * dn + b[..., None] * xs[:, None]
    return (coef[:, None] * (rep - value[..., None] + w[:, None] * z)).sum(-1)


READINGS = {  # name: (value, variance, cap the correction at ½ se, add bias²)
    "ratio, linearised": ("plain", "lin"),
    "ratio, jackknife": ("plain", "jk1"),
    "ratio, jackknife (pairs twice)": ("plain", "jk2"),
    "corrected, linearised": ("capped", "lin"),
    "corrected, jackknife (package)": ("capped", "jk1"),
    "corrected, jackknife (pairs twice)": ("capped", "jk2"),
    "uncapped correction, jackknife": ("uncapped", "jk1"),
    "ratio, jackknife + bias²": ("plain", "jk1+b2"),
    "jackknife bias-corrected, jackknife": ("jkcorr", "jk1"),
    "jackknife bias-corrected, pairs twice": ("jkcorr", "jk2"),
    "jackknife bias-corrected (capped ½ se), jackknife": ("jkcapped", "jk1"),
}


def cell(universe, design, rate, estimate, B, rng, controls=None):
    T, R = universe.truth_ap.shape
    pairs = np.array(list(combinations(range(R), 2)))
    values = ("plain", "capped", "uncapped", "jkcorr", "jkcapped")
    acc = {k: np.zeros((B, R)) for k in values + ("lin", "jk1", "jk2", "b2")}
    acc.update({"d" + k: np.zeros((B, len(pairs))) for k in values + ("lin", "jk1", "jk2",
                                                                      "b2")})
    plan = inclusion(universe, design, rate, estimate)
    if any(stratified for _, _, stratified in plan):
        raise SystemExit("readings.py covers Poisson designs (pps, guided)")
    all_draws = [draw(pi, stratum, False, rate, B, rng) for pi, stratum, _ in plan]
    controls = controls or {}
    for name, ps in controls.items():  # R̂ model-assisted, λ_R cross-fitted over topics
        moments = np.array([r_moments(d, top["x"], q) for d, top, q in
                            zip(all_draws, universe.topics, ps)])  # (T, 2, B)
        total = moments.sum(0)
        est = np.zeros((B, R))
        dest = np.zeros((B, len(pairs)))
        var, dvar, lam_mean = np.zeros((B, R)), np.zeros((B, len(pairs))), 0.0
        for k, (d, top, q) in enumerate(zip(all_draws, universe.topics, ps)):
            cov, vv = total - moments[k]
            lam = np.where(vv > 0, np.clip(cov / np.where(vv > 0, vv, 1.0), 0, 1), 0.0)
            lam_mean += lam.mean() / T
            v, vr, dvr = assisted_r(top["x"], q, top["ranks"], d, pairs, lam)
            est += v
            dest += v[:, pairs[:, 0]] - v[:, pairs[:, 1]]
            var, dvar = var + vr, dvar + dvr
        acc[f"ma:{name}"] = (est, dest, var, dvar, lam_mean)
    for top, draws in zip(universe.topics, all_draws):
        f = topic_readings(top["x"], top["ranks"], draws, pairs)
        se = np.sqrt(np.maximum(f["lin"], 0))
        capped = f["value"] - np.clip(f["bias"], -0.5 * se, 0.5 * se)
        jse = np.sqrt(np.maximum(f["jk1"], 0))
        for name, v in (("plain", f["value"]), ("capped", capped),
                        ("uncapped", f["value"] - f["bias"]),
                        ("jkcorr", f["value"] - f["jk_bias"]),
                        ("jkcapped", f["value"] - np.clip(f["jk_bias"], -0.5 * jse,
                                                          0.5 * jse))):
            acc[name] += v
            acc["d" + name] += v[:, pairs[:, 0]] - v[:, pairs[:, 1]]
        for k in ("lin", "jk1", "jk2"):
            acc[k] += np.maximum(f[k], 0)
            acc["d" + k] += np.maximum(f["d" + k], 0)
        acc["b2"] += f["bias"] ** 2
        acc["db2"] += (f["bias"][:, pairs[:, 0]] - f["bias"][:, pairs[:, 1]]) ** 2
    truth = universe.truth_map
    dtruth = truth[pairs[:, 0]] - truth[pairs[:, 1]]
    rows = []
    for name, (v, var) in READINGS.items():
        est, dest = acc[v] / T, acc["d" + v] / T
        if var == "jk1+b2":
            variance, dvariance = acc["jk1"] + acc["b2"], acc["djk1"] + acc["db2"]
        else:
            variance, dvariance = acc[var], acc["d" + var]
        se, dse = np.sqrt(variance) / T, np.sqrt(dvariance) / T
        rows.append(dict(reading=name,
                         map_coverage=float((np.abs(est - truth) <= Z * se).mean()),
                         dmap_coverage=float((np.abs(dest - dtruth) <= Z * dse).mean()),
                         map_bias=float(np.abs(est.mean(0) - truth).mean()),
                         map_width=float(2 * Z * se.mean()),
                         dmap_width=float(2 * Z * dse.mean())))
    for key, (est, dest, var, dvar, lam) in [(k, v) for k, v in acc.items()
                                             if k.startswith("ma:")]:
        est, dest = est / T, dest / T
        se, dse = np.sqrt(var) / T, np.sqrt(dvar) / T
        rows.append(dict(reading=f"R-hat model-assisted ({key[3:]}, mean lambda {lam:.2f}), "
                         "jackknife",
                         map_coverage=float((np.abs(est - truth) <= Z * se).mean()),
                         dmap_coverage=float((np.abs(dest - dtruth) <= Z * dse).mean()),
                         map_bias=float(np.abs(est.mean(0) - truth).mean()),
                         map_width=float(2 * Z * se.mean()),
                         dmap_width=float(2 * Z * dse.mean())))
    return pd.DataFrame(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("collection")
    parser.add_argument("--budgets", type=float, nargs="+", default=[0.05, 0.10])
    parser.add_argument("--samplings", type=int, default=200)
    parser.add_argument("--designs", nargs="+", choices=("pps", "guided"),
                        default=["pps", "guided"])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    universe = Universe(load(args.collection))
    tables = []
    for rate in args.budgets:
        rng = np.random.default_rng([SEED, int(rate * 1000)])
        p, estimate = pilot_model(universe, args.collection, rate, rng)
        controls = {"model": p, "reversed": [1 - q for q in p]}
        for design in args.designs:
            t0 = time.process_time()
            rng = np.random.default_rng([SEED, int(rate * 1000), DESIGNS.index(design)])
            table = cell(universe, design, rate, estimate, args.samplings, rng, controls)
            table.insert(0, "design", design)
            table.insert(0, "budget", rate)
            tables.append(table)
            print(f"\n{args.collection}, {design}, {rate:.0%}, {args.samplings} samplings, HT "
                  f"({time.process_time() - t0:.0f} CPU s)")
            print(table.drop(columns=["budget", "design"]).round(4).to_string(index=False),
                  flush=True)
    if args.out:
        pd.concat(tables).to_csv(args.out, sep="\t", index=False, float_format="%.5f")


if __name__ == "__main__":
    main()
