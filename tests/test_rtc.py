"""The RTC expert-aggregation model, stage by stage (Carterette 2007 §3; docs/math/rtc.md)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import make_campaign
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from relimpute.relevance import RTC, get_model
from relimpute.relevance.rtc import fit_aggregation, fit_platt, rank_probabilities


def paper(**over):
    """The paper's model (the class defaults) with some parameters changed."""
    return {**RTC().get_params(), **over}


def test_class_defaults_are_the_shipped_settings():
    """One science per name: ``RTC()`` is ``load_model("rtc")`` (models/rtc.json), and
    both are the paper's reading: Eq. 2 without an intercept, Beta(1, 1) weights, no
    opinion from an expert that does not retrieve the document."""
    from relimpute.relevance import load_settings

    params = RTC().get_params()
    assert params == load_settings("rtc").params
    assert (params["aggregate"], params["intercept"], params["unretrieved"]) == ("probability", False, "zero")
    assert (params["weight_prior"], params["weight_alpha"], params["weight_beta"]) == ("beta", 1.0, 1.0)


def _oracle_theta(depth: int, a: float, b: float) -> np.ndarray:
    """Independent solution: the objective written out in numpy, maximised by scipy."""
    i, k = np.triu_indices(depth, 1)

    def negative(theta):
        f = (
            log_expit(theta[i] - theta[k]).sum()
            + (a * log_expit(theta) + b * log_expit(-theta)).sum()
        )
        s = expit(theta[k] - theta[i])  # 1 − σ(θ_i − θ_k)
        g = a * expit(-theta) - b * expit(theta)
        np.add.at(g, i, s)
        np.add.at(g, k, -s)
        return -f, -g

    res = minimize(negative, np.zeros(depth), jac=True, method="L-BFGS-B",
                   options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 10000})  # fmt: skip
    return res.x


@pytest.mark.parametrize(
    "depth, n_rel, n_non", [(1, 0, 0), (2, 1, 0), (7, 0, 3), (30, 4, 9), (150, 2, 20), (150, 3, 20)]
)
def test_rank_probabilities_match_an_independent_optimiser(depth, n_rel, n_non):
    q = rank_probabilities(depth, n_rel, n_non)
    expected = expit(_oracle_theta(depth, n_rel + 1.0, n_non + 1.0))
    # L-BFGS stops at gradient 1e-10 in θ; q is within 1e-6
    np.testing.assert_allclose(q, expected, atol=1e-6)


@pytest.mark.parametrize("depth, n_rel, n_non", [(1, 0, 0), (10, 3, 5), (120, 0, 12), (400, 7, 30)])
def test_rank_probabilities_are_monotone_with_the_prior_mean(depth, n_rel, n_non):
    q = rank_probabilities(depth, n_rel, n_non)
    assert q.shape == (depth,)
    assert (np.diff(q) <= 1e-12).all()
    # summing the stationarity conditions: mean q* = a / (a + b) exactly
    assert q.mean() == pytest.approx((n_rel + 1) / (n_rel + n_non + 2), abs=1e-9)
    assert not q.flags.writeable


def test_rank_probabilities_concentrate_at_the_share_relevant():
    # as the prior strengthens: every rank at (|R|+1)/(|R|+|N|+2)
    spread = [np.ptp(rank_probabilities(20, 3, 7, prior_strength=s)) for s in (1, 10, 100, 1000)]
    assert all(a > b for a, b in itertools.pairwise(spread))
    np.testing.assert_allclose(rank_probabilities(20, 3, 7, prior_strength=1e4), 4 / 12, atol=2e-3)
    # for large counts: |R| / (|R| + |N|)
    np.testing.assert_allclose(rank_probabilities(20, 3000, 7000), 0.3, atol=2e-3)


def test_rank_probabilities_validate():
    with pytest.raises(ValueError):
        rank_probabilities(5, -1, 0)
    with pytest.raises(ValueError):
        rank_probabilities(5, 1, 1, prior_strength=0)
    assert rank_probabilities(0, 1, 1).shape == (0,)


def test_platt_recovers_known_calibrations(rng):
    truth = np.array([[-2.0, 3.0], [0.5, -1.0], [-1.0, 1.5]])
    n = 20_000
    group = np.repeat(np.arange(3), n)
    x = rng.random(3 * n)
    y = rng.random(3 * n) < expit(truth[group, 0] + truth[group, 1] * x)
    coef = fit_platt(x, y, group, 4, precision=0.0, targets=False)
    # standard errors are about 0.03-0.06 at n = 20,000: 0.2 is > 3 SE
    np.testing.assert_allclose(coef[:3], truth, atol=0.2)
    # a group with no data gets the prior mean
    np.testing.assert_allclose(coef[3], [0.0, 0.0])


def test_platt_is_sane_with_one_class_or_one_point():
    # all nonrelevant, and a single judged document: finite, low / near the pooled value
    x = np.array([0.9, 0.8, 0.2, 0.5])
    y = np.array([False, False, False, True])
    group = np.array([0, 0, 0, 1])
    coef = fit_platt(x, y, group, 2, prior_mean=(-1.0, 2.0), precision=1.0)
    assert np.isfinite(coef).all()
    assert (expit(coef[0, 0] + coef[0, 1] * x[:3]) < 0.5).all()
    assert np.abs(coef[1] - [-1.0, 2.0]).max() < 1.5


def test_aggregation_recovers_known_weights(rng):
    n = 20_000
    q = rng.random((n, 3))
    truth = np.array([2.0, -1.0, 0.5])
    y = rng.random(n) < expit(q @ truth - 1.0)
    w, b0 = fit_aggregation(q, y, prior="gaussian", scale=100.0, intercept=True)
    np.testing.assert_allclose(w, truth, atol=0.25)
    assert b0 == pytest.approx(-1.0, abs=0.25)
    # the paper's form (no intercept, beta prior) fits the same data without one
    w0, b_none = fit_aggregation(q, y)
    assert b_none == 0.0 and np.isfinite(w0).all()


def test_beta_density_on_the_weights_is_a_box_constrained_fit(rng):
    """``prior="beta_weight"``: Beta(α, β) on λ itself (the literal reading of §3.1).

    Oracle: the log posterior on a fine grid over [0, 1]²; every weight stays in [0, 1],
    and with no intercept and q ≥ 0 every p is then at least ½.
    """
    q = rng.random((400, 2))
    y = rng.random(400) < expit(q @ np.array([3.0, -2.0]) - 0.5)  # unconstrained optimum outside
    for alpha, beta in [(1.0, 1.0), (2.0, 3.0)]:
        w, b0 = fit_aggregation(q, y, prior="beta_weight", alpha=alpha, beta=beta)
        grid = np.linspace(1e-4, 1 - 1e-4, 401)
        l1, l2 = np.meshgrid(grid, grid, indexing="ij")
        z = q[:, :1, None] * l1.ravel() + q[:, 1:, None] * l2.ravel()
        z = z[:, 0, :]
        ll = (y[:, None] * np.log(expit(z)) + (~y)[:, None] * np.log(expit(-z))).sum(axis=0)
        lam = np.stack([l1.ravel(), l2.ravel()])
        ll += ((alpha - 1) * np.log(lam) + (beta - 1) * np.log1p(-lam)).sum(axis=0)
        best = lam[:, np.argmax(ll)]
        assert b0 == 0.0 and ((w >= 0) & (w <= 1)).all()
        np.testing.assert_allclose(w, best, atol=5e-3)  # grid step 2.5e-3
        assert (expit(q @ w) >= 0.5).all()


def test_aggregation_without_data_is_the_prior_mode():
    w, b0 = fit_aggregation(np.zeros((0, 4)), np.zeros(0), intercept=True)
    np.testing.assert_allclose(w, 0.0, atol=1e-9)
    assert b0 == pytest.approx(0.0, abs=1e-9)


def test_aggregation_validates():
    with pytest.raises(ValueError, match="prior"):
        fit_aggregation(np.zeros((1, 1)), np.zeros(1), prior="laplace")
    with pytest.raises(ValueError, match="alpha"):
        fit_aggregation(np.zeros((1, 1)), np.zeros(1), alpha=0)


@pytest.mark.parametrize(
    "params",
    [
        {"unretrieved": "sometimes"},
        {"max_rank": 0},
        {"prior_strength": -1},
        {"calibration_shrinkage": -1},
        {"platt_feature": "score"},
        {"aggregate": "mean"},
    ],
)
def test_model_validates_hyper_parameters(params, dl19_small):
    with pytest.raises(ValueError):
        RTC(**params).fit(dl19_small)


@pytest.fixture(scope="module")
def dl19_small(dl19):
    """DL 2019 at depth 20 with the depth-2 pool judged: a quick real campaign."""
    keep = []
    for t in dl19.topics:
        top = t.ranking[:, :2]
        pooled = np.zeros(t.n_docs, dtype=bool)
        pooled[top[top >= 0]] = True
        keep.append(t.judged & pooled)
    return dl19.with_judged(keep)


def test_rtc_on_dl19_ranks_by_expert_agreement(dl19_small):
    model = get_model("rtc", **paper(max_rank=20)).fit(dl19_small, rng=0)
    est = model.predict(dl19_small)
    # 37 experts, each calibrated; stage 3 uses every judged document
    assert model.calibration_.shape == (37, 2)
    assert model.n_judged_ == sum(int(t.judged.sum()) for t in dl19_small.topics)
    # documents retrieved (within depth 20) by more experts get higher p on average
    for topic, p in zip(dl19_small.topics[:5], est.p):
        votes = np.zeros(topic.n_docs)
        rows = topic.ranking[:, :20]
        np.add.at(votes, rows[rows >= 0], 1)
        unjudged = ~topic.judged
        many = unjudged & (votes >= 20)
        few = unjudged & (votes >= 1) & (votes <= 2)
        if many.any() and few.any():
            assert p[many].mean() > p[few].mean()
    # documents beyond max_rank of every run count as not retrieved: p = σ(0)
    t0 = dl19_small.topics[0]
    deep = np.ones(t0.n_docs, dtype=bool)
    deep[t0.ranking[:, :20][t0.ranking[:, :20] >= 0]] = False
    deep &= ~t0.judged
    np.testing.assert_allclose(est.p[0][deep], 0.5)


def test_options_change_the_fit_as_documented(dl19_small):
    base = get_model("rtc", **paper(max_rank=20)).fit(dl19_small)
    with_intercept = get_model("rtc", **paper(max_rank=20, intercept=True)).fit(dl19_small)
    assert base.intercept_ == 0.0 and with_intercept.intercept_ < 0
    calibrated = get_model("rtc", **paper(max_rank=20, unretrieved="calibrated")).fit(dl19_small)
    p = calibrated.predict(dl19_small).p[0]
    t0 = dl19_small.topics[0]
    # the evidence of not retrieving moves the predictions
    assert not np.allclose(p, base.predict(dl19_small).p[0])
    assert np.isfinite(p).all() and t0.n_docs == p.size


def test_no_judgments_at_all_gives_one_half(dl19_small):
    nothing = dl19_small.with_judged([np.zeros(t.n_docs, dtype=bool) for t in dl19_small.topics])
    model = get_model("rtc", **paper(max_rank=20)).fit(nothing)
    assert model.n_judged_ == 0
    np.testing.assert_allclose(model.calibration_, 0.0, atol=1e-6)
    for p in model.predict(nothing).p:
        np.testing.assert_allclose(p, 0.5, atol=1e-9)


def test_unknown_systems_give_no_opinion(dl19_small):
    model = get_model("rtc", **paper(max_rank=20)).fit(dl19_small.subset(dl19_small.systems[:20]))
    est = model.predict(dl19_small)  # 17 systems the fit never saw
    only = dl19_small.subset(dl19_small.systems[:20])
    for a, b in zip(est.p[:3], model.predict(only).p[:3]):
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_unretrieved_documents_give_no_opinion():
    # hand-made: q*(∞) = 0, so an expert that does not retrieve a document adds nothing
    campaign, doc_ids = _hand_made()
    model = get_model("rtc", **paper(intercept=True)).fit(campaign)
    p = dict(zip(doc_ids, model.predict(campaign).p[0]))
    q = rank_probabilities(4, 2, 2)
    (a_a, b_a), (a_b, b_b) = model.calibration_
    w_a, w_b = model.weights_
    b0 = model.intercept_
    assert p["z"] == pytest.approx(expit(b0), abs=1e-12)  # nobody retrieves z
    assert p["x"] == pytest.approx(expit(b0 + w_a * expit(a_a + b_a * q[2])), abs=1e-12)
    assert p["y"] == pytest.approx(expit(b0 + w_b * expit(a_b + b_b * q[2])), abs=1e-12)


def _hand_made():
    qrels = [("q", "a", 1), ("q", "b", 0), ("q", "c", 1), ("q", "d", 0), ("q", "z", 0)]
    campaign = make_campaign(qrels, {"A": list("abxd"), "B": list("cayb")}, hidden=[("q", "z")])
    return campaign, campaign.topics[0].doc_ids


@pytest.mark.parametrize("unretrieved", ["zero", "calibrated"])
@pytest.mark.parametrize("feature", ["qstar", "log_rank"])
def test_log_rank_feature_and_logit_aggregation_by_hand(feature, unretrieved):
    # x: rank 3 in A only; y: rank 3 in B only; z: retrieved by nobody
    campaign, docs = _hand_made()
    model = get_model(
        "rtc", intercept=True, platt_feature=feature, aggregate="logit", unretrieved=unretrieved
    ).fit(campaign)
    p = dict(zip(docs, model.predict(campaign).p[0]))
    x3 = rank_probabilities(4, 2, 2)[2] if feature == "qstar" else np.log(5) - np.log(3)
    assert feature == "qstar" or model.feature_depth_ == 4
    (a_a, b_a), (a_b, b_b) = model.calibration_
    w_a, w_b = model.weights_
    b0 = model.intercept_
    # logit aggregation: the calibrated log-odds A_j + B_j x enter linearly;
    # a non-retrieving expert says A_j ("calibrated") or nothing ("zero")
    base_a, base_b = (a_a, a_b) if unretrieved == "calibrated" else (0.0, 0.0)
    assert p["z"] == pytest.approx(expit(b0 + w_a * base_a + w_b * base_b), abs=1e-12)
    assert p["x"] == pytest.approx(expit(b0 + w_a * (a_a + b_a * x3) + w_b * base_b), abs=1e-12)
    assert p["y"] == pytest.approx(expit(b0 + w_a * base_a + w_b * (a_b + b_b * x3)), abs=1e-12)


def test_log_rank_calibration_decays_with_rank(dl19_small):
    # Platt on log rank learns that deeper is less likely relevant: B > 0 pooled
    # and for most experts (33 of 37 with the depth-2 pool judged)
    model = get_model("rtc", **paper(max_rank=20, platt_feature="log_rank")).fit(dl19_small)
    assert model.feature_depth_ == 20
    assert model.pooled_calibration_[1] > 0
    assert np.mean(model.calibration_[:, 1] > 0) > 0.75


def test_posterior_confidence_refines_only_near_the_target():
    """The quick Monte Carlo stands only when every pair is clearly below the stopping
    confidence (4 standard errors and 0.02); at or near it, all the draws decide."""
    from relimpute.selection.rtc import _clearly_below

    assert _clearly_below(np.array([0.3, 0.7]), 1000, 0.95)  # confidence 0.7: far below
    assert not _clearly_below(np.array([0.3, 0.93]), 1000, 0.95)  # one pair near 0.95
    assert not _clearly_below(np.array([0.02]), 1000, 0.95)  # confidence 0.98: decided
    # the margin shrinks with more draws: 0.90 is near 0.95 at 100 draws, clear at 10,000
    assert not _clearly_below(np.array([0.90]), 100, 0.95)
    assert _clearly_below(np.array([0.90]), 10_000, 0.95)
