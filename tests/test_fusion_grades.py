"""The default model's grades (issue 25 item 3): the cumulative-logit fit against an
independent optimiser, the binary scale reducing to the logistic model, and the split of
each document's relevance into grades."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import expit

from relimpute.relevance import Fusion
from relimpute.relevance.grades import GradeShares
from relimpute.relevance.ordinal import fit_logistic, fit_ordinal, grade_shares
from relimpute.simulate import simulate_campaign


def _ordinal_data(rng, n=400, cuts=(1.2, 0.0, -1.5)):
    x = rng.normal(size=(n, 2))
    eta = x @ np.array([1.0, -0.6]) - 0.5
    u = rng.random(n)
    exceed = expit(eta[:, None] + np.asarray(cuts)[None, :])
    level = (u[:, None] < exceed).sum(axis=1)
    design = sp.csr_matrix(np.column_stack([x, np.ones(n)]))
    return design, level


def _direct_objective(design, level, prec, shift, anchor, n_levels, cut_sd):
    """The penalised log-likelihood from the probabilities themselves (no shared code)."""
    dense = design.toarray()
    n_par = dense.shape[1]
    free = [k for k in range(1, n_levels) if k != anchor]

    def neg(phi):
        theta = phi[:n_par]
        c = np.zeros(n_levels - 1)
        c[[k - 1 for k in free]] = phi[n_par:]
        eta = dense @ theta
        cum = np.column_stack([np.ones(len(eta)), expit(eta[:, None] + c), np.zeros(len(eta))])
        prob = cum[np.arange(len(eta)), level] - cum[np.arange(len(eta)), level + 1]
        if np.any(prob <= 0):
            return 1e10
        prior = -0.5 * theta @ prec @ theta + shift @ theta - 0.5 * phi[n_par:] @ phi[n_par:] / cut_sd**2
        return -(np.log(prob).sum() + prior)

    return neg, n_par, free


def test_ordinal_fit_is_the_mode_an_independent_optimiser_finds_and_its_curvature(rng):
    design, level = _ordinal_data(rng)
    prec, shift = np.eye(3) * 0.1, np.array([0.1, 0.0, 0.0])
    theta, cuts, cov = fit_ordinal(design, level, 2, 4, prec, shift, np.zeros(3), cut_sd=3.0)
    neg, n_par, free = _direct_objective(design, level, prec, shift, 2, 4, 3.0)
    res = minimize(neg, np.r_[np.zeros(3), 1.0, -1.0], method="Nelder-Mead",
                   options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 40000, "maxfev": 40000})
    assert cuts[1] == 0.0 and cuts[0] > 0 > cuts[2]
    np.testing.assert_allclose(theta, res.x[:n_par], atol=2e-4)
    np.testing.assert_allclose(cuts[[0, 2]], res.x[n_par:], atol=2e-4)
    # Laplace: the θ block of the inverse of the numerical Hessian of the direct objective
    phi, h = np.r_[theta, cuts[[0, 2]]], 1e-4
    hess = np.zeros((5, 5))
    for i in range(5):
        for j in range(5):
            e_i, e_j = np.eye(5)[i] * h, np.eye(5)[j] * h
            hess[i, j] = (neg(phi + e_i + e_j) - neg(phi + e_i - e_j) - neg(phi - e_i + e_j)
                          + neg(phi - e_i - e_j)) / (4 * h * h)
    np.testing.assert_allclose(cov, np.linalg.inv(hess)[:3, :3], rtol=1e-4, atol=1e-7)


def test_two_levels_are_the_logistic_fit_exactly(rng):
    design, level = _ordinal_data(rng, cuts=(0.0,))
    prec, shift = np.eye(3) * 0.25, np.zeros(3)
    theta, cuts, cov = fit_ordinal(design, level, 1, 2, prec, shift, np.zeros(3), cut_sd=3.0)
    theta_l, cov_l = fit_logistic(design, (level >= 1).astype(float), prec, shift, np.zeros(3))
    assert np.array_equal(theta, theta_l) and np.array_equal(cov, cov_l) and cuts.tolist() == [0.0]


def _campaign(binary: bool):
    sim = simulate_campaign(n_topics=6, n_systems=6, n_docs=120, depth=30, n_families=3, rng=5)
    campaign = sim.campaign
    if binary:
        topics = [
            type(t)(**{**{f: getattr(t, f) for f in t.__dataclass_fields__},
                       "grades": np.where(t.judged, np.minimum(t.grades, 1), t.grades).astype(np.int16)})
            for t in campaign.topics
        ]
        campaign = type(campaign)(**{**{f: getattr(campaign, f) for f in campaign.__dataclass_fields__},
                                     "topics": topics})
    return campaign.pooled(8)


def test_relevance_is_the_binary_models_and_grades_only_split_it():
    """A 0/1 campaign gets no grades (Monte Carlo as before); the same campaign with its grades
    gets the same probabilities of relevance and draws, bit for bit, plus the split."""
    binary = _campaign(binary=True)
    model = Fusion(n_draws=4).fit(binary, rng=3)
    estimate = model.predict(binary)
    assert estimate.grades is None and model.grade_levels_.tolist() == [0, 1]
    graded_campaign = _campaign(binary=False)
    graded = Fusion(n_draws=4).fit(graded_campaign, rng=3)
    with_grades = graded.predict(graded_campaign)
    assert len(graded.grade_levels_) > 2 and with_grades.grades is not None
    np.testing.assert_array_equal(graded.coef_, model.coef_)
    for t in range(binary.n_topics):
        np.testing.assert_array_equal(with_grades.p[t], estimate.p[t])
        np.testing.assert_array_equal(with_grades.draws[t], estimate.draws[t])


def test_cut_points_given_the_log_odds_match_an_independent_optimiser(rng):
    """How the model fits them: no design columns, ``η`` an offset."""
    design, level = _ordinal_data(rng)
    offset = design @ np.array([1.0, -0.6, -0.5])
    empty = sp.csr_matrix((len(level), 0))
    _, cuts, _ = fit_ordinal(empty, level, 2, 4, np.zeros((0, 0)), np.zeros(0), np.zeros(0),
                             cut_sd=3.0, offset=offset)  # fmt: skip

    def neg(c):
        full = np.array([c[0], 0.0, c[1]])
        cum = np.column_stack([np.ones(len(level)), expit(offset[:, None] + full), np.zeros(len(level))])
        prob = cum[np.arange(len(level)), level] - cum[np.arange(len(level)), level + 1]
        return 1e10 if np.any(prob <= 0) else -(np.log(prob).sum() - 0.5 * c @ c / 9.0)

    res = minimize(neg, np.array([1.0, -1.0]), method="Nelder-Mead",
                   options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 10000})
    np.testing.assert_allclose(cuts[[0, 2]], res.x, atol=1e-5)
    assert cuts[1] == 0.0


def test_graded_estimate_splits_p_into_grades_and_keeps_judged_grades():
    campaign = _campaign(binary=False)
    model = Fusion(n_draws=4).fit(campaign, rng=3)
    estimate = model.predict(campaign)
    shares = estimate.grades
    assert shares.levels == tuple(model.grade_levels_) and shares.threshold == campaign.rel_threshold
    for t, topic in enumerate(campaign.topics):
        exceed = shares.at_least(t, estimate.p[t])
        assert np.all(np.diff(exceed, axis=1) <= 1e-12)  # P(G ≥ l) falls with l
        np.testing.assert_array_equal(exceed[:, shares.anchor - 1], estimate.p[t])
        judged = topic.judged
        expected = (topic.grades[judged, None] >= np.asarray(shares.levels[1:])[None, :]).astype(float)
        np.testing.assert_array_equal(exceed[judged], expected)
    # unjudged: the split is the cumulative logits' at the point estimate's log-odds
    eta = np.linspace(-4, 3, 9)
    above, below = grade_shares(eta, model.cuts_, model.anchor_)
    cum = expit(eta[:, None] + model.cuts_[None, :])
    a = model.anchor_
    np.testing.assert_allclose(above, cum[:, a:] / cum[:, [a - 1]], rtol=1e-12)
    np.testing.assert_allclose(below, (cum[:, : a - 1] - cum[:, [a - 1]]) / (1 - cum[:, [a - 1]]), rtol=1e-10)


def test_drawn_grades_follow_the_distribution_and_the_binary_draw():
    """One uniform per document: relevant exactly when u < p, and each grade's frequency within
    5 standard errors of its probability (200,000 draws)."""
    rng = np.random.default_rng(0)
    shares = GradeShares((0, 1, 2, 3), 2, (np.array([[0.3], [0.8]]),), (np.array([[0.5], [0.1]]),))
    p = np.array([0.4, 0.05])
    u = rng.random((200_000, 2))
    grades = shares.draw(0, u, p, slice(None))
    np.testing.assert_array_equal(grades >= 2, u < p)
    exceed = shares.at_least(0, p)
    probs = -np.diff(np.column_stack([np.ones(2), exceed, np.zeros(2)]), axis=1)
    for doc in range(2):
        freq = np.bincount(grades[:, doc], minlength=4) / len(u)
        se = np.sqrt(probs[doc] * (1 - probs[doc]) / len(u))
        assert np.all(np.abs(freq - probs[doc]) <= 5 * se + 1e-12)
    np.testing.assert_allclose(shares.expected(0, p, [0, 1, 2, 3]), probs @ np.arange(4))


def test_bad_grade_shares_are_refused():
    with pytest.raises(ValueError, match="increasing"):
        GradeShares((0, 2, 1), 1, (), ())
    with pytest.raises(ValueError, match="wrong shape"):
        GradeShares((0, 1, 2), 1, (np.zeros((3, 2)),), (np.zeros((3, 0)),))


def test_fusion_module_stays_small_and_keeps_its_public_names():
    """The model is a package split by idea, its model module at most 500 lines; the names other
    code imports from ``relimpute.relevance.fusion`` still import from it."""
    import inspect

    import relimpute.relevance.fusion as fusion
    import relimpute.relevance.fusion.model as model

    assert len(inspect.getsource(model).splitlines()) <= 500
    for name in ("Fusion", "topic_evidence", "pool_depth", "judged_prefixes", "capture_factors",
                 "TopicEvidence", "FEATURE_NAMES", "N_FEATURES", "SPREAD_RATIO", "CUT_SD"):
        assert hasattr(fusion, name), name
