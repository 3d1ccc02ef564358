"""The difference of two systems under the corpus bootstrap (Cormack & Lynam 2006, §9).

Both systems are scored on the same bootstrap corpora (shared resamples), so
the per-resample difference ``d* = f(AP*_a) − f(AP*_b)`` keeps the correlation
of their results; σ_d is its standard deviation. ``scale="logit"`` uses
``f = logit`` (ε-nudged), the log-odds ratio the paper advances;
``scale="ap"`` the plain difference. The mean over topics (ΔMAP or ΔL-MAP)
is bootstrapped the same way, and the per-topic effects feed
:func:`~relimpute.precision.meta.meta_analysis`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._nanstats import nan_mean, nan_sd
from ..stats import z_value
from .intervals import DEFAULT_EPSILON, logit
from .meta import MetaAnalysis, meta_analysis, two_sided_p
from .resample import CorpusBootstrap

SCALES = ("ap", "logit")


@dataclass(frozen=True, slots=True, eq=False)
class PairedDifference:
    """Per-topic and mean difference of system ``a`` minus system ``b``.

    ``difference``, ``standard_error`` are ``(T,)``; ``mean_difference`` and
    ``mean_standard_error`` are for the mean over topics.
    """

    system_a: str
    system_b: str
    scale: str
    level: float
    query_ids: tuple[str, ...]
    difference: np.ndarray
    standard_error: np.ndarray
    mean_difference: float
    mean_standard_error: float

    @property
    def mean_interval(self) -> tuple[float, float]:
        half = z_value(self.level) * self.mean_standard_error
        return self.mean_difference - half, self.mean_difference + half

    def meta(self, model: str = "random") -> MetaAnalysis:
        """Fixed- or random-effects combination of the per-topic differences."""
        return meta_analysis(self.difference, self.standard_error, model, level=self.level)

    def to_frame(self) -> pd.DataFrame:
        half = z_value(self.level) * self.standard_error
        return pd.DataFrame(
            {
                "system_a": self.system_a,
                "system_b": self.system_b,
                "scale": self.scale,
                "query_id": list(self.query_ids),
                "difference": self.difference,
                "standard_error": self.standard_error,
                "low": self.difference - half,
                "high": self.difference + half,
                "p_value": two_sided_p(self.difference, self.standard_error),
            }
        )

    def summary_frame(self) -> pd.DataFrame:
        """Rows for the mean over topics and the fixed- and random-effects combinations."""
        low, high = self.mean_interval
        rows = [
            {
                "query_id": "mean",
                "difference": self.mean_difference,
                "standard_error": self.mean_standard_error,
                "low": low,
                "high": high,
                "p_value": float(two_sided_p(self.mean_difference, self.mean_standard_error)),
            }
        ]
        for model in ("fixed", "random"):
            meta = self.meta(model)
            rows.append(
                {
                    "query_id": f"{model}-effects",
                    "difference": meta.effect,
                    "standard_error": meta.standard_error,
                    "low": meta.low,
                    "high": meta.high,
                    "p_value": meta.p_value,
                }
            )
        frame = pd.DataFrame(rows)
        frame.insert(0, "scale", self.scale)
        frame.insert(0, "system_b", self.system_b)
        frame.insert(0, "system_a", self.system_a)
        return frame

    def __str__(self) -> str:
        low, high = self.mean_interval
        return (
            f"{self.system_a} - {self.system_b} ({self.scale}): mean {self.mean_difference:+.4f} "
            f"[{low:+.4f}, {high:+.4f}] at {self.level:.0%} over {len(self.query_ids)} topics"
        )


def paired_difference(
    boot: CorpusBootstrap,
    system_a: str,
    system_b: str,
    *,
    scale: str = "logit",
    level: float = 0.95,
    epsilon: float = DEFAULT_EPSILON,
) -> PairedDifference:
    """Bootstrap the difference of two systems of ``boot`` with shared resamples."""
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; choose from {SCALES}")
    z_value(level)
    lookup = {name: i for i, name in enumerate(boot.systems)}
    for name in (system_a, system_b):
        if name not in lookup:
            raise KeyError(f"unknown system {name!r}; have {list(boot.systems)}")
    a, b = lookup[system_a], lookup[system_b]
    f = (lambda x: x) if scale == "ap" else (lambda x: logit(x, epsilon))
    observed = f(boot.observed[a]) - f(boot.observed[b])
    resampled = f(boot.replicates[a]) - f(boot.replicates[b])  # (T, B), same corpora
    mean_resampled = nan_mean(resampled, axis=0)
    return PairedDifference(
        system_a=system_a,
        system_b=system_b,
        scale=scale,
        level=float(level),
        query_ids=boot.query_ids,
        difference=observed,
        standard_error=nan_sd(resampled),
        mean_difference=float(observed.mean()),
        mean_standard_error=float(nan_sd(mean_resampled)),
    )
