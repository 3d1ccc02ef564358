"""Calibration metrics of pairwise predictions: bins, the bookmaker W, ECE, Brier, log loss, tau.

A prediction is ``p_a_better = P(MAP_a > MAP_b)`` for a pair of systems; the
truth is the sign of ``ΔMAP = MAP_a − MAP_b`` under the full judgments.
Following Carterette (2007, §4.4; docs/math/bookmaker.md) every prediction is *oriented*
towards the side it favours: the confidence is ``P_i = max(p, 1 − p) ≥ ½``
and ``y_i = 1`` when the favoured side is the true winner. A prediction of
exactly ½ favours ``a`` (the choice does not change W, the bins or the
scores, which are symmetric at ½). Pairs whose true ΔMAP is exactly 0 have no
winner and are left out of every metric by the caller (see
:func:`relimpute.calibration.run_study`).

All functions here take and return plain arrays and numbers; labels and
tables live in :mod:`relimpute.calibration.report`.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pandas as pd

from ..stats import bookmaker_winnings

#: Bin edges of Carterette (2007) Table 2: [0.5, 0.6), ..., [0.95, 0.99), [0.99, 1.0].
BIN_EDGES = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)
#: Cap on a single loss −W_i (Carterette 2007, §4.4).
W_CAP = 100.0


def bin_labels(edges: tuple[float, ...] = BIN_EDGES) -> list[str]:
    """``["0.5-0.6", ..., "0.99-1.0"]`` for the given edges."""
    return [f"{lo:g}-{hi:g}" for lo, hi in pairwise(edges)]


def orient(p_a_better: np.ndarray, a_better: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Confidence ``P_i = max(p, 1 − p)`` and correctness ``y_i`` of pairwise predictions.

    Parameters
    ----------
    p_a_better
        ``(n,)`` predicted probability that the first system is better.
    a_better
        ``(n,)`` bool, True when the first system is truly better.

    Returns
    -------
    confidence, correct
        ``(n,)`` float in [½, 1] and ``(n,)`` bool.
    """
    p = np.asarray(p_a_better, dtype=float)
    truth = np.asarray(a_better, dtype=bool)
    if p.shape != truth.shape:
        raise ValueError(f"p_a_better {p.shape} and a_better {truth.shape} differ in shape")
    if p.size and (np.isnan(p).any() or p.min() < 0 or p.max() > 1):
        raise ValueError("probabilities must lie in [0, 1]")
    predict_a = p >= 0.5
    return np.where(predict_a, p, 1.0 - p), predict_a == truth


def _check(confidence: np.ndarray, correct: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    conf = np.asarray(confidence, dtype=float)
    y = np.asarray(correct, dtype=bool)
    if conf.shape != y.shape or conf.ndim != 1:
        raise ValueError(f"confidence {conf.shape} and correct {y.shape} must be equal 1-d shapes")
    if conf.size and (np.isnan(conf).any() or conf.min() < 0.5 or conf.max() > 1):
        raise ValueError("oriented confidence must lie in [0.5, 1] (use orient() first)")
    return conf, y


def cap_confidence(confidence: np.ndarray, cap: float | None) -> np.ndarray:
    """Confidence capped at ``cap`` (Carterette 2007 §5: capping at 0.95 against over-fitting)."""
    conf = np.asarray(confidence, dtype=float)
    if cap is None:
        return conf
    if not 0.5 <= cap <= 1.0:
        raise ValueError(f"cap must lie in [0.5, 1], got {cap}")
    return np.minimum(conf, cap)


def bookmaker_terms(confidence: np.ndarray, correct: np.ndarray, cap: float = W_CAP) -> np.ndarray:
    """Per-pair winnings ``W_i = y_i − (1 − y_i) P_i / (1 − P_i)`` with ``−W_i ≤ cap``.

    Carterette (2007), §4.4 (docs/math/bookmaker.md). A wrong prediction made with
    certainty (``P_i = 1``) loses exactly ``cap``.
    """
    conf, y = _check(confidence, correct)
    return bookmaker_winnings(conf, y, cap)


def bookmaker_w(confidence: np.ndarray, correct: np.ndarray, cap: float = W_CAP) -> float:
    """The bookmaker statistic W: the mean of :func:`bookmaker_terms` (NaN for no pairs)."""
    terms = bookmaker_terms(confidence, correct, cap)
    return float(terms.mean()) if terms.size else float("nan")


def bin_index(confidence: np.ndarray, edges: tuple[float, ...] = BIN_EDGES) -> np.ndarray:
    """Bin of each confidence: left-closed bins, the last one closed on both sides."""
    conf = np.asarray(confidence, dtype=float)
    idx = np.searchsorted(np.asarray(edges), conf, side="right") - 1
    return np.clip(idx, 0, len(edges) - 2)


def bin_table(
    confidence: np.ndarray, correct: np.ndarray, edges: tuple[float, ...] = BIN_EDGES
) -> pd.DataFrame:
    """Carterette's Table 2 columns: per confidence bin, count, share of pairs, accuracy.

    Returns a frame with ``bin, lower, upper, n, share, mean_confidence,
    accuracy`` (one row per bin, empty bins with NaN accuracy).
    """
    conf, y = _check(confidence, correct)
    idx = bin_index(conf, edges)
    n_bins = len(edges) - 1
    n = np.bincount(idx, minlength=n_bins)
    hits = np.bincount(idx, weights=y.astype(float), minlength=n_bins)
    conf_sum = np.bincount(idx, weights=conf, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.where(n > 0, hits / np.maximum(n, 1), np.nan)
        mean_conf = np.where(n > 0, conf_sum / np.maximum(n, 1), np.nan)
    total = max(int(n.sum()), 1)
    return pd.DataFrame(
        {
            "bin": bin_labels(edges),
            "lower": np.asarray(edges[:-1], dtype=float),
            "upper": np.asarray(edges[1:], dtype=float),
            "n": n.astype(np.int64),
            "share": n / total,
            "mean_confidence": mean_conf,
            "accuracy": accuracy,
        }
    )


def expected_calibration_error(
    confidence: np.ndarray, correct: np.ndarray, edges: tuple[float, ...] = BIN_EDGES
) -> float:
    """ECE: ``Σ_b (n_b / N) |accuracy_b − mean confidence_b|`` over the Table 2 bins."""
    table = bin_table(confidence, correct, edges)
    used = table["n"].to_numpy() > 0
    if not used.any():
        return float("nan")
    gap = np.abs(table["accuracy"].to_numpy()[used] - table["mean_confidence"].to_numpy()[used])
    weights = table["n"].to_numpy()[used] / table["n"].sum()
    return float(np.sum(weights * gap))


def brier_score(confidence: np.ndarray, correct: np.ndarray) -> float:
    """Mean ``(P_i − y_i)²`` (equal to the Brier score of the un-oriented predictions).

    scikit-learn's :func:`~sklearn.metrics.brier_score_loss`.
    """
    from sklearn.metrics import brier_score_loss

    conf, y = _check(confidence, correct)
    if not conf.size:
        return float("nan")
    return float(brier_score_loss(y, conf, labels=[False, True]))


def kendall_tau(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b between two score vectors (0 when either has no untied pair).

    scipy's :func:`~scipy.stats.kendalltau` (tau-b). Carterette (2007) §4.4
    compares the ranking by E[MAP] with the true one. When one side is
    entirely tied (e.g. every MAP is 0 before any judgment) tau-b is
    undefined; it is reported as 0, "no information", rather than dropped,
    so that means over trials are not biased towards easy trials.
    """
    from scipy.stats import kendalltau

    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"x {a.shape} and y {b.shape} must be equal 1-d shapes")
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return 0.0
    return float(kendalltau(a, b).statistic)
