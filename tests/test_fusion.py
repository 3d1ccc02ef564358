"""The rank-fusion relevance model: its optimiser, its pool horizon, its capture adjustment,
and the believability checks of the default answer on DL 2019."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import make_campaign
from scipy.optimize import minimize
from scipy.special import log_expit
from scipy.stats import kendalltau

from relimpute.confidence import ConfidenceEngine
from relimpute.measures import evaluate
from relimpute.relevance import DEFAULT_MODEL, Fusion, load_model
from relimpute.relevance.fusion import (
    SPREAD_RATIO,
    capture_factors,
    judged_prefixes,
    pool_depth,
    topic_evidence,
)
from relimpute.relevance.fusion.evidence import fit_mask
from relimpute.relevance.fusion.model import _fit_logistic
from relimpute.simulate import simulate_campaign

PRIORS = dict(intercept_sd=1.5, mean_prior=(-2.0, 3.0), weight_sd=2.0)


def _negative_log_posterior(theta, z, y, topic, n_topics, w_mean=np.zeros(3)):
    k = z.shape[1]
    w, mu, alpha = theta[:k], theta[k], theta[k + 1 :]
    eta = alpha[topic] + z @ w
    ll = y @ log_expit(eta) + (1 - y) @ log_expit(-eta)
    prior = (
        ((alpha - mu) ** 2).sum() / (2 * PRIORS["intercept_sd"] ** 2)
        + (mu - PRIORS["mean_prior"][0]) ** 2 / (2 * PRIORS["mean_prior"][1] ** 2)
        + ((w - w_mean) ** 2).sum() / (2 * PRIORS["weight_sd"] ** 2)
    )
    return -(ll - prior)


@pytest.mark.parametrize("weight_mean", [(0.0, 0.0, 0.0), (0.8, -0.4, 1.5)])
def test_fit_logistic_matches_a_generic_optimiser_and_a_numerical_hessian(rng, weight_mean):
    """The Newton fit and the prior of Fusion against BFGS on the log posterior written
    out by hand, and the Laplace covariance against a finite-difference Hessian. The prior
    mean of w is given per raw feature unit: on standardised features it is mean · scale."""
    n, n_topics = 400, 4
    z = rng.normal(size=(n, 3))
    topic = rng.integers(n_topics, size=n)
    eta = np.array([-1.0, 0.0, 0.5, -2.0])[topic] + z @ np.array([1.0, -0.5, 0.2])
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    model = Fusion.plug_in(**PRIORS, weight_mean=weight_mean)
    model.systems_ = ()
    model.feature_scale_ = np.array([0.5, 2.0, 1.25])
    w_mean = np.asarray(weight_mean) * model.feature_scale_
    prec, shift = model._prior(n_topics)
    design = np.column_stack([z, np.zeros(n), np.eye(n_topics)[topic]])
    start = np.r_[np.zeros(3), np.full(n_topics + 1, -2.0)]
    theta, posterior = _fit_logistic(design, y, prec, shift, start)
    cov = posterior.covariance()  # the arrowhead precision's inverse, dense
    f = lambda t: _negative_log_posterior(t, z, y, topic, n_topics, w_mean)  # noqa: E731
    reference = minimize(f, np.zeros(len(theta)), method="BFGS", options={"gtol": 1e-9}).x
    np.testing.assert_allclose(theta, reference, atol=1e-4)
    # Laplace covariance = inverse of the numerical Hessian of the negative log posterior
    h, eye = 1e-4, np.eye(len(theta))
    hess = np.array(
        [
            [
                (f(theta + h * eye[i] + h * eye[j]) - f(theta + h * eye[i] - h * eye[j])
                 - f(theta - h * eye[i] + h * eye[j]) + f(theta - h * eye[i] - h * eye[j]))
                / (4 * h * h)
                for j in range(len(theta))
            ]
            for i in range(len(theta))
        ]
    )  # fmt: skip
    np.testing.assert_allclose(cov, np.linalg.inv(hess), rtol=1e-3, atol=1e-6)


def _one_topic_campaign(judged_docs):
    """Three runs over documents a..h; ``judged_docs`` get labels (a, b relevant)."""
    runs = {"A": list("abcdef"), "B": list("bacdgh"), "C": list("xyz")}
    return make_campaign([("q", d, int(d in "ab")) for d in judged_docs], runs)


def test_judged_prefixes_and_pool_depth():
    campaign = _one_topic_campaign("abcd" + "g")
    topic = campaign.topics[0]
    # A: a b c d judged, e not -> 4; B: b a c d g judged, h not -> 5; C: x unjudged -> 0
    assert judged_prefixes(topic).tolist() == [4, 5, 0]
    # C is a run left out of the pool (short prefix), B's extra judgment is beyond the pool
    assert pool_depth(np.array([4, 5, 0])) == 4
    assert pool_depth(np.array([10, 10, 12, 17, 11, 2, 1])) == 10
    assert pool_depth(np.array([], dtype=int)) == 0
    ev = topic_evidence(topic, rrf_offset=3.0)
    within = set(topic.doc_ids[ev.within])
    assert within == set("abcd")  # g is judged but beyond the pool depth of 4
    assert ev.best_rank[list(topic.doc_ids).index("x")] == 1.0


def test_capture_factor_is_identity_without_judgments_beyond_the_pool():
    p = [np.array([0.2, 0.1, 0.05, 0.3])]
    bins = [np.array([0, 0, 1, 1])]
    outside = [np.array([False, True, True, True])]
    judged = [np.array([True, False, False, False])]
    relevant = [np.array([True, False, False, False])]
    factor = capture_factors(p, bins, outside, judged, relevant, 2, floor=0.1)
    np.testing.assert_array_equal(factor, [1.0, 1.0])


def test_capture_factor_shares_what_judging_did_not_find():
    # group 0: expected 0.5 + 0.5 + 1.0 = 2.0 relevant; judging found 1 among the first two
    p = [np.array([0.5, 0.5, 0.5, 0.5])]
    bins = [np.array([0, 0, 0, 0])]
    outside = [np.ones(4, bool)]
    judged = [np.array([True, True, False, False])]
    relevant = [np.array([True, False, False, False])]
    factor = capture_factors(p, bins, outside, judged, relevant, 1, floor=0.1)
    assert factor[0] == pytest.approx((2.0 - 1.0) / 1.0)
    # judging found both: the unjudged keep only the floor
    relevant = [np.array([True, True, False, False])]
    assert capture_factors(p, bins, outside, judged, relevant, 1, floor=0.1)[0] == pytest.approx(0.1)


def test_fit_on_a_depth_k_pool_predicts_relevant_counts_below_it():
    """Simulated campaign: the expected number of relevant documents among those the runs
    retrieve, judging only the depth-10 pool, is of the right size (within a factor 2 overall;
    it is about 0.6: the simulator keeps more relevant documents deep than real pools do)."""
    sim = simulate_campaign(n_topics=20, n_systems=15, depth=100, rng=3)
    full = sim.campaign
    shallow = full.pooled(10)
    estimate = Fusion.plug_in().fit_predict(shallow, rng=0)
    retrieved = [t.retrieved() for t in full.topics]
    truth = sum(int(r[m].sum()) for r, m in zip(full.relevant(), retrieved))
    expected = sum(float(p[m].sum()) for p, m in zip(estimate.p, retrieved))
    assert 0.5 < expected / truth < 2.0


def test_predict_after_fit_reuses_the_fits_evidence_and_designs_with_the_same_answer(monkeypatch):
    """``fit`` then ``predict`` on one campaign builds each topic's evidence and design once;
    the answer is that of a model predicting from them built anew; pickling drops the kept evidence,
    and another campaign gets its own."""
    import pickle

    import relimpute.relevance.fusion.model as fusion

    sim = simulate_campaign(n_topics=6, n_systems=5, depth=30, rng=4).campaign.pooled(5)
    calls = []
    monkeypatch.setattr(fusion, "topic_evidence", lambda t, o: calls.append(t) or topic_evidence(t, o))
    model = Fusion.plug_in(n_draws=5).fit(sim, rng=0)
    # the fit learnt from its rows of the kept designs: those of designs built for its rows alone
    _, _, evidence, designs = model._fit_evidence
    masks = [fit_mask(t, ev) for t, ev in zip(sim.topics, evidence)]
    for whole, alone, m in zip(designs, model._designs(sim, evidence, masks), masks):
        assert m.any() and not m.all()
        for name in ("indptr", "indices", "data"):
            np.testing.assert_array_equal(getattr(whole[m], name), getattr(alone, name))
    assert len(pickle.loads(pickle.dumps(model)).__dict__.get("_fit_evidence", ())) == 0
    kept = model.predict(sim)
    assert len(calls) == sim.n_topics  # built by fit only
    fresh = pickle.loads(pickle.dumps(model)).predict(sim)  # no kept evidence: built anew
    assert len(calls) == 2 * sim.n_topics
    for a, b, da, db in zip(kept.p, fresh.p, kept.draws, fresh.draws):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(da, db)
    other = sim.pooled(3)
    model.fit(sim, rng=0).predict(other)  # not the fitted campaign: its own evidence
    assert calls[-other.n_topics :] == list(other.topics)


def test_draws_carry_parameter_uncertainty(dl19):
    five = dl19.subset(topics=dl19.query_ids[:5])
    estimate = Fusion.plug_in(n_draws=50).fit_predict(five, rng=1)
    assert estimate.n_draws == 50
    for p, d, judged in zip(estimate.p, estimate.draws, (t.judged for t in dl19.topics[:5])):
        assert d.shape == (50, len(p))
        np.testing.assert_array_equal(d[:, judged], np.broadcast_to(p[judged], d[:, judged].shape))
        spread = d[:, ~judged].std(axis=0)
        assert spread.max() > 0  # the parameters are uncertain
        # the point estimate sits inside the draws' range
        assert np.all(p[~judged] <= d[:, ~judged].max(axis=0) + 1e-12)
        assert np.all(p[~judged] >= d[:, ~judged].min(axis=0) - 1e-12)


def test_default_model_is_fusion():
    assert DEFAULT_MODEL == "fusion"
    assert isinstance(load_model(), Fusion)


def test_default_answer_agrees_with_trec_eval_on_nearly_complete_qrels(dl19, dl19_dir):
    """Issue 'believable estimates', point 2, on DL 2019: tau >= 0.9 against official MAP and
    no pair with |official dMAP| > 0.05 called the wrong way at P >= 0.9."""
    estimate = load_model().fit_predict(dl19, rng=0)
    result = ConfidenceEngine().confidence(dl19, estimate, method="normal")
    official = (
        evaluate(dl19, ["AP"], missing="zero").set_index("system")["value"]
    )
    e_map = pd.Series(result.scores.e_map, index=result.scores.systems)
    assert kendalltau(e_map, official[e_map.index]).statistic >= 0.9
    pairs = result.to_frame()
    delta = official[pairs.system_a].to_numpy() - official[pairs.system_b].to_numpy()
    p = pairs.p_a_better.to_numpy()
    wrong = (np.abs(delta) > 0.05) & (((delta > 0) & (p <= 0.1)) | ((delta < 0) & (p >= 0.9)))
    assert wrong.sum() == 0


def test_run_effects_keep_the_prior_spread_for_runs_with_little_judged_evidence():
    """Runs outside the pool have few judged documents of their own: their effect stays
    uncertain (posterior sd near the prior's), the pooled runs' effects are pinned down."""
    sim = simulate_campaign(n_topics=15, n_systems=10, depth=50, rng=4)
    pooled = list(sim.campaign.systems[:5])
    shallow = sim.campaign.pooled(10, pooled)
    model = Fusion.plug_in(run_effect_sd=3.0).fit(shallow, rng=0)
    assert model.systems_ == tuple(shallow.systems)
    u_sd = np.sqrt(np.diag(model.covariance_))[-len(model.systems_) :]
    inside = u_sd[: len(pooled)]
    outside = u_sd[len(pooled) :]
    assert np.all(u_sd <= 3.0 + 1e-9)
    assert outside.mean() > 1.5 * inside.mean()
    estimate = model.predict(shallow)
    assert "run_effects" in estimate.params and len(estimate.params["run_effects"]) == 10


def test_beyond_decay_lowers_the_odds_by_the_rank_ratio_below_the_pool_only():
    """γ = beyond_decay multiplies the odds of a document whose best rank b lies below the
    pool depth k_t by (b / k_t)^-γ, leaves the pool alone, and γ = 0 changes nothing."""
    sim = simulate_campaign(n_topics=6, n_systems=8, depth=60, rng=5)
    shallow = sim.campaign.pooled(5)
    plain = Fusion.plug_in(capture_floor=1.0).fit_predict(shallow, rng=0)
    decayed = Fusion.plug_in(capture_floor=1.0, beyond_decay=0.7).fit_predict(shallow, rng=0)
    checked = 0
    for topic, p0, p1 in zip(shallow.topics, plain.p, decayed.p):
        ev = topic_evidence(topic, rrf_offset=3.0)
        unjudged = ~topic.judged
        best = np.where(np.isfinite(ev.best_rank), ev.best_rank, topic.ranking.shape[1] + 1)
        ratio = np.maximum(best / max(ev.horizon, 1), 1.0)
        q0, q1 = p0[unjudged], p1[unjudged]
        np.testing.assert_allclose(q1 / (1 - q1), q0 / (1 - q0) * ratio[unjudged] ** -0.7, rtol=1e-9)
        np.testing.assert_array_equal(p1[topic.judged], p0[topic.judged])
        checked += int((ratio[unjudged] > 1).sum())
    assert checked > 100  # the decay was exercised
    with pytest.raises(ValueError, match="beyond_decay"):
        Fusion.plug_in(beyond_decay=-0.1).fit(shallow)


def test_below_pool_spreads_move_only_the_draws_below_the_pool_as_specified():
    """Same Laplace draws with and without the spreads: the log-odds of draw d differ by
    -(γ_d - γ) min(log(b / k_t), log 10) (γ_d stratified N(γ, s²), negative draws kept) plus Σ_j v_j / log2(1 + r_ij) over
    the runs ranking the document below k_t (v_j ~ N(0, σ_v²), one per run and draw,
    shared by every topic); documents within the pool are untouched."""
    from scipy.special import logit

    sim = simulate_campaign(n_topics=6, n_systems=8, depth=60, rng=5)
    shallow = sim.campaign.pooled(5)
    common = dict(capture_floor=1.0, beyond_decay=0.6, n_draws=400)
    plain = Fusion.plug_in(**common).fit_predict(shallow, rng=0)
    spread_gamma = Fusion.plug_in(**common, beyond_decay_sd=1.0).fit_predict(shallow, rng=0)
    spread_runs = Fusion.plug_in(**common, beyond_run_sd=2.0).fit_predict(shallow, rng=0)
    gammas, effects = [], []
    draws = zip(shallow.topics, plain.draws, spread_gamma.draws, spread_runs.draws)
    for topic, d0, d1, d2 in draws:
        ev = topic_evidence(topic, rrf_offset=3.0)
        unjudged = ~topic.judged
        excess = np.maximum(ev.features[:, 2] - np.log(max(ev.horizon, 1)), 0.0)
        inside = unjudged & (excess == 0)
        np.testing.assert_array_equal(d1[:, inside], d0[:, inside])
        np.testing.assert_array_equal(d2[:, inside], d0[:, inside])
        below = unjudged & (excess > 0)
        gap = logit(d0[:, below]) - logit(d1[:, below])  # (γ_d - γ) · min(excess, log 10)
        gammas.append(gap / np.minimum(excess[below], np.log(SPREAD_RATIO)))
        effects.append((ev, logit(d2[:, below]) - logit(d0[:, below]), np.flatnonzero(below)))
    gamma_d = np.concatenate(gammas, axis=1)
    assert np.abs(gamma_d - gamma_d[:, :1]).max() < 1e-9  # one γ_d per draw
    assert gamma_d[:, 0].mean() == pytest.approx(0.0, abs=1e-3)
    assert gamma_d[:, 0].std() == pytest.approx(1.0, rel=0.02)
    assert (gamma_d[:, 0] < -0.6).mean() == pytest.approx(0.274, abs=0.01)  # γ_d < 0: not cut at 0
    per_run = {}
    for ev, gap, below in effects:
        # a document only one run retrieves, below the pool: the gap is v_j times its vote
        for column, doc in enumerate(below):
            if ev.votes.indptr[doc + 1] - ev.votes.indptr[doc] == 1:
                run = int(ev.votes.indices[ev.votes.indptr[doc]])
                per_run.setdefault(run, []).append(gap[:, column] / ev.votes[doc, run])
    assert len(per_run) >= 4
    for run, values in per_run.items():
        values = np.array(values)
        assert np.abs(values - values[:1]).max() < 1e-9  # v_j shared by topics
        assert values[0].std() == pytest.approx(2.0, rel=0.2)
    with pytest.raises(ValueError, match="beyond_run_sd"):
        Fusion.plug_in(beyond_run_sd=float("nan")).fit(shallow)


def test_weight_prior_decides_the_consensus_direction_when_nothing_is_judged():
    """With no judged document the posterior of w is its prior: the mode is weight_mean
    (features unstandardised), so documents the runs agree on rank above the rest; with a
    zero mean the model has no preference and every unjudged document gets one probability."""
    sim = simulate_campaign(n_topics=4, n_systems=6, depth=30, rng=2)
    empty = sim.campaign.with_judged([np.zeros_like(t.judged) for t in sim.campaign.topics])
    mean = (0.5, 0.3, -0.2)
    model = Fusion.plug_in(weight_mean=mean).fit(empty, rng=0)
    np.testing.assert_allclose(model.coef_[:3], mean, atol=1e-8)
    np.testing.assert_allclose(model.feature_scale_, 1.0)
    estimate = model.predict(empty)
    for topic, p in zip(empty.topics, estimate.p):
        top = topic.ranking[:, 0][topic.ranking[:, 0] >= 0]
        assert p[top].mean() > p.mean()
    flat = Fusion.plug_in().fit_predict(empty, rng=0)
    for p in flat.p:
        np.testing.assert_allclose(p, p[0], rtol=1e-9)
    with pytest.raises(ValueError, match="weight_mean"):
        Fusion.plug_in(weight_mean=(1.0, 2.0)).fit(empty)
