"""FusionLLM: label error learned from the judgments, oracle on simulated labels."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pandas as pd
import pytest

from relimpute.labels import read_labels, with_labels
from relimpute.relevance import FusionLLM, Fusion
from relimpute.simulate import simulate_campaign

#: P(label = v | relevant) and P(label = v | not relevant) of the simulated labeller
GIVEN_RELEVANT = np.array([0.1, 0.2, 0.3, 0.4])
GIVEN_NOT = np.array([0.6, 0.25, 0.1, 0.05])


def _labels(campaign, rng, share: float = 1.0):
    """Labels drawn from the truth with the confusion rates above, for ``share`` of the documents."""
    rows = []
    for topic, relevant in zip(campaign.topics, campaign.relevant()):
        u = rng.random(topic.n_docs)
        rates = np.where(relevant[:, None], GIVEN_RELEVANT, GIVEN_NOT).cumsum(axis=1)
        label = np.minimum((u[:, None] > rates).sum(axis=1), 3)
        keep = rng.random(topic.n_docs) < share
        rows.append(pd.DataFrame({"query_id": topic.query_id, "doc_id": topic.doc_ids[keep],
                                  "relevance": label[keep]}))  # fmt: skip
    return read_labels(pd.concat(rows, ignore_index=True), name="sim")


#: the independent combination (runs' log-odds at full weight, w = 1) with every unlabelled
#: document keeping the runs' evidence: what these tests check (the defaults take the labels'
#: documents as the pool and weigh the runs by 0.5)
INDEPENDENT = {"unlabelled": "runs", "runs_weight": 1.0}


@pytest.fixture(scope="module")
def simulated():
    truth = simulate_campaign(n_topics=30, n_systems=10, rng=3).campaign
    source = _labels(truth, np.random.default_rng(3), share=0.7)
    judged = with_labels(truth.pooled(20), [source])
    model = FusionLLM(fusion={"n_draws": 20}, **INDEPENDENT).fit(judged, rng=0)
    return truth, judged, source, model, model.predict(judged)


def test_the_fitted_label_shifts_recover_the_likelihood_ratios(simulated):
    """Bayes: with labels independent of the runs given relevance, label v moves the log-odds
    by log P(v | rel) / P(v | not rel); the fit recovers it within 3 posterior sd (and 0.6)."""
    _, _, _, model, _ = simulated
    beta, sd = model.coef_[:4], np.sqrt(np.diag(model.covariance_)[:4])
    truth = np.log(GIVEN_RELEVANT / GIVEN_NOT)
    assert model.n_fit_ > 1000
    assert np.all(np.abs(beta - truth) <= np.minimum(3 * sd, 0.6)), (beta, truth, sd)


def test_unlabelled_documents_keep_the_default_models_probability(simulated):
    _, judged, source, model, estimate = simulated
    plain = Fusion(n_draws=20).fit(judged, rng=0).predict(judged)
    codes = source.align(judged)
    for p, q, c in zip(estimate.p, plain.p, codes):
        np.testing.assert_allclose(p[c < 0], q[c < 0], rtol=1e-12)
        assert not np.allclose(p[c >= 0], q[c >= 0])  # the labels moved the others


def test_a_label_never_overrules_a_judgment(simulated):
    _, judged, _, _, estimate = simulated
    for topic, relevant, p, d in zip(judged.topics, judged.relevant(), estimate.p, estimate.draws):
        np.testing.assert_array_equal(p[topic.judged], relevant[topic.judged])
        np.testing.assert_array_equal(d[:, topic.judged], np.broadcast_to(relevant[topic.judged], d[:, topic.judged].shape))


def test_draws_carry_the_label_uncertainty(simulated):
    _, judged, source, model, estimate = simulated
    assert estimate.n_draws == 20
    fewer = FusionLLM(fusion={"n_draws": 20}, label_sd=2.0)
    # the same campaign with a tenth of the judged documents: the shifts are less sure
    sparse = judged.with_judged([t.judged & (np.arange(t.n_docs) % 10 == 0) for t in judged.topics])
    fewer.fit(sparse, rng=0)
    assert np.diag(fewer.covariance_)[:4].mean() > 2 * np.diag(model.covariance_)[:4].mean()
    draws = estimate.draws[0]
    labelled = source.align(judged)[0] >= 0
    assert draws.shape == (20, judged.topics[0].n_docs)
    assert np.ptp(draws[:, labelled & ~judged.topics[0].judged], axis=0).max() > 0


def test_without_labels_it_is_the_default_model(simulated):
    _, judged, _, _, _ = simulated
    bare = simulate_campaign(n_topics=5, n_systems=6, rng=1).campaign.pooled(10)
    a = FusionLLM(fusion={"n_draws": 0}).fit_predict(bare, rng=2)
    b = Fusion(n_draws=0).fit_predict(bare, rng=2)
    for x, y in zip(a.p, b.p):
        np.testing.assert_array_equal(x, y)


def test_pickle_and_a_campaign_without_the_source(simulated):
    _, judged, _, model, estimate = simulated
    clone = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(clone.predict(judged).p[3], estimate.p[3])
    with pytest.raises(ValueError, match="lacks the label source"):
        clone.predict(dataclasses.replace(judged, labels=()))


def test_the_offset_fit_recovers_a_known_runs_weight():
    """Oracle on simulated data: logit P(y) = (1 + λ) η + β_v with λ = -0.4 and known β; the
    fit (η as offset and as λ's column) recovers λ and β within 3 posterior sd."""
    from scipy.special import expit
    import scipy.sparse as sp

    from relimpute.relevance.offset_logistic import fit_offset_logistic

    rng = np.random.default_rng(7)
    n, beta, lam = 20_000, np.array([-2.0, -0.5, 1.0, 2.0]), -0.4
    eta, v = rng.normal(-1.0, 2.0, n), rng.integers(0, 4, n)
    y = (rng.random(n) < expit((1 + lam) * eta + beta[v])).astype(float)
    design = sp.hstack([sp.csr_matrix((np.ones(n), (np.arange(n), v)), shape=(n, 4)),
                        sp.csr_matrix(eta[:, None])], format="csr")  # fmt: skip
    theta, cov = fit_offset_logistic(design, y, eta, np.full(5, 1e-2))
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(theta - np.append(beta, lam)) <= 3 * sd), (theta, sd)
    assert sd[-1] < 0.05


def test_runs_weight_is_zero_when_the_labels_ignore_the_runs(simulated):
    """The simulated labeller reads only the truth, so once a label is known the runs' log-odds
    keep their weight: λ within 3 sd of 0; held at 0 (the default) it is the model without λ."""
    _, judged, _, model, estimate = simulated
    free = FusionLLM(fusion={"n_draws": 20}, runs_weight_sd=1.0, **INDEPENDENT).fit(judged, rng=0)
    lam, sd = free.coef_[-1], np.sqrt(free.covariance_[-1, -1])
    assert abs(lam) <= 3 * sd and sd < 0.3, (lam, sd)
    assert abs(model.coef_[-1]) < 1e-6 and estimate.params["runs_weight_change"] == pytest.approx(0, abs=1e-6)


def test_runs_weight_is_negative_when_the_labels_read_the_runs(simulated):
    """A labeller that, given relevance, labels the documents the runs rank high higher (as an
    LLM reads the same match of query and text the runs do) repeats the runs' evidence: the
    runs' log-odds must count for less on a labelled document, λ < 0 (3 sd clear of 0), and its
    draws carry λ's uncertainty."""
    truth, judged, _, _, _ = simulated
    pooled = truth.pooled(20)
    runs_p = Fusion(n_draws=0).fit(pooled, rng=0)._predict(pooled)[0]  # the runs' p, judged or not
    rng = np.random.default_rng(5)
    rows = []
    for topic, relevant, p in zip(truth.topics, truth.relevant(), runs_p):
        # a latent score: relevance, the runs' log-odds and noise; cut into four labels
        log_odds = np.log(np.clip(p, 1e-6, 1) / np.clip(1 - p, 1e-6, 1))
        score = 2.0 * relevant + 0.8 * log_odds + rng.normal(0, 1, topic.n_docs)
        keep = rng.random(topic.n_docs) < 0.7
        rows.append(pd.DataFrame({"query_id": topic.query_id, "doc_id": topic.doc_ids[keep],
                                  "relevance": np.digitize(score, [-4.0, -2.0, 0.5])[keep]}))  # fmt: skip
    source = read_labels(pd.concat(rows, ignore_index=True), name="reads-runs")
    campaign = with_labels(pooled, [source])
    model = FusionLLM(fusion={"n_draws": 20}, runs_weight_sd=1.0, **INDEPENDENT).fit(campaign, rng=0)
    lam, sd = model.coef_[-1], np.sqrt(model.covariance_[-1, -1])
    assert lam + 3 * sd < 0, (lam, sd)
    estimate = model.predict(campaign)
    labelled = source.align(campaign)[0] >= 0
    open_docs = labelled & ~campaign.topics[0].judged
    assert np.ptp(estimate.draws[0][:, open_docs], axis=0).max() > 0
