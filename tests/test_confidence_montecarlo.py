"""Monte Carlo path: kernels against relimpute.measures, agreement with the exact moments on DL 2019."""

from __future__ import annotations

import numpy as np
import pytest

from relimpute.confidence import ConfidenceEngine
from relimpute.confidence.montecarlo import _score_ap
from relimpute.measures import average_precision, normalized_dcg, r_precision
from relimpute.relevance import RelevanceEstimate, Uniform

# BM25 variants whose pairwise P(ΔMAP > 0) under p = ½ lies between 0.3 and 0.98
CLOSE = ["bm25base_prf_p", "bm25base_rm3_p", "bm25tuned_prf_p", "bm25tuned_rm3_p", "bm25tuned_p"]


@pytest.fixture(scope="module")
def uniform(dl19):
    return Uniform(0.5).fit_predict(dl19)


def test_ap_kernel_equals_measures(dl19, rng):
    engine = ConfidenceEngine()
    rows = dl19.system_index(CLOSE[:3])
    topic = dl19.topics[7]
    view = engine._view(topic, rows)
    relevant = topic.relevant(dl19.rel_threshold)
    uncertain = np.flatnonzero(view.counted & ~topic.judged)
    drawn = rng.random((25, len(uncertain))) < 0.3
    got = _score_ap(topic, view, relevant, uncertain, drawn)
    labels = np.repeat(relevant[None, :], 25, axis=0)
    labels[:, uncertain] = drawn
    np.testing.assert_allclose(got, average_precision(view.ranking, labels), rtol=0, atol=1e-13)


def check_agreement(dl19, estimate, systems, n_draws, seed):
    """MC vs exact: means within 4 SE, variances within 4 relative SE, P within 4 SE + 0.005.

    On the campaign of the compared runs alone, so that R has the spread of
    a few runs' unjudged documents and the delta method visibly matters."""
    dl19 = dl19.subset(systems)
    mc = ConfidenceEngine().confidence(
        dl19, estimate, systems=systems, n_draws=n_draws, rng=seed, method="monte carlo"
    )
    exact = ConfidenceEngine(ratio="delta").confidence(
        dl19, estimate, systems=systems, method="normal"
    )
    se_mean = np.sqrt(exact.var_delta_map / n_draws)
    assert np.all(np.abs(mc.e_delta_map - exact.e_delta_map) <= 4 * se_mean)
    rel_se_var = np.sqrt(2.0 / n_draws)
    np.testing.assert_allclose(mc.var_delta_map / exact.var_delta_map, 1.0, atol=4 * rel_se_var)
    p = exact.p_a_better
    assert np.all(np.abs(mc.p_a_better - p) <= 4 * np.sqrt(p * (1 - p) / n_draws) + 0.005)
    # per-system MAP: the delta method tracks the draws, the paper's constant-E[R] form does not
    np.testing.assert_allclose(mc.scores.var_map / exact.scores.var_map, 1.0, atol=4 * rel_se_var)
    constant = ConfidenceEngine(ratio="constant").confidence(
        dl19, estimate, systems=systems, pairs=[], method="normal"
    ).scores
    assert np.all(mc.scores.var_map / constant.var_map < 0.8)
    return mc, exact


def test_normal_confidence_agrees_with_monte_carlo_small(dl19, uniform):
    check_agreement(dl19, uniform, CLOSE[2:], n_draws=2_000, seed=1)


@pytest.mark.slow
def test_normal_confidence_agrees_with_monte_carlo_full(dl19, uniform):
    check_agreement(dl19, uniform, CLOSE, n_draws=100_000, seed=2)


def test_linear_measure_monte_carlo_matches_exact(dl19, uniform):
    systems = CLOSE[:3]
    n, measure = 2_000, "RBP(p=0.95)"  # the top 10 of DL 2019 is judged: P@10 has no variance
    mc = ConfidenceEngine().confidence(
        dl19, uniform, systems=systems, n_draws=n, rng=3, measure=measure,
        method="monte carlo",
    )
    exact = ConfidenceEngine().confidence(
        dl19, uniform, systems=systems, measure=measure, method="normal"
    )
    assert mc.scores.measure == measure and exact.var_delta_map.min() > 0
    assert np.all(
        np.abs(mc.e_delta_map - exact.e_delta_map) <= 4 * np.sqrt(exact.var_delta_map / n)
    )
    np.testing.assert_allclose(mc.var_delta_map / exact.var_delta_map, 1.0, atol=4 * np.sqrt(2 / n))
    np.testing.assert_allclose(mc.scores.var_ap.sum(), exact.scores.var_ap.sum(), rtol=0.1)


def test_binary_probabilities_are_deterministic(dl19):
    """All p in {0, 1}: every draw is the same vector; nDCG and Rprec equal the measures kernels."""
    ps = tuple(np.where(t.judged, r, 0.0) for t, r in zip(dl19.topics, dl19.relevant()))
    estimate = RelevanceEstimate(dl19.query_ids, tuple(t.doc_ids for t in dl19.topics), ps)
    systems = CLOSE[:2]
    mc = ConfidenceEngine().confidence(
        dl19, estimate, systems=systems, n_draws=3, measure="nDCG@10",
        method="monte carlo",
    )
    rows = dl19.system_index(systems)
    topic = dl19.topics[0]
    labels = np.where(topic.judged, topic.grades, 0)
    np.testing.assert_allclose(
        mc.scores.e_ap[:, 0], normalized_dcg(topic.ranking[rows], labels, 10)
    )
    assert mc.scores.var_map.max() < 1e-30 and mc.var_delta_map.max() < 1e-30
    rprec = ConfidenceEngine().confidence(
        dl19, estimate, systems=systems, n_draws=2, measure="Rprec",
        method="monte carlo",
    )
    relevant = topic.relevant(dl19.rel_threshold)
    np.testing.assert_allclose(rprec.scores.e_ap[:, 0], r_precision(topic.ranking[rows], relevant))


def test_posterior_draws_are_joint_across_topics(dl19):
    """Draw d uses posterior draw d mod M in every topic: MAP varies with the draws, jointly."""
    subset = dl19.subset(systems=CLOSE[:2], topics=dl19.query_ids[:4])
    zeros = tuple(np.where(t.judged, r, 0.0) for t, r in zip(subset.topics, subset.relevant()))
    ones = tuple(np.where(t.judged, r, 1.0) for t, r in zip(subset.topics, subset.relevant()))
    draws = tuple(np.stack([z, o]) for z, o in zip(zeros, ones))
    doc_ids = tuple(t.doc_ids for t in subset.topics)
    estimate = RelevanceEstimate(subset.query_ids, doc_ids, zeros, draws=draws)
    mc = ConfidenceEngine().confidence(subset, estimate, n_draws=10, rng=0, method="monte carlo")
    low = ConfidenceEngine().confidence(
        subset, RelevanceEstimate(subset.query_ids, doc_ids, zeros), pairs=[], method="normal"
    ).scores
    high = ConfidenceEngine().confidence(
        subset, RelevanceEstimate(subset.query_ids, doc_ids, ones), pairs=[], method="normal"
    ).scores
    np.testing.assert_allclose(mc.scores.draws[0::2], np.broadcast_to(low.e_map, (5, 2)))
    np.testing.assert_allclose(mc.scores.draws[1::2], np.broadcast_to(high.e_map, (5, 2)))
    np.testing.assert_allclose(mc.scores.var_map, ((high.e_map - low.e_map) / 2) ** 2)
    ignored = ConfidenceEngine().confidence(
        subset, estimate, n_draws=4, use_posterior_draws=False, method="monte carlo"
    )
    np.testing.assert_allclose(ignored.scores.e_map, low.e_map)


def test_reproducible_and_chunked(dl19, uniform):
    kwargs = dict(systems=CLOSE[:2], n_draws=50, rng=11)
    first = ConfidenceEngine(depth=20).confidence(dl19, uniform, **kwargs, method="monte carlo")
    again = ConfidenceEngine(depth=20).confidence(dl19, uniform, **kwargs, method="monte carlo")
    small = ConfidenceEngine(depth=20).confidence(
        dl19, uniform, max_elements=5_000, **kwargs, method="monte carlo"
    )
    np.testing.assert_array_equal(first.scores.draws, again.scores.draws)
    assert small.scores.draws.shape == (50, 2)
    ci = first.confidence_interval(0.9)
    d = first.scores.draws
    columns = np.column_stack([d[:, a] - d[:, b] for a, b in first.pairs])
    oracle = np.quantile(columns, (1 - 0.9) / 2, axis=0)
    np.testing.assert_array_equal(ci.low, oracle)  # the percentile bound, bit for bit
    assert "Monte Carlo, 50 draws" in str(first)
    with pytest.raises(ValueError, match="n_draws"):
        ConfidenceEngine().confidence(dl19, uniform, n_draws=1, method="monte carlo")


@pytest.mark.parametrize("copies", [1, 40])
def test_bound_standard_errors_match_the_quantiles_known_error(copies):
    """Oracle: the 2.5% and 97.5% quantiles of n independent N(0, 1) values have standard
    error sqrt(p (1 − p) / n) / φ(z_p); n values each repeated ``copies`` times (one cluster
    per value, as draws sharing a posterior draw) have the same error, not a smaller one."""
    from scipy.stats import norm

    from relimpute.confidence.bounds import bound_standard_errors

    n, repeats = 400, 200
    expected = np.sqrt(0.025 * 0.975 / n) / norm.pdf(norm.ppf(0.025))
    gen = np.random.default_rng(5)
    found = []
    for _ in range(repeats):
        values = np.tile(gen.normal(size=n), copies)  # draw d is value d mod n
        draws = np.column_stack([values, np.zeros_like(values)])
        low, high = bound_standard_errors(draws, np.array([[0, 1]]), 0.95, n_clusters=n)
        found += [low[0], high[0]]
    assert np.mean(found) == pytest.approx(expected, rel=0.15)
    # ignoring the clusters would claim an error sqrt(copies) times smaller
    draws = np.column_stack([np.tile(gen.normal(size=n), copies), np.zeros(n * copies)])
    naive = bound_standard_errors(draws, np.array([[0, 1]]), 0.95, n_clusters=n * copies)[0][0]
    assert naive < expected / 2 if copies > 1 else naive == pytest.approx(expected, rel=0.5)


def test_pair_differences_are_the_gathered_rows_difference():
    from relimpute.confidence.bounds import pair_differences

    by_system = np.random.default_rng(2).normal(size=(5, 7))
    pairs = np.array([(0, 1), (4, 2), (3, 3), (1, 0)])
    found = pair_differences(by_system, pairs)
    np.testing.assert_array_equal(found, by_system[pairs[:, 0]] - by_system[pairs[:, 1]])
    assert pair_differences(by_system, pairs[:0]).shape == (0, 7)


def test_cluster_counts_by_whole_rounds_equal_the_bincount_bit_for_bit():
    """The per-cluster counts summed down whole rounds of draws are the bincount's numbers."""
    from relimpute.confidence.bounds import _cluster_counts

    below = np.random.default_rng(5).random((9, 600)) < 0.3
    for n_clusters in (1, 6, 100, 600):
        clusters = np.arange(600) % n_clusters
        cell = (np.arange(9)[:, None] * n_clusters + clusters[None, :]).ravel()
        oracle = np.bincount(cell, weights=below.ravel(), minlength=9 * n_clusters)
        found = _cluster_counts(below, clusters, n_clusters)
        assert found.dtype == np.float64 and found.shape == (9, n_clusters)
        np.testing.assert_array_equal(found, oracle.reshape(9, n_clusters))
    assert _cluster_counts(below[:, :599], np.arange(599) % 100, 100).sum() == below[:, :599].sum()


def test_bound_standard_errors_equal_a_pair_by_pair_computation():
    """Oracle: the same errors computed one pair at a time with numpy's own quantile and a
    per-cluster mean (up to rounding), with ties, cluster counts that do and do not divide
    the draws and pairs split over blocks."""
    from relimpute.confidence.bounds import bound_standard_errors

    gen = np.random.default_rng(11)
    draws = gen.normal(size=(333, 6))
    draws[:, 3] = draws[:, 2]  # a pair whose difference is always 0
    draws[:, 4] = np.round(draws[:, 4], 1)  # ties
    pairs = np.array([(a, b) for a in range(6) for b in range(a + 1, 6)])
    for clusters, level, max_elements in ((7, 0.9, 1000), (100, 0.95, 1 << 22), (1, 0.95, 500), (111, 0.9, 2000)):
        low, high = bound_standard_errors(draws, pairs, level, clusters, max_elements)
        cluster = np.arange(len(draws)) % clusters
        for q, (a, b) in enumerate(pairs):
            delta = draws[:, a] - draws[:, b]
            for found, p in ((low, (1 - level) / 2), (high, (1 + level) / 2)):
                below = delta <= np.quantile(delta, p)
                share = np.array([below[cluster == c].mean() for c in range(clusters)])
                s_p = share.std(ddof=1) / np.sqrt(clusters) if clusters > 1 else 0.0
                expected = (
                    np.quantile(delta, min(p + s_p, 1.0)) - np.quantile(delta, max(p - s_p, 0.0))
                ) / 2
                assert found[q] == pytest.approx(expected, rel=1e-12, abs=1e-15)
