"""Why do the census design's MAP intervals cover 90–92%, and which interval covers 93–97%?

The design and the truth are ``census.py``'s (every document a run ranks in its top ``--census``
judged, π = 1; the rest of the budget uniform without replacement below; the same samplings:
its ``census_sample`` with its seed). Under HT with no control only the relevant documents
enter AP̂ = N̂ / R̂ (a nonrelevant document adds 0 to both totals), so every reading below is
computed exactly on each topic's relevant documents, for many weightings at once:

- ``package``: the Taylor-corrected ratio (capped at ½ the linearised se) with the stratified
  delete-one jackknife, ``relimpute.confidence.survey.estimate``'s defaults (``--check``
  compares it, ``ratio-jk``, ``jkbc-jk2`` and ``jkbc-mid`` with ``estimate`` sample by sample,
  and ``jkbc-jk2`` with every deletion and pair of deletions recomputed by the package's
  ``pair_total``: the oracles);
- ``taylor-jk``: the same without the cap on the correction;
- ``ratio-jk``: the plain ratio, the same jackknife;
- ``jkbc-jk``: the jackknife's own bias correction θ̂ − (1 − f)(n − 1)(θ̄_(·) − θ̂) (Quenouille;
  f = n/N the below stratum's sampling fraction), the same jackknife's variance;
- ``jkbc-jk2``: the same estimate, its variance the delete-one jackknife *of the corrected
  estimate* (each replicate corrected by a jackknife of its own: delete-two), so the
  correction's noise is counted;
- ``jkbc-d2``: the same estimate, the delete-two jackknife variance of θ̂ (Shao & Wu 1989);
- ``jkbc-mid``: the same estimate, the mean of the ``jkbc-jk`` and ``jkbc-jk2`` variances
  (``estimate``'s ``variance="averaged"``);
- ``boot-*``: the rescaled bootstrap of Rao & Wu (1988) for stratified sampling without
  replacement (n − 1 drawn with replacement from the stratum's n, weight multiplier
  1 − λ + λ n/(n − 1) m_k, λ = √(1 − f); the census stratum is not resampled), the ratio
  recomputed in every replicate, independent over topics, MAP* the mean of the topics'
  replicates: ``boot-pct`` the percentile interval of MAP*, ``boot-basic`` the basic
  (reflected) one [2θ̂ − q_.975, 2θ̂ − q_.025], which corrects the bootstrap's estimate of the
  bias, ``boot-bcn`` θ̂ − (mean* − θ̂) ± z sd*.

Per run over the samplings, the diagnosis splits the miss: (MAP̂ − MAP) / sd (bias in sds),
se / sd (the variance estimate against the empirical spread), the skewness of MAP̂, and the
coverage each would have alone (intervals centred on the samplings' mean: the se's share; ± z sd
about MAP̂: the bias's share). ΔMAP: every pair of runs.

    python examples/design_based/intervals.py trec8 --budget 0.10 --census 3 --samplings 30
    python examples/design_based/intervals.py dl19 --budget 0.10 --census 2 --samplings 30
    python examples/design_based/intervals.py dl19 --census 2 --samplings 2 --check
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import skew

sys.path.insert(0, str(Path(__file__).resolve().parent))
from census import census_sample  # noqa: E402
from study import Z, Universe, load  # noqa: E402

NO_RELEVANT = 1e-9
READINGS = ("package", "taylor-jk", "ratio-jk", "jkbc-jk", "jkbc-jk2", "jkbc-d2", "jkbc-mid")


def pair_factor(n: int, size: int) -> float:
    """π² / π_jk of n drawn of ``size`` without replacement (0 below two draws)."""
    both = n * (n - 1) / (size * (size - 1)) if size > 1 else 0.0
    return (n / size) ** 2 / both if both > 0 else 0.0


class CensusTopic:
    """One topic's relevant documents (the only ones HT's AP reads): each run's ranks of them,
    which are below the census, the below stratum's size N and draws n."""

    def __init__(self, top: dict, census: np.ndarray, rate: float):
        self.rel = np.flatnonzero(top["x"] > 0)
        self.below = ~census[self.rel]
        self.size = int((~census).sum())
        self.n = min(max(2, int(round(rate * self.size))), self.size)  # census_sample's rule
        ranks = top["ranks"][:, self.rel]  # (R, m)
        key = np.where(ranks > 0, ranks, np.iinfo(int).max)
        self.order = np.argsort(key, axis=1, kind="stable")
        sorted_ranks = np.take_along_axis(ranks, self.order, 1)
        self.inv = np.where(sorted_ranks > 0, 1.0 / np.maximum(sorted_ranks, 1), 0.0)
        self.is_below = self.below[self.order]
        self.census_r = float((~self.below).sum())

    def totals(self, w: np.ndarray, f: np.ndarray, chunk: int = 400):
        """N̂ (K, R) and R̂ (K,) under relevant-document weights ``w`` (K, m) and the below
        stratum's pair factor ``f`` (K,): statAP's prefix form, pairs within the below stratum
        scaled by f."""
        K = len(w)
        R = self.order.shape[0]
        out = np.zeros((K, R))
        for s in range(0, K, chunk):
            y = w[s:s + chunk][:, self.order] * (self.inv > 0)  # (k, R, m)
            yb = np.where(self.is_below, y, 0.0)
            before_c = np.cumsum(y - yb, -1) - (y - yb)
            before_b = np.cumsum(yb, -1) - yb
            scale = np.where(self.is_below, f[s:s + chunk, None, None], 1.0)
            out[s:s + chunk] = (y * self.inv * (1 + before_c + before_b * scale)).sum(-1)
        return out, w.sum(-1)

    def derivative(self, w: np.ndarray, f: float) -> np.ndarray:
        """∂N̂/∂w_d (R, m) at one weighting (``totals.ranked_pair_sum``'s derivative)."""
        y = w[self.order] * (self.inv > 0)
        yb = np.where(self.is_below, y, 0.0)
        scale = np.where(self.is_below, f, 1.0)
        before = np.cumsum(y - yb, -1) - (y - yb) + (np.cumsum(yb, -1) - yb) * scale
        s = y * self.inv
        sb = np.where(self.is_below, s, 0.0)
        rev = lambda a: np.flip(np.cumsum(np.flip(a, -1), -1), -1) - a  # noqa: E731
        after = rev(s - sb) + rev(sb) * scale
        d_sorted = (self.inv > 0) * (self.inv * (1 + before) + after)
        out = np.zeros_like(d_sorted)
        np.put_along_axis(out, self.order, d_sorted, 1)
        return out

    def weights(self, drawn: np.ndarray, n: int, removed=()) -> np.ndarray:
        """Relevant-document weights with ``n`` of the below stratum kept and ``removed``
        (positions among the relevant) left out: census 1, below drawn N/n."""
        w = np.where(self.below, np.where(drawn, self.size / n, 0.0), 1.0)
        w[list(removed)] = 0.0
        return w


def ratio(n_hat, r_hat):
    ok = r_hat >= NO_RELEVANT
    return np.where(ok, n_hat / np.where(ok, r_hat, 1.0), 0.0)


def jackknife_parts(topic: CensusTopic, drawn: np.ndarray):
    """The stratified delete-one jackknife of one sampling: replicate AP values (J, R) and
    their multiplicities (J,) (the n − m nonrelevant deletions give one value), and for the
    corrected estimate each replicate's own jackknife bias correction (delete-two)."""
    n, size = topic.n, topic.size
    d_rel = np.flatnonzero(drawn & topic.below)
    m = len(d_rel)
    configs = [topic.weights(drawn, n)]  # 0: the sample
    configs.append(topic.weights(drawn, n - 1))  # 1: a nonrelevant deleted
    configs += [topic.weights(drawn, n - 1, [d]) for d in d_rel]  # 2..m+1
    n2 = max(n - 2, 1)
    configs.append(topic.weights(drawn, n2))  # m+2: two nonrelevant deleted
    configs += [topic.weights(drawn, n2, [d]) for d in d_rel]  # m+3..2m+2
    two = [(i, j) for i in range(m) for j in range(i + 1, m)]
    configs += [topic.weights(drawn, n2, [d_rel[i], d_rel[j]]) for i, j in two]
    f = np.array([pair_factor(n, size)] + [pair_factor(n - 1, size)] * (m + 1)
                 + [pair_factor(n - 2, size)] * (m + 1 + len(two)))
    w = np.array(configs)
    n_hat, r_hat = topic.totals(w, f)
    ap = ratio(n_hat, r_hat[:, None])
    reps = ap[1:m + 2]
    mult = np.array([n - m] + [1] * m, float)
    # each replicate's own delete-one jackknife (n − 1 units: m' relevant, the rest not)
    ap2 = ap[m + 2:]
    pair_at = {pair: 1 + m + k for k, pair in enumerate(two)}
    corr = np.zeros_like(reps)
    fpc1 = (1 - (n - 1) / size) * (n - 2)
    # replicate 0 (a nonrelevant gone): deletions of the other n − m − 1 nonrelevant and of
    # each relevant
    vals = np.vstack([ap2[0], ap2[1:m + 1]])
    cnt = np.array([n - m - 1] + [1] * m, float)
    corr[0] = fpc1 * ((cnt[:, None] * vals).sum(0) / cnt.sum() - reps[0])
    for i in range(m):  # relevant d_rel[i] gone
        rows = [ap2[1 + i]] + [ap2[pair_at[tuple(sorted((i, j)))]] for j in range(m) if j != i]
        cnt = np.array([n - m] + [1] * (m - 1), float)
        corr[1 + i] = fpc1 * ((cnt[:, None] * np.array(rows)).sum(0) / cnt.sum() - reps[1 + i])
    # every deletion of two: two nonrelevant, one of each, two relevant
    mult2 = np.array([(n - m) * (n - m - 1) / 2] + [n - m] * m + [1] * len(two), float)
    return ap[0], n_hat[0], r_hat[0], reps, mult, corr, w[0], f[0], ap2, mult2


def spread(values: np.ndarray, mult: np.ndarray, coef: float) -> np.ndarray:
    """coef Σ_j c_j (v_j − v̄)(v_j − v̄)ᵀ over replicates (J, R): (R, R)."""
    centred = values - (mult[:, None] * values).sum(0) / mult.sum()
    return coef * (centred * mult[:, None]).T @ centred


def stratum_cov(a: np.ndarray, b: np.ndarray, n: int, size: int) -> np.ndarray:
    """design_covariance's stratified form over the below stratum: a, b (Q, m_drawn) on the
    drawn relevant (the drawn nonrelevant are 0), n drawn: (Q, Q)."""
    if n < 2 or n >= size:
        return np.zeros((len(a), len(b)))
    sa, sb = a.sum(1), b.sum(1)
    s = (a @ b.T - np.outer(sa, sb) / n) / (n - 1)
    return size**2 * (1 - n / size) / n * s


def topic_readings(topic: CensusTopic, drawn: np.ndarray, rng, boots: int):
    """One sampling of one topic: per reading (value (R,), covariance (R, R)) and the
    bootstrap replicates (boots, R)."""
    n, size = topic.n, topic.size
    R = topic.order.shape[0]
    if not len(topic.rel):
        zero = (np.zeros(R), np.zeros((R, R)))
        return {k: zero for k in READINGS}, \
            np.zeros((boots, R)), np.zeros(R), np.zeros(R)
    ap, n_hat, r_hat, reps, mult, corr, w0, f0, ap2, mult2 = jackknife_parts(topic, drawn)
    coef = (1 - n / size) * (n - 1) / n
    jk = spread(reps, mult, coef)
    # the Taylor correction as the package reads it, capped at ½ the linearised se (per run
    # and per pair: the cap is applied to the difference, so the pair covariance is kept)
    at = np.flatnonzero(drawn & topic.below)
    dn = topic.derivative(w0, f0)[:, at]  # (R, m_drawn)
    x = np.ones((1, len(at)))
    if r_hat > 0 and len(at):
        z = dn / r_hat - (n_hat / r_hat**2)[:, None] * x
        lin = stratum_cov(z, z, n, size)
        v_r = stratum_cov(x, x, n, size)[0, 0]
        c_nr = stratum_cov(dn, x, n, size)[:, 0]
        bias = (ap * v_r - c_nr) / r_hat**2
    else:
        lin, bias = np.zeros((R, R)), np.zeros(R)
    fpc = (1 - n / size) * (n - 1)
    jk_bias = fpc * ((mult[:, None] * reps).sum(0) / mult.sum() - ap)
    corrected = reps - corr
    twice = spread(corrected, mult, coef)
    # θ̂'s delete-two jackknife (Shao & Wu 1989): (1 − f)(n − 2)/(2 C(n, 2)) Σ (θ̂_(de) − θ̄)²
    pairs_n = n * (n - 1) / 2
    d2 = spread(ap2, mult2, (1 - n / size) * (n - 2) / (2 * pairs_n)) if n > 2 else jk
    out = {"package": (ap, jk), "taylor-jk": (ap, jk), "ratio-jk": (ap, jk),
           "jkbc-jk": (ap - jk_bias, jk), "jkbc-jk2": (ap - jk_bias, twice),
           "jkbc-d2": (ap - jk_bias, d2), "jkbc-mid": (ap - jk_bias, 0.5 * (jk + twice))}
    # bootstrap: Rao–Wu multipliers on the drawn relevant of the below stratum
    lam = np.sqrt(1 - n / size)
    probs = np.append(np.full(len(at), 1 / n), 1 - len(at) / n)
    counts = rng.multinomial(n - 1, np.clip(probs, 0, 1), size=boots)[:, :len(at)]
    wb = np.repeat(w0[None], boots, 0)
    d_rel = np.flatnonzero(drawn & topic.below)
    wb[:, d_rel] *= 1 - lam + lam * n / (n - 1) * counts
    nb, rb = topic.totals(wb, np.full(boots, f0))
    return out, ratio(nb, rb[:, None]), bias, lin


def run_study(universe, census_depth, budget, samplings, boots, seed=7):
    """Per reading, per sampling: MAP̂ and its variance (S, R), ΔMAP̂ of every pair and its
    variance (S, P); the bootstrap's MAP* (S, boots, R). census.py's samplings (its rng)."""
    top = [t["best"] <= census_depth for t in universe.topics]
    in_census = sum(int(m.sum()) for m in top)
    rest = universe.pool_size * budget - in_census
    if rest <= 0:
        raise SystemExit(f"the depth-{census_depth} census ({in_census}) exceeds the budget")
    rate = rest / sum(int((~m).sum()) for m in top)
    topics = [CensusTopic(t, m, rate) for t, m in zip(universe.topics, top)]
    T, R = universe.truth_ap.shape
    i, j = np.triu_indices(R, 1)
    rng, boot_rng = np.random.default_rng(seed), np.random.default_rng([seed, 43])
    est = {k: np.zeros((samplings, R)) for k in READINGS}
    var = {k: np.zeros((samplings, R)) for k in READINGS}
    d_est = {k: np.zeros((samplings, len(i))) for k in READINGS}
    d_var = {k: np.zeros((samplings, len(i))) for k in READINGS}
    boot = np.zeros((samplings, boots, R))
    sizes = np.cumsum([0] + [len(t["x"]) for t in universe.topics])
    samples = []
    for s in range(samplings):
        sample = census_sample(universe, top, rate, rng)
        judged = sample["relevance"].to_numpy() >= 0
        samples.append(sample)
        for t, topic in enumerate(topics):
            drawn = judged[sizes[t]:sizes[t + 1]][topic.rel]
            found, reps, bias, lin = topic_readings(topic, drawn, boot_rng, boots)
            for k, (value, c) in found.items():
                delta = value[i] - value[j]
                if k == "package":  # the capped Taylor correction, per run and per pair
                    half = 0.5 * np.sqrt(np.maximum(np.diag(lin), 0))
                    value = value - np.clip(bias, -half, half)
                    half = 0.5 * np.sqrt(np.maximum(lin[i, i] + lin[j, j] - 2 * lin[i, j], 0))
                    delta = delta - np.clip(bias[i] - bias[j], -half, half)
                elif k == "taylor-jk":  # the same correction, not capped
                    value, delta = value - bias, delta - (bias[i] - bias[j])
                est[k][s] += value / T
                d_est[k][s] += delta / T
                var[k][s] += np.maximum(np.diag(c), 0) / T**2
                d_var[k][s] += np.maximum(c[i, i] + c[j, j] - 2 * c[i, j], 0) / T**2
            boot[s] += reps / T
        print(f"  sampling {s}: {judged.sum()} judged", flush=True)
    return dict(rate=rate, est=est, var=var, d_est=d_est, d_var=d_var, boot=boot,
                samples=samples, pairs=(i, j))


def score(point, low, high, se, truth, reference_width=None) -> dict:
    """Coverage (its Monte Carlo se over the samplings), the miss split (bias in sds, se / sd,
    skew, coverage centred on the mean, coverage with the empirical sd), mean |bias| with its
    Monte Carlo se, mean width."""
    sd = point.std(0, ddof=1)
    ok = sd > 0
    bias = point.mean(0) - truth
    width = float((high - low).mean())
    per_sampling = ((low <= truth) & (truth <= high)).mean(1)
    return dict(
        coverage=float(per_sampling.mean()),
        cov_mc_se=float(per_sampling.std(ddof=1) / np.sqrt(len(point))),
        bias_sd=float((bias[ok] / sd[ok]).mean()), se_sd=float((se.mean(0)[ok] / sd[ok]).mean()),
        skew=float(np.nanmean(skew(point[:, ok], axis=0))),
        cov_no_bias=float((np.abs(point - point.mean(0)) <= Z * se).mean()),
        cov_true_sd=float((np.abs(point - truth) <= Z * sd).mean()),
        abs_bias=float(np.abs(bias).mean()), mc_se=float((sd / np.sqrt(len(point))).mean()),
        width=width, width_ratio=width / reference_width if reference_width else 1.0)


def intervals(found, level_z=Z):
    """Per reading: (MAP point, low, high, se) and (ΔMAP ...), normal and bootstrap."""
    out = {}
    for k in READINGS:
        for key, e, v in (("map", "est", "var"), ("delta", "d_est", "d_var")):
            se = np.sqrt(found[v][k])
            out[(k, key)] = (found[e][k], found[e][k] - level_z * se, found[e][k] + level_z * se,
                             se)
    i, j = found["pairs"]
    boot = found["boot"]
    plain = found["est"]["ratio-jk"]
    for key, star, theta in (("map", boot, plain),
                             ("delta", boot[..., i] - boot[..., j],
                              plain[:, i] - plain[:, j])):
        lo, hi = np.quantile(star, [0.025, 0.975], axis=1)
        sd = star.std(1, ddof=1)
        shift = star.mean(1) - theta
        out[("boot-pct", key)] = (theta, lo, hi, sd)
        out[("boot-basic", key)] = (theta - shift, 2 * theta - hi, 2 * theta - lo, sd)
        out[("boot-bcn", key)] = (theta - shift, theta - shift - Z * sd, theta - shift + Z * sd,
                                  sd)
    return out


def pair_sum(x, w, rank, stratum, factor) -> float:
    """statAP's numerator Σ_k x_k w_k / r_k + Σ_{j above k} x_j x_k w_j w_k f_jk / r_k, pair by
    pair (f_jk = ``factor[h]`` when j and k share stratum h, else 1)."""
    at = np.flatnonzero((rank > 0) & (x * w != 0))
    total = 0.0
    for k in at:
        total += x[k] * w[k] / rank[k]
        for j in at:
            if rank[j] < rank[k]:
                f = factor[stratum[k]] if stratum[j] == stratum[k] else 1.0
                total += x[j] * x[k] * w[j] * w[k] * f / rank[k]
    return total


def brute_corrected(top: dict, census: np.ndarray, drawn: np.ndarray, rate: float):
    """The jackknife-corrected AP and its delete-two jackknife variance of one topic by brute
    force: every deletion and every pair of deletions of the universe's drawn documents,
    AP's numerator summed pair by pair over the whole universe (no grouping)."""
    x, ranks = top["x"], top["ranks"]
    size = int((~census).sum())
    n = min(max(2, int(round(rate * size))), size)
    below = np.flatnonzero(drawn & ~census)
    stratum = (~census).astype(int)

    def ap(removed, k):
        w = np.where(census, 1.0, np.where(drawn, size / k, 0.0))
        w[list(removed)] = 0.0
        r_hat = w @ x
        f = np.array([1.0, pair_factor(k, size)])
        return np.array([pair_sum(x, w, r, stratum, f) for r in ranks]) / r_hat \
            if r_hat > 0 else np.zeros(len(ranks))

    def corrected(removed, k):  # θ̂ − (1 − k/N)(k − 1)(θ̄ − θ̂) on the sample less ``removed``
        theta = ap(removed, k)
        reps = np.array([ap(removed + [d], k - 1) for d in below if d not in removed])
        return theta - (1 - k / size) * (k - 1) * (reps.mean(0) - theta)

    value = corrected([], n)
    reps = np.array([corrected([d], n - 1) for d in below])
    variance = (1 - n / size) * (n - 1) / n * ((reps - reps.mean(0)) ** 2).sum(0)
    return value, variance


def check(campaign, found, universe=None, census_depth=None, topics=(0, 1)):
    """The ``package`` reading against relimpute.confidence.survey.estimate, sample by sample
    (MAP and a few pairs' ΔMAP: estimate and se), and the plain ratio likewise."""
    from relimpute.confidence.survey import estimate

    systems = list(campaign.systems)
    runs = {s: campaign.run_frame(s) for s in systems}
    i, j = found["pairs"]
    picks = [0, 1, len(i) // 2, len(i) - 1]
    pairs = [(systems[i[p]], systems[j[p]]) for p in picks]
    worst = 0.0
    for s, sample in enumerate(found["samples"]):
        for reading, correct, variance in (
                ("package", "taylor", "jackknife"), ("ratio-jk", "none", "jackknife"),
                ("jkbc-jk2", "jackknife", "jackknife"), ("jkbc-mid", "jackknife", "averaged")):
            table = estimate(sample, runs, rel_threshold=1, pairs=pairs,
                             bias_correction=correct, variance=variance)
            table = table[table["query_id"] == "all"]
            single = table[table["run_b"] == ""].set_index("run").loc[systems]
            paired = table[table["run_b"] != ""].set_index(["run", "run_b"]).loc[pairs]
            gaps = [single["estimate"] - found["est"][reading][s],
                    single["se"] - np.sqrt(found["var"][reading][s]),
                    paired["estimate"].to_numpy() - found["d_est"][reading][s][picks],
                    paired["se"].to_numpy() - np.sqrt(found["d_var"][reading][s][picks])]
            gap = max(float(np.abs(g).max()) for g in gaps)
            worst = max(worst, gap)
            print(f"  check sampling {s}, {reading}: largest |difference| from estimate() "
                  f"{gap:.2e}")
    judged = found["samples"][0]["relevance"].to_numpy() >= 0
    sizes = np.cumsum([0] + [len(t["x"]) for t in universe.topics])
    for t in topics:
        top = universe.topics[t]
        census = top["best"] <= census_depth
        drawn = judged[sizes[t]:sizes[t + 1]]
        value, variance = brute_corrected(top, census, drawn, found["rate"])
        found_t = topic_readings(CensusTopic(top, census, found["rate"]), drawn[top["x"] > 0],
                                 np.random.default_rng(0), 2)[0]["jkbc-jk2"]
        gap = max(float(np.abs(value - found_t[0]).max()),
                  float(np.abs(variance - np.diag(found_t[1])).max()))
        worst = max(worst, gap)
        print(f"  check topic {top['query_id']}, jkbc-jk2 against every deletion by brute force: "
              f"largest |difference| {gap:.2e}")
    print(f"check: largest difference {worst:.2e} (tolerance 1e-8: the package's Hessian is "
          "by central differences)")
    if worst > 1e-8:
        raise SystemExit("the readings do not reproduce estimate()")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collection", choices=("dl19", "dl21", "trec8"))
    parser.add_argument("--budget", type=float, default=0.10, help="share of the pool judged")
    parser.add_argument("--census", type=int, default=3, help="depth judged in full")
    parser.add_argument("--samplings", type=int, default=30)
    parser.add_argument("--boots", type=int, default=200, help="bootstrap replicates")
    parser.add_argument("--check", action="store_true", help="compare with estimate()")
    parser.add_argument("--out", type=Path, help="write the table here (TSV)")
    args = parser.parse_args(argv)
    started = time.process_time()
    campaign = load(args.collection)
    universe = Universe(campaign)
    found = run_study(universe, args.census, args.budget, args.samplings, args.boots)
    if args.check:
        check(campaign, found, universe, args.census)
        return
    truth = universe.truth_map
    i, j = found["pairs"]
    rows = []
    found_key = intervals(found)
    for key, target in (("map", truth), ("delta", truth[i] - truth[j])):
        ref = found_key[("package", key)]
        ref_width = float((ref[2] - ref[1]).mean())
        for (name, k), (point, lo, hi, se) in found_key.items():
            if k == key:
                rows.append(dict(quantity=key, reading=name,
                                 **score(point, lo, hi, se, target, ref_width)))
    table = pd.DataFrame(rows)
    print(f"\n{args.collection}, {args.budget:.0%}, census depth {args.census}, "
          f"{args.samplings} samplings, {args.boots} bootstrap replicates, "
          f"{len(i)} pairs ({time.process_time() - started:.0f} CPU s)")
    print(table.round(4).to_string(index=False))
    if args.out:
        table.to_csv(args.out, sep="\t", index=False, float_format="%.5f")


if __name__ == "__main__":
    main()
