"""The three stages of RTC's expert aggregation (Carterette 2007 §3.1-3.3; docs/math/rtc.md).

Stage 1 turns ranks into probabilities per topic (:func:`rank_probabilities`),
stage 2 calibrates them per expert by Platt scaling (:func:`fit_platt`), and
stage 3 weighs the experts (:func:`fit_aggregation`).
:class:`~relimpute.relevance.rtc.RTC` chains them.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, log_expit

from .._newton import newton_maximise


# ----------------------------------------------------------------------------
# stage 1: ranks -> probabilities


def rank_probabilities(
    depth: int, n_relevant: int, n_nonrelevant: int, *, prior_strength: float = 1.0
) -> np.ndarray:
    """``q*(r)``, r = 1..depth, of the pairwise-preference model (Carterette 2007 §3.2).

    Maximises over ``θ`` (one coefficient per rank)

        Σ_{r<r'} log σ(θ_r − θ_r') + s Σ_r [a log σ(θ_r) + b log σ(−θ_r)]

    with ``a = |R|+1``, ``b = |N|+1`` and ``s = prior_strength`` (1 in the
    paper). The second sum is the Beta(a, b) density of ``σ(θ_r)`` carried to
    ``θ_r`` (the change of variables adds the Jacobian ``σ(1−σ)``): the paper
    maximises over ``Θ``, so this is the posterior mode in the space it
    optimises, and it makes the problem strictly concave for every count
    (with the density in ``σ`` space and |R| = 0 or |N| = 0 the maximum
    does not exist).

    The solution is decreasing in rank and its mean over ranks is exactly
    ``a / (a + b)`` (sum the stationarity conditions: the pairwise terms add
    up to the number of pairs), so the probabilities concentrate at the
    share of relevant documents found so far as the prior strengthens or
    the counts grow. Solved by Newton's method with a conjugate-gradient
    inner solve (each pass O(depth²) in a numba kernel), warm-started from
    the nearest solved problem of the same depth; solutions are memoised
    per ``(depth, a, b)`` (the latest 4096) for the life of the process.
    Iterations stop after a step that moves no ``θ_r`` by 1e-6 (the
    convergence is superlinear, of order 1.5 with the CG forcing term: the
    error left is about 1e-9), so results agree to about that precision
    whichever start was used.

    Returns
    -------
    ndarray
        ``(depth,)`` read-only float64, non-increasing.
    """
    if depth < 0:
        raise ValueError(f"depth must be >= 0, got {depth}")
    if n_relevant < 0 or n_nonrelevant < 0:
        raise ValueError("judged counts must be >= 0")
    if not prior_strength > 0:
        raise ValueError(f"prior_strength must be > 0, got {prior_strength}")
    a = prior_strength * (n_relevant + 1.0)
    b = prior_strength * (n_nonrelevant + 1.0)
    key = (int(depth), a, b)
    if key not in _SOLVED:
        if len(_SOLVED) >= _MEMO_SIZE:  # forget the oldest
            del _SOLVED[next(iter(_SOLVED))]
        _SOLVED[key] = _solve_ranks(int(depth), a, b)
    q = expit(_SOLVED[key])
    q.flags.writeable = False
    return q


_SOLVED: dict[tuple[int, float, float], np.ndarray] = {}
_MEMO_SIZE = 4096


def _solve_ranks(depth: int, a: float, b: float) -> np.ndarray:
    if depth == 0:
        return np.zeros(0)
    theta = _warm_start(depth, a, b)
    return _newton(theta, np.ones(depth), a, b)


def _warm_start(depth: int, a: float, b: float) -> np.ndarray:
    """The nearest solved problem of this depth, else a coarse problem interpolated."""
    near = [(k, v) for k, v in _SOLVED.items() if k[0] == depth]
    if near:
        _, theta = min(
            near,
            key=lambda kv: abs(np.log(kv[0][1] / a)) + abs(np.log(kv[0][2] / b)),
        )
        return theta.copy()
    return _coarse_start(np.ones(depth), a, b)


def _coarse_start(m: np.ndarray, a: float, b: float) -> np.ndarray:
    """Start from the problem on blocks of ~5 consecutive ranks (pairs inside a
    block dropped, each block one θ), solved the same way, interpolated back."""
    n = m.size
    if n <= 80:
        return np.zeros(n)
    blocks = n // 5
    edges = np.linspace(0, n, blocks + 1).round().astype(int)
    weight = np.add.reduceat(m, edges[:-1])
    coarse = _newton(_coarse_start(weight, a, b), weight, a, b)
    centres = np.cumsum(m) - m / 2
    block_centres = np.add.reduceat(m * centres, edges[:-1]) / weight
    return np.interp(centres, block_centres, coarse)


def _newton(theta: np.ndarray, m: np.ndarray, a: float, b: float) -> np.ndarray:
    """Inexact Newton on the concave objective of :mod:`._rank_kernels`.

    Far from the optimum (Newton decrement > 0.1) the step length comes
    from a safeguarded secant search on the directional derivative ``φ'(t)``
    of ``φ(t) = f(θ + t·step)``: accepted lengths have ``φ'(t) >= 0``, which
    for a concave objective guarantees an increase. Near it: full steps.
    """
    from . import _rank_kernels as kernels

    n = theta.size
    weights = np.zeros((n, n))
    for _ in range(200):
        g, diag = kernels.gradient_hessian(theta, m, a, b, weights)
        forcing = min(0.1, np.sqrt(np.abs(g).max() / (1.0 + m.sum())))
        step = kernels.solve_newton_system(weights, diag, g, max(forcing, 1e-12), 10 * n + 50)
        d0 = float(g @ step)
        if d0 > 0.1:
            step = step * _step_length(kernels.slope, theta, step, m, a, b, d0)
        theta = theta + step
        if np.abs(step).max() < 1e-6:
            return theta
    raise RuntimeError("rank-probability Newton iterations did not converge")


def _step_length(slope, theta, step, m, a, b, d0: float) -> float:
    """A length ``t`` in (0, 1] with ``0 <= φ'(t)`` (and ``<= d0/5`` unless ``t = 1``)."""
    d1 = slope(theta + step, step, m, a, b)
    if d1 >= 0:
        return 1.0
    lo, d_lo, hi, d_hi = 0.0, d0, 1.0, d1
    for _ in range(30):
        t = lo + (hi - lo) * d_lo / (d_lo - d_hi)
        d = slope(theta + t * step, step, m, a, b)
        if 0 <= d <= 0.2 * d0:
            return t
        if d > 0:
            lo, d_lo = t, d
        else:
            hi, d_hi = t, d
    return lo if lo > 0 else 0.5 * hi


# ----------------------------------------------------------------------------
# stages 2 and 3: logistic fits


def fit_platt(
    x: np.ndarray,
    y: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    *,
    prior_mean: tuple[float, float] = (0.0, 0.0),
    precision: float = 1.0,
    targets: bool = True,
) -> np.ndarray:
    """Per-group Platt scaling ``P(y = 1 | x) = σ(A_g + B_g x)`` (Platt 2000).

    Maximises, for each group independently, the Bernoulli log likelihood
    of ``y`` (or of Platt's smoothed targets ``(N₊+1)/(N₊+2)`` and
    ``1/(N₋+2)`` when ``targets``) minus ``precision/2 · |(A, B) − prior_mean|²``.
    A group without data gets ``prior_mean``. Newton's method on all groups
    at once (2×2 systems).

    Returns
    -------
    ndarray
        ``(n_groups, 2)``: ``A`` and ``B`` per group.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=bool)
    group = np.asarray(group, dtype=np.intp)
    if not precision >= 0:
        raise ValueError(f"precision must be >= 0, got {precision}")
    n_pos = np.bincount(group, weights=y, minlength=n_groups)
    n_neg = np.bincount(group, weights=~y, minlength=n_groups)
    if targets:
        t = np.where(y, ((n_pos + 1) / (n_pos + 2))[group], (1 / (n_neg + 2))[group])
    else:
        t = y.astype(float)
    # a vanishing ridge keeps a group whose x is constant identifiable
    lam = max(precision, 1e-8)
    mu = np.asarray(prior_mean, dtype=float)
    coef = np.tile(mu, (n_groups, 1))

    def penalised(c: np.ndarray) -> np.ndarray:
        z = c[group, 0] + c[group, 1] * x
        ll = t * log_expit(z) + (1 - t) * log_expit(-z)
        return np.bincount(group, weights=ll, minlength=n_groups) - lam / 2 * ((c - mu) ** 2).sum(
            axis=1
        )

    value = penalised(coef)
    for _ in range(100):
        s = expit(coef[group, 0] + coef[group, 1] * x)
        r = t - s
        w = s * (1 - s)
        g0 = np.bincount(group, weights=r, minlength=n_groups) - lam * (coef[:, 0] - mu[0])
        g1 = np.bincount(group, weights=r * x, minlength=n_groups) - lam * (coef[:, 1] - mu[1])
        h00 = np.bincount(group, weights=w, minlength=n_groups) + lam
        h01 = np.bincount(group, weights=w * x, minlength=n_groups)
        h11 = np.bincount(group, weights=w * x * x, minlength=n_groups) + lam
        det = h00 * h11 - h01**2
        step = np.stack([(h11 * g0 - h01 * g1) / det, (h00 * g1 - h01 * g0) / det], axis=1)
        size = np.ones(n_groups)
        while True:  # per-group backtracking
            trial = coef + size[:, None] * step
            new = penalised(trial)
            bad = new < value - 1e-12 * (1 + np.abs(value))
            if not bad.any() or size.min() < 1e-10:
                break
            size[bad] /= 2
        coef, value = trial, new
        if np.abs(size[:, None] * step).max() < 1e-10:
            break
    return coef


def fit_aggregation(
    features: np.ndarray,
    y: np.ndarray,
    *,
    prior: str = "beta",
    alpha: float = 1.0,
    beta: float = 1.0,
    scale: float = 1.0,
    intercept: bool = False,
) -> tuple[np.ndarray, float]:
    """MAP logistic regression ``p = σ(b₀ + Σ_j λ_j q_j)`` (Carterette 2007 Eq. 2).

    Priors (on every coefficient, the intercept included when fitted):
    ``"beta"``: Beta(α, β) on ``σ(λ)`` carried to ``λ`` (log density
    ``α log σ(λ) + β log σ(−λ)``; α = β = 1 is the paper's, a logistic
    density centred at 0; read like the paper's prior on ``p(θ)`` in §3.2);
    ``"beta_weight"``: the literal reading, a Beta(α, β) density on ``λ``
    itself, which confines ``λ`` to [0, 1] and, with ``q ≥ 0`` and no
    intercept, every ``p`` to [½, 1); ``"gaussian"``: N(0, scale²).

    Returns
    -------
    weights, intercept
        ``(k,)`` weights and the intercept (0.0 unless ``intercept``).
    """
    x = np.asarray(features, dtype=float)
    y = np.asarray(y, dtype=float)
    if prior not in ("beta", "beta_weight", "gaussian"):
        raise ValueError(f"prior must be 'beta', 'beta_weight' or 'gaussian', got {prior!r}")
    if prior in ("beta", "beta_weight") and not (alpha > 0 and beta > 0):
        raise ValueError("beta prior needs alpha > 0 and beta > 0")
    if prior == "gaussian" and not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    if intercept:
        x = np.column_stack([x, np.ones(len(x))])
    k = x.shape[1]
    if prior == "beta_weight":
        coef = _fit_bounded_weights(x, y, alpha, beta)
        return (coef[:-1], float(coef[-1])) if intercept else (coef, 0.0)

    def log_post(c: np.ndarray) -> float:
        z = x @ c
        ll = float(y @ log_expit(z) + (1 - y) @ log_expit(-z))
        if prior == "beta":
            return ll + float(alpha * log_expit(c).sum() + beta * log_expit(-c).sum())
        return ll - float(c @ c) / (2 * scale**2)

    def gradient_curvature(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        s = expit(x @ c)
        grad = x.T @ (y - s)
        curvature = (x * (s * (1 - s))[:, None]).T @ x
        if prior == "beta":
            sc = expit(c)
            grad += alpha * (1 - sc) - beta * sc
            curvature[np.diag_indices(k)] += (alpha + beta) * sc * (1 - sc)
        else:
            grad -= c / scale**2
            curvature[np.diag_indices(k)] += 1 / scale**2
        return grad, curvature

    # the beta prior's curvature vanishes in the tails: a tiny ridge keeps the step finite
    coef = newton_maximise(log_post, gradient_curvature, np.zeros(k), max_iter=200, ridge=1e-10)
    if intercept:
        return coef[:-1], float(coef[-1])
    return coef, 0.0


def _fit_bounded_weights(x: np.ndarray, y: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    """MAP of the logistic weights under a Beta(α, β) density on each ``λ`` itself.

    The literal reading of Carterette 2007 §3.1 ("a beta prior for p(λ_j)"):
    the density confines every weight to [0, 1] (α = β = 1: uniform there, a
    box-constrained maximum likelihood). Solved by L-BFGS-B.
    """
    from scipy.optimize import minimize

    eps = 1e-9

    def objective(c: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ c
        s = expit(z)
        value = float(y @ log_expit(z) + (1 - y) @ log_expit(-z))
        grad = x.T @ (y - s)
        cc = np.clip(c, eps, 1 - eps)
        value += float((alpha - 1) * np.log(cc).sum() + (beta - 1) * np.log1p(-cc).sum())
        grad = grad + (alpha - 1) / cc - (beta - 1) / (1 - cc)
        return -value, -grad

    k = x.shape[1]
    if k == 0:
        return np.zeros(0)
    start = np.full(k, 0.5)
    bounds = [(eps, 1 - eps)] * k if (alpha != 1 or beta != 1) else [(0.0, 1.0)] * k
    return minimize(objective, start, jac=True, method="L-BFGS-B", bounds=bounds).x
