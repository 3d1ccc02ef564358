"""Many samplings at once: relimpute.confidence.survey's AP estimators (statAP's ratio, HT and
the difference / GREG estimator), vectorised across B seeded samplings of one topic.

The arithmetic is the package's: the totals are :func:`relimpute.confidence.survey.totals
.ranked_pair_sum` (AP's numerator, with replicate-shaped weights ``(B, n)``) and plain HT sums
(R); the estimate is N̂(λ) / R̂(λ) with T̂(λ) = HT_x + λ (POP_p − HT_p); its variance is the
linearised one (z_d = ∂f/∂w_d at the estimate, ``measures.linearised``) under the design's
formula (``design.design_covariance``: Poisson Σ_S (1 − π)/π² z², stratified
Σ_h N_h²(1 − n_h/N_h)/n_h s_h²(z)). A paired difference is z_A − z_B on the same sample, so
every pair's variance is read off one Gram matrix per sampling. ``tests/test_design_study.py``
checks this against :func:`relimpute.confidence.survey.estimate` sample by sample.
"""

from __future__ import annotations

import numpy as np

from relimpute.confidence.survey.totals import ranked_pair_sum


class TopicDraws:
    """B samplings of one topic's universe (n documents): ``weight`` (B, n) = 1[d ∈ S]/π_d,
    ``var_coef`` (B, n) the design's per-document coefficient of Σ z², and the strata
    (``stratum`` (n,), ``pair_factor`` (H,), ``stratified``) for the centring."""

    def __init__(self, drawn: np.ndarray, pi: np.ndarray, stratum: np.ndarray,
                 stratified: bool):
        self.drawn = drawn
        self.weight = np.where(drawn, 1.0 / pi, 0.0)
        self.stratum = stratum
        self.stratified = stratified
        H = int(stratum.max()) + 1 if len(stratum) else 1
        self.pair_factor = np.ones(H)
        if not stratified:
            self.var_coef = np.where(drawn, (1.0 - pi) / pi**2, 0.0)
            self.members = None
            return
        size = np.bincount(stratum, minlength=H).astype(float)
        n = np.bincount(stratum, weights=drawn[0].astype(float), minlength=H)  # fixed n_h
        for h in range(H):
            if n[h] >= 2 and size[h] >= 2:
                pij = n[h] * (n[h] - 1) / (size[h] * (size[h] - 1))
                self.pair_factor[h] = (n[h] / size[h]) ** 2 / pij
        with np.errstate(divide="ignore", invalid="ignore"):
            per = np.where((n >= 2) & (n < size), size**2 * (1 - n / size) / (n * (n - 1)), 0.0)
        self.var_coef = np.where(drawn, per[stratum], 0.0)
        self.members = [(stratum == h, n[h]) for h in range(H) if n[h] >= 1]

    def centred_part(self, z: np.ndarray, part: slice) -> np.ndarray:
        """z (b, K, n) of the samplings ``part`` centred on its stratum's sample mean
        (stratified), else z."""
        if self.members is None:
            return z
        out = z.copy()
        drawn = self.drawn[part][:, None, :]
        for inside, n in self.members:
            mean = (z * (drawn & inside)).sum(axis=-1, keepdims=True) / n
            out = np.where(inside, out - mean, out)
        return out


def run_totals(x, p, rank, draws: TopicDraws):
    """AP's numerator for one run: (Nx (B,), dNx (B, n), Np (B,), dNp (B, n), POP_N)."""
    nx, dnx = ranked_pair_sum(x, draws.weight, rank, draws.stratum, draws.pair_factor)
    np_, dnp = ranked_pair_sum(p, draws.weight, rank, draws.stratum, draws.pair_factor)
    pop, _ = ranked_pair_sum(p, np.ones(len(p)), rank, np.zeros(len(p), int), np.ones(1))
    return nx, dnx, np_, dnp, float(pop)


def topic_ap(x, p, ranks, draws: TopicDraws, lam: float):
    """Per sampling and run, AP̂ (B, R) and the linearised variables z (B, R, n) of the
    estimator with a fixed λ (0: HT, 1: difference / GREG) and predictions p."""
    parts = TopicParts(x, p, ranks, draws)
    lam_r = np.full(parts.nx.shape, float(lam))
    value, a, b = parts.at(lam_r)
    z = a[:, :, None] * (parts.dnx - lam_r[:, :, None] * parts.dnp) \
        + b[:, :, None] * (x - lam_r[:, :, None] * p)
    return value, z


class TopicParts:
    """One topic's pieces for every run: N's HT parts ``nx, np_`` (B, R), derivatives
    ``dnx, dnp`` (B, R, n), ``pop_n`` (R,); R's ``rx, rp`` (B,), ``pop_r``; the universe's x, p.
    AP̂_r(λ) = (nx + λ(pop_n − np_)) / (rx + λ(pop_r − rp)) and its linearised variable
    z = a (dNx − λ dNp) + b (x − λ p), a = 1/R̂, b = −N̂/R̂² (0 when R̂ ≤ 0, as the package's
    ratio)."""

    def __init__(self, x, p, ranks, draws):
        self.x, self.p, self.draws = x, p, draws
        self.ranks = np.asarray(ranks)
        found = [run_totals(x, p, rank, draws) for rank in ranks]
        self.nx = np.stack([f[0] for f in found], 1)
        self.dnx = np.stack([f[1] for f in found], 1)
        self.np_ = np.stack([f[2] for f in found], 1)
        self.dnp = np.stack([f[3] for f in found], 1)
        self.pop_n = np.array([f[4] for f in found])
        w = draws.weight
        self.rx, self.rp, self.pop_r = w @ x, w @ p, float(p.sum())

    def at(self, lam, runs=None):
        """(AP̂, a, b) at λ (B, Q), a λ per sampling and run of ``runs`` (Q,) (None: all)."""
        runs = slice(None) if runs is None else runs
        n_hat = self.nx[:, runs] + lam * (self.pop_n[runs] - self.np_[:, runs])
        r_hat = self.rx[:, None] + lam * (self.pop_r - self.rp[:, None])
        ok = r_hat > 0
        safe = np.where(ok, r_hat, 1.0)
        return (np.where(ok, n_hat / safe, 0.0), np.where(ok, 1.0 / safe, 0.0),
                np.where(ok, -n_hat / safe**2, 0.0))

    def gram(self) -> np.ndarray:
        """(B, K, K), K = 2R + 2: the design covariances of the basis [dNx_r, dNp_r, x, p]
        (over the drawn documents only, centred within strata when stratified)."""
        B, R, n = self.dnx.shape
        basis = np.concatenate([self.dnx, self.dnp, np.broadcast_to(self.x, (B, 1, n)),
                                np.broadcast_to(self.p, (B, 1, n))], axis=1)
        return gram(basis, self.draws)


def quadratic(G, index, coef):
    """cᵀ G c per sampling and quantity: ``index`` (Q, m) basis positions, ``coef`` (B, Q, m)."""
    sub = G[:, index[:, :, None], index[:, None, :]]  # (B, Q, m, m)
    return np.einsum("bqi,bqij,bqj->bq", coef, sub, coef)


def estimates(parts: TopicParts, G, pairs, estimator: str, variance: str = "linearised"):
    """Per sampling, every run's and pair's (value, variance, λ) with ``estimator`` ``ht``
    (λ = 0), ``greg`` (λ = 1) or ``ppi++`` (λ = clip(Ĉov(u, v)/V̂ar(v), 0, 1) per topic and
    quantity, u and v read at the HT point as :func:`relimpute.confidence.survey.estimate`);
    ``variance`` ``linearised`` or ``jackknife`` (:func:`jackknife`, Poisson designs)."""
    B, R = parts.nx.shape
    runs = np.arange(R)
    a_idx, b_idx = pairs[:, 0], pairs[:, 1]
    # basis positions of each quantity: run r -> [dNx_r, dNp_r, x, p]; pair -> both runs'
    x_at, p_at = 2 * R, 2 * R + 1
    run_index = np.stack([runs, R + runs, np.full(R, x_at), np.full(R, p_at)], 1)
    pair_index = np.concatenate([run_index[a_idx], run_index[b_idx]], 1)
    both_runs = np.concatenate([a_idx, b_idx])

    def coefs(lam_run, lam_pair):
        _, a, b = parts.at(lam_run)
        run_c = np.stack([a, -lam_run * a, b, -lam_run * b], -1)
        _, a2, b2 = parts.at(np.concatenate([lam_pair, lam_pair], 1), both_runs)
        P = lam_pair.shape[1]
        aa, ab, ba, bb = a2[:, :P], a2[:, P:], b2[:, :P], b2[:, P:]
        pair_c = np.stack([aa, -lam_pair * aa, ba, -lam_pair * ba,
                           -ab, lam_pair * ab, -bb, lam_pair * bb], -1)
        return run_c, pair_c

    P = len(pairs)
    if estimator in ("ht", "greg"):
        lam_run = np.full((B, R), 0.0 if estimator == "ht" else 1.0)
        lam_pair = np.full((B, P), lam_run[0, 0])
    else:
        _, a, b = parts.at(np.zeros((B, R)))
        u_run = np.stack([a, 0 * a, b, 0 * b], -1)
        v_run = np.stack([0 * a, a, 0 * b, b], -1)
        lam_run = _tuned(G, run_index, u_run, v_run)
        ua, ub = u_run[:, a_idx], u_run[:, b_idx]
        va, vb = v_run[:, a_idx], v_run[:, b_idx]
        lam_pair = _tuned(G, pair_index, np.concatenate([ua, -ub], -1),
                          np.concatenate([va, -vb], -1))
    value = parts.at(lam_run)[0]
    both = parts.at(np.concatenate([lam_pair, lam_pair], 1), both_runs)[0]
    d_value = both[:, :P] - both[:, P:]
    if variance == "jackknife":
        var_run, var_pair = jackknife(parts, lam_run, lam_pair, pairs)
    else:
        run_c, pair_c = coefs(lam_run, lam_pair)
        var_run, var_pair = quadratic(G, run_index, run_c), quadratic(G, pair_index, pair_c)
    return value, var_run, lam_run, d_value, var_pair, lam_pair


def _tuned(G, index, u, v):
    """PPI++'s λ = Ĉov(u, v) / V̂ar(v) clipped to [0, 1] (0 when V̂ar(v) = 0)."""
    sub = G[:, index[:, :, None], index[:, None, :]]
    cov = np.einsum("bqi,bqij,bqj->bq", u, sub, v)
    var = np.einsum("bqi,bqij,bqj->bq", v, sub, v)
    return np.where(var > 0, np.clip(cov / np.where(var > 0, var, 1.0), 0.0, 1.0), 0.0)


def gram(z: np.ndarray, draws: TopicDraws, chunk: int = 50) -> np.ndarray:
    """(B, K, K): the estimated design covariances Σ_d c_d z_kd z_ld of every pair of rows of
    z (B, K, n), over the drawn documents only (gathered, so the cost follows the sample)."""
    out = np.empty((z.shape[0], z.shape[1], z.shape[1]))
    for start in range(0, z.shape[0], chunk):
        part = slice(start, start + chunk)
        zc = draws.centred_part(z[part], part) * np.sqrt(draws.var_coef[part])[:, None, :]
        drawn = draws.drawn[part]
        m = max(int(drawn.sum(axis=1).max()), 1)
        idx = np.argsort(~drawn, axis=1, kind="stable")[:, :m]
        picked = np.take_along_axis(zc, idx[:, None, :], axis=2)
        out[part] = picked @ picked.transpose(0, 2, 1)
    return out


def jackknife(parts: TopicParts, lam_run, lam_pair, pairs, pairs_once: bool = True):
    """The package's default variance, the delete-one jackknife (``design.replicates``), for
    Poisson designs: Σ_d (1 − π_d)(θ̂_(d) − θ̂)² over the drawn d with π_d < 1, less what it
    counts twice in AP's pairs (:func:`pair_overcount`; ``pairs_once=False`` keeps the earlier,
    wider form). Each total is linear in each weight separately (AP's numerator has no w_d²
    term), so deleting d gives T_(d) = T − w_d ∂T/∂w_d exactly. Returns the variances (B, R)
    and (B, P)."""
    d = parts.draws
    if d.stratified:
        raise ValueError("the vectorised jackknife covers Poisson designs only")
    drawn = d.drawn
    m = max(int(drawn.sum(axis=1).max()), 1)
    idx = np.argsort(~drawn, axis=1, kind="stable")[:, :m]
    w = np.take_along_axis(d.weight, idx, 1)
    pi = np.where(w > 0, 1.0 / np.where(w > 0, w, 1.0), 1.0)
    coef = np.where(np.take_along_axis(drawn, idx, 1) & (pi < 1), 1.0 - pi, 0.0)
    nx = parts.nx[:, :, None] - w[:, None] * np.take_along_axis(parts.dnx, idx[:, None], 2)
    np_ = parts.np_[:, :, None] - w[:, None] * np.take_along_axis(parts.dnp, idx[:, None], 2)
    rx = parts.rx[:, None] - w * parts.x[idx]
    rp = parts.rp[:, None] - w * parts.p[idx]

    def replicate(lam, runs):
        n_hat = nx[:, runs] + lam[..., None] * (parts.pop_n[runs][None, :, None] - np_[:, runs])
        r_hat = rx[:, None] + lam[..., None] * (parts.pop_r - rp[:, None])
        ok = r_hat > 0
        return np.where(ok, n_hat / np.where(ok, r_hat, 1.0), 0.0)

    runs = np.arange(parts.nx.shape[1])
    rep = replicate(lam_run, runs)
    var_run = (coef[:, None] * (rep - parts.at(lam_run)[0][..., None]) ** 2).sum(-1)
    a, b = pairs[:, 0], pairs[:, 1]
    both = np.concatenate([lam_pair, lam_pair], 1)
    full = parts.at(both, np.concatenate([a, b]))[0]
    P = len(pairs)
    delta = replicate(lam_pair, a) - replicate(lam_pair, b)
    var_pair = (coef[:, None] * (delta - (full[:, :P] - full[:, P:])[..., None]) ** 2).sum(-1)
    if pairs_once:
        over_run, over_pair = pair_overcount(parts, lam_run, lam_pair, pairs)
        var_run, var_pair = var_run - over_run, var_pair - over_pair
    return var_run, var_pair


def pair_overcount(parts: TopicParts, lam_run, lam_pair, pairs, chunk: int = 4):
    """What the delete-one jackknife counts twice in AP's pairs under Poisson sampling (the
    package's ``estimate._pair_overcount``): ½ Σ_{j≠k ∈ S} b_jk² a_j a_k, a = (1 − π) w²,
    b_jk = Σ_runs ± (x_j x_k − λ p_j p_k) / (max(r_j, r_k) R̂(λ)) over the drawn d with π < 1.
    With C_r = (x x − λ p p) ∘ M_r (M_r = 1 / the later rank of the pair in run r) the sum
    for runs A − B is Q_AA + Q_BB − 2 Q_AB, Q read off three Gram matrices over runs (xx·xx,
    xx·pp, pp·pp) so a λ per run or pair costs nothing more. Returns (B, R) and (B, P)."""
    d = parts.draws
    inside = d.drawn & (d.weight > 1) & ((parts.x > 0) | (parts.p > 0))  # b_jk = 0 elsewhere
    B, R = parts.nx.shape
    m = max(int(inside.sum(1).max()), 1)
    idx = np.argsort(~inside, axis=1, kind="stable")[:, :m]
    valid = np.take_along_axis(inside, idx, 1)
    w = np.take_along_axis(d.weight, idx, 1)
    a = np.where(valid, w * (w - 1.0), 0.0)
    X, P_ = np.where(valid, parts.x[idx], 0.0), np.where(valid, parts.p[idx], 0.0)
    grams = np.zeros((3, B, R, R))
    off = np.eye(m) == 0
    for start in range(0, B, chunk):
        part = slice(start, start + chunk)
        r = parts.ranks[:, idx[part]].transpose(1, 0, 2)  # (b, R, m)
        later = np.maximum(r[..., :, None], r[..., None, :]).astype(float)
        both = (r[..., :, None] > 0) & (r[..., None, :] > 0) & off
        M = np.where(both, 1.0 / np.where(both, later, 1.0), 0.0)
        A = (a[part, :, None] * a[part, None, :])[:, None]
        ux = M * (X[part, :, None] * X[part, None, :])[:, None]
        up = M * (P_[part, :, None] * P_[part, None, :])[:, None]
        b = ux.shape[0]
        flat = lambda u: u.reshape(b, R, m * m)  # noqa: E731
        uxa, upa = flat(ux * A), flat(up * A)
        grams[0, part] = 0.5 * uxa @ flat(ux).transpose(0, 2, 1)
        grams[1, part] = 0.5 * uxa @ flat(up).transpose(0, 2, 1)
        grams[2, part] = 0.5 * upa @ flat(up).transpose(0, 2, 1)
    gxx, gxp, gpp = grams

    def q(i, j, lam):
        """Σ C_i C_j a a at λ (B, Q), divided by R̂(λ)² (0 where R̂ ≤ 0)."""
        rows = np.arange(B)[:, None]
        value = (gxx[rows, i, j] - lam * (gxp[rows, i, j] + gxp[rows, j, i])
                 + lam**2 * gpp[rows, i, j])
        r_hat = parts.rx[:, None] + lam * (parts.pop_r - parts.rp[:, None])
        return np.where(r_hat > 0, value / np.where(r_hat > 0, r_hat, 1.0) ** 2, 0.0)

    runs = np.arange(R)
    i, j = pairs[:, 0], pairs[:, 1]
    over_run = q(runs, runs, lam_run)
    over_pair = q(i, i, lam_pair) + q(j, j, lam_pair) - 2 * q(i, j, lam_pair)
    return over_run, over_pair
