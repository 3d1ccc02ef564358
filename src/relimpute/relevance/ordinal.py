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

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, log_expit

from ._newton import newton_maximise
from .arrowhead import DENSE_LIMIT, Arrowhead, GramBlocks


def fit_logistic(design, y, prec, shift, start):
    """Posterior mode and Laplace posterior of a logistic regression with a Gaussian prior.

    Maximises ``Σ y η − log(1 + e^η) − ½ θᵀ P θ + bᵀ θ`` with ``η = design · θ``
    (``P`` the prior precision, ``b`` its linear term) by Newton's method
    (:func:`newton_maximise`); the objective is strictly concave, so the mode is unique.
    With a dense ``P`` the second value is the covariance, the inverse Hessian at the mode;
    with an :class:`~.arrowhead.Arrowhead` ``P`` (one parameter per topic, each row of the
    design in one topic) it is the Hessian at the mode, an arrowhead too: every step is
    solved through its Schur complement, linear in the topics, and nothing ``P × P`` is formed.
    """
    design = sp.csr_matrix(design)
    structured = isinstance(prec, Arrowhead)
    gram = GramBlocks(design, prec.start, prec.stop) if structured else None

    def log_post(theta):
        e = design @ theta
        return float(y @ log_expit(e) + (1 - y) @ log_expit(-e)) - 0.5 * theta @ prec @ theta + shift @ theta

    def gradient_curvature(theta):
        s = expit(design @ theta)
        grad = design.T @ (y - s) - prec @ theta + shift
        if structured:
            return grad, prec + gram(s * (1 - s))
        weighted = design.multiply((s * (1 - s))[:, None]).tocsr()
        return grad, prec + (design.T @ weighted).toarray()

    solve = Arrowhead.solve if structured else None
    theta = newton_maximise(log_post, gradient_curvature, start, solve=solve)
    curvature = gradient_curvature(theta)[1]
    if structured:
        return theta, curvature
    cov = np.linalg.inv(curvature)
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


def grade_scale(grades: np.ndarray, threshold: int) -> tuple[np.ndarray, int]:
    """The grade levels judged in the fit set and the index of the lowest relevant one; a
    binary scale ``(0, 1), 1`` when the fit set has no level on one side of the threshold."""
    levels = np.unique(grades)
    anchor = int(np.searchsorted(levels, threshold))
    if not 1 <= anchor < len(levels):
        return np.array([0, 1]), 1
    return levels, anchor


def grade_shares(eta, cuts, anchor: int) -> tuple[np.ndarray, np.ndarray]:
    """``P(G ≥ l_k | G ≥ l_a)`` for ``k > a`` and ``P(G ≥ l_k | G < l_a)`` for ``0 < k < a``
    at log-odds ``eta`` (``(n,)``), as ``(n, K − 1 − a)`` and ``(n, a − 1)`` arrays; cut-points
    ``(B, K − 1)`` with ``eta`` ``(n,)`` or ``(B, n)`` (e.g. posterior draws) give ``(B, n, ·)``."""
    eta = np.asarray(eta, dtype=float)[..., None]
    cuts = np.asarray(cuts, dtype=float)[..., None, :]
    above = cuts[..., anchor:]  # c_{a+1}.. (cuts holds c_1..c_{K−1})
    below = cuts[..., : anchor - 1]
    over = np.exp(log_expit(eta + above) - log_expit(eta))
    under = -np.expm1(log_expit(-eta - below) - log_expit(-eta))
    return np.clip(over, 0.0, 1.0), np.clip(under, 0.0, 1.0)


#: weight of the prior ``log(c_k − c_{k+1})`` on the gaps between a topic's consecutive
#: cut-points (:func:`fit_topic_cuts`): keeps the mode inside the ordered region when a topic
#: judged no passage of some level (its likelihood rises towards the edge, where Newton's
#: method would stall), set a priori small enough to leave gaps of a logit or more alone
GAP_WEIGHT = 0.1

#: the per-topic spreads of the cut-points the marginal likelihood chooses among
#: (:func:`fit_topic_cuts`), set a priori from none to as wide as ``fusion.CUT_SD``
TOPIC_CUT_SDS = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0)


@dataclass(frozen=True, eq=False)
class TopicCuts:
    """Cut-points partially pooled over topics (:func:`fit_topic_cuts`).

    ``shared`` the ``(K − 1,)`` shared ``c_1..c_{K−1}`` (``c_a = 0``) and ``topics`` each
    fitted topic's ``c_k + b_tk`` at the posterior mode; ``free`` the level indices of the
    free cut-points, ``tau`` their topic spreads, ``precision`` the Laplace precision of
    ``(c, b_1, …, b_T)`` over the free cut-points (topic-major), an arrowhead kept as its
    blocks; :attr:`covariance` its inverse, dense, formed when read.
    """

    shared: np.ndarray
    topics: np.ndarray
    free: tuple[int, ...]
    tau: np.ndarray
    precision: Arrowhead | None = None

    @property
    def covariance(self) -> np.ndarray:
        """The Laplace covariance of ``(c, b_1, …, b_T)``, dense (0 on held topic terms)."""
        saved = self.__dict__.get("covariance")  # a model saved before the precision was kept
        if saved is not None:
            return saved
        # numpy's dense inverse, as every release drew from (eigh): the block formula of
        # Arrowhead.covariance differs in the last bits, which can turn degenerate eigenvectors
        what = "the topics' cut-points' dense Laplace covariance"
        cov = np.linalg.inv(self.precision.toarray(what))
        cov[self._held] = cov[:, self._held] = 0.0
        return (cov + cov.T) / 2

    @property
    def _held(self) -> np.ndarray:
        """Which of ``(c, b_1, …, b_T)`` are held at 0: the topic terms of a cut-point with
        ``τ = 0`` (identity rows of the precision)."""
        held = np.tile(self.tau <= 0, len(self.topics))
        return np.concatenate([np.zeros(len(self.free), bool), held])

    def of(self, index) -> np.ndarray:
        """``(m, K − 1)`` cut-points of the fitted topics ``index`` (−1: a topic the fit did
        not see, which takes the shared ones)."""
        index = np.asarray(index, dtype=np.int64)
        return np.where((index >= 0)[:, None], self.topics[np.maximum(index, 0)], self.shared)

    def draws(self, rng: np.random.Generator, n: int, index, structured: bool | None = None) -> np.ndarray:
        """``(n, m, K − 1)`` Laplace draws of the cut-points of topics ``index`` (as in
        :meth:`of`; an unseen topic's ``b`` from its prior ``N(0, τ²)``): from the dense
        covariance (numpy's ``eigh`` draw, the seeded numbers of every release), or
        ``structured`` from the precision's block factor
        (:meth:`~.arrowhead.Arrowhead.draws`, the same distribution; None: beyond
        :data:`~.arrowhead.DENSE_LIMIT` parameters)."""
        index = np.asarray(index, dtype=np.int64)
        cols = np.asarray(self.free) - 1
        n_free, n_topics = len(cols), len(self.topics)
        mode = np.concatenate([self.shared[cols], (self.topics[:, cols] - self.shared[cols]).ravel()])
        if structured is None:
            structured = len(mode) > DENSE_LIMIT
        if structured and self.precision is not None:
            phi = self.precision.draws(rng, mode, n)
            phi[:, self._held] = mode[self._held]
        else:
            covariance = self.covariance
            active = np.diag(covariance) > 0
            phi = np.tile(mode, (n, 1))
            phi[:, active] = rng.multivariate_normal(
                mode[active], covariance[np.ix_(active, active)], size=n, method="eigh"
            )
        offsets = phi[:, n_free:].reshape(n, n_topics, n_free)[:, np.maximum(index, 0)]
        unseen = rng.normal(size=(n, len(index), n_free)) * self.tau
        offsets = np.where((index >= 0)[None, :, None], offsets, unseen)
        out = np.broadcast_to(self.shared, (n, len(index), len(self.shared))).copy()
        out[..., cols] = phi[:, None, :n_free] + offsets
        return out


def fit_topic_cuts(eta, level, topic, n_topics: int, anchor: int, n_levels: int, cut_sd: float,
                   topic_sds=TOPIC_CUT_SDS) -> TopicCuts:  # fmt: skip
    """Cut-points partially pooled over topics, given the log-odds ``eta``.

    Topic ``t``'s free cut-point ``k`` is ``c_k + b_tk`` with ``c_k ~ N(0, cut_sd²)`` and
    ``b_tk ~ N(0, τ_k²)`` (``c_a = 0``; ``docs/math/fusion.md``, "Each topic's split");
    ``level`` and ``topic`` give each row's grade index and topic. Each ``τ_k`` is the value
    of ``topic_sds`` with the largest Laplace marginal likelihood (coordinate-wise, two
    passes; ``τ = 0`` fits the shared cut-points alone): learned from the judgments.
    """
    eta, level = np.asarray(eta, float), np.asarray(level, np.int64)
    topic = np.asarray(topic, np.int64)
    free = [k for k in range(1, n_levels) if k != anchor]
    tau = np.zeros(len(free))
    rows = _LevelRows(eta, level, topic, n_topics, n_levels)
    best = _fit_topic_cuts(eta, level, topic, n_topics, free, n_levels, cut_sd, tau, rows=rows)
    # cut-points next to each other share rows: then a second pass
    for _ in range(2 if any(k + 1 in free for k in free) else 1):
        for f in range(len(free)):
            for sd in topic_sds:
                if sd == tau[f]:
                    continue  # fitted already
                trial = tau.copy()
                trial[f] = sd
                # from the best mode so far (a cut-point newly without topic terms: at 0)
                start = best[0] * np.concatenate([np.ones(len(free)), np.tile(trial > 0, n_topics)])
                fitted = _fit_topic_cuts(eta, level, topic, n_topics, free, n_levels, cut_sd, trial, start, rows)
                if fitted[-1] > best[-1] + 1e-9:
                    best, tau = fitted, trial
    phi, precision, _ = best
    shared = np.zeros(n_levels - 1)
    shared[np.asarray(free) - 1] = phi[: len(free)]
    topics = np.tile(shared, (n_topics, 1))
    topics[:, np.asarray(free) - 1] += phi[len(free) :].reshape(n_topics, len(free))
    return TopicCuts(shared, topics, tuple(free), tau, precision)


def _fit_topic_cuts(eta, level, topic, n_topics, free, n_levels, cut_sd, tau, start=None, rows=None):
    """Mode of ``(c, b)``, the Laplace precision there (an :class:`~.arrowhead.Arrowhead`, one
    block per topic) and the log marginal likelihood (Laplace, up to a constant that does not
    depend on ``tau``) of :func:`fit_topic_cuts` at spreads ``tau`` (Newton's method from
    ``start``); a cut-point with ``τ = 0`` has no topic terms. ``rows``: the
    :class:`_LevelRows` of the data, when built."""
    rows = _LevelRows(eta, level, topic, n_topics, n_levels) if rows is None else rows
    n_free = len(free)
    pooled = np.asarray(tau) > 0
    prior_b = np.where(pooled, 1 / np.where(pooled, tau, 1.0) ** 2, 0.0)
    frequency = rows.counts.sum(axis=0)
    tail = np.clip(np.cumsum(frequency[::-1])[::-1] / max(frequency.sum(), 1), 1e-3, 1 - 1e-3)
    logits = np.log(tail) - np.log1p(-tail)
    anchor = next(k for k in range(1, n_levels) if k not in free)
    empirical = np.zeros(n_free * (1 + n_topics))
    empirical[:n_free] = np.sort(logits[free] - logits[anchor])[::-1]

    ends = np.zeros((n_topics, n_levels + 1))
    ends[:, 0], ends[:, n_levels] = np.inf, -np.inf
    shared_prior = np.eye(n_free) / cut_sd**2  # the priors' curvature in c, in each b_t
    topic_prior = np.diag(np.where(pooled, prior_b, 1.0))

    def cuts_of(phi):
        """The topics' ``c_0..c_K`` and the gaps ``c_k − c_{k+1}``, k = 1..K − 2."""
        c = ends.copy()
        c[:, free] = phi[:n_free] + phi[n_free:].reshape(n_topics, n_free)
        return c, c[:, 1 : n_levels - 1] - c[:, 2:n_levels]

    def log_post(phi):
        c, gaps = cuts_of(phi)
        if np.any(gaps <= 0):
            return -np.inf  # cut-points out of order: not a distribution
        b = phi[n_free:].reshape(n_topics, n_free)
        prior = -0.5 * phi[:n_free] @ phi[:n_free] / cut_sd**2 - 0.5 * np.sum(prior_b * b**2)
        return float(rows.log_likelihood(c) + prior + GAP_WEIGHT * np.sum(np.log(gaps)))

    def gradient_curvature(phi):
        c, gaps = cuts_of(phi)
        by_cut, diagonal, next_cut = rows.derivatives(c)
        # the gaps' prior GAP_WEIGHT · log(c_k − c_{k+1}), k = 1..K − 2 (c_a = 0 held)
        g, h = GAP_WEIGHT / gaps, GAP_WEIGHT / gaps**2
        by_cut[:, 1 : n_levels - 1] += g
        by_cut[:, 2:n_levels] -= g
        diagonal[:, 1 : n_levels - 1] += h
        diagonal[:, 2:n_levels] += h
        next_cut[:, 1 : n_levels - 1] -= h
        grad = by_cut[:, free]  # per topic, in the topic's own cut-points
        hess = np.zeros((n_topics, n_free, n_free))
        hess[:, range(n_free), range(n_free)] = diagonal[:, free]
        for i, k in enumerate(free):
            if k + 1 in free:  # rows between the two share them
                j = free.index(k + 1)
                hess[:, i, j] = hess[:, j, i] = next_cut[:, k]
        b = phi[n_free:].reshape(n_topics, n_free)
        # (c, b_t) enter every row of topic t as c + b_t: an arrowhead curvature
        g_c = grad.sum(axis=0) - phi[:n_free] / cut_sd**2
        g_b = np.where(pooled, grad - prior_b * b, 0.0)
        couple = hess * pooled  # rows c, columns b_t (held terms: 0)
        blocks = couple * pooled[:, None] + topic_prior  # held terms: identity rows
        curvature = Arrowhead(n_free, n_free * (1 + n_topics), blocks, couple,
                              hess.sum(axis=0) + shared_prior)  # fmt: skip
        return np.concatenate([g_c, g_b.ravel()]), curvature

    if start is None or not np.isfinite(log_post(start)):
        start = empirical
    phi = newton_maximise(
        log_post, gradient_curvature, start, solve=Arrowhead.solve, show_progress=False,
        polish=False,
    )
    curv = gradient_curvature(phi)[1]
    evidence = log_post(phi) - 0.5 * curv.logdet() - n_topics * np.sum(np.log(np.asarray(tau)[pooled]))
    return phi, curv, evidence


class _LevelRows:
    """The rows of :func:`fit_topic_cuts`: a row of grade level ``k`` has probability
    ``P = F(a) − F(b) = F(a) F(−b) (1 − r)`` with ``a = η + c_k``, ``b = η + c_{k+1}``,
    ``r = e^{b − a}`` (``F`` logistic; ``c_0 = ∞``, ``c_K = −∞``), and ``r`` depends on the
    topic and level alone. The log-likelihood's derivatives, summed over each topic's rows:
    ``∂/∂a = F(−a) + q``, ``∂/∂b = −F(b) − q``, ``−∂²/∂a² = F'(a) + w``,
    ``−∂²/∂b² = F'(b) + w``, ``∂²/∂a∂b = w``, with ``q = r/(1 − r)``, ``w = r/(1 − r)²``.
    The terms of the last cut-points evaluated are kept for the derivatives."""

    def __init__(self, eta, level, topic, n_topics, n_levels):
        eta, level, topic = np.asarray(eta, float), np.asarray(level, np.int64), np.asarray(topic, np.int64)
        self.n_topics, self.n_levels = n_topics, n_levels
        upper, lower = level > 0, level < n_levels - 1  # rows with a finite a, with a finite b
        # flat indices of each row's c_k and c_{k+1} in the (T, K + 1) cut-points
        self.upper = (topic * (n_levels + 1) + level)[upper]
        self.lower = (topic * (n_levels + 1) + level + 1)[lower]
        self.eta_upper, self.minus_eta_lower = eta[upper], -eta[lower]
        self.counts = np.zeros((n_topics, n_levels))  # rows of each topic and level
        np.add.at(self.counts, (topic, level), 1.0)
        self._cuts = None

    def log_likelihood(self, c) -> float:
        """``Σ log P`` at the topics' cut-points ``c`` (``(T, K + 1)``, ordered)."""
        if self._cuts is not None and np.array_equal(c, self._cuts):
            return self._value
        flat = c.ravel()
        step = c[:, 1:] - c[:, :-1]  # (T, K): b − a of each topic and level, −∞ at the two ends
        self._cuts, self._r, self._gap = c.copy(), np.exp(step), -np.expm1(step)
        a, minus_b = self.eta_upper + flat[self.upper], self.minus_eta_lower - flat[self.lower]
        self._fa, self._fmb = expit(a), expit(minus_b)  # F(a), F(−b)
        with np.errstate(divide="ignore"):
            value = np.log(self._fa).sum() + np.log(self._fmb).sum()
        if not np.isfinite(value):  # underflow: the stable forms
            value = log_expit(a).sum() + log_expit(minus_b).sum()
        self._value = float(value + (self.counts * np.log(self._gap)).sum())
        return self._value

    def derivatives(self, c):
        """Per topic: the log-likelihood's gradient in each ``c_k`` and minus its second
        derivatives in ``c_k`` and in ``(c_k, c_{k+1})``, as ``(T, K + 1)`` arrays."""
        self.log_likelihood(c)  # the terms at c (kept when c was the last evaluated)
        size, shape = c.size, c.shape
        q = self._r / self._gap
        q_rows, w_rows = self.counts * q, self.counts * (q / self._gap)  # summed over each topic's rows
        fa, fmb = self._fa, self._fmb
        grad = np.bincount(self.upper, 1 - fa, size) - np.bincount(self.lower, 1 - fmb, size)
        diagonal = np.bincount(self.upper, fa * (1 - fa), size) + np.bincount(self.lower, fmb * (1 - fmb), size)
        grad, diagonal = grad.reshape(shape), diagonal.reshape(shape)
        grad[:, :-1] += q_rows  # a = c_k of level k's rows
        grad[:, 1:] -= q_rows  # b = c_{k+1}
        diagonal[:, :-1] += w_rows
        diagonal[:, 1:] += w_rows
        next_cut = np.zeros(shape)
        next_cut[:, :-1] = -w_rows
        return grad, diagonal, next_cut
