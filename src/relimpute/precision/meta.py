"""Fixed- and random-effects meta-analysis of per-topic effects (Cormack & Lynam 2006, §9).

Each topic is a separate test with effect ``d_i`` and standard error ``σ_i``
(here from the corpus bootstrap). The fixed-effect estimate weights by
precision: ``d = Σ d_i σ_i⁻² / Σ σ_i⁻²`` with ``σ = (Σ σ_i⁻²)^{-1/2}`` (the
paper's formula). The random-effects model adds a between-topic variance
τ², estimated by DerSimonian & Laird (1986): ``Q = Σ w_i (d_i − d)²``,
``τ² = max(0, (Q − (k − 1)) / (Σ w − Σ w² / Σ w))``, weights ``1/(σ_i² + τ²)``.
Topics with ``σ_i = 0`` carry no precision estimate and are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._normal import normal_cdf
from ..stats import z_value

MODELS = ("fixed", "random")


@dataclass(frozen=True, slots=True, eq=False)
class MetaAnalysis:
    """A combined effect over topics.

    ``p_value`` is two-sided (effect = 0); ``tau2`` is 0 for the fixed model;
    ``q`` is Cochran's heterogeneity statistic.
    """

    model: str
    level: float
    n_topics: int
    effect: float
    standard_error: float
    low: float
    high: float
    p_value: float
    tau2: float
    q: float

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([{name: getattr(self, name) for name in self.__slots__}])

    def __str__(self) -> str:
        return (
            f"{self.model}-effects: {self.effect:+.4f} ± {self.standard_error:.4f} "
            f"[{self.low:+.4f}, {self.high:+.4f}] over {self.n_topics} topics, p = {self.p_value:.3g}"
        )


def two_sided_p(effect, standard_error):
    """Two-sided p-value of ``effect = 0`` under a normal with this standard error
    (NaN where the standard error is 0 and the effect too)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return 2.0 * normal_cdf(-np.abs(effect) / np.asarray(standard_error, dtype=float))


def meta_analysis(
    effects, standard_errors, model: str = "random", *, level: float = 0.95
) -> MetaAnalysis:
    """Combine per-topic ``effects`` with their ``standard_errors`` (1-d arrays)."""
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; choose from {MODELS}")
    d = np.asarray(effects, dtype=float)
    se = np.asarray(standard_errors, dtype=float)
    if d.shape != se.shape or d.ndim != 1:
        raise ValueError("effects and standard_errors must be 1-d arrays of the same length")
    usable = np.isfinite(d) & np.isfinite(se) & (se > 0)
    d, se = d[usable], se[usable]
    k = d.size
    if k == 0:
        raise ValueError("no topic has a positive standard error to weight by")
    w = 1.0 / se**2
    fixed = np.sum(w * d) / np.sum(w)
    q = float(np.sum(w * (d - fixed) ** 2))
    tau2 = 0.0
    if model == "random" and k > 1:
        tau2 = max(0.0, (q - (k - 1)) / (np.sum(w) - np.sum(w**2) / np.sum(w)))
        w = 1.0 / (se**2 + tau2)
    effect = float(np.sum(w * d) / np.sum(w))
    sigma = float(np.sum(w) ** -0.5)
    half = z_value(level) * sigma
    return MetaAnalysis(
        model=model,
        level=float(level),
        n_topics=int(k),
        effect=effect,
        standard_error=sigma,
        low=effect - half,
        high=effect + half,
        p_value=float(two_sided_p(effect, sigma)),
        tau2=float(tau2),
        q=q,
    )
