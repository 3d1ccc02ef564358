"""Reliability diagrams a reader understands: labelled diagonal, Wilson intervals, counts, notes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from relimpute.calibration.metrics import bin_table
from relimpute.stats import wilson_interval
from relimpute.calibration.plots import FEW_PAIRS, reliability_diagram


@pytest.mark.parametrize("k, n", [(0, 5), (3, 10), (10, 10), (47, 120), (999, 1000)])
def test_wilson_interval_equals_scipy(k, n):
    low, high = wilson_interval(np.array([k]), np.array([n]))
    oracle = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert low[0] == pytest.approx(oracle.low, abs=1e-12)
    assert high[0] == pytest.approx(oracle.high, abs=1e-12)


def test_wilson_interval_by_hand_and_empty_bins():
    # k = 8 of n = 10, z = 1.959964: centre (8 + z²/2)/(10 + z²), half z√(1.6 + z²/4)/(10 + z²)
    z = 1.959963984540054
    centre, half = (8 + z**2 / 2) / (10 + z**2), z * np.sqrt(1.6 + z**2 / 4) / (10 + z**2)
    low, high = wilson_interval(np.array([8, 0]), np.array([10, 0]))
    np.testing.assert_allclose([low[0], high[0]], [centre - half, centre + half], rtol=1e-12)
    assert np.isnan(low[1]) and np.isnan(high[1])


def test_wilson_interval_holds_the_observed_share_exactly():
    """Rounding must not leave k/n outside (k = n once gave 1 − 1e-16 for 850 of the n below
    5,000, and the reliability diagram then refused a negative error bar)."""
    n = np.arange(1, 5000)
    k = np.random.default_rng(1).integers(0, n + 1)
    for successes in (n, np.zeros_like(n), k):
        low, high = wilson_interval(successes, n)
        assert np.all(low <= successes / n) and np.all(successes / n <= high)
    assert np.all(wilson_interval(n, n)[1] == 1.0)


def test_diagram_with_a_perfect_bin(tmp_path):
    table = bin_table(np.full(29, 0.97), np.ones(29, dtype=bool)).assign(strategy="fusion-mc")
    reliability_diagram(table, tmp_path / "perfect.png")
    assert (tmp_path / "perfect.png").stat().st_size > 0


def _bins(n_pairs: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    frames = []
    for strategy in ("mtc", "fusion-mc"):
        confidence = rng.uniform(0.5, 1.0, n_pairs)
        correct = rng.uniform(size=n_pairs) < confidence
        frames.append(bin_table(confidence, correct).assign(strategy=strategy))
    return pd.concat(frames, ignore_index=True)


def test_diagram_labels_the_diagonal_names_the_study_and_notes_sparse_bins(tmp_path):
    sparse = _bins(40)  # ~6 pairs per bin, many below FEW_PAIRS
    assert (sparse["n"] < FEW_PAIRS).any()
    svg = reliability_diagram(sparse, tmp_path / "d.svg", title="DL 2019: 3 trials").read_text()
    assert "perfectly calibrated" in svg and "DL 2019: 3 trials" in svg
    assert "too few to read" in svg and "Wilson" in svg
    assert "pairs per bin" in svg
    dense = _bins(5000)
    assert (dense.loc[dense["n"] > 0, "n"] >= FEW_PAIRS).all()
    svg = reliability_diagram(dense, tmp_path / "e.svg", capped=dense, cap=0.95).read_text()
    assert "too few to read" not in svg and "confidence capped at 0.95" in svg
