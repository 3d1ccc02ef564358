"""Generic statistics that measures, calibration and precision share.

Paired tests of two samples (Wilcoxon signed-rank, paired t), the two-sided
normal quantile, the Wilson interval of a proportion (Wilson 1927), the
log loss of probabilities against binary outcomes, and the bookmaker's winnings of
oriented predictions with the scores of a slice of them. Nothing here knows about
campaigns, runs or judgments.
"""

from __future__ import annotations

import warnings

import numpy as np

from ._normal import normal_quantile


def z_value(level: float) -> float:
    """Two-sided normal quantile: 1.96 for 0.95."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must lie in (0, 1), got {level}")
    return normal_quantile(0.5 + level / 2.0)


def wilson_interval(
    successes: np.ndarray, n: np.ndarray, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a binomial proportion (Wilson 1927), per entry; NaN where n = 0.

    Centre (k + z²/2) / (n + z²), half-width z √(k(n − k)/n + z²/4) / (n + z²),
    as :meth:`scipy.stats.binomtest(...).proportion_ci(method="wilson")`. The interval
    always holds k/n and lies in [0, 1]; the bounds are moved there where rounding would
    leave them out (k = n gives 1 − 1e-16 for some n).
    """
    k = np.asarray(successes, dtype=float)
    size = np.asarray(n, dtype=float)
    z = z_value(level)
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = (k + z**2 / 2) / (size + z**2)
        half = z * np.sqrt(k * (size - k) / size + z**2 / 4) / (size + z**2)
        share = k / size
    empty = size == 0
    low = np.clip(np.minimum(centre - half, share), 0.0, 1.0)
    high = np.clip(np.maximum(centre + half, share), 0.0, 1.0)
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def paired_test(a: np.ndarray, b: np.ndarray, test: str) -> tuple[float, float]:
    """Statistic and two-sided p-value of a paired test of ``a`` against ``b``.

    ``test="wilcoxon"`` is :func:`scipy.stats.wilcoxon` (zero differences
    dropped, Wilcoxon's convention); ``test="t"`` is :func:`scipy.stats.ttest_rel`.
    Degenerate samples get defined answers instead of warnings: every
    difference 0 gives ``(0, 1)``; constant non-zero differences (up to rounding) give a t of
    ±inf with p = 0; fewer than two pairs give NaN.
    """
    from scipy.stats import ttest_rel, wilcoxon  # not on evaluate's plain path

    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired samples must be equal 1-d shapes, got {x.shape} and {y.shape}")
    if test not in ("wilcoxon", "t"):
        raise ValueError(f"test must be 'wilcoxon' or 't', got {test!r}")
    d = x - y
    if len(d) < 2:
        return float("nan"), float("nan")
    if np.all(d == 0):
        return 0.0, 1.0
    if test == "wilcoxon":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # normal approximation notes
            res = wilcoxon(x, y, zero_method="wilcox")
        return float(res.statistic), float(res.pvalue)
    if np.ptp(d) <= 1e-12 * max(1.0, float(np.abs(d).max())):  # constant up to rounding
        return float(np.sign(d.mean()) * np.inf), 0.0
    res = ttest_rel(x, y)
    return float(res.statistic), float(res.pvalue)


def binary_outcomes(y, p) -> tuple[np.ndarray, np.ndarray]:
    """``y`` as 1-d bool and ``p`` as 1-d float; equal shapes, not empty, ``p`` in [0, 1]."""
    y = np.asarray(y, dtype=bool).ravel()
    p = np.asarray(p, dtype=float).ravel()
    if y.shape != p.shape:
        raise ValueError(f"outcomes {y.shape} and probabilities {p.shape} differ in shape")
    if y.size == 0:
        raise ValueError("no outcomes to score")
    if np.isnan(p).any() or p.min() < 0 or p.max() > 1:
        raise ValueError("probabilities must lie in [0, 1]")
    return y, p


def log_loss(y, p, *, eps: float = 1e-15) -> float:
    """Mean ``−log`` of the probability given to the outcome, clipped to [eps, 1 − eps] (nats).

    ``y`` are the binary outcomes and ``p`` the probabilities of ``y = True``:
    the mean negative Bernoulli log likelihood. scikit-learn's
    :func:`~sklearn.metrics.log_loss` of the probabilities given to the
    outcome, clipped here (scikit-learn clips at machine epsilon only, and
    clipping the outcome's side keeps ``−log eps`` exact). Raises ValueError
    on no outcomes, unequal shapes, or probabilities outside [0, 1].
    """
    from sklearn.metrics import log_loss as sklearn_log_loss

    y, p = binary_outcomes(y, p)
    given = np.clip(np.where(y, p, 1.0 - p), eps, 1.0 - eps)
    return float(sklearn_log_loss(np.ones(len(y), dtype=bool), given, labels=[False, True]))


#: the stated confidence of a slice's "at ≥ 0.95" columns, and the share of those to be right
STATED = 0.95
#: fewer pairs than this in a slice: its target is not judged
MIN_PAIRS = 100
#: pairs whose true difference is smaller than this are "close"
CLOSE = 0.01


def bookmaker_winnings(confidence: np.ndarray, correct: np.ndarray, cap: float = 100.0) -> np.ndarray:
    """Per prediction ``W_i = y_i − (1 − y_i) P_i / (1 − P_i)`` with ``−W_i ≤ cap`` (Carterette
    2007 §4.4); ``confidence`` oriented (in [½, 1]), a wrong certain call loses ``cap``."""
    conf = np.asarray(confidence, dtype=float)
    odds = np.divide(conf, 1.0 - conf, out=np.full_like(conf, np.inf), where=conf < 1.0)
    return np.where(np.asarray(correct, dtype=bool), 1.0, -np.minimum(odds, cap))


def slice_scores(confidence: np.ndarray, correct: np.ndarray, w_i: np.ndarray) -> dict:
    """A slice of oriented predictions: pairs, W, accuracy, count, share and accuracy of those
    stated at ≥ 0.95, and its ``target`` (from :data:`MIN_PAIRS` pairs: W ≥ 0 and at least 95%
    of those stated at ≥ 0.95 right: ``met`` or ``missed``; else ``too few pairs``)."""
    conf = np.asarray(confidence, dtype=float)
    y = np.asarray(correct, dtype=bool)
    high = conf >= STATED
    n = len(conf)
    w = float(np.mean(w_i)) if n else float("nan")
    acc_high = float(y[high].mean()) if high.any() else float("nan")
    if n < MIN_PAIRS:
        target = "too few pairs"
    else:
        target = "met" if w >= 0 and not acc_high < STATED else "missed"  # none at 0.95: met
    return {
        "pairs": n,
        "w": w,
        "accuracy": float(y.mean()) if n else float("nan"),
        "pairs_conf_95": int(high.sum()),
        "share_conf_95": float(high.mean()) if n else float("nan"),
        "accuracy_conf_95": acc_high,
        "target": target,
    }
