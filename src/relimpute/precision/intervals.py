"""Confidence intervals for AP from the corpus bootstrap (Cormack & Lynam 2006, §5).

Four registered methods, each a function of a :class:`CorpusBootstrap`:

``normal``
    ``AP ± z σ`` with σ the standard deviation of the bootstrap APs.
``logit``
    ``logit⁻¹(logit(AP) ± z σ_logit)``; AP values of 0 and 1 (observed and
    resampled) are first nudged to ε and 1 − ε.
``percentile``
    The ``(1 − level)/2`` and ``(1 + level)/2`` quantiles of the bootstrap APs.
``bca``
    Efron's bias-corrected and accelerated percentile interval (Efron &
    Tibshirani 1994, §14.3): ``z0`` from the share of resamples below AP
    (ties count ½, as ``scipy.stats.bootstrap``), the acceleration from the
    delete-one-document jackknife.

Resamples with ``R* = 0`` (AP undefined) are left out of every method. When
two halves of a corpus are equally likely, a 95% interval computed on one
contains the other's value with probability 2Φ(1.96/√2) − 1 = 83.5%
(§6, :func:`other_sample_coverage`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit

from .._deprecation import deprecated_alias
from .._normal import normal_cdf, normal_quantile
from .._registry import Registry
from ..stats import z_value
from ._nanstats import nan_sd
from .resample import CorpusBootstrap

DEFAULT_EPSILON = 1e-3


@dataclass(frozen=True, slots=True, eq=False)
class APIntervals:
    """Per system and topic: AP and its confidence interval.

    Attributes
    ----------
    systems, query_ids
        Labels of the ``(S, T)`` arrays.
    method, level
        How the interval was made and its nominal confidence.
    estimate, low, high
        ``(S, T)`` AP and the interval bounds (``confidence_interval`` in scipy's terms).
    """

    systems: tuple[str, ...]
    query_ids: tuple[str, ...]
    method: str
    level: float
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray

    def to_frame(self) -> pd.DataFrame:
        n_sys, n_top = self.estimate.shape
        return pd.DataFrame(
            {
                "system": np.repeat(self.systems, n_top),
                "query_id": np.tile(self.query_ids, n_sys),
                "method": self.method,
                "level": self.level,
                "ap": self.estimate.ravel(),
                "low": self.low.ravel(),
                "high": self.high.ravel(),
            }
        )

    def __str__(self) -> str:
        width = np.nanmean(self.high - self.low)
        return (
            f"APIntervals({self.method}, {self.level:.0%}, {self.estimate.size} lists, "
            f"mean width {width:.3f})"
        )


def logit(x, epsilon: float = DEFAULT_EPSILON) -> np.ndarray:
    """``log(x / (1 − x))`` with x clipped to ``[ε, 1 − ε]`` (the paper's nudging of 0 and 1)."""
    x = np.clip(np.asarray(x, dtype=float), epsilon, 1.0 - epsilon)
    return np.log(x) - np.log1p(-x)


def other_sample_coverage(level: float) -> float:
    """Predicted share of an independent replicate inside a normal interval: ``2Φ(z/√2) − 1``."""
    return float(2.0 * normal_cdf(z_value(level) / np.sqrt(2.0)) - 1.0)


def sorted_quantile(ordered: np.ndarray, n_valid: np.ndarray, q) -> np.ndarray:
    """Linear-interpolation quantile (numpy's default) of rows sorted with NaN last.

    ``q`` may differ per row (it broadcasts against ``ordered.shape[:-1]``).
    """
    q = np.broadcast_to(np.asarray(q, dtype=float), ordered.shape[:-1])
    position = np.clip(q, 0.0, 1.0) * np.maximum(n_valid - 1, 0)
    below = np.floor(position).astype(np.int64)
    above = np.minimum(below + 1, np.maximum(n_valid - 1, 0))
    frac = position - below
    lo = np.take_along_axis(ordered, below[..., None], axis=-1)[..., 0]
    hi = np.take_along_axis(ordered, above[..., None], axis=-1)[..., 0]
    return np.where(n_valid > 0, lo + frac * (hi - lo), np.nan)


def normal_interval(boot: CorpusBootstrap, level: float, epsilon: float):
    half = z_value(level) * nan_sd(boot.replicates)
    return boot.observed - half, boot.observed + half


def logit_interval(boot: CorpusBootstrap, level: float, epsilon: float):
    centre = logit(boot.observed, epsilon)
    half = z_value(level) * nan_sd(logit(boot.replicates, epsilon))
    return expit(centre - half), expit(centre + half)


def percentile_interval(boot: CorpusBootstrap, level: float, epsilon: float):
    ordered = np.sort(boot.replicates, axis=-1)
    n_valid = np.sum(np.isfinite(ordered), axis=-1)
    tail = (1.0 - level) / 2.0
    return sorted_quantile(ordered, n_valid, tail), sorted_quantile(ordered, n_valid, 1.0 - tail)


def bca_interval(boot: CorpusBootstrap, level: float, epsilon: float):
    return bca_bounds(boot.replicates, boot.observed, boot.acceleration, level)


def bca_bounds(replicates, observed, acceleration, level: float):
    """BCa bounds from replicates ``(..., B)``, the estimate and the acceleration ``(...)``.

    Follows ``scipy.stats.bootstrap(method="BCa")`` (Efron & Tibshirani 1994,
    Eq. 14.9-14.10), NaN replicates left out.
    """
    replicates = np.asarray(replicates, dtype=float)
    observed = np.asarray(observed, dtype=float)[..., None]
    n_valid = np.sum(np.isfinite(replicates), axis=-1)
    share = (np.sum(replicates < observed, -1) + np.sum(replicates <= observed, -1)) / (
        2.0 * np.maximum(n_valid, 1)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        z0 = normal_quantile(share)
        tail = normal_quantile((1.0 - level) / 2.0)
        bounds = []
        for z in (tail, -tail):
            shifted = z0 + z
            q = normal_cdf(z0 + shifted / (1.0 - acceleration * shifted))
            bounds.append(np.where(np.isfinite(q), q, np.where(z < 0, 0.0, 1.0)))
    ordered = np.sort(replicates, axis=-1)
    return tuple(sorted_quantile(ordered, n_valid, q) for q in bounds)


IntervalMethod = Callable[[CorpusBootstrap, float, float], tuple[np.ndarray, np.ndarray]]
METHODS: Registry[IntervalMethod] = Registry("interval method", error=ValueError, discover="relimpute.precision")


def register_interval_method(name: str, method: IntervalMethod) -> None:
    """Make ``method`` available as ``ap_intervals(..., method=name)``."""
    METHODS.register(method, name=name)


#: the name register_interval_method had until 0.3.0 (deprecated)
register = deprecated_alias(register_interval_method, "register")

register_interval_method("normal", normal_interval)
register_interval_method("logit", logit_interval)
register_interval_method("percentile", percentile_interval)
register_interval_method("bca", bca_interval)


def ap_intervals(
    boot: CorpusBootstrap,
    method: str = "logit",
    *,
    level: float = 0.95,
    epsilon: float = DEFAULT_EPSILON,
) -> APIntervals:
    """Confidence intervals for the AP of every system and topic.

    ``method`` is one of :data:`METHODS` (``normal``, ``logit``, ``percentile``,
    ``bca``); ``epsilon`` is the nudging of 0 and 1 on the logit scale.
    """
    interval = METHODS.get(method)
    z_value(level)
    if not 0.0 < epsilon < 0.5:
        raise ValueError(f"epsilon must lie in (0, 0.5), got {epsilon}")
    low, high = interval(boot, level, epsilon)
    return APIntervals(
        systems=boot.systems,
        query_ids=boot.query_ids,
        method=method,
        level=float(level),
        estimate=boot.observed,
        low=np.asarray(low, dtype=float),
        high=np.asarray(high, dtype=float),
    )
