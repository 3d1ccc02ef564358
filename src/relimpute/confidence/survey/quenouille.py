"""AP's ratio corrected by the jackknife's own bias estimate (Quenouille 1956) and the delete-one
jackknife variance of that corrected estimate (each replicate corrected by a jackknife of its
own: delete-two), for stratified designs without replacement (``docs/design-based.md``).

With θ̂ the ratio on the sample and θ̂_(d) its stratified delete-one replicates
(:func:`.design.replicates`), the corrected estimate is

    θ̃ = θ̂ − Σ_h (1 − n_h/N_h)(n_h − 1)(θ̄_h − θ̂),   θ̄_h the mean of stratum h's replicates,

over the strata with 2 ≤ n_h < N_h; replicate d is corrected likewise on the sample less d
(n_h − 1 in d's stratum), from the replicates deleting d and one more document, and the
variance is :func:`.design.jackknife_variance` of the corrected replicates about their stratum
means. Counting the correction's own noise is what makes the interval cover where the Taylor
correction's does not, but it counts too much (conservative); the delete-one jackknife of θ̂
counts none (too narrow). ``variance="averaged"`` takes the mean of the two variances: an
empirical middle, chosen on DL 2019 and TREC-8 and scored on DL 2021
(``examples/design_based/intervals.py``, its README).

Every replicate is exact: AP's numerator is Σ_d a_d s_h + ½ Σ_{d≠e} B_de S_gh over the judged
documents (a_d = v_d / r_d, B_de = v_d v_e / max(r_d, r_e), s_h = N_h / n_h and S_gh = s_g s_h
across strata, N_h(N_h − 1) / (n_h(n_h − 1)) = 1/π_jk within one), so deleting d and e removes
their rows and adds back B_de once, with the scales of the reduced counts.
"""

from __future__ import annotations

import numpy as np

from .design import STRATIFIED
from .measures import ratio_parts

#: The values ``bias_correction`` takes: ``auto`` (the default, :func:`by_design`), AP's
#: second-order Taylor term (capped at ½ se), the jackknife's own estimate with the delete-two
#: variance, or none (statAP).
BIAS_CORRECTIONS = ("auto", "taylor", "jackknife", "none")


def bias_correction_name(value) -> str:
    """One of :data:`BIAS_CORRECTIONS` from a name or the former bool (True: taylor)."""
    if value is True:
        return "taylor"
    if value is False or value is None:
        return "none"
    if value not in BIAS_CORRECTIONS:
        raise ValueError(f"bias_correction {value!r} is not one of {', '.join(BIAS_CORRECTIONS)}")
    return value


def by_design(bias_correction, variance: str, sampling: str) -> tuple[str, str]:
    """(correction, variance) with ``auto`` read for ``sampling``. A stratified sample takes
    the jackknife's corrected ratio with the ``averaged`` variance: on a census of the top
    ranks with a uniform sample below (NIST's xinfAP design) it covered where the capped Taylor
    term's intervals were too narrow (``examples/design_based/README.md``). A Poisson sample
    takes the Taylor term with the delete-one jackknife: the jackknife's correction needs
    strata. An explicit choice is kept as it is."""
    correction = bias_correction_name(bias_correction)
    if correction == "auto":
        correction = "jackknife" if sampling == STRATIFIED else "taylor"
    if variance == "auto":
        variance = "averaged" if correction == "jackknife" else "jackknife"
    return correction, variance


def _scales(n: np.ndarray, size: np.ndarray):
    """Per stratum (trailing axis): s = N/n (0 when none is left) and the pair scale
    N(N − 1)/(n(n − 1)) (0 below two), broadcast over the leading axes of ``n``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        single = np.where(n > 0, size / np.where(n > 0, n, 1), 0.0)
        pair = np.where(n > 1, size * (size - 1) / np.where(n > 1, n * (n - 1), 1), 0.0)
    return single, pair


def _pair_scale(n, size):
    """(s (…, H), S (…, H, H)): S_gh = s_g s_h across strata, the pair scale within one."""
    single, pair = _scales(n, size)
    out = single[..., :, None] * single[..., None, :]
    H = single.shape[-1]
    out[..., np.arange(H), np.arange(H)] = pair
    return single, out


def _parts(v, ranks, member, at, chunk: int = 16):
    """a (R, m), I (R, m, H) = Σ_{e ∈ h} B_de of the deletable ``at``, A (R, H), P (R, H, H)
    over every judged document and B (R, m, m) among the deletable, of ``v`` (``ranks``
    (R, n) and ``member`` (n, H) of the judged documents); only documents with v ≠ 0 count."""
    R, H = len(ranks), member.shape[1]
    m = len(at)
    a, I, B = np.zeros((R, m)), np.zeros((R, m, H)), np.zeros((R, m, m))
    A, P = np.zeros((R, H)), np.zeros((R, H, H))
    nz = np.flatnonzero(v)
    where = np.full(len(v), -1)
    where[at] = np.arange(m)
    mine = where[nz]  # the deletable among them (−1: not deletable)
    kept = mine >= 0
    for start in range(0, R, chunk):
        part = slice(start, start + chunk)
        r = ranks[part][:, nz]
        inv = np.where(r > 0, 1.0 / np.maximum(r, 1), 0.0)
        later = np.maximum(r[:, :, None], r[:, None, :])
        both = (r[:, :, None] > 0) & (r[:, None, :] > 0) & ~np.eye(len(nz), dtype=bool)
        b = np.where(both, np.outer(v[nz], v[nz]) / np.where(both, later, 1), 0.0)
        inner = b @ member[nz]
        A[part] = (v[nz] * inv) @ member[nz]
        P[part] = member[nz].T @ inner
        a[part][:, mine[kept]] = (v[nz] * inv)[:, kept]
        I[part][:, mine[kept]] = inner[:, kept]
        B[part][:, mine[kept][:, None], mine[kept][None, :]] = b[:, kept][:, :, kept]
    return a, I, A, P, B


class _Replicates:
    """One sampling's numerators N̂ (per run) and R̂ on the sample, on the sample less each
    deletable d and less each two, for x and p (:class:`.batched.TopicSamplings`' totals)."""

    def __init__(self, batched, b: int):
        s = batched.s
        judged = np.flatnonzero(s.drawn[b])
        h = s.stratum[judged]
        H = s.member.shape[1]
        member = np.eye(H)[h]
        self.size, self.n = s.member.sum(0), s.n_h[b]
        self.pi = self.n[h] / self.size[h]
        self.at = np.flatnonzero(self.pi < 1)  # deletable (positions among the judged)
        self.h, self.pi = h[self.at], self.pi[self.at]
        k1 = np.eye(H)[self.h]  # (m, H) counts deleted
        counts = (self.n, self.n - k1, self.n - (k1[:, None] + k1[None, :]))
        ranks = batched.ranks[:, judged]
        x = batched.x[judged]
        self.x_at, self.least = x[self.at], float((x > 0).sum())
        self.num = [self._numerators(v, ranks, member, counts)
                    for v in (x, batched.p[judged])]
        self.den = [self._denominators(v @ member, v[self.at], counts)
                    for v in (x, batched.p[judged])]

    def _denominators(self, totals, dv, counts):
        """Σ_h s_h Σ_{d ∈ h} v_d on the sample (), less d (m,), less d and e (m, m)."""
        rows = np.arange(len(dv))
        s0, s1, s2 = (_scales(n, self.size)[0] for n in counts)
        return (s0 @ totals, s1 @ totals - s1[rows, self.h] * dv,
                s2 @ totals - s2[rows[:, None], rows[None, :], self.h[:, None]] * dv[:, None]
                - s2[rows[:, None], rows[None, :], self.h[None, :]] * dv[None, :])

    def _numerators(self, v, ranks, member, counts):
        """N̂ on the sample (R,), less d (R, m), less d and e (R, m, m)."""
        R, m = len(ranks), len(self.at)
        if not v.any():
            return np.zeros(R), np.zeros((R, m)), np.zeros((R, m, m))
        a, I, A, P, B = _parts(v, ranks, member, self.at)
        out, H = [], A.shape[1]
        for n in counts:  # Σ_h s_h A_rh + ½ Σ_gh S_gh P_rgh, as products over (h) and (g, h)
            single, S = _pair_scale(n, self.size)
            both = single @ A.T + 0.5 * S.reshape(*S.shape[:-2], H * H) @ P.reshape(R, -1).T
            out.append(np.moveaxis(both, -1, 0))
        rows = np.arange(m)
        s1, S1 = _pair_scale(counts[1], self.size)  # (m, H), (m, H, H)
        out[1] = out[1] - a * s1[rows, self.h] - (S1[rows, self.h] * I).sum(-1)
        s2, S2 = _pair_scale(counts[2], self.size)  # (m, m, H), (m, m, H, H)
        d, e = rows[:, None], rows[None, :]
        hd, he = self.h[:, None], self.h[None, :]
        by_d = I.transpose(1, 0, 2) @ S2[d, e, hd].transpose(0, 2, 1)  # (d, r, e): Σ_h S I_rdh
        by_e = I.transpose(1, 0, 2) @ S2[d, e, he].transpose(1, 2, 0)  # (e, r, d): Σ_h S I_reh
        out[2] = out[2] - a[:, :, None] * s2[d, e, hd] - a[:, None, :] * s2[d, e, he] \
            - by_d.transpose(1, 0, 2) - by_e.transpose(1, 2, 0) + B * S2[d, e, hd, he]
        return out

    def values(self, batched, lam, members, level: int):
        """Σ sign · AP at λ (Q,) of every quantity on the sample (``level`` 0), less each d (1:
        (Q, m)) or each d and e (2: (Q, m, m))."""
        nx, npr = self.num[0][level], self.num[1][level]
        rx, rp = self.den[0][level], self.den[1][level]
        least = self.least - (0.0, self.x_at, self.x_at[:, None] + self.x_at)[level]
        least = np.maximum(least, batched.floor)  # PPI++ holds R̂ at 1 (batched._held)
        lam = lam.reshape(-1, *[1] * level)
        top = 0.0  # the runs share R̂ (and λ): Σ sign N̂ / R̂ is one ratio
        for runs, sign in members:
            pop = batched.pop_n[runs].reshape(-1, *[1] * level)
            top = top + sign * (nx[runs] + lam * (pop - npr[runs]))
        return ratio_parts(top, rx + lam * (batched.pop_r - rp), least)[0]


def _replicates(batched, b: int) -> _Replicates:
    """:class:`_Replicates` of sampling ``b``, kept on a one-sample ``batched`` (its runs and
    pairs and every estimator read the same, PPI++'s held view too; many samplings' would fill
    the memory) until its ``forget_replicates``."""
    if len(batched.s) > 1:
        return _Replicates(batched, b)
    if "sample" not in batched.replicates:
        batched.replicates["sample"] = _Replicates(batched, b)
    return batched.replicates["sample"]


def _correction(theta, reps, h, n, size, mult=None):
    """Σ_h (1 − n_h/N_h)(n_h − 1)(θ̄_h − θ̂) over the strata with 2 ≤ n_h < N_h: ``theta``
    (..., Q), ``reps`` (..., Q, m) of the deletable with strata ``h`` (m,), ``mult`` (..., m)
    which replicates count (1) in the means; ``n`` (..., H) the counts."""
    H = len(size)
    mult = np.ones(reps.shape[-1]) if mult is None else mult
    member = np.eye(H)[h] * mult[..., None]  # (..., m, H)
    count = member.sum(-2)  # (..., H)
    mean = (reps @ member) / np.maximum(count, 1)[..., None, :]
    open_ = (n >= 2) & (n < size) & (count > 0)
    fpc = np.where(open_, (1 - n / size) * (n - 1), 0.0)[..., None, :]
    return (fpc * (mean - theta[..., None])).sum(-1)


def corrected(batched, lam, members) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(θ̃, its delete-two jackknife variance, the delete-one jackknife variance of θ̂) per
    sampling and quantity (B, Q) of Σ sign · AP over ``members`` at λ (B, Q) (module
    docstring); stratified designs only. Where one λ serves every quantity of a sampling (HT,
    GREG), the runs share R̂ in the sample and in every replicate, so each quantity's estimate
    and replicates are Σ sign · its runs' own: read once per run (R m² rather than Q m²)."""
    s = batched.s
    if s.sampling != STRATIFIED:
        raise ValueError("the jackknife's bias correction needs a stratified design (sampling "
                         "without replacement within strata); use bias_correction 'taylor'")
    B, Q = lam.shape
    value, var, plain = np.zeros((B, Q)), np.zeros((B, Q)), np.zeros((B, Q))
    every = [(np.arange(len(batched.ranks)), 1.0)]
    for b in range(B):
        if (s.n_h[b] == 0).any():  # a stratum none judged: no estimate (estimates() says so)
            continue
        rep = _replicates(batched, b)
        if Q and np.all(lam[b] == lam[b][0]):
            runs = _chunked(rep, batched, np.full(len(batched.ranks), lam[b][0]), every)
            parts = [sum(sign * part[r] for r, sign in members) for part in runs]
        else:
            parts = _chunked(rep, batched, lam[b], members)
        coef = _coef(rep)
        value[b], var[b], plain[b] = parts[0], coef @ (parts[1] ** 2).T, coef @ (parts[2] ** 2).T
    return value, var, plain


#: floats a chunk of quantities' delete-two values may hold (Q m², 8 bytes each: 128 MB)
CHUNK_FLOATS = 2**24


def _chunked(rep: _Replicates, batched, lam, members):
    """:func:`_deviations` of the quantities in chunks of at most :data:`CHUNK_FLOATS` delete-two
    values (all pairs of a large sample would otherwise hold Q m² at once)."""
    Q, m = len(lam), max(len(rep.at), 1)
    step = max(1, CHUNK_FLOATS // (m * m))
    if Q <= step:
        return _deviations(rep, batched, lam, members)
    found = [_deviations(rep, batched, lam[i:i + step],
                         [(runs[i:i + step], sign) for runs, sign in members])
             for i in range(0, Q, step)]
    return [np.concatenate(part) for part in zip(*found)]


def _coef(rep: _Replicates) -> np.ndarray:
    """Each deletable replicate's coefficient in :func:`.design.jackknife_variance` (m,)."""
    n_d = rep.n[rep.h]
    split = n_d >= 2
    return np.where(split, (1 - n_d / rep.size[rep.h]) * (n_d - 1) / np.maximum(n_d, 1),
                    1 - rep.pi)


def _deviations(rep: _Replicates, batched, lam, members):
    """(θ̃ (Q,), the corrected replicates' deviations from their centre (Q, m), the plain
    replicates' from theirs (Q, m)) of one sampling: :func:`corrected`'s pieces, linear in
    the replicates, so a sum of the runs' own where they share R̂."""
    theta = rep.values(batched, lam, members, 0)
    one = rep.values(batched, lam, members, 1)  # (Q, m)
    value = theta - _correction(theta, one, rep.h, rep.n, rep.size)
    m = len(rep.at)
    if not m:
        return value, np.zeros_like(one), np.zeros_like(one)
    two = rep.values(batched, lam, members, 2)  # (Q, m, m)
    n_less = rep.n - np.eye(len(rep.size))[rep.h]  # (m, H)
    own = _correction(one.T, two.transpose(1, 0, 2), rep.h, n_less, rep.size,
                      1.0 - np.eye(m))  # (m, Q): each replicate's own correction (e ≠ d)
    split = rep.n[rep.h] >= 2
    tilde = one - own.T  # (Q, m)
    return value, tilde - _centre(tilde, value, split, rep.h), \
        one - _centre(one, theta, split, rep.h)


def _centre(reps, theta, split, h):
    """:func:`.design.jackknife_variance`'s centre of replicates (Q, m): their stratum's mean
    where it has two or more judged, else θ (Q,)."""
    centre = np.repeat(theta[:, None], reps.shape[1], 1)
    for g in np.unique(h[split]):
        inside = split & (h == g)
        centre[:, inside] = reps[:, inside].mean(1, keepdims=True)
    return centre
