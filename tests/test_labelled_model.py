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


@pytest.fixture(scope="module")
def simulated():
    truth = simulate_campaign(n_topics=30, n_systems=10, rng=3).campaign
    source = _labels(truth, np.random.default_rng(3), share=0.7)
    judged = with_labels(truth.pooled(20), [source])
    model = FusionLLM(fusion={"n_draws": 20}).fit(judged, rng=0)
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
