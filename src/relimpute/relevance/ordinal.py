"""Penalised cumulative-logit regression by Newton's method with a Laplace approximation.

The rank-fusion model's likelihood (``docs/math/fusion.md``, "Grades"): with
grade levels ``l_0 < … < l_{K−1}`` and the level ``l_a`` where relevance starts,

    logit P(G ≥ l_k) = η + c_k,   c_a = 0,   c_1 > … > c_{K−1}

(the proportional-odds model, McCullagh 1980 eq. 2.2), ``η = design · θ (+ offset)``.
With two levels it is the logistic regression of :func:`fit_logistic`, which it calls.
The log-likelihood is concave in ``(θ, c)`` (Pratt 1981), so the mode is unique. The
rank-fusion model fits ``θ`` by :func:`fit_logistic` and the cut-points alone given
``η`` (``docs/math/fusion.md``, "Estimation in two steps").
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, log_expit

from ._newton import newton_maximise


def fit_logistic(design, y, prec, shift, start):
    """Posterior mode and Laplace covariance of a logistic regression with a Gaussian prior.

    Maximises ``Σ y η − log(1 + e^η) − ½ θᵀ P θ + bᵀ θ`` with ``η = design · θ``
    (``P`` the prior precision, ``b`` its linear term) by Newton's method
    (:func:`newton_maximise`); the objective is strictly concave, so the mode is unique.
    The covariance is the inverse Hessian at the mode.
    """
    design = sp.csr_matrix(design)

    def log_post(theta):
        e = design @ theta
        return float(y @ log_expit(e) + (1 - y) @ log_expit(-e)) - 0.5 * theta @ prec @ theta + shift @ theta

    def gradient_curvature(theta):
        s = expit(design @ theta)
        grad = design.T @ (y - s) - prec @ theta + shift
        weighted = design.multiply((s * (1 - s))[:, None]).tocsr()
        return grad, prec + (design.T @ weighted).toarray()

    theta = newton_maximise(log_post, gradient_curvature, start)
    cov = np.linalg.inv(gradient_curvature(theta)[1])
    return theta, (cov + cov.T) / 2


def fit_ordinal(
    design, level, anchor: int, n_levels: int, prec, shift, start, cut_sd: float, offset=0.0
):
    """Posterior mode of ``θ`` and the cut-points, and the Laplace covariance of ``θ``.

    ``level`` is each row's grade index ``0..n_levels − 1``; ``anchor`` the index
    ``a ≥ 1`` whose cut-point is 0; the free cut-points have the prior
    ``N(0, cut_sd²)``, ``θ`` the prior ``(prec, shift)`` of :func:`fit_logistic`;
    ``η = design · θ + offset``. Returns ``θ``, the ``(n_levels − 1,)`` cut-points
    ``c_1..c_{K−1}`` (``c_a = 0``) and the covariance of ``θ`` (the cut-points'
    uncertainty integrated out). A design of no columns fits the cut-points alone
    given ``η = offset`` (how the rank-fusion model fits them).
    """
    if n_levels == 2 and np.all(np.asarray(offset) == 0):
        theta, cov = fit_logistic(design, (np.asarray(level) >= 1).astype(float), prec, shift, start)
        return theta, np.zeros(1), cov
    design = sp.csr_matrix(design)
    level = np.asarray(level, dtype=np.int64)
    free = np.array([k for k in range(1, n_levels) if k != anchor])
    n_par = len(start)
    frequency = np.bincount(level, minlength=n_levels)
    # start: each cut-point at the empirical log-odds of its level against the anchor's
    tail = np.clip(np.cumsum(frequency[::-1])[::-1] / max(len(level), 1), 1e-3, 1 - 1e-3)
    logits = np.log(tail) - np.log1p(-tail)
    start = np.concatenate([start, np.sort(logits[free] - logits[anchor])[::-1]])

    def cuts_of(phi):
        c = np.zeros(n_levels + 1)
        c[0], c[n_levels] = np.inf, -np.inf
        c[free] = phi[n_par:]
        return c

    def parts(phi):
        c = cuts_of(phi)
        eta = design @ phi[:n_par] + offset
        return eta + c[level], eta + c[level + 1], c

    def log_post(phi):
        c = cuts_of(phi)
        if np.any(np.diff(c[1:n_levels]) >= 0):
            return -np.inf  # cut-points out of order: not a distribution
        a, b, _ = parts(phi)
        theta, cf = phi[:n_par], phi[n_par:]
        prior = -0.5 * theta @ prec @ theta + shift @ theta - 0.5 * cf @ cf / cut_sd**2
        return float(np.sum(_log_interval(a, b))) + prior

    def gradient_curvature(phi):
        a, b, _ = parts(phi)
        ga, gb, haa, hbb, hab = _interval_derivatives(a, b)
        theta = phi[:n_par]
        h_eta = haa + 2 * hab + hbb
        grad_theta = design.T @ (ga + gb) - prec @ theta + shift
        weighted = design.multiply((-h_eta)[:, None]).tocsr()
        curv = np.zeros((n_par + len(free), n_par + len(free)))
        curv[:n_par, :n_par] = prec + (design.T @ weighted).toarray()
        grad_cut = np.zeros(len(free))
        for i, k in enumerate(free):
            on_a, on_b = level == k, level + 1 == k
            grad_cut[i] = ga[on_a].sum() + gb[on_b].sum() - phi[n_par + i] / cut_sd**2
            cross = np.where(on_a, haa + hab, 0.0) + np.where(on_b, hbb + hab, 0.0)
            curv[:n_par, n_par + i] = curv[n_par + i, :n_par] = -(design.T @ cross)
            curv[n_par + i, n_par + i] = -(haa[on_a].sum() + hbb[on_b].sum()) + 1 / cut_sd**2
            for j, m in enumerate(free):
                if m == k + 1:  # rows between the two cut-points: A on c_k, B on c_{k+1}
                    curv[n_par + i, n_par + j] = curv[n_par + j, n_par + i] = -hab[on_a].sum()
        return np.concatenate([grad_theta, grad_cut]), curv

    phi = newton_maximise(log_post, gradient_curvature, start)
    cov = np.linalg.inv(gradient_curvature(phi)[1])[:n_par, :n_par]
    return phi[:n_par], cuts_of(phi)[1:n_levels], (cov + cov.T) / 2


def _log_interval(a, b):
    """``log(F(a) − F(b))`` with ``F`` the logistic function, ``a > b`` (``±inf`` allowed):
    ``log F(a) + log F(−b) + log(1 − e^{b − a})``."""
    with np.errstate(invalid="ignore"):
        gap = np.where(np.isinf(a) | np.isinf(b), np.inf, a - b)
    return log_expit(a) + log_expit(-b) + np.log1p(-np.exp(-gap))


def _interval_derivatives(a, b):
    """First and second derivatives of ``log(F(a) − F(b))`` in ``a`` and ``b``."""
    fa, fb = expit(a), expit(b)
    da, db = fa * (1 - fa), fb * (1 - fb)  # F' (0 at ±inf)
    d = np.exp(_log_interval(a, b))
    ga, gb = da / d, -db / d
    haa = da * (1 - 2 * fa) / d - ga**2
    hbb = -db * (1 - 2 * fb) / d - gb**2
    hab = -ga * gb
    return ga, gb, haa, hbb, hab


def grade_shares(eta, cuts, anchor: int) -> tuple[np.ndarray, np.ndarray]:
    """``P(G ≥ l_k | G ≥ l_a)`` for ``k > a`` and ``P(G ≥ l_k | G < l_a)`` for ``0 < k < a``
    at log-odds ``eta`` (``(n,)``), as ``(n, K − 1 − a)`` and ``(n, a − 1)`` arrays."""
    eta = np.asarray(eta, dtype=float)[:, None]
    above = cuts[anchor:]  # c_{a+1}.. (cuts holds c_1..c_{K−1})
    below = cuts[: anchor - 1]
    over = np.exp(log_expit(eta + above) - log_expit(eta))
    under = -np.expm1(log_expit(-eta - below) - log_expit(-eta))
    return np.clip(over, 0.0, 1.0), np.clip(under, 0.0, 1.0)
