"""Intervals for MAP and logistic MAP over topics (Cormack & Lynam 2006, §8).

``MAP`` averages AP over topics, ``L-MAP`` averages ``logit(AP)`` (ε-nudged).
Two ways to get their standard error, both giving ``estimate ± z σ``:

``bootstrap``
    σ is the standard deviation over resamples of the per-resample mean
    (paper's Table 3); topics use independent resamples, and a topic whose
    resample has ``R* = 0`` is left out of that resample's mean.
``parametric``
    σ combines the per-topic logit-scale standard deviations σ_t (Table 4).
    L-MAP: ``σ² = Σ_t σ_t² / T²``. MAP: each σ_t is carried to the AP scale by
    the derivative of AP with respect to logit(AP), ``AP − AP²`` (the paper's
    weight; read here as the delta method), ``σ² = Σ_t (AP_t − AP_t²)² σ_t² / T²``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._nanstats import nan_mean, nan_sd
from ..stats import z_value
from .intervals import DEFAULT_EPSILON, logit
from .resample import CorpusBootstrap

MEASURES = ("MAP", "L-MAP")
METHODS = ("bootstrap", "parametric")


@dataclass(frozen=True, slots=True, eq=False)
class MeanIntervals:
    """Per system: the mean over topics, its standard error and interval.

    ``estimate``, ``standard_error``, ``low``, ``high`` are ``(S,)``; L-MAP
    values are on the logit scale.
    """

    systems: tuple[str, ...]
    measure: str
    method: str
    level: float
    n_topics: np.ndarray
    estimate: np.ndarray
    standard_error: np.ndarray
    low: np.ndarray
    high: np.ndarray

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "system": list(self.systems),
                "measure": self.measure,
                "method": self.method,
                "level": self.level,
                "n_topics": self.n_topics,
                "estimate": self.estimate,
                "standard_error": self.standard_error,
                "low": self.low,
                "high": self.high,
            }
        )

    def __str__(self) -> str:
        return (
            f"MeanIntervals({self.measure}, {self.method}, {self.level:.0%}, "
            f"{len(self.systems)} systems, mean half-width "
            f"{np.mean(self.high - self.low) / 2:.4f})"
        )


def mean_intervals(
    boot: CorpusBootstrap,
    measure: str = "MAP",
    method: str = "parametric",
    *,
    level: float = 0.95,
    epsilon: float = DEFAULT_EPSILON,
    include: np.ndarray | None = None,
) -> MeanIntervals:
    """MAP or L-MAP intervals of every system.

    ``include`` is an ``(S, T)`` or ``(T,)`` bool mask of the topics each
    system's mean runs over (default: all topics; an empty list scores 0).
    """
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; choose from {MEASURES}")
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose from {METHODS}")
    z = z_value(level)
    shape = boot.observed.shape
    mask = np.ones(shape, dtype=bool) if include is None else np.broadcast_to(include, shape)
    n_topics = mask.sum(axis=1)
    if (n_topics == 0).any():
        raise ValueError("every system needs at least one included topic")
    weight = mask / n_topics[:, None]  # (S, T): 1/T on included topics
    to_scale = (lambda x: x) if measure == "MAP" else (lambda x: logit(x, epsilon))
    estimate = np.sum(weight * to_scale(boot.observed), axis=1)
    if method == "bootstrap":
        values = np.where(mask[..., None], to_scale(boot.replicates), np.nan)
        per_resample = nan_mean(values, axis=1)  # a topic with R* = 0 sits the resample out
        se = nan_sd(per_resample)
    else:
        sd_logit = nan_sd(logit(boot.replicates, epsilon))
        if measure == "MAP":
            ap = boot.observed
            sd_logit = (ap - ap**2) * sd_logit
        se = np.sqrt(np.sum(weight**2 * sd_logit**2, axis=1))
    return MeanIntervals(
        systems=boot.systems,
        measure=measure,
        method=method,
        level=float(level),
        n_topics=n_topics,
        estimate=estimate,
        standard_error=se,
        low=estimate - z * se,
        high=estimate + z * se,
    )
