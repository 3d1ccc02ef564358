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
from relimpute.relevance import UniformPrior

SYSTEMS = ["bm25base_p", "bm25tuned_rm3_p", "runid2", "p_bert"]


@pytest.fixture(scope="module")
def half_judged(dl19):
    """The four runs' campaign with a random half of the judgments hidden."""
    campaign = dl19.subset(SYSTEMS)
    gen = np.random.default_rng(3)
    return campaign.with_judged([t.judged & (gen.random(t.n_docs) < 0.5) for t in campaign.topics])


def test_variance_is_topic_spread_plus_judgment_noise(half_judged):
    """Var[ΔMAP*] = Var_t(μ_t)/T + 2·mean_t(v_t)/T − mean_t(v_t)/T², with μ_t, v_t the exact
    per-topic mean and variance of ΔP@10 (independent Bernoulli relevance, linear measure)."""
    estimate = UniformPrior(0.3).fit_predict(half_judged)
    engine = ConfidenceEngine(depth=10)
    exact = engine.compare(half_judged, estimate, measure="P@10")
    n_draws = 20_000
    boot = engine.topic_bootstrap(half_judged, estimate, measure="P@10", n_draws=n_draws, rng=7)
    mu, v = exact.e_delta_ap, exact.var_delta_ap
    n_topics = mu.shape[1]
    want = mu.var(axis=1) / n_topics + 2 * v.mean(axis=1) / n_topics - v.mean(axis=1) / n_topics**2
    # relative standard error of a variance from D draws is about sqrt(2 / D) = 1%
    np.testing.assert_allclose(boot.comparison.var_delta_map / want, 1.0, atol=0.06)
    np.testing.assert_allclose(boot.comparison.e_delta_map, mu.mean(axis=1), atol=2e-3)
    np.testing.assert_allclose(boot.sd_judgments, np.sqrt(exact.var_delta_map), rtol=0.05)
    np.testing.assert_allclose(boot.sd_topics, mu.std(axis=1) / np.sqrt(n_topics), rtol=0.05)
    assert np.all(boot.sd_judgments > 0.1 * boot.sd_topics)  # both sources matter here
    # P(Δ > 0) is the normal answer with the combined variance, up to Monte Carlo error
    normal = stats.norm.sf(0, loc=mu.mean(axis=1), scale=np.sqrt(want))
    assert np.all(np.abs(boot.comparison.p_a_better - normal) < 0.03)
    assert boot.comparison.scores.sources == "topics + unjudged documents"


def test_complete_judgments_give_the_plain_topic_bootstrap(dl19):
    """With every top-10 document judged, nothing is drawn: the answer is the percentile
    bootstrap of the per-topic ΔP@10 (scipy's, up to resampling error)."""
    campaign = dl19.subset(SYSTEMS[:2])
    estimate = UniformPrior(0.5).fit_predict(campaign)
    boot = ConfidenceEngine(depth=10).topic_bootstrap(
        campaign, estimate, measure="P@10", n_draws=20_000, rng=11
    )
    assert boot.sd_judgments[0] == 0.0
    delta = boot.comparison.e_delta_ap[0]
    reference = stats.bootstrap(
        (delta,), np.mean, n_resamples=20_000, method="percentile", random_state=5
    ).confidence_interval
    ci = boot.comparison.confidence_interval(0.95)
    width = reference.high - reference.low
    assert abs(ci.low[0] - reference.low) < 0.05 * width
    assert abs(ci.high[0] - reference.high) < 0.05 * width
    assert boot.comparison.var_delta_map[0] == pytest.approx(delta.var() / len(delta), rel=0.05)


def test_posterior_draws_are_shared_across_topics(dl19):
    """A model with posterior draws: the judgment term is the engine's Monte Carlo answer on
    the same draws, so the combined spread is at least each source alone."""
    from relimpute.relevance import load_model

    campaign = dl19.subset(SYSTEMS)
    estimate = load_model().fit_predict(campaign, rng=0)
    engine = ConfidenceEngine()
    fixed = engine.monte_carlo(campaign, estimate, n_draws=2_000, rng=4)
    boot = engine.topic_bootstrap(campaign, estimate, n_draws=2_000, rng=4)
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
    assert main([*args, "--topics", "-f", "tsv"]) == 0
    captured = capsys.readouterr()
    frame = pd.read_csv(io.StringIO(captured.out), sep="\t")
    assert "topic sampling" in captured.err
    assert frame.loc[0, "sd_delta_map"] > 3 * frame.loc[0, "sd_judgments"]
    assert frame.loc[0, "ci_low"] < 0.166 < frame.loc[0, "ci_high"]  # official ΔMAP 0.166
    assert main([*args, "--topics", "--normal"]) == 2
