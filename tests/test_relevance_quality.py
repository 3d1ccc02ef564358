"""Predictive quality of relevance models on held-out DL 2019 judgments."""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pytest
from sklearn import metrics
from sklearn.calibration import calibration_curve as sk_calibration_curve

from relimpute.errors import ConvergenceWarning
from relimpute.relevance import get_model
from relimpute.relevance.quality import (
    PredictiveQuality,
    auc,
    brier,
    calibration_curve,
    complete_judgments,
    heldout_quality,
    log_loss,
    split_judgments,
)


@pytest.fixture
def scores(rng):
    y = rng.random(500) < 0.3
    p = np.clip(0.3 + 0.4 * (y - 0.3) + rng.normal(0, 0.2, 500), 0, 1)
    p[:5] = [0.0, 1.0, 0.5, 0.5, 0.5]  # edges and ties
    return y, p


def test_metrics_match_scikit_learn(scores):
    y, p = scores
    inner = (p > 1e-15) & (p < 1 - 1e-15)  # no clipping: scikit-learn's plain log loss
    assert log_loss(y[inner], p[inner]) == pytest.approx(
        metrics.log_loss(y[inner], p[inner]), rel=1e-12
    )
    assert brier(y, p) == pytest.approx(metrics.brier_score_loss(y, p), rel=1e-12)
    assert auc(y, p) == pytest.approx(metrics.roc_auc_score(y, p), rel=1e-12)
    # scikit-learn computes them now; the definitions are the independent oracle
    pos, neg = p[y], p[~y]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    assert auc(y, p) == pytest.approx(wins / (len(pos) * len(neg)), rel=1e-12)
    # the probability given to the outcome, clipped: a certain, wrong p loses exactly -log(eps)
    nll = [-np.log(min(max(q if label else 1 - q, 1e-15), 1 - 1e-15)) for label, q in zip(y, p)]
    assert log_loss(y, p) == pytest.approx(np.mean(nll), rel=1e-12)
    assert brier(y, p) == pytest.approx(np.mean((p - y) ** 2), rel=1e-12)
    table = calibration_curve(y, p, bins=10)
    observed, predicted = sk_calibration_curve(y, p, n_bins=10, strategy="uniform")
    np.testing.assert_allclose(table["observed"], observed, rtol=1e-12)
    np.testing.assert_allclose(table["mean_predicted"], predicted, rtol=1e-12)
    assert table["n"].sum() == len(y)


def test_metrics_edge_cases():
    assert np.isnan(auc([True, True], [0.2, 0.9]))
    assert log_loss([True, False], [1.0, 0.0]) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError):
        brier([True], [1.5])
    with pytest.raises(ValueError):
        log_loss([], [])


def test_split_protocols(dl19, rng):
    keep = split_judgments(dl19, protocol="random", fraction=0.1, rng=rng)
    judged = sum(int(t.judged.sum()) for t in dl19.topics)
    kept = sum(int(k.sum()) for k in keep)
    # binomial(judged, 0.1): sd ≈ 29, 5 sd = 145
    assert abs(kept - 0.1 * judged) < 150
    assert all((k <= t.judged).all() for k, t in zip(keep, dl19.topics))
    pool = split_judgments(dl19, protocol="pool", pool_depth=3)
    t = dl19.topics[0]
    expected = np.zeros(t.n_docs, dtype=bool)
    expected[t.ranking[:, :3][t.ranking[:, :3] >= 0]] = True
    np.testing.assert_array_equal(pool[0], expected & t.judged)
    with pytest.raises(ValueError):
        split_judgments(dl19, protocol="oracle")


def test_uniform_prior_scores_as_computed_by_hand(dl19):
    keep = split_judgments(dl19, protocol="pool", pool_depth=2)
    q = heldout_quality(get_model("uniform"), dl19, keep)
    assert isinstance(q, PredictiveQuality)
    assert q.log_loss == pytest.approx(np.log(2), rel=1e-12)
    assert q.brier == pytest.approx(0.25, rel=1e-12)
    assert q.n_train + q.n_test == sum(int(t.judged.sum()) for t in dl19.topics)
    assert list(q.to_frame().columns)[:3] == ["model", "n_train", "n_test"]
    assert "log loss 0.6931" in str(q)


def test_complete_judgments_and_scoring_every_document_by_hand(dl19):
    full = complete_judgments(dl19)
    for t, f, r in zip(dl19.topics, full.topics, dl19.relevant()):
        assert f.judged.all()
        np.testing.assert_array_equal(f.relevant(2), r)  # unjudged = nonrelevant
    keep = split_judgments(dl19, protocol="pool", pool_depth=1)
    q = heldout_quality(get_model("uniform"), dl19, keep, score_unjudged=True)
    n_docs = sum(t.n_docs for t in dl19.topics)
    n_kept = sum(int(k.sum()) for k in keep)
    assert q.score_unjudged and q.n_test == n_docs - n_kept
    assert q.log_loss == pytest.approx(np.log(2), rel=1e-12)
    # Σ p per topic: ½ per held-out document plus the kept relevant ones
    for t, k, r, row in zip(dl19.topics, keep, dl19.relevant(), q.relevant_counts.itertuples()):
        assert row.expected_relevant == pytest.approx((t.n_docs - k.sum()) / 2 + (r & k).sum())
        assert row.true_relevant == r.sum()
    assert q.true_relevant == pytest.approx(2501 / 43)  # README: 2,501 relevant at rel >= 2
    assert q.relevant_ratio > 30 and "relevant expected per topic" in str(q)
    # a random sample of everything retrieved keeps unjudged documents too
    sample = split_judgments(full, protocol="random", fraction=0.003, rng=3)
    assert sum(int((k & ~t.judged).sum()) for k, t in zip(sample, dl19.topics)) > 0
    assert heldout_quality(get_model("uniform"), dl19, sample, score_unjudged=True).n_test == (
        n_docs - sum(int(k.sum()) for k in sample)
    )


#: the RTC variant shipped until 0.2.0 (retired: its confidence was not calibrated), kept here
#: as the quality protocol's discriminating case (benchmarks/results/rtc.md)
LOGIT_VARIANT = {"unretrieved": "calibrated", "intercept": True, "aggregate": "logit",
                 "weight_prior": "gaussian", "weight_scale": 0.3}


def test_quality_protocol_separates_rtc_variants_by_expected_relevant(dl19):
    """Depth-10 pool judged, every other retrieved document scored (unjudged = nonrelevant).

    The paper's settings expect ~1,980 relevant documents per topic outside
    the pool and the max_rank-100 variant ~239, against ~41 true; the logit
    variant ~109 (benchmarks/results/rtc.md). Stated factor: 4.
    """

    keep = split_judgments(dl19, protocol="pool", pool_depth=10)
    kept_relevant = np.mean([(r & k).sum() for r, k in zip(dl19.relevant(), keep)])

    def unjudged(q):  # mean per topic of the expected / true relevant outside the pool
        return q.expected_relevant - kept_relevant, q.true_relevant - kept_relevant

    shipped = get_model("rtc", **LOGIT_VARIANT)
    q = heldout_quality(shipped, dl19, keep, score_unjudged=True)
    expected, true = unjudged(q)
    assert true / 4 < expected < 4 * true, str(q)
    uniform = heldout_quality(get_model("uniform"), dl19, keep, score_unjudged=True)
    assert q.log_loss < uniform.log_loss / 5
    # the check can fail: the previous shipped settings are outside the factor
    old = get_model("rtc", max_rank=100, unretrieved="calibrated")
    assert unjudged(heldout_quality(old, dl19, keep, score_unjudged=True))[0] > 4 * true


_HAS_BAYES = importlib.util.find_spec("relimpute.relevance.bayes") is not None

# each learned model, in a configuration CI can afford (bayes runs with -m slow).
# The paper's RTC at every rank is not here: on the depth-2 pool it loses to the
# uniform prior (benchmarks/results/rtc.md); so does the logit aggregation with
# a N(0, 1) prior on its coefficients, where the shipped N(0, 0.3²) does not.
LEARNED = [
    pytest.param("rtc", {"max_rank": 100}, id="rtc-paper-depth100"),
    pytest.param("rtc", LOGIT_VARIANT, id="rtc-logit-variant"),
    pytest.param(
        "bayes",
        {"method": "advi"},
        id="bayes-advi",
        marks=[
            pytest.mark.slow,
            pytest.mark.skipif(not _HAS_BAYES, reason="the bayes model is not present"),
        ],
    ),
]


@pytest.mark.parametrize("protocol", ["random", "pool"])
@pytest.mark.parametrize("name, params", LEARNED)
def test_learned_models_beat_the_uniform_prior(dl19, name, params, protocol):
    if name == "bayes":
        importlib.import_module("relimpute.relevance.bayes")
    keep = split_judgments(dl19, protocol=protocol, fraction=0.054, pool_depth=2, rng=11)
    model = get_model(name, **params)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
        # scored on predictions alone; convergence is the model's own tests' business
        warnings.filterwarnings("ignore", category=ConvergenceWarning)
        q = heldout_quality(model, dl19, keep, rng=0)
    uniform = heldout_quality(get_model("uniform"), dl19, keep)
    assert q.log_loss < uniform.log_loss - 0.01, (str(q), str(uniform))
    assert q.auc > 0.55
