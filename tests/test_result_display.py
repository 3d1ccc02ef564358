"""Every result object prints well: a one-line repr, a readable str, and to_frame()."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from relimpute.calibration import CalibrationReport
from relimpute.calibration.paired import PairedTest
from relimpute.calibration import run_study
from relimpute.confidence import ConfidenceEngine
from relimpute.relevance import Uniform
from relimpute.relevance.quality import heldout_quality, split_judgments
from relimpute.selection.assessors import SimulatedAssessor
from relimpute.selection.loop import run_selection
from relimpute.simulate import simulate_campaign


@pytest.fixture(scope="module")
def results():
    """One of each result object, from a small simulated campaign."""
    sim = simulate_campaign(n_topics=4, n_systems=5, n_docs=300, depth=30, rng=3)
    truth = sim.campaign
    rng = np.random.default_rng(0)
    partial = truth.with_judged([t.judged & (rng.random(t.n_docs) < 0.5) for t in truth.topics])
    estimate = Uniform(0.3).fit_predict(partial)
    engine = ConfidenceEngine()
    comparison = engine.confidence(partial, estimate, method="normal")
    monte_carlo = engine.confidence(
        partial, estimate, n_draws=50, rng=1, measure="nDCG@10", method="monte carlo"
    )
    hidden = truth.with_judged([np.zeros(t.n_docs, bool) for t in truth.topics])
    selection = run_selection(
        hidden, "mtc", SimulatedAssessor(truth), systems=truth.systems[:2], budget=5, rng=1
    )
    keep = split_judgments(truth, fraction=0.5, rng=1)
    quality = heldout_quality(Uniform(0.3), truth, keep, rng=1)
    study = run_study(truth, "mtc", n_trials=1, k=3, c=2, depth=20, seed=1, progress=False)
    paired = PairedTest("tau", "t", "mtc", "rtc", 10, 0.05, 0.04, 2.1, 0.06)
    return {
        "SimulatedCampaign": sim,
        "RelevanceEstimate": estimate,
        "SystemScores": comparison.scores,
        "Comparison": comparison,
        "Comparison (Monte Carlo)": monte_carlo,
        "SelectionResult": selection,
        "PredictiveQuality": quality,
        "CalibrationStudy": study,
        "CalibrationReport": CalibrationReport.from_study(study),
        "PairedTest": paired,
    }


NAMES = [
    "SimulatedCampaign",
    "RelevanceEstimate",
    "SystemScores",
    "Comparison",
    "Comparison (Monte Carlo)",
    "SelectionResult",
    "PredictiveQuality",
    "CalibrationStudy",
    "CalibrationReport",
    "PairedTest",
]


@pytest.mark.parametrize("name", NAMES)
def test_repr_is_one_short_line(results, name):
    obj = results[name]
    text = repr(obj)
    assert text.startswith(type(obj).__name__ + "(") and text.endswith(")")
    assert "\n" not in text and len(text) <= 160, text
    assert "array(" not in text and "DataFrame" not in text


@pytest.mark.parametrize("name", NAMES)
def test_str_is_readable_and_to_frame_is_tidy(results, name):
    obj = results[name]
    text = str(obj)
    assert text != repr(obj) and len(text) > 40
    assert "array(" not in text
    frame = obj.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) > 0


def test_estimate_summary_counts(results):
    estimate = results["RelevanceEstimate"]
    topics = estimate.topic_frame()
    assert list(topics.columns) == ["query_id", "documents", "uncertain", "expected_relevant"]
    assert topics["documents"].tolist() == [len(p) for p in estimate.p]
    np.testing.assert_allclose(topics["expected_relevant"], [p.sum() for p in estimate.p])
    uncertain = sum(int(((p > 0) & (p < 1)).sum()) for p in estimate.p)
    assert f"{uncertain} uncertain" in str(estimate)
    assert repr(estimate).startswith("RelevanceEstimate(model='uniform', 4 topics, ")


def test_paired_test_str_names_the_test(results):
    text = str(results["PairedTest"])
    assert text.startswith("tau: mtc - rtc = +0.05 on average") and "paired t-test" in text
    assert results["PairedTest"].to_frame().iloc[0]["pvalue"] == 0.06


def test_a_result_says_whether_the_models_parameter_uncertainty_is_in_it():
    """Exact moments, and Monte Carlo without posterior draws, take the model's
    probabilities as known and say so; Monte Carlo over the draws carries them."""
    from relimpute.relevance import Fusion

    sim = simulate_campaign(n_topics=4, n_systems=3, n_docs=200, depth=30, rng=5)
    estimate = Fusion(n_draws=20).fit_predict(sim.campaign, rng=0)
    engine = ConfidenceEngine()
    exact = engine.confidence(sim.campaign, estimate, method="normal")
    plain = engine.confidence(
        sim.campaign, estimate, n_draws=40, rng=1, use_posterior_draws=False, method="monte carlo"
    )
    drawn = engine.confidence(sim.campaign, estimate, n_draws=40, rng=1, method="monte carlo")
    for result in (exact, plain):
        assert "parameters taken as known" in str(result) and "parameters taken as known" in repr(result)
    assert "model parameters (posterior draws)" in str(drawn) and "taken as known" not in str(drawn)
    boot = engine.confidence(sim.campaign, estimate, n_draws=40, rng=1, topics=True)
    assert boot.comparison.scores.sources == "topics + unjudged documents + model parameters (posterior draws)"
