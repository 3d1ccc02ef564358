"""The per-topic cut-point fit against an oracle: the same posterior and spread search
written topic by topic.

The fit was made faster for issue 25's speed target (rows grouped once, closed-form
derivatives summed per topic, the arrowhead curvature solved by matrix products, no
progress bar per search point). The oracle takes each topic's rows apart, differentiates
row by row (the per-row forms the fit used before), carries the derivatives to
``(c, b_1..b_T)`` by the chain rule into a dense curvature, and starts every search point
afresh. The spreads chosen must be the same, the cut-points and their covariance
within 1e-6.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import expit

from conftest import SHARED_DATA
from relimpute.relevance._newton import newton_maximise
from relimpute.relevance.fusion import CUT_SD
from relimpute.relevance.ordinal import (
    GAP_WEIGHT,
    TOPIC_CUT_SDS,
    _LevelRows,
    _interval_derivatives,
    _log_interval,
    fit_topic_cuts,
)


def _oracle_fit(eta, level, topic, n_topics, free, n_levels, cut_sd, tau):
    """Mode, covariance and Laplace evidence at spreads ``tau``, topic by topic: each
    topic's rows give the log-likelihood's derivatives in its cut-points ``c_1..c_{K−1}``
    (per row, :func:`_interval_derivatives`), carried to ``(c, b_1..b_T)`` by the chain rule
    (``c_k + b_tk``) into a dense curvature solved directly; Newton's method from a start
    of its own (the mode is unique)."""
    n_free, tau = len(free), np.asarray(tau, float)
    pooled = tau > 0
    size = n_free * (1 + n_topics)
    held = np.concatenate([np.zeros(n_free, bool), np.tile(~pooled, n_topics)])
    prior = np.concatenate([np.full(n_free, cut_sd**-2.0), np.tile(np.where(pooled, 1 / np.where(pooled, tau, 1) ** 2, 0), n_topics)])
    anchor = next(k for k in range(1, n_levels) if k not in free)
    jacobians = []  # topic t's c_1..c_{K−1} in (c, b): rows of the free levels
    for t in range(n_topics):
        jac = np.zeros((n_levels - 1, size))
        for i, k in enumerate(free):
            jac[k - 1, i] = 1.0
            jac[k - 1, n_free * (1 + t) + i] = float(pooled[i])
        jacobians.append(jac)

    rows = [(eta[topic == t], level[topic == t]) for t in range(n_topics)]
    ends = np.zeros(n_levels + 1)
    ends[0], ends[-1] = np.inf, -np.inf  # c_0, c_K

    def topic_terms(phi, t, derivatives=True):
        """Log-likelihood and gap prior of topic t, their gradient and Hessian in its c_1..c_{K−1}."""
        full = ends.copy()
        full[1:-1] = jacobians[t] @ phi
        gaps = full[1:-2] - full[2:-1]
        if np.any(gaps <= 0):
            return -np.inf, None, None
        e, lv = rows[t]
        a, b = e + full[lv], e + full[lv + 1]
        value = np.sum(_log_interval(a, b)) + GAP_WEIGHT * np.sum(np.log(gaps))
        if not derivatives:
            return value, None, None
        ga, gb, haa, hbb, hab = _interval_derivatives(a, b)
        grad, hess = np.zeros(n_levels - 1), np.zeros((n_levels - 1, n_levels - 1))
        # a row of level k: a is c_k, b is c_{k+1} (cut-point indices k − 1 and k)
        up, low = lv >= 1, lv <= n_levels - 2
        both = up & low
        np.add.at(grad, lv[up] - 1, ga[up])
        np.add.at(grad, lv[low], gb[low])
        np.add.at(hess, (lv[up] - 1, lv[up] - 1), haa[up])
        np.add.at(hess, (lv[low], lv[low]), hbb[low])
        np.add.at(hess, (lv[both] - 1, lv[both]), hab[both])
        np.add.at(hess, (lv[both], lv[both] - 1), hab[both])
        for k, gap in enumerate(gaps):  # GAP_WEIGHT · log(c_{k+1} − c_{k+2})
            grad[k] += GAP_WEIGHT / gap
            grad[k + 1] -= GAP_WEIGHT / gap
            for i, j, sign in ((k, k, -1), (k + 1, k + 1, -1), (k, k + 1, 1), (k + 1, k, 1)):
                hess[i, j] += sign * GAP_WEIGHT / gap**2
        return value, grad, hess

    def log_post(phi):
        values = [topic_terms(phi, t, derivatives=False)[0] for t in range(n_topics)]
        return float(np.sum(values) - 0.5 * np.sum(prior * phi**2))

    def gradient_curvature(phi):
        grad, curv = -prior * phi, np.diag(prior)
        for t in range(n_topics):
            _, g, h = topic_terms(phi, t)
            grad += jacobians[t].T @ g
            curv -= jacobians[t].T @ h @ jacobians[t]
        curv[held, held] = 1.0  # topic terms held at 0
        return grad, curv

    start = np.zeros(size)
    start[:n_free] = [anchor - k for k in free]  # c_1 > … > c_{K−1}, c_a = 0
    phi = newton_maximise(log_post, gradient_curvature, start)
    curv = gradient_curvature(phi)[1]
    evidence = log_post(phi) - 0.5 * np.linalg.slogdet(curv)[1] - n_topics * np.sum(np.log(tau[pooled]))
    cov = np.linalg.inv(curv)
    cov[held] = cov[:, held] = 0.0
    return phi, cov, evidence


def _oracle(eta, level, topic, n_topics, anchor, n_levels, cut_sd, topic_sds=TOPIC_CUT_SDS):
    """The search over the spreads: one free cut-point at a time, each value of
    ``topic_sds`` in order, kept when its evidence is higher by more than 1e-9; twice over
    when two free cut-points are neighbours."""
    free = [k for k in range(1, n_levels) if k != anchor]
    neighbours = any(k + 1 in free for k in free)
    tau = np.zeros(len(free))
    best = _oracle_fit(eta, level, topic, n_topics, free, n_levels, cut_sd, tau)
    for f in list(range(len(free))) * (2 if neighbours else 1):
        for sd in [sd for sd in topic_sds if sd != tau[f]]:
            trial = np.where(np.arange(len(free)) == f, sd, tau)
            fitted = _oracle_fit(eta, level, topic, n_topics, free, n_levels, cut_sd, trial)
            if fitted[2] > best[2] + 1e-9:
                best, tau = fitted, trial
    return best[0], tau, best[1]


def _graded(rng, n_topics, n, cuts, spread):
    """Levels ``0..len(cuts)`` whose cut-points differ by topic by ``N(0, spread²)``."""
    topic = np.repeat(np.arange(n_topics), n)
    eta = rng.normal(-0.5, 1.5, len(topic))
    c = np.asarray(cuts)[None, :] + rng.normal(0, spread, (n_topics, len(cuts))) * (np.asarray(cuts) != 0)
    level = (rng.random(len(topic))[:, None] < expit(eta[:, None] + c[topic])).sum(axis=1)
    return eta, level, topic


def _assert_same(eta, level, topic, n_topics, anchor, n_levels, cut_sd=CUT_SD):
    fitted = fit_topic_cuts(eta, level, topic, n_topics, anchor, n_levels, cut_sd)
    phi, tau, cov = _oracle(eta, level, topic, n_topics, anchor, n_levels, cut_sd)
    np.testing.assert_array_equal(fitted.tau, tau)
    cols = np.asarray(fitted.free) - 1
    np.testing.assert_allclose(fitted.shared[cols], phi[: len(cols)], rtol=0, atol=1e-6)
    offsets = phi[len(cols) :].reshape(n_topics, len(cols))
    np.testing.assert_allclose(fitted.topics[:, cols], fitted.shared[cols] + offsets, rtol=0, atol=1e-6)
    np.testing.assert_allclose(fitted.covariance, cov, rtol=0, atol=1e-6)
    return fitted


@pytest.mark.parametrize(
    "cuts, anchor, spread",
    [
        ((1.5, 0.0, -2.0), 2, 1.0),  # four levels, relevance from the third (DL's rel >= 2)
        ((1.5, 0.0, -2.0), 2, 0.0),  # one split for all topics
        ((0.0, -1.5), 1, 0.8),  # three levels, one free cut-point above the anchor
        ((1.0, 0.0), 2, 0.8),  # three levels, one below
        ((2.0, 0.0, -1.0, -2.5), 2, 0.7),  # five levels: c_3, c_4 share rows (two passes)
    ],
)
def test_cut_points_match_the_oracle_on_small_campaigns(cuts, anchor, spread):
    rng = np.random.default_rng(len(cuts) * 10 + anchor)
    eta, level, topic = _graded(rng, n_topics=6, n=120, cuts=cuts, spread=spread)
    fitted = _assert_same(eta, level, topic, 6, anchor, len(cuts) + 1)
    assert fitted.tau.shape == (len(cuts) - 1,)


def test_cut_points_match_the_oracle_with_missing_levels_and_an_empty_topic():
    """A topic without grade 1, one without grade 3 (the gaps' prior at work, as on DL 2019)
    and a topic the fit saw no row of (its cut-points set by the priors alone)."""
    rng = np.random.default_rng(3)
    eta, level, topic = _graded(rng, n_topics=5, n=100, cuts=(1.5, 0.0, -2.0), spread=1.2)
    level[(topic == 0) & (level == 1)] = 0
    level[(topic == 1) & (level == 3)] = 2
    fitted = _assert_same(eta, level, topic, 6, 2, 4)
    assert fitted.topics[0, 0] < fitted.shared[0]  # no grade 1: c_1 pulled towards the anchor


def test_log_likelihood_where_the_probabilities_underflow():
    """Rows at log-odds far beyond any cut-point (``F`` underflows to 0 in double precision
    below −745): the log-likelihood falls back to its stable form and equals the per-row
    ``log(F(a) − F(b))``; its derivatives stay finite (the per-row forms divide 0 by 0)."""
    rng = np.random.default_rng(4)
    eta, level, topic = _graded(rng, n_topics=4, n=80, cuts=(1.5, 0.0, -2.0), spread=0.5)
    eta[:3], level[:3] = -800.0, 3  # grade 3 at log-odds −800: log P ≈ −800
    eta[3:6], level[3:6] = 800.0, 0
    rows = _LevelRows(eta, level, topic, 4, 4)
    c = np.tile([np.inf, 1.2, 0.0, -1.8, -np.inf], (4, 1))
    c[:, [1, 3]] += rng.normal(0, 0.3, (4, 2))
    direct = np.sum(_log_interval(eta + c[topic, level], eta + c[topic, level + 1]))
    assert direct < -4000
    np.testing.assert_allclose(rows.log_likelihood(c), direct, rtol=1e-12)
    assert all(np.all(np.isfinite(part)) for part in rows.derivatives(c))


def _dl_cut_inputs(folder):
    from relimpute.data import Campaign
    from relimpute.relevance import Fusion

    if not (folder / "qrels.txt").is_file():
        pytest.skip(f"{folder.name} not found at {folder} (../shared/data is not beside the repo)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        campaign = Campaign.from_files(folder / "qrels.txt", folder / "runs", rel_threshold=2)
    model = Fusion().fit(campaign, rng=0)
    eta, level, topic, n_topics = model.__dict__["_pending_cuts"]  # what topic_cuts_ fits
    return eta, level, topic, n_topics, model.anchor_, len(model.grade_levels_)


@pytest.mark.parametrize(
    "collection", ["trec-dl-2019-passage", pytest.param("trec-dl-2021-passage", marks=pytest.mark.slow)]
)
def test_cut_points_match_the_oracle_on_the_dl_collections(collection):
    inputs = _dl_cut_inputs(SHARED_DATA / collection)
    fitted = _assert_same(*inputs)
    assert np.all(fitted.tau > 0)  # the topics' splits differ on both (the spread search at work)


def test_newton_without_polish_stops_before_a_step_below_tol():
    """A log posterior whose roundoff makes each evaluation look 1e-15 worse than the last
    (as a sum over thousands of rows may): the last step's line search, below tol, cannot
    see an increase and halves 34 times; without polishing the fit stops before it, at the
    mode within tol."""
    counts = {}

    def fit(polish):
        calls = [0]

        def log_post(theta):
            calls[0] += 1
            return -float(np.sum(np.cosh(theta - 3.0))) - 1e-15 * calls[0]

        def gradient_curvature(theta):
            return -np.sinh(theta - 3.0), np.diag(np.cosh(theta - 3.0))

        theta = newton_maximise(log_post, gradient_curvature, np.zeros(2), show_progress=False, polish=polish)
        counts[polish] = calls[0]
        return theta

    np.testing.assert_allclose(fit(False), 3.0, atol=1e-9)
    np.testing.assert_allclose(fit(True), 3.0, atol=1e-9)
    assert counts[True] >= counts[False] + 30
