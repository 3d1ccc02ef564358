"""Topic bootstrap with relevance drawn inside: against the law of total variance and the
plain topic bootstrap, on DL 2019 (exact moments of P@10 are the oracle)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from relimpute.cli import main
from relimpute.confidence import ConfidenceEngine
from relimpute.relevance import Uniform

SYSTEMS = ["bm25base_p", "bm25tuned_rm3_p", "runid2", "p_bert"]


@pytest.fixture(scope="module")
def half_judged(dl19):
    """The four runs' campaign with a random half of the judgments hidden."""
    campaign = dl19.subset(SYSTEMS)
    gen = np.random.default_rng(3)
    return campaign.with_judged([t.judged & (gen.random(t.n_docs) < 0.5) for t in campaign.topics])


def _combined_moments(mu, v):
    """Oracle: judgment variance of the mean, mean(v)/T, and the topic term
    (Var_t(μ) + mean(v)(1 − 1/T)) / T that the t scale c² = T/χ²_{T−1} multiplies."""
    n_topics = mu.shape[1]
    judgments = v.mean(axis=1) / n_topics
    topics = (mu.var(axis=1) + v.mean(axis=1) * (1 - 1 / n_topics)) / n_topics
    return judgments, topics


def test_variance_is_topic_spread_plus_judgment_noise(half_judged):
    """Var[ΔMAP*] = mean(v)/T + T/(T−3) · (Var_t(μ) + mean(v)(1 − 1/T)) / T, with μ_t, v_t the
    exact per-topic mean and variance of ΔP@10 (independent Bernoulli relevance, linear
    measure) and T/(T−3) = E[T/χ²_{T−1}], the t scale of the topic term."""
    from scipy.integrate import quad
    estimate = Uniform(0.3).fit_predict(half_judged)
    engine = ConfidenceEngine(depth=10)
    exact = engine.confidence(half_judged, estimate, measure="P@10", method="normal")
    n_draws = 20_000
    boot = engine.confidence(
        half_judged, estimate, measure="P@10", n_draws=n_draws, rng=7, topics=True
    )
    mu, v = exact.e_delta_ap, exact.var_delta_ap
    n_topics = mu.shape[1]
    judgments, topics = _combined_moments(mu, v)
    want = judgments + n_topics / (n_topics - 3) * topics
    # relative standard error of a variance from D draws is about sqrt(2 / D) = 1%, more
    # with the t scale's heavier tails
    np.testing.assert_allclose(boot.comparison.var_delta_map / want, 1.0, atol=0.06)
    np.testing.assert_allclose(boot.comparison.e_delta_map, mu.mean(axis=1), atol=2e-3)
    np.testing.assert_allclose(boot.sd_judgments, np.sqrt(exact.var_delta_map), rtol=0.05)
    # sd_topics is taken from the Monte Carlo per-topic means: within 1% of the exact ones
    standard_error = mu.std(axis=1, ddof=1) / np.sqrt(n_topics)
    np.testing.assert_allclose(boot.sd_topics, standard_error, rtol=0.01)
    assert np.all(boot.sd_judgments > 0.1 * boot.sd_topics)  # both sources matter here
    # P(Δ > 0): a normal with the judgment variance plus c² times the topic term, c² = T/χ²
    chi2 = stats.chi2(n_topics - 1)
    for k in range(len(want)):
        def integrand(x):
            sd = np.sqrt(judgments[k] + n_topics / x * topics[k])
            return stats.norm.sf(0, loc=mu[k].mean(), scale=sd) * chi2.pdf(x)

        oracle = quad(integrand, 0, np.inf)[0]
        assert abs(boot.comparison.p_a_better[k] - oracle) < 0.03
    assert boot.comparison.scores.sources == "topics + unjudged documents"


def test_complete_judgments_give_the_paired_t_test(dl19):
    """With every top-10 document judged, nothing is drawn: the interval is the paired
    t-interval of the per-topic ΔP@10 and P(A beats B) one minus the one-sided t-test
    p-value, up to the bootstrap's shape and resampling error; the plain percentile
    bootstrap (scipy's) is narrower."""
    campaign = dl19.subset(SYSTEMS[:2])
    estimate = Uniform(0.5).fit_predict(campaign)
    boot = ConfidenceEngine(depth=10).confidence(
        campaign, estimate, measure="P@10", n_draws=20_000, rng=11,
        topics=True,
    )
    assert boot.sd_judgments[0] == 0.0
    delta = boot.comparison.e_delta_ap[0]
    n_topics = len(delta)
    t_interval = stats.ttest_1samp(delta, 0.0).confidence_interval(0.95)
    ci = boot.comparison.confidence_interval(0.95)
    width = t_interval.high - t_interval.low
    assert abs(ci.low[0] - t_interval.low) < 0.05 * width
    assert abs(ci.high[0] - t_interval.high) < 0.05 * width
    one_sided = stats.ttest_1samp(delta, 0.0, alternative="greater").pvalue
    assert boot.comparison.p_a_better[0] == pytest.approx(1 - one_sided, abs=0.01)
    assert boot.comparison.var_delta_map[0] == pytest.approx(
        delta.var() / (n_topics - 3), rel=0.05
    )
    plain = stats.bootstrap(
        (delta,), np.mean, n_resamples=20_000, method="percentile", random_state=5
    ).confidence_interval
    assert plain.high - plain.low < 0.985 * width  # t_{42} / 1.96 · √(43/42) = 1.04


def test_topic_sampling_needs_two_topics(dl19):
    campaign = dl19.subset(SYSTEMS[:2], topics=[dl19.query_ids[0]])
    estimate = Uniform(0.5).fit_predict(campaign)
    with pytest.raises(ValueError, match="at least 2 topics"):
        ConfidenceEngine().confidence(campaign, estimate, n_draws=100, rng=0, topics=True)


def test_posterior_draws_are_shared_across_topics(dl19):
    """A model with posterior draws: the judgment term is the engine's Monte Carlo answer on
    the same draws, so the combined spread is at least each source alone."""
    from relimpute.relevance import load_model

    campaign = dl19.subset(SYSTEMS)
    estimate = load_model().fit_predict(campaign, rng=0)
    engine = ConfidenceEngine()
    fixed = engine.confidence(campaign, estimate, n_draws=2_000, rng=4, method="monte carlo")
    boot = engine.confidence(campaign, estimate, n_draws=2_000, rng=4, topics=True)
    np.testing.assert_allclose(boot.sd_judgments, fixed.sd_delta_map, rtol=1e-12)
    sd = boot.comparison.sd_delta_map
    assert np.all(sd >= 0.95 * np.maximum(boot.sd_topics, boot.sd_judgments))
    frame = boot.to_frame()
    assert list(frame.columns[:6]) == [
        "system_a", "system_b", "e_delta_map", "sd_delta_map", "sd_topics", "sd_judgments"
    ]


def test_cli_topics_flag(dl19_dir, capsys):
    args = ["compare", str(dl19_dir / "qrels.txt"), str(dl19_dir / "runs"), "--rel-threshold",
            "2", "--systems", "p_bert", "bm25base_p", "--mc-draws", "500", "--seed", "1"]
    assert main([*args, "--topic-bootstrap", "-f", "tsv"]) == 0
    captured = capsys.readouterr()
    frame = pd.read_csv(io.StringIO(captured.out), sep="\t")
    assert "topic sampling" in captured.err
    # Topic sampling adds a spread the unjudged documents alone do not have, and the two add
    # as variances (on DL 2019 with the shipped settings sd 0.044 from topics 0.021 and
    # judgments 0.039 for this pair).
    sd, topics, judgments = frame.loc[0, ["sd_delta_map", "sd_topics", "sd_judgments"]]
    assert sd > judgments and sd >= 0.95 * topics
    assert sd == pytest.approx(np.hypot(topics, judgments), rel=0.15)
    assert frame.loc[0, "ci_low"] < 0.166 < frame.loc[0, "ci_high"]  # official ΔMAP 0.166
    assert main([*args, "--topic-bootstrap", "--normal"]) == 2


def test_pairs_chosen_from_a_larger_campaign_take_its_r(dl19):
    """Comparing two runs of a campaign (``systems=``) keeps E[R] over every run's unjudged
    documents, as the exact engine does; the two runs alone would give a smaller R and a
    larger ΔMAP. The split-topic study (examples/precision) relies on this."""
    pair = ["bm25base_p", "p_bert"]
    gen = np.random.default_rng(5)
    campaign = dl19.with_judged([t.judged & (gen.random(t.n_docs) < 0.5) for t in dl19.topics])
    estimate = Uniform(0.1).fit_predict(campaign)
    engine = ConfidenceEngine(depth=100)
    exact_all = engine.confidence(campaign, estimate, systems=pair, method="normal")
    alone = campaign.subset(pair)
    exact_alone = engine.confidence(alone, Uniform(0.1).fit_predict(alone), method="normal")
    boot = engine.confidence(campaign, estimate, systems=pair, n_draws=4_000, rng=2, topics=True)
    gap = abs(exact_all.e_delta_map[0] - exact_alone.e_delta_map[0])
    assert gap > 0.02  # 0.042 against 0.075
    # the bootstrap's mean of Q/R against the exact E[Q]/E[R]: within a tenth of the gap
    assert boot.comparison.e_delta_map[0] == pytest.approx(exact_all.e_delta_map[0], abs=0.1 * gap)
