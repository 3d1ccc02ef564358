"""Calibration metrics on hand-made cases with known answers, and against independent oracles."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from relimpute.calibration import (
    bin_table,
    bookmaker_terms,
    bookmaker_w,
    brier_score,
    cap_confidence,
    expected_calibration_error,
    kendall_tau,
    orient,
)
from relimpute.stats import log_loss, paired_test

# p_a_better and truth (a truly better), worked out by hand:
#   0.9 / a better   -> P = 0.9, right,  W =  1
#   0.2 / a better   -> P = 0.8, wrong,  W = -0.8/0.2 = -4
#   0.5 / b better   -> P = 0.5 (favours a), wrong, W = -1
#   1.0 / b better   -> P = 1.0, wrong,  W = -inf, capped at -100
#   0.0 / b better   -> P = 1.0, right,  W =  1
HAND_P = np.array([0.9, 0.2, 0.5, 1.0, 0.0])
HAND_TRUTH = np.array([True, True, False, False, False])


def test_orient_hand_case():
    conf, correct = orient(HAND_P, HAND_TRUTH)
    np.testing.assert_allclose(conf, [0.9, 0.8, 0.5, 1.0, 1.0])
    np.testing.assert_array_equal(correct, [True, False, False, False, True])


def test_bookmaker_w_hand_case():
    conf, correct = orient(HAND_P, HAND_TRUTH)
    np.testing.assert_allclose(bookmaker_terms(conf, correct), [1, -4, -1, -100, 1])
    assert bookmaker_w(conf, correct) == pytest.approx(-103 / 5)
    # a smaller cap bounds every loss
    assert bookmaker_w(conf, correct, cap=10) == pytest.approx((1 - 4 - 1 - 10 + 1) / 5)


def test_bins_hand_case():
    conf, correct = orient(HAND_P, HAND_TRUTH)
    table = bin_table(conf, correct)
    assert table["bin"].tolist() == [
        "0.5-0.6", "0.6-0.7", "0.7-0.8", "0.8-0.9", "0.9-0.95", "0.95-0.99", "0.99-1",
    ]
    assert table["n"].tolist() == [1, 0, 0, 1, 1, 0, 2]
    np.testing.assert_allclose(table["share"], [0.2, 0, 0, 0.2, 0.2, 0, 0.4])
    acc = table["accuracy"].to_numpy()
    np.testing.assert_allclose(acc[[0, 3, 4, 6]], [0.0, 0.0, 1.0, 0.5])
    assert np.isnan(acc[[1, 2, 5]]).all()
    # ECE by hand: 0.2*|0-0.5| + 0.2*|0-0.8| + 0.2*|1-0.9| + 0.4*|0.5-1.0|
    assert expected_calibration_error(conf, correct) == pytest.approx(0.1 + 0.16 + 0.02 + 0.2)


def test_bin_edges_are_left_closed_and_last_closed():
    conf = np.array([0.5, 0.6, 0.95, 0.99, 1.0, 0.9499999])
    table = bin_table(conf, np.ones(6, dtype=bool))
    assert dict(zip(table["bin"], table["n"])) == {
        "0.5-0.6": 1, "0.6-0.7": 1, "0.7-0.8": 0, "0.8-0.9": 0,
        "0.9-0.95": 1, "0.95-0.99": 1, "0.99-1": 2,
    }


def test_calibrated_predictions_break_even(rng):
    """Monte Carlo oracle: when y ~ Bernoulli(P), E[W_i] = P − (1 − P)·P/(1 − P) = 0."""
    conf = rng.uniform(0.5, 0.98, size=200_000)
    correct = rng.random(conf.size) < conf
    terms = bookmaker_terms(conf, correct)
    se = terms.std() / np.sqrt(terms.size)
    assert abs(terms.mean()) < 4 * se
    # accuracy matches confidence in every bin, so ECE is small (sampling error only)
    assert expected_calibration_error(conf, correct) < 0.01
    # over-confident predictions lose money
    over = rng.random(conf.size) < conf - 0.1
    assert bookmaker_w(conf, over) < -0.5


def test_brier_and_log_loss_equal_their_definitions(rng):
    """scikit-learn computes them; the oracle is the definition, one pair at a time."""
    p = rng.random(500)
    p[:5] = [0.0, 1.0, 0.5, 1.0, 0.0]
    truth = rng.random(500) < p
    truth[:5] = [False, True, True, True, False]
    truth[5] = p[5] < 0.5  # a wrong prediction
    conf, correct = orient(p, truth)
    brier = sum((pi - ti) ** 2 for pi, ti in zip(p, truth)) / len(p)
    assert brier_score(conf, correct) == pytest.approx(brier, abs=1e-12)
    losses = [-np.log(min(max(pi if ti else 1 - pi, 1e-15), 1 - 1e-15)) for pi, ti in zip(p, truth)]
    assert log_loss(correct, conf) == pytest.approx(np.mean(losses), rel=1e-12)
    assert log_loss(truth, p) == pytest.approx(np.mean(losses), rel=1e-12)  # un-oriented: the same
    # a certain, wrong prediction loses exactly -log(eps)
    assert log_loss(np.array([False]), np.array([1.0])) == pytest.approx(-np.log(1e-15), rel=1e-15)
    assert np.isnan(brier_score(np.array([]), np.array([], bool)))


def test_cap_confidence():
    conf = np.array([0.5, 0.96, 1.0])
    np.testing.assert_allclose(cap_confidence(conf, 0.95), [0.5, 0.95, 0.95])
    assert cap_confidence(conf, None) is not None
    # capping at 0.95 bounds each loss at 19
    assert bookmaker_terms(cap_confidence(conf, 0.95), np.zeros(3, bool)).min() == pytest.approx(-19)
    with pytest.raises(ValueError):
        cap_confidence(conf, 0.3)


def _tau_b_by_pairs(x, y):
    """Kendall's tau-b by definition: (concordant − discordant) / sqrt(untied_x · untied_y)."""
    n = len(x)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    sx = [np.sign(x[i] - x[j]) for i, j in pairs]
    sy = [np.sign(y[i] - y[j]) for i, j in pairs]
    denom = np.sqrt(np.count_nonzero(sx) * np.count_nonzero(sy))
    return sum(a * b for a, b in zip(sx, sy)) / denom if denom else 0.0


@pytest.mark.parametrize("n", [1, 2, 5, 10, 40])
def test_kendall_tau_equals_its_definition(rng, n):
    for _ in range(20):
        x = rng.integers(0, 4, n).astype(float)  # plenty of ties
        y = rng.normal(size=n)
        y[: n // 3] = 0.0
        assert kendall_tau(x, y) == pytest.approx(_tau_b_by_pairs(x, y), abs=1e-12)


def test_kendall_tau_all_tied_is_zero():
    assert kendall_tau(np.zeros(5), np.arange(5.0)) == 0.0
    # scipy divides by two square roots: equal rankings may give 1 - 2^-52
    assert kendall_tau(np.arange(5.0), np.arange(5.0)) == pytest.approx(1.0, abs=1e-15)
    assert kendall_tau(np.arange(5.0), -np.arange(5.0)) == pytest.approx(-1.0, abs=1e-15)


def test_input_validation():
    with pytest.raises(ValueError):
        orient(np.array([0.2, 1.2]), np.array([True, False]))
    with pytest.raises(ValueError):
        orient(np.array([0.2]), np.array([True, False]))
    with pytest.raises(ValueError):
        bookmaker_w(np.array([0.3]), np.array([True]))  # not oriented
    assert np.isnan(bookmaker_w(np.array([]), np.array([], dtype=bool)))


def test_paired_test_matches_scipy(rng):
    a = rng.normal(size=30)
    b = a + rng.normal(0.3, 1.0, size=30)
    stat, p = paired_test(a, b, "t")
    ref = stats.ttest_rel(a, b)
    assert (stat, p) == pytest.approx((ref.statistic, ref.pvalue))
    x = rng.integers(0, 300, 40).astype(float)
    y = x + rng.integers(-50, 80, 40)
    stat, p = paired_test(x, y, "wilcoxon")
    ref = stats.wilcoxon(x, y)
    assert (stat, p) == pytest.approx((ref.statistic, ref.pvalue))
    assert p < 0.05  # y is shifted up by ~15 on average


def test_paired_test_degenerate_cases():
    same = np.arange(6.0)
    assert paired_test(same, same, "wilcoxon") == (0.0, 1.0)
    assert paired_test(same, same, "t") == (0.0, 1.0)
    stat, p = paired_test(same + 2, same, "t")
    assert stat == np.inf and p == 0.0
    assert all(np.isnan(paired_test(np.ones(1), np.zeros(1), "t")))
    with pytest.raises(ValueError):
        paired_test(same, same, "sign")
