"""RTC: relevance by aggregating the systems as experts (Carterette 2007 §3).

Three successive logistic models (Carterette 2007 §3.3; docs/math/rtc.md):

1. **ranks → probabilities**, per topic, unsupervised (§3.2): a relevance
   coefficient ``θ_r`` per rank maximising the pairwise-preference likelihood
   ``Π_{r<r'} σ(θ_r − θ_r')`` under a Beta(|R_t|+1, |N_t|+1) prior on
   ``σ(θ_r)``; ``q*(r) = σ(θ_r)``, ``q*(∞) = 0``. It depends only on the
   rank and the topic's judged counts, so it is solved once per topic and
   shared by every expert (:func:`rank_probabilities`).
2. **probabilities → calibrated probabilities**, per expert across topics
   (§3.2): Platt scaling ``q_ij = σ(A_j + B_j q*_ij)`` on the expert's judged
   documents (:func:`fit_platt`).
3. **calibrated probabilities → document probabilities** (§3.1, Eq. 2):
   ``p_i = σ(Σ_j λ_j q_ij)`` fitted on every judged document with a beta
   prior (α = β = 1) on the weights (:func:`fit_aggregation`).

Judged documents keep their labels. How each ambiguity of the paper is
resolved, and every deviation, is a named hyper-parameter of
:class:`ExpertAggregation`; :data:`PAPER_PARAMS` is the paper's reading and
the class defaults are the shipped settings (``models/rtc.json``). Two of
the deviations (``platt_feature="log_rank"``, ``aggregate="logit"``) exist because, fitted
on a pool of the top ranks, the paper's model expects tens of times more
relevant documents per topic than a pooled collection holds: stage 1 spreads
the judged share relevant over every rank, and stage 3, without an intercept
and on bounded features, cannot reach the low base rate of documents no
expert ranks high (benchmarks/results/rtc.md; models/rtc.json ships the
measured fix, scored by ``quality.heldout_quality(..., score_unjudged=True)``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from scipy.special import expit, log_expit

from ..data import Campaign, TopicData
from ._newton import newton_maximise
from .base import RelevanceModel, register

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


# ----------------------------------------------------------------------------
# the model


#: The paper's model (Carterette 2007 §3) read stage by stage: the ``rtc-paper``
#: strategy of :mod:`relimpute.calibration` and ``ExpertAggregation(**PAPER_PARAMS)``.
PAPER_PARAMS: dict[str, Any] = {
    "prior_strength": 1.0,
    "max_rank": None,
    "unretrieved": "zero",
    "platt_targets": True,
    "calibration_shrinkage": 1.0,
    "weight_prior": "beta",
    "weight_alpha": 1.0,
    "weight_beta": 1.0,
    "weight_scale": 1.0,
    "intercept": False,
    "platt_feature": "qstar",
    "aggregate": "probability",
}


class ExpertAggregation(RelevanceModel):
    """RTC expert aggregation (Carterette 2007 §3); module docstring for the stages.

    The defaults are the shipped settings (``models/rtc.json``: the paper's
    stages 1-2, a stage 3 over calibrated log-odds with an intercept); the
    paper's own reading is ``ExpertAggregation(**PAPER_PARAMS)``.

    Parameters
    ----------
    prior_strength
        Multiplier ``s`` of the Beta(|R_t|+1, |N_t|+1) log prior of stage 1
        (1 = the paper's; larger pulls every ``q*`` to (|R|+1)/(|R|+|N|+2)).
    max_rank
        Ranks deeper than this count as not retrieved (the paper's studies
        truncate runs at 100); None keeps every rank. Stage 1 is solved over
        ``1..min(max_rank, deepest run of the topic)`` once per topic and
        shared across experts, as the paper does (a shallower run uses the
        top of that solution).
    unretrieved
        ``"zero"``: a document an expert does not retrieve has ``q_ij = 0``
        (no opinion) and Platt is fitted on the judged documents the expert
        retrieved. ``"calibrated"``: ``q_ij = C_j(q*=0) = σ(A_j)`` for a
        document the expert does not retrieve in a topic it covers, and Platt
        is fitted on all judged documents of those topics (the evidence of
        not retrieving). A run with nothing for a topic is 0 either way.
    platt_targets
        Platt's (2000) smoothed targets ``(N₊+1)/(N₊+2)`` and ``1/(N₋+2)``
        in place of 0/1 labels (the calibration method the paper cites).
    calibration_shrinkage
        Precision of a Gaussian prior pulling each expert's ``(A_j, B_j)``
        towards the calibration pooled over all experts: an expert with few
        or one-class judgments gets a sane calibration, one with none gets
        the pooled one. 0 = the paper's independent per-expert fit (with a
        vanishing 1e-8 ridge so that a constant feature stays identifiable).
    weight_prior, weight_alpha, weight_beta, weight_scale
        Stage-3 prior on each ``λ_j``: ``"beta"`` (the paper's, α = β = 1;
        Beta on ``σ(λ)``), ``"beta_weight"`` (Beta on ``λ`` itself, so
        ``0 ≤ λ ≤ 1``: the literal reading of §3.1) or ``"gaussian"`` with
        standard deviation ``weight_scale``.
    intercept
        Add an intercept to stage 3 (not in the paper; without one a document
        no expert retrieves has ``p = σ(0) = ½``).
    platt_feature
        What stage 2 calibrates. ``"qstar"`` (the paper's): ``q*(r)`` of
        stage 1. ``"log_rank"``: ``log(L+1) − log r`` with ``L`` the
        ``max_rank`` (else the deepest run of the fitted campaign), 0 for a
        document not retrieved, so Platt learns a power-law decay from the
        judged ranks instead of the decay stage 1 imposes (stage 1 is then
        not solved). Not in the paper: the mean of ``q*`` over *all* ranks is
        the judged share relevant, a share measured at the (top) ranks that
        were judged, which puts too much probability on deep ranks.
    aggregate
        Stage-3 features. ``"probability"`` (the paper's Eq. 2): ``q_ij``.
        ``"logit"``: ``logit q_ij = A_j + B_j x_ij``, so every expert that
        ranks a document deep (or, with ``unretrieved="calibrated"``, not at
        all) adds its own evidence to the log-odds instead of a bounded
        ``λ_j q_ij``; with ``"zero"`` an expert's "no opinion" is 0 there too.
        Not in the paper; it lets the aggregation reach the low base rate of
        documents no expert ranks high (benchmarks/results/rtc.md).

    Attributes
    ----------
    systems_
        Names of the fitted experts (matched by name at predict time).
    calibration_
        ``(S, 2)``: ``A_j, B_j`` per expert.
    pooled_calibration_
        ``(A, B)`` fitted on all experts' judged documents together.
    weights_, intercept_
        Stage-3 coefficients.
    n_judged_
        Judged (topic, document) pairs used by stage 3.
    feature_depth_
        ``L`` of ``platt_feature="log_rank"``.

    Notes
    -----
    Defined values: a document retrieved by no run (or only by runs
    unknown to the fit) has ``p = σ(intercept_)`` with ``unretrieved="zero"``
    (½ without intercept), and ``σ(intercept_ + Σ_j λ_j σ(A_j))`` over the
    experts covering the topic with ``"calibrated"`` (``A_j`` in place of
    ``σ(A_j)`` with ``aggregate="logit"``); a
    topic with no judgments uses the Beta(1, 1) prior in stage 1 and the
    fitted calibrations and weights; a run missing a topic gives no opinion
    there. With no judgments at all, every unjudged document gets ½ (the
    priors' modes). Point estimate: no posterior draws.
    """

    name = "rtc"
    #: the contract suite checks the paper's reading (its documented values by hand)
    contract_params: ClassVar[dict[str, Any]] = PAPER_PARAMS

    def __init__(
        self,
        prior_strength: float = 1.0,
        max_rank: int | None = None,
        unretrieved: str = "calibrated",
        platt_targets: bool = True,
        calibration_shrinkage: float = 1.0,
        weight_prior: str = "gaussian",
        weight_alpha: float = 1.0,
        weight_beta: float = 1.0,
        weight_scale: float = 0.3,
        intercept: bool = True,
        platt_feature: str = "qstar",
        aggregate: str = "logit",
    ):
        self.prior_strength = prior_strength
        self.max_rank = max_rank
        self.unretrieved = unretrieved
        self.platt_targets = platt_targets
        self.calibration_shrinkage = calibration_shrinkage
        self.weight_prior = weight_prior
        self.weight_alpha = weight_alpha
        self.weight_beta = weight_beta
        self.weight_scale = weight_scale
        self.intercept = intercept
        self.platt_feature = platt_feature
        self.aggregate = aggregate

    def _validate(self) -> None:
        if self.unretrieved not in ("zero", "calibrated"):
            raise ValueError(
                f"unretrieved must be 'zero' or 'calibrated', got {self.unretrieved!r}"
            )
        if self.platt_feature not in ("qstar", "log_rank"):
            raise ValueError(
                f"platt_feature must be 'qstar' or 'log_rank', got {self.platt_feature!r}"
            )
        if self.aggregate not in ("probability", "logit"):
            raise ValueError(f"aggregate must be 'probability' or 'logit', got {self.aggregate!r}")
        if self.max_rank is not None and int(self.max_rank) < 1:
            raise ValueError(f"max_rank must be >= 1 or None, got {self.max_rank}")
        if not self.prior_strength > 0:
            raise ValueError(f"prior_strength must be > 0, got {self.prior_strength}")
        if not self.calibration_shrinkage >= 0:
            raise ValueError(
                f"calibration_shrinkage must be >= 0, got {self.calibration_shrinkage}"
            )

    # stage 1 for one topic: the Platt feature of every (system, retrieved document)
    def _topic_opinions(self, topic: TopicData, relevant: np.ndarray):
        depth = topic.depth if self.max_rank is None else np.minimum(topic.depth, self.max_rank)
        cols = np.arange(topic.ranking.shape[1])
        keep = cols[None, :] < depth[:, None]
        system, rank = np.nonzero(keep)
        if self.platt_feature == "log_rank":
            feature = np.log(self.feature_depth_ + 1.0) - np.log1p(rank)
        else:
            n_rel = int(relevant.sum())
            n_non = int(topic.judged.sum()) - n_rel
            qstar = rank_probabilities(
                int(depth.max(initial=0)), n_rel, n_non, prior_strength=self.prior_strength
            )
            feature = qstar[rank]
        return system, topic.ranking[system, rank], feature, depth > 0

    def _fit(self, campaign: Campaign, rng: np.random.Generator) -> None:
        from threadpoolctl import threadpool_limits

        self._validate()
        # the fits are small: multi-threaded BLAS only adds contention
        with threadpool_limits(limits=1, user_api="blas"):
            self._fit_stages(campaign)

    def _fit_stages(self, campaign: Campaign) -> None:
        n_sys = campaign.n_systems
        deepest = max((int(t.depth.max(initial=0)) for t in campaign.topics), default=0)
        self.feature_depth_ = deepest if self.max_rank is None else int(self.max_rank)
        xs, ys, gs = [], [], []
        for topic, relevant in zip(campaign.topics, campaign.relevant()):
            system, doc, q, covers = self._topic_opinions(topic, relevant)
            judged = topic.judged[doc]
            xs.append(q[judged])
            ys.append(relevant[doc][judged])
            gs.append(system[judged])
            if self.unretrieved == "calibrated":
                seen = np.zeros((n_sys, topic.n_docs), dtype=bool)
                seen[system, doc] = True
                miss_sys, miss_doc = np.nonzero(~seen & covers[:, None] & topic.judged[None, :])
                xs.append(np.zeros(len(miss_sys)))
                ys.append(relevant[miss_doc])
                gs.append(miss_sys)
        x, y, g = np.concatenate(xs), np.concatenate(ys), np.concatenate(gs).astype(np.intp)
        pooled = fit_platt(
            x, y, np.zeros(len(x), dtype=np.intp), 1, precision=1e-6, targets=self.platt_targets
        )[0]
        self.pooled_calibration_ = (float(pooled[0]), float(pooled[1]))
        self.calibration_ = fit_platt(
            x,
            y,
            g,
            n_sys,
            prior_mean=self.pooled_calibration_,
            precision=self.calibration_shrinkage,
            targets=self.platt_targets,
        )
        self.systems_ = tuple(campaign.systems)
        features, labels = [], []
        for topic, relevant, (j, doc, value, base) in zip(
            campaign.topics, campaign.relevant(), self._opinions(campaign)
        ):
            row = np.full(topic.n_docs, -1)
            row[topic.judged] = np.arange(int(topic.judged.sum()))
            x = np.tile(base, (int(topic.judged.sum()), 1))
            hit = row[doc] >= 0
            x[row[doc[hit]], j[hit]] = value[hit]
            features.append(x)
            labels.append(relevant[topic.judged])
        self.weights_, self.intercept_ = fit_aggregation(
            np.concatenate(features) if features else np.zeros((0, n_sys)),
            np.concatenate(labels) if labels else np.zeros(0),
            prior=self.weight_prior,
            alpha=self.weight_alpha,
            beta=self.weight_beta,
            scale=self.weight_scale,
            intercept=self.intercept,
        )
        self.n_judged_ = int(sum(len(v) for v in labels))

    def _opinions(self, campaign: Campaign):
        """Per topic, the calibrated opinions as ``(j, doc, q_ij, base)``.

        ``q_ij`` for every (fitted expert ``j``, retrieved document) pair;
        ``base`` (S_fit,) is each expert's opinion of a document it does not
        retrieve (``σ(A_j)`` for ``unretrieved="calibrated"`` in a topic it
        covers, else 0). Systems of ``campaign`` unknown to the fit give no
        opinion.
        """
        index = {s: i for i, s in enumerate(self.systems_)}
        known = np.array([s in index for s in campaign.systems])
        col = np.array([index.get(s, -1) for s in campaign.systems], dtype=np.intp)
        cal = self.calibration_
        for topic, relevant in zip(campaign.topics, campaign.relevant()):
            system, doc, q, covers = self._topic_opinions(topic, relevant)
            base = np.zeros(len(self.systems_))
            link = (lambda z: z) if self.aggregate == "logit" else expit
            if self.unretrieved == "calibrated":
                rows = col[np.nonzero(covers & known)[0]]
                base[rows] = link(cal[rows, 0])
            ok = known[system]
            j = col[system[ok]]
            yield j, doc[ok], link(cal[j, 0] + cal[j, 1] * q[ok]), base

    def _predict(self, campaign: Campaign):
        w = np.asarray(self.weights_)
        p = []
        for topic, (j, doc, value, base) in zip(campaign.topics, self._opinions(campaign)):
            shift = np.bincount(doc, weights=w[j] * (value - base[j]), minlength=topic.n_docs)
            p.append(expit(self.intercept_ + base @ w + shift))
        params = {
            "systems": list(self.systems_),
            "A": self.calibration_[:, 0].copy(),
            "B": self.calibration_[:, 1].copy(),
            "weights": np.asarray(self.weights_).copy(),
            "intercept": float(self.intercept_),
            "pooled_calibration": self.pooled_calibration_,
            "n_judged": self.n_judged_,
        }
        return p, None, params


register(ExpertAggregation)
