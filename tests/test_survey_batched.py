"""The batched entry (relimpute.confidence.survey.batched) gives, for each of B samplings of one
topic, the rows :func:`relimpute.confidence.survey.estimate` gives for that sample alone: AP of
every run and ΔAP of every pair, HT, model-assisted and PPI++, Poisson and stratified designs,
linearised and jackknife variances, with and without the ratio's bias correction.

Tolerances: estimates to 1e-10 absolute, variances to 1e-8 relative (sums in another order;
the bias correction's central differences are the package's own, so they agree as closely)."""

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from relimpute.confidence.survey import estimate
from relimpute.confidence.survey.batched import Samplings, TopicSamplings, mean_over_topics

N, RUNS, DEPTH, B = 40, 3, 25, 6


def universe(rng, wrong=False):
    """One topic: relevance x, predictions p (``wrong``: reversed, which trips R̂'s hold),
    three runs' ranks over 40 documents."""
    x = (rng.random(N) < 0.3).astype(float)
    p = np.clip(0.6 * x + 0.4 * rng.random(N), 0, 1)
    ranks = np.zeros((RUNS, N), int)
    for r in range(RUNS):
        order = rng.permutation(N)[:DEPTH]
        ranks[r, order] = np.arange(1, DEPTH + 1)
    return x, (1 - p if wrong else p), ranks


def draw(rng, stratified, b=B):
    stratum = (np.arange(N) >= 15).astype(int)
    if stratified:
        drawn = np.zeros((b, N), bool)
        for i in range(b):
            drawn[i, rng.permutation(15)[:6]] = True
            drawn[i, 15 + rng.permutation(25)[:(1 if i == 0 else 8)]] = True  # one drawn
        return Samplings(drawn, stratum=stratum, sampling="stratified")
    pi = np.clip(rng.random(N), 0.05, 0.9)
    return Samplings(rng.random((b, N)) < pi, inclusion=pi)


def package_rows(samplings, b, x, p, ranks, estimator, variance, bias_correction):
    docs = np.array([f"d{i}" for i in range(N)])
    runs = {f"r{r}": pd.DataFrame({"query_id": "q", "doc_id": docs[ranks[r] > 0],
                                   "score": -ranks[r][ranks[r] > 0].astype(float)})
            for r in range(RUNS)}
    control = pd.DataFrame({"query_id": "q", "doc_id": docs, "p": p})
    sample = pd.DataFrame({"query_id": "q", "doc_id": docs,
                           "relevance": np.where(samplings.drawn[b], x.astype(int), -1)})
    stratified = samplings.sampling == "stratified"
    sample = sample.assign(stratum=samplings.stratum) if stratified else \
        sample.assign(inclusion=samplings.inclusion)
    table = estimate(sample, runs, control=None if estimator == "ht" else control,
                     estimator=estimator, pairs="all", variance=variance,
                     bias_correction=bias_correction, sampling=samplings.sampling)
    return (table[table["run_b"] == ""].set_index("run").loc[list(runs)],
            table[table["run_b"] != ""])


@pytest.mark.parametrize("stratified,variance", [(False, "linearised"), (True, "linearised"),
                                                 (False, "jackknife"), (True, "jackknife")])
@pytest.mark.parametrize("estimator", ["ht", "model-assisted", "ppi++"])
@pytest.mark.parametrize("bias_correction", [False, True])
@pytest.mark.parametrize("wrong", [False, True])
def test_every_sampling_equals_estimate_of_that_sample(stratified, variance, estimator,
                                                       bias_correction, wrong):
    rng = np.random.default_rng(3 if wrong else 11)
    x, p, ranks = universe(rng, wrong)
    samplings = draw(rng, stratified)
    pairs = np.array(list(combinations(range(RUNS), 2)))
    got = TopicSamplings(samplings, x, ranks, p).estimates(
        pairs, estimator=estimator, variance=variance, bias_correction=bias_correction)
    for b in range(B):
        single, paired = package_rows(samplings, b, x, p, ranks, estimator, variance,
                                      bias_correction)
        assert np.allclose(single["estimate"], got.value[b], atol=1e-10)
        assert np.allclose(single["se"] ** 2, got.variance[b], rtol=1e-8, atol=1e-12)
        assert np.allclose(single["lambda"], got.lam[b], atol=1e-10)
        assert np.allclose(paired["estimate"], got.delta[b], atol=1e-10)
        assert np.allclose(paired["se"] ** 2, got.delta_variance[b], rtol=1e-8, atol=1e-12)
        assert np.allclose(paired["lambda"], got.delta_lam[b], atol=1e-10)


def test_the_wrong_control_holds_r_at_the_relevant_judged():
    """The wrong-control cases above are not vacuous for the model-assisted λ = 1 either: R̂
    is held at the relevant documents judged on some of their samplings."""
    rng = np.random.default_rng(3)
    x, p, ranks = universe(rng, wrong=True)
    topic = TopicSamplings(draw(rng, False, b=300), x, ranks, p)
    assert (topic.rx + (topic.pop_r - topic.rp) < topic.least).any()


def test_a_stratum_none_judged_leaves_the_sampling_without_an_estimate():
    rng = np.random.default_rng(3)
    x, p, ranks = universe(rng)
    drawn = np.zeros((2, N), bool)
    drawn[:, :4] = True
    drawn[0, 20:24] = True  # sampling 1 judged nothing of stratum 1
    samplings = Samplings(drawn, stratum=(np.arange(N) >= 15).astype(int), sampling="stratified")
    got = TopicSamplings(samplings, x, ranks).estimates([(0, 1)], variance="linearised")
    assert np.isfinite(got.value[0]).all() and np.isnan(got.value[1]).all()
    assert np.isnan(got.delta[1]).all()


def test_mean_over_topics_is_map_with_independent_topics():
    rng = np.random.default_rng(5)
    found = []
    for _ in range(3):
        x, p, ranks = universe(rng)
        found.append(TopicSamplings(draw(rng, False), x, ranks, p).estimates(
            [(0, 1)], estimator="ppi++"))
    mean = mean_over_topics(found)
    assert np.allclose(mean.value, np.mean([f.value for f in found], axis=0))
    assert np.allclose(mean.variance, np.sum([f.variance for f in found], axis=0) / 9)
    assert np.allclose(mean.delta_lam, np.mean([f.delta_lam for f in found], axis=0))


@pytest.mark.parametrize("taken", [(15, 2), (3, 25), (2, 3), (1, 2)])
@pytest.mark.parametrize("estimator", ["ht", "ppi++"])
def test_the_stratified_jackknife_at_the_edges_equals_estimate(taken, estimator):
    """A census stratum (π = 1: no replicate), two drawn (the replicate's inner pairs weigh 0),
    three, and one (the Poisson form), each sampling against estimate() of its sample."""
    rng = np.random.default_rng(7)
    x, p, ranks = universe(rng)
    drawn = np.zeros((4, N), bool)
    for i in range(4):
        drawn[i, rng.permutation(15)[:taken[0]]] = True
        drawn[i, 15 + rng.permutation(25)[:taken[1]]] = True
    samplings = Samplings(drawn, stratum=(np.arange(N) >= 15).astype(int), sampling="stratified")
    pairs = np.array(list(combinations(range(RUNS), 2)))
    got = TopicSamplings(samplings, x, ranks, p).estimates(pairs, estimator=estimator,
                                                           variance="jackknife",
                                                           bias_correction="taylor")
    for b in range(4):
        single, paired = package_rows(samplings, b, x, p, ranks, estimator, "jackknife", True)
        assert np.allclose(single["se"] ** 2, got.variance[b], rtol=1e-8, atol=1e-12)
        assert np.allclose(paired["se"] ** 2, got.delta_variance[b], rtol=1e-8, atol=1e-12)
        assert np.allclose(paired["estimate"], got.delta[b], atol=1e-10)


@pytest.mark.parametrize("stratified", [False, True])
def test_another_control_on_the_same_samplings_shares_the_judgments_totals(stratified):
    rng = np.random.default_rng(9)
    x, p, ranks = universe(rng)
    samplings = draw(rng, stratified)
    judged = TopicSamplings(samplings, x, ranks)
    for q in (p, 1 - p):
        shared = judged.with_control(q).estimates([(0, 1)], estimator="ppi++")
        fresh = TopicSamplings(samplings, x, ranks, q).estimates([(0, 1)], estimator="ppi++")
        for field in ("value", "variance", "lam", "delta", "delta_variance"):
            np.testing.assert_array_equal(getattr(shared, field), getattr(fresh, field))


@pytest.mark.parametrize("stratified", [False, True])
@pytest.mark.parametrize("other", ["ht", "model-assisted"])
def test_ppi_held_view_leaves_the_others_on_the_same_samplings_unchanged(stratified, other):
    """PPI++ reads R̂ held at 1 through a view sharing the judged totals; computing it first
    must not hold HT's or GREG's R̂ (jackknife replicates included) on the same samplings."""
    rng = np.random.default_rng(11)
    _, p, ranks = universe(rng, wrong=True)
    x = np.zeros(N)
    x[[3, 20, 31]] = 1.0  # three relevant: some samplings draw none
    samplings = draw(rng, stratified, b=40)
    fresh = TopicSamplings(samplings, x, ranks, p).estimates([(0, 1)], estimator=other)
    topic = TopicSamplings(samplings, x, ranks, p)
    topic.estimates([(0, 1)], estimator="ppi++")
    after = topic.estimates([(0, 1)], estimator=other)
    for field in ("value", "variance", "delta", "delta_variance"):
        np.testing.assert_array_equal(getattr(after, field), getattr(fresh, field))
    assert (topic.least < 1).any()  # some sampling drew no relevant document: the hold bites


@pytest.mark.parametrize("bias_correction", ["none", "taylor"])
def test_ppi_at_lambda_zero_is_ht_even_outside_any_universes_values(bias_correction):
    """PPI++'s projection moves with λ: at λ = 0 it is HT, AP̂ above 1 included (clipping
    those biased MAP low wherever λ ≈ 0); at λ = 1 every value lies in [0, 1]; between, in
    [(1 − λ) min(0, HT), λ + (1 − λ) max(1, HT)]."""
    rng = np.random.default_rng(3)
    _, p, ranks = universe(rng, wrong=True)
    x = np.isin(ranks[0], [1, 2, 4]).astype(float)  # relevant at the top, drawn at small π:
    # the precision at rank 2 is (1 + 1/π)/2, so HT's ratio strays above 1
    pi = np.full(N, 0.12)
    samplings = Samplings(rng.random((400, N)) < pi, inclusion=pi)
    topic = TopicSamplings(samplings, x, ranks, p)
    members = [(np.arange(RUNS), 1.0)]
    ht = topic.quantity(members, "ht", "linearised", bias_correction)[0]
    assert (ht > 1).any() and (ht < 1).any()  # the case this test is about
    zero = topic.quantity(members, "ppi++", "linearised", bias_correction,
                          lam=np.zeros((400, RUNS)))[0]
    np.testing.assert_array_equal(zero, ht)
    one = topic.quantity(members, "ppi++", "linearised", bias_correction,
                         lam=np.ones((400, RUNS)))[0]
    assert (one >= 0).all() and (one <= 1).all() and (one == 1).any()  # cut where it strayed
    half = topic.quantity(members, "ppi++", "linearised", bias_correction,
                          lam=np.full((400, RUNS), 0.5))[0]
    upper = 0.5 + 0.5 * np.maximum(1, ht)
    assert (half >= 0.5 * np.minimum(0, ht)).all() and (half <= upper + 1e-12).all()
    assert np.isclose(half, upper).any() and (upper > 1).any()
