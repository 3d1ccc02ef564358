"""The runs' effects carried below the pool (``beyond_run_carry``, docs/math/fusion.md)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import expit, logit

from relimpute.relevance import Fusion
from relimpute.relevance.fusion import topic_evidence
from relimpute.simulate import simulate_campaign

CARRY = 0.7


def _carried_weights(topic, horizon: int) -> np.ndarray:
    """``(n, S)``: each document's share of the votes 1 / log2(1 + r) of the runs that retrieve
    it, for the documents whose best rank lies below the pool (0 elsewhere), from the rankings."""
    n, runs = topic.n_docs, topic.ranking.shape[0]
    votes = np.zeros((n, runs))
    best = np.full(n, np.inf)
    for j in range(runs):
        for r, doc in enumerate(topic.ranking[j]):
            if doc >= 0:
                votes[doc, j] += 1.0 / np.log2(2.0 + r)
                best[doc] = min(best[doc], r + 1.0)
    deep = np.isfinite(best) & (best > horizon)
    share = np.zeros_like(votes)
    share[deep] = votes[deep] / votes[deep].sum(axis=1, keepdims=True)
    return share


def _centre(campaign, u, plain_p) -> float:
    """The c with Σ expit(logit p_i + β w_i·u − c) = Σ p_i over every document the carry acts on
    (retrieved, best rank below the pool; p: the model without the carry), by bisection."""
    logits, shifts = [], []
    for topic, p in zip(campaign.topics, plain_p):
        weights = _carried_weights(topic, topic_evidence(topic, rrf_offset=3.0).horizon)
        rows = weights.sum(axis=1) > 0
        logits.append(logit(p[rows]))
        shifts.append(CARRY * (weights @ u)[rows])
    eta, shift = np.concatenate(logits), np.concatenate(shifts)
    return brentq(lambda c: expit(eta + shift - c).sum() - expit(eta).sum(), -20, 20, xtol=1e-14)


@pytest.fixture(scope="module")
def fitted():
    sim = simulate_campaign(n_topics=6, n_systems=8, depth=60, rng=5)
    shallow = sim.campaign.pooled(5)
    common = dict(capture_floor=1.0, beyond_decay=0.6, run_effect_sd=3.0, n_draws=4000)
    plain = Fusion.plug_in(**common).fit(shallow, rng=0)
    carried = Fusion.plug_in(**common, beyond_run_carry=CARRY).fit(shallow, rng=0)
    return shallow, plain, carried


def test_carry_adds_beta_times_the_vote_weighted_mean_run_effect_below_the_pool(fitted):
    """The fit is unchanged (it sees the pool only); the point estimate's log-odds of an
    unjudged document below the pool move by β Σ_j w_ij û_j − c (w: its runs' vote shares,
    c: one number, so that the expected relevant count of those documents is unchanged), the
    others' not at all (capture off: floor 1)."""
    shallow, plain, carried = fitted
    np.testing.assert_allclose(carried.coef_, plain.coef_, rtol=1e-12, atol=1e-12)
    u = plain.coef_[-shallow.n_systems :]
    assert np.ptp(u) > 0.5  # the runs differ in the pool
    p0, p1 = plain.predict(shallow).p, carried.predict(shallow).p
    centre = _centre(shallow, u, p0)
    assert abs(centre) > 0.01  # the centre is exercised
    moved = 0
    for t, topic in enumerate(shallow.topics):
        horizon = topic_evidence(topic, rrf_offset=3.0).horizon
        weights = _carried_weights(topic, horizon)
        expected = np.where(weights.sum(axis=1) > 0, CARRY * weights @ u - centre, 0.0)
        open_ = ~topic.judged
        gap = logit(p1[t][open_]) - logit(p0[t][open_])
        np.testing.assert_allclose(gap, expected[open_], atol=1e-9)
        np.testing.assert_array_equal(p1[t][topic.judged], p0[t][topic.judged])
        moved += int((np.abs(expected[open_]) > 0.05).sum())
    assert moved > 50


def test_carry_in_the_draws_moves_with_each_draws_run_effects(fitted):
    """Draw by draw the same Laplace θ: the gap below the pool is β w·u_d − c, c the point
    estimate's centre, so over 4,000 draws its mean (within 4 standard errors) is
    β w·û − c and its variance β² wᵀ Σ_u w (Σ_u: the Laplace covariance of
    the run effects), the carried effect's uncertainty in the draws (Monte Carlo tolerance:
    the variance of a variance over 4,000 normal draws has a relative sd of 2.2%; 10%)."""
    shallow, plain, carried = fitted
    s = shallow.n_systems
    u, cov = plain.coef_[-s:], plain.covariance_[-s:, -s:]
    centre = _centre(shallow, u, plain.predict(shallow).p)
    d0, d1 = plain.predict(shallow).draws, carried.predict(shallow).draws
    checked = 0
    for t, topic in enumerate(shallow.topics):
        weights = _carried_weights(topic, topic_evidence(topic, rrf_offset=3.0).horizon)
        open_ = np.flatnonzero(~topic.judged & (weights.sum(axis=1) > 0))[:20]
        gap = logit(np.asarray(d1[t])[:, open_]) - logit(np.asarray(d0[t])[:, open_])
        w = weights[open_]
        variance = CARRY**2 * np.einsum("ij,jk,ik->i", w, cov, w)
        # the mean of 4,000 draws: within 4 of its standard errors
        assert np.all(np.abs(gap.mean(axis=0) - (CARRY * w @ u - centre)) <= 4 * np.sqrt(variance / 4000) + 1e-9)
        np.testing.assert_allclose(gap.var(axis=0), variance, rtol=0.1)
        checked += len(open_)
    assert checked >= 60


def test_carry_must_be_a_finite_number_at_least_zero(fitted):
    shallow = fitted[0]
    with pytest.raises(ValueError, match="beyond_run_carry"):
        Fusion.plug_in(beyond_run_carry=-0.5).fit(shallow)
    with pytest.raises(ValueError, match="beyond_run_carry"):
        Fusion.plug_in(beyond_run_carry=float("inf")).fit(shallow)


def test_carry_spread_is_one_beta_per_draw_shared_by_every_run_and_topic(fitted):
    """beyond_run_carry_sd: the same draws but for one more term, (β_d − β) Σ_j w_ij (û_j − ū)
    on the documents below the pool (ū the runs' mean effect): the gap over w·(û − ū) is one
    number per draw, whatever the document or topic, and over 4,000 draws it has mean 0 and
    sd the setting (Monte Carlo: 4 standard errors; the sd within 5%)."""
    shallow, plain, carried = fitted
    spread = Fusion.plug_in(capture_floor=1.0, beyond_decay=0.6, run_effect_sd=3.0, n_draws=4000,
                            beyond_run_carry=CARRY, beyond_run_carry_sd=0.5).fit(shallow, rng=0)  # fmt: skip
    s = shallow.n_systems
    u = plain.coef_[-s:]
    d1, d2 = carried.predict(shallow).draws, spread.predict(shallow).draws
    ratios = []
    for t, topic in enumerate(shallow.topics):
        weights = _carried_weights(topic, topic_evidence(topic, rrf_offset=3.0).horizon)
        lever = weights @ (u - u.mean())
        open_ = np.flatnonzero(~topic.judged & (np.abs(lever) > 0.3))[:10]
        gap = logit(np.asarray(d2[t])[:, open_]) - logit(np.asarray(d1[t])[:, open_])
        ratios.append(gap / lever[open_])
    beta = np.concatenate(ratios, axis=1)
    assert beta.shape[1] >= 20
    assert np.abs(beta - beta[:, :1]).max() < 1e-6  # one β_d − β per draw
    assert abs(beta[:, 0].mean()) < 4 * 0.5 / np.sqrt(4000)
    assert beta[:, 0].std() == pytest.approx(0.5, rel=0.05)
