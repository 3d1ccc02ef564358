"""Each topic's split of relevance into grades, and its uncertainty in the draws (issue 25
item 3): the partially pooled cut-points against an independent optimiser and quadrature,
Monte Carlo with drawn splits against enumeration (mean and variance), and the binary numbers
unchanged."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, logit

from relimpute.confidence import ConfidenceEngine
from relimpute.relevance import Fusion
from relimpute.relevance.base import RelevanceEstimate
from relimpute.relevance.grades import GradeShares
from relimpute.relevance.ordinal import GAP_WEIGHT, _fit_topic_cuts, fit_topic_cuts, grade_shares

from test_fusion_grades import _campaign as _graded_campaign
from test_montecarlo_grades import LEVELS, RUNS, _campaign, _ndcg


def _topic_data(rng, n_topics=4, n=300, spread=1.0, cuts=(1.5, 0.0, -2.0)):
    """Grades 0..3 (anchor 2) whose cut-points differ by topic by ``N(0, spread²)``."""
    topic = np.repeat(np.arange(n_topics), n)
    eta = rng.normal(-0.5, 1.5, len(topic))
    offsets = rng.normal(0, spread, (n_topics, 3)) * np.array([1, 0, 1])
    c = np.asarray(cuts)[None, :] + offsets
    exceed = expit(eta[:, None] + c[topic])
    level = (rng.random(len(topic))[:, None] < exceed).sum(axis=1)
    return eta, level, topic


def _direct(eta, level, topic, n_topics, tau, cut_sd=3.0):
    """Minus the log posterior of ``(c_1, c_3, b_t1, b_t3)`` from the probabilities themselves."""

    def neg(phi):
        b = phi[2:].reshape(n_topics, 2)
        c = np.zeros((n_topics, 3))
        c[:, 0], c[:, 2] = phi[0] + b[:, 0], phi[1] + b[:, 1]
        cum = np.column_stack([np.ones(len(eta)), expit(eta[:, None] + c[topic]), np.zeros(len(eta))])
        prob = cum[np.arange(len(eta)), level] - cum[np.arange(len(eta)), level + 1]
        if np.any(prob <= 0) or np.any(c[:, 0] <= 0) or np.any(c[:, 2] >= 0):
            return 1e10
        gaps = GAP_WEIGHT * (np.log(c[:, 0]).sum() + np.log(-c[:, 2]).sum())  # c_1 − 0 and 0 − c_3
        return -(np.log(prob).sum() - 0.5 * phi[:2] @ phi[:2] / cut_sd**2 - 0.5 * np.sum(b**2 / tau**2) + gaps)

    return neg


def test_topic_cut_points_are_the_mode_an_independent_optimiser_finds_and_its_curvature():
    rng = np.random.default_rng(1)
    eta, level, topic = _topic_data(rng, n_topics=3)
    tau = np.array([0.8, 1.2])
    phi, precision, _ = _fit_topic_cuts(eta, level, topic, 3, [1, 3], 4, 3.0, tau)
    neg = _direct(eta, level, topic, 3, tau)
    res = minimize(neg, np.r_[1.0, -1.0, np.zeros(6)], method="BFGS", options={"gtol": 1e-8})
    np.testing.assert_allclose(phi, res.x, atol=2e-4)
    h, d = 1e-4, len(phi)
    hess = np.zeros((d, d))
    for i in range(d):
        for j in range(d):
            e_i, e_j = np.eye(d)[i] * h, np.eye(d)[j] * h
            hess[i, j] = (neg(phi + e_i + e_j) - neg(phi + e_i - e_j) - neg(phi - e_i + e_j)
                          + neg(phi - e_i - e_j)) / (4 * h * h)  # fmt: skip
    np.testing.assert_allclose(precision.covariance(), np.linalg.inv(hess), rtol=2e-3, atol=1e-5)


def test_a_topic_without_a_level_keeps_the_fit_converging():
    """A topic that judged no passage of grade 1 pulls its cut-point c_1 towards 0, the edge
    of the ordered region (DL 2019 has such topics): the gaps' prior keeps the mode inside,
    Newton's method reaches the mode an independent optimiser finds, from any start, and the
    spreads the marginal likelihood chooses are the grid's best from either start."""
    rng = np.random.default_rng(6)
    eta, level, topic = _topic_data(rng, n_topics=3, n=150, spread=1.5)
    level[(topic == 0) & (level == 1)] = 0  # topic 0: no grade 1
    tau = np.array([1.5, 1.5])
    phi, _, evidence = _fit_topic_cuts(eta, level, topic, 3, [1, 3], 4, 3.0, tau)
    res = minimize(_direct(eta, level, topic, 3, tau), phi + 0.05, method="Nelder-Mead",
                   options={"xatol": 1e-7, "fatol": 1e-10, "maxiter": 40000, "maxfev": 40000})  # fmt: skip
    np.testing.assert_allclose(phi, res.x, atol=2e-3)
    other = _fit_topic_cuts(eta, level, topic, 3, [1, 3], 4, 3.0, tau, start=np.r_[0.3, -0.3, np.zeros(6)])
    assert abs(other[2] - evidence) < 1e-6
    assert 0 < phi[0] + phi[2] < 0.5  # topic 0's c_1: near the edge, inside
    grid = [(a, b) for a in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0) for b in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)]
    values = {g: _fit_topic_cuts(eta, level, topic, 3, [1, 3], 4, 3.0, np.array(g))[2] for g in grid}
    chosen = fit_topic_cuts(eta, level, topic, 3, 2, 4, 3.0, topic_sds=(0.0, 0.5, 1.0, 1.5, 2.0, 3.0))
    assert values[tuple(chosen.tau)] >= max(values.values()) - 1e-6


def test_laplace_evidence_tracks_the_marginal_likelihood_by_quadrature():
    """One free cut-point, two topics: differences of the log marginal likelihood between
    spreads, Laplace against a 3-d grid, agree within 0.05."""
    rng = np.random.default_rng(2)
    topic = np.repeat([0, 1], 250)
    eta = rng.normal(0, 1.5, len(topic))
    c_true = np.array([-1.0, -0.3])[topic]  # levels 0, 1, 2 with anchor 1: c_2 free
    level = (eta + 0 > np.log(1 / rng.random(len(topic)) - 1)).astype(int)
    level += (level == 1) & (rng.random(len(topic)) < expit(eta + c_true) / expit(eta))

    def exact(tau):
        grid = np.linspace(-4, 3, 141)
        step = grid[1] - grid[0]
        ll = np.zeros((len(grid), 2, len(grid)))  # c, topic, b
        for t in (0, 1):
            e, lv = eta[topic == t], level[topic == t]
            cut = grid[:, None] + grid[None, :]  # c + b
            top = expit(e[None, None, :] + cut[..., None])
            mid = expit(e)[None, None, :] - top
            low = 1 - expit(e)[None, None, :]
            prob = np.where(lv == 2, top, np.where(lv == 1, mid, low))
            ll[:, t, :] = np.log(np.clip(prob, 1e-300, None)).sum(axis=-1)
            ll[:, t, :] += GAP_WEIGHT * np.log(np.clip(-cut, 1e-300, None))  # the gap 0 − c_2
        prior_b = -0.5 * grid**2 / tau**2 - np.log(tau) - 0.5 * np.log(2 * np.pi)
        inner = np.log(np.sum(np.exp(ll + prior_b - ll.max()), axis=-1) * step) + ll.max()
        prior_c = -0.5 * grid**2 / 9.0
        total = inner.sum(axis=1) + prior_c
        return np.log(np.sum(np.exp(total - total.max())) * step) + total.max()

    laplace = {tau: _fit_topic_cuts(eta, level, topic, 2, [2], 3, 3.0, np.array([tau]))[2] for tau in (0.5, 1.5)}
    # the Laplace value leaves out the (2π)^(d/2) the prior's normalisation cancels and c's constant
    assert abs((laplace[0.5] - laplace[1.5]) - (exact(0.5) - exact(1.5))) < 0.05


def test_the_spread_is_learned_none_for_one_split_and_some_for_splits_that_differ():
    rng = np.random.default_rng(3)
    same = fit_topic_cuts(*_topic_data(rng, n_topics=10, spread=0.0), 10, 2, 4, cut_sd=3.0)
    differ = fit_topic_cuts(*_topic_data(rng, n_topics=10, spread=1.5), 10, 2, 4, cut_sd=3.0)
    assert np.all(same.tau <= 0.25) and np.all(differ.tau >= 0.5)
    assert same.shared[1] == 0.0 and np.all(np.diff(differ.topics, axis=1) < 0)
    # an unseen topic takes the shared cut-points, and its draws spread by τ around them
    drawn = differ.draws(np.random.default_rng(0), 4000, [-1, 0])
    np.testing.assert_allclose(differ.of([-1])[0], differ.shared)
    assert abs(drawn[:, 0, 0].std() - np.hypot(differ.tau[0], np.sqrt(differ.covariance[0, 0]))) < 0.1
    assert drawn[:, 1, 0].std() < drawn[:, 0, 0].std()


def _split_estimate(campaign, cut_draws):
    """A graded estimate on the tiny campaign whose split is drawn: 3 posterior draws of p and
    of the topic's cut-points."""
    topic = campaign.topics[0]
    n = topic.n_docs
    rng = np.random.default_rng(5)
    eta = np.where(topic.judged, np.nan, rng.normal(0, 1, n))
    p = np.where(topic.judged, topic.grades >= 2, expit(np.nan_to_num(eta)))
    post = np.vstack([np.where(topic.judged, p, np.clip(p + s, 0.01, 0.99)) for s in (-0.1, 0.0, 0.1)])
    point = np.array([1.0, 0.0, -1.0])
    above, below = grade_shares(np.nan_to_num(eta), point, 2)
    hit = topic.grades[:, None] >= np.array([1, 2, 3])[None, :]
    above = np.where(topic.judged[:, None], hit[:, 2:], above)
    below = np.where(topic.judged[:, None], hit[:, :1], below)
    offset = eta - logit(np.clip(post.mean(axis=0), 1e-12, 1 - 1e-12))  # NaN where judged
    shares = GradeShares(LEVELS, 2, (above,), (below,), offset=(offset,), cut_draws=(cut_draws,))
    return RelevanceEstimate(("q",), (topic.doc_ids,), (post.mean(axis=0),), draws=(post,), grades=shares)


def _exact_moments(campaign, estimate):
    """Mean and variance per run of nDCG@5 by enumeration: per posterior draw ``m``, every
    grade of every unjudged document with ``P(G ≥ l_k)`` from ``p_m`` and the cumulative
    logits at cut-points ``m`` and log-odds ``logit(p_m) + offset`` (written out here, not
    through :class:`GradeShares`)."""
    topic, shares = campaign.topics[0], estimate.grades
    docs = list(topic.doc_ids)
    unjudged = [i for i in range(len(docs)) if not topic.judged[i]]
    offset = shares.offset[0]
    first, second = np.zeros(len(RUNS)), np.zeros(len(RUNS))
    post = estimate.draws[0]
    for p, c in zip(post, shares.cut_draws[0]):
        probs = {}
        for i in unjudged:
            rel = p[i]
            e = np.log(rel / (1 - rel)) + offset[i]  # the draw's log-odds of the split
            ge1 = rel + (1 - rel) * (expit(e + c[0]) - expit(e)) / (1 - expit(e))
            ge3 = rel * expit(e + c[2]) / expit(e)
            probs[i] = [1 - ge1, ge1 - rel, rel - ge3, ge3]
        for assignment in itertools.product(range(4), repeat=len(unjudged)):
            weight = np.prod([probs[i][g] for i, g in zip(unjudged, assignment)])
            grades = {d: int(topic.grades[i]) for i, d in enumerate(docs) if topic.judged[i]}
            grades.update({docs[i]: LEVELS[g] for i, g in zip(unjudged, assignment)})
            value = np.array([_ndcg(grades, run, 5) for run in RUNS.values()])
            first += weight * value / len(post)
            second += weight * value**2 / len(post)
    return first, second - first**2


@pytest.mark.parametrize("spread", [0.0, 2.0])
def test_monte_carlo_with_drawn_splits_matches_enumeration(spread):
    """200,000 draws: mean within 4 standard errors of the enumerated mixture over the
    posterior draws, variance within 3%. A split drawn per posterior draw (one for the whole
    topic) widens the distribution; its mean is the mixture's, not the point split's."""
    campaign = _campaign()
    cut_draws = np.array([1.0, 0.0, -1.0]) + spread * np.array([[-0.5, 0, -0.5], [0, 0, 0], [0.5, 0, 0.5]])
    estimate = _split_estimate(campaign, cut_draws)
    mean, var = _exact_moments(campaign, estimate)
    result = ConfidenceEngine().confidence(
        campaign, estimate, pairs=[("a", "b")], measure="nDCG@5", n_draws=200_000, rng=7,
        method="monte carlo",
    )
    scores = result.scores
    se = np.sqrt(var / 200_000)
    np.testing.assert_array_less(np.abs(scores.e_map - mean), 4 * se)
    np.testing.assert_allclose(scores.var_map, var, rtol=0.03)
    if spread:
        _, var_point = _exact_moments(campaign, _split_estimate(campaign, np.tile([1.0, 0.0, -1.0], (3, 1))))
        assert np.all(var > 1.05 * var_point)


def test_pool_bias_draws_take_the_drawn_split():
    from relimpute.bias.model import graded_draws
    from relimpute.measures import parse_measure

    campaign = _campaign()
    cut_draws = np.array([1.0, 0.0, -1.0]) + 2.0 * np.array([[-0.5, 0, -0.5], [0, 0, 0], [0.5, 0, 0.5]])
    estimate = _split_estimate(campaign, cut_draws)
    mean, var = _exact_moments(campaign, estimate)
    draws = graded_draws(campaign, estimate, parse_measure("nDCG@5"), 60_000, rng=2)
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - mean), 4 * np.sqrt(var / len(draws)))
    np.testing.assert_allclose(draws.var(axis=0), var, rtol=0.05)


def test_fusion_draws_a_split_per_topic_and_leaves_relevance_alone():
    """The default model's estimate carries per-topic cut-point draws; at the mode they give the
    point split; judged documents keep their grades in every draw; the probabilities of relevance
    and their draws are the binary model's, bit for bit (also test_fusion_grades)."""
    campaign = _graded_campaign(binary=False)
    model = Fusion(n_draws=6).fit(campaign, rng=3)
    estimate = model.predict(campaign)
    shares, cuts = estimate.grades, model.topic_cuts_
    assert shares.cut_draws is not None and shares.cut_draws[0].shape == (6, len(LEVELS) - 1)
    binary = Fusion(n_draws=6).fit(_graded_campaign(binary=True), rng=3).predict(_graded_campaign(binary=True))
    for t, topic in enumerate(campaign.topics):
        np.testing.assert_array_equal(estimate.draws[t], binary.draws[t])
        at_mode = GradeShares(shares.levels, shares.anchor, shares.above, shares.below,
                              offset=shares.offset, cut_draws=tuple(np.tile(c, (2, 1)) for c in cuts.topics))
        p = np.tile(estimate.p[t], (2, 1))  # the point estimate: its split, whatever the draw index
        np.testing.assert_allclose(at_mode.at_least(t, p, index=np.arange(2)), shares.at_least(t, p),
                                   rtol=1e-9, atol=1e-12)  # fmt: skip
        drawn = shares.at_least(t, estimate.draws[t], index=np.arange(6))
        expected = (topic.grades[topic.judged, None] >= np.asarray(shares.levels[1:])[None, :]).astype(float)
        assert np.all(drawn[:, topic.judged] == expected)
        assert np.all(np.diff(drawn, axis=-1) <= 1e-12)


def test_grade_shares_need_offset_and_cut_draws_together():
    with pytest.raises(ValueError, match="both offset and cut_draws"):
        GradeShares(LEVELS, 2, (np.zeros((3, 1)),), (np.zeros((3, 1)),), offset=(np.zeros(3),))
    with pytest.raises(ValueError, match="wrong shape"):
        GradeShares(LEVELS, 2, (np.zeros((3, 1)),), (np.zeros((3, 1)),), offset=(np.zeros(2),),
                    cut_draws=(np.zeros((4, 3)),))  # fmt: skip


def _shifted_moments(campaign, estimate, shift):
    """:func:`_exact_moments` with posterior draw ``m``'s split at log-odds moved by
    ``shift[m]`` (the between-group term on the split), written out per draw."""
    first, second = [], []
    for m, s in enumerate(shift):
        one = _split_estimate(campaign, estimate.grades.cut_draws[0][[m]])
        one = RelevanceEstimate(one.query_ids, one.doc_ids, one.p, draws=(estimate.draws[0][[m]],),
                                grades=one.grades)  # fmt: skip
        # the draw's split log-odds logit(p_m) + offset + s: the offset carries s
        moved = GradeShares(LEVELS, 2, one.grades.above, one.grades.below,
                            offset=(one.grades.offset[0] + s,), cut_draws=one.grades.cut_draws)  # fmt: skip
        mean, var = _exact_moments(campaign, RelevanceEstimate(one.query_ids, one.doc_ids, one.p,
                                                               draws=one.draws, grades=moved))  # fmt: skip
        first.append(mean)
        second.append(var + mean**2)
    first, second = np.mean(first, axis=0), np.mean(second, axis=0)
    return first, second - first**2


def test_a_between_group_shift_of_the_split_matches_enumeration_and_leaves_relevance_alone():
    """The pool-bias correction's term on the split (``split_sd``): drawn per posterior draw,
    shared by every document; 60,000 draws against the enumerated mixture (mean within 4
    standard errors, variance within 5%); it widens nDCG's distribution and the binary
    measures' draws are bit for bit those without it."""
    from relimpute.bias.model import graded_draws, group_shifted
    from relimpute.measures import parse_measure

    campaign = _campaign()
    cut_draws = np.array([1.0, 0.0, -1.0]) + np.array([[-0.5, 0, -0.5], [0, 0, 0], [0.5, 0, 0.5]])
    estimate = _split_estimate(campaign, cut_draws)
    unknown = [~campaign.topics[0].judged]
    shifted = group_shifted(estimate, unknown, 0.0, 11, split_sd=1.5)
    shift = shifted.grades.split_shift
    assert shift.shape == (3,) and np.all(np.diff(np.sort(shift)) > 0)
    np.testing.assert_allclose(np.sort(shift) / 1.5, [-0.967422, 0.0, 0.967422], atol=1e-6)  # Φ⁻¹(1/6, ½, 5/6)
    mean, var = _shifted_moments(campaign, estimate, shift)
    draws = graded_draws(campaign, shifted, parse_measure("nDCG@5"), 60_000, rng=2)
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - mean), 4 * np.sqrt(var / len(draws)))
    np.testing.assert_allclose(draws.var(axis=0), var, rtol=0.05)
    assert np.all(var > 1.03 * _exact_moments(campaign, estimate)[1])
    # the confidence engine reads the same split
    result = ConfidenceEngine().confidence(
        campaign, shifted, pairs=[], measure="nDCG@5", n_draws=60_000, rng=7, method="monte carlo"
    )
    np.testing.assert_array_less(np.abs(result.scores.e_map - mean), 4 * np.sqrt(var / 60_000))
    # relevance, its draws and every binary measure: unchanged, bit for bit
    for measure in ("P@5", "AP"):
        plain = ConfidenceEngine().confidence(
            campaign, estimate, pairs=[], measure=measure, n_draws=500, rng=3, method="monte carlo"
        )
        moved = ConfidenceEngine().confidence(
            campaign, shifted, pairs=[], measure=measure, n_draws=500, rng=3, method="monte carlo"
        )
        np.testing.assert_array_equal(plain.scores.draws, moved.scores.draws)
    assert group_shifted(estimate, unknown, 0.0, 11) is estimate


def test_split_shift_needs_drawn_splits_and_one_finite_shift_per_draw():
    with pytest.raises(ValueError, match="split_shift"):
        GradeShares(LEVELS, 2, (np.zeros((3, 1)),), (np.zeros((3, 1)),), split_shift=np.zeros(4))
    with pytest.raises(ValueError, match="split_shift"):
        GradeShares(LEVELS, 2, (np.zeros((3, 1)),), (np.zeros((3, 1)),), offset=(np.zeros(3),),
                    cut_draws=(np.zeros((4, 3)),), split_shift=np.array([0.0, np.nan]))  # fmt: skip
