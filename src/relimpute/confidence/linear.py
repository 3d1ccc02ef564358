"""Measures linear in relevance: exact mean and variance.

A linear measure scores a ranking as ``M = Σ_i w(r(i)) X_i`` with a weight
per rank and none for unretrieved documents, so with independent
Bernoulli(p) relevance ``E[M] = Σ w p`` and ``Var[M] = Σ w² p(1 - p)``; for
two systems ``ΔM = Σ (w_a - w_b) X`` likewise. Supported (binary relevance):

- ``P@k``: ``w(r) = 1/k`` for r ≤ k (trec_eval ``P_k``);
- ``RBP(p=φ)`` and ``RBP(p=φ)@k``: ``w(r) = (1 - φ) φ^(r-1)`` (Moffat & Zobel
  2008; the lower-bound RBP, not its residual);
- ``DCG@k`` and ``DCG``: ``w(r) = 1 / log2(r + 1)`` (Järvelin & Kekäläinen 2002,
  binary gains, unnormalised);
- ``NumRelRet``: ``w(r) = 1`` (trec_eval ``num_rel_ret``).

Names go through :func:`relimpute.measures.parse_measure` first, so
trec_eval's and ir_measures' spellings (``P_10``, ``num_rel_ret``) work too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

_PATTERNS = {
    "P": re.compile(r"^P@(?P<k>\d+)$"),
    "RBP": re.compile(r"^RBP(?:\(p=(?P<p>[0-9.eE+-]+)\))?(?:@(?P<k>\d+))?$"),
    "DCG": re.compile(r"^DCG(?:@(?P<k>\d+))?$"),
    "NumRelRet": re.compile(r"^NumRelRet$"),
}


@dataclass(frozen=True, slots=True)
class LinearMeasure:
    """A measure ``Σ_i w(r(i)) X_i``: family, cutoff and RBP persistence."""

    family: str
    cutoff: int | None = None
    persistence: float = 0.8

    def __post_init__(self) -> None:
        if self.cutoff is not None and self.cutoff < 1:
            raise ValueError(f"{self.family}: cutoff must be a positive integer, got {self.cutoff}")
        if self.family == "P" and self.cutoff is None:
            raise ValueError("P needs a cutoff, e.g. P@10")
        if not 0.0 < self.persistence < 1.0:
            raise ValueError(f"RBP persistence must lie in (0, 1), got {self.persistence}")

    def weights(self, depth: int) -> np.ndarray:
        """``(depth,)`` weight of ranks 1..depth."""
        r = np.arange(1, depth + 1, dtype=np.float64)
        if self.family == "P":
            w = np.full(depth, 1.0 / self.cutoff)
        elif self.family == "NumRelRet":
            w = np.ones(depth)
        elif self.family == "RBP":
            w = (1.0 - self.persistence) * self.persistence ** (r - 1.0)
        else:
            w = 1.0 / np.log2(r + 1.0)
        if self.cutoff is not None:
            w[self.cutoff :] = 0.0
        return w

    def __str__(self) -> str:
        text = self.family + (f"(p={self.persistence:g})" if self.family == "RBP" else "")
        return text + (f"@{self.cutoff}" if self.cutoff is not None else "")


def canonical_name(name) -> str:
    """A measure's canonical name (``map`` -> ``AP``, ``P_10`` -> ``P@10``); as given if unknown."""
    from ..measures import parse_measure

    try:
        return str(parse_measure(name))
    except ValueError:
        return str(name).replace(" ", "")


def parse_linear(name: str) -> LinearMeasure | None:
    """The :class:`LinearMeasure` named ``name`` (``P@10``, ``RBP(p=0.8)``, ``DCG@10``), or None."""
    text = canonical_name(name)
    for family, pattern in _PATTERNS.items():
        match = pattern.match(text)
        if match:
            k = match.groupdict().get("k")
            p = match.groupdict().get("p")
            return LinearMeasure(
                family, None if k is None else int(k), 0.8 if p is None else float(p)
            )
    return None


def weight_matrix(measure: LinearMeasure, ranking: np.ndarray, depth: np.ndarray, n_docs: int):
    """``(S, n)`` sparse weight of every document for every system of one topic."""
    width = ranking.shape[1]
    w = measure.weights(width)
    keep = np.arange(width)[None, :] < depth[:, None]
    rows, cols = np.nonzero(keep)
    return sp.csr_matrix((w[cols], (rows, ranking[rows, cols])), shape=(ranking.shape[0], n_docs))


def linear_moments(
    measure: LinearMeasure,
    ranking: np.ndarray,
    depth: np.ndarray,
    p: np.ndarray,
    pairs: np.ndarray | None = None,
):
    """Exact moments of a linear measure on one topic.

    Returns ``(mean (S,), var (S,), delta_mean (P,), delta_var (P,))``, the
    last two None without ``pairs``; ``Var[ΔM] = Σ (w_a - w_b)² v``.
    """
    w = weight_matrix(measure, ranking, depth, len(p))
    v = p * (1.0 - p)
    mean = w @ p
    var = w.multiply(w) @ v
    if pairs is None:
        return mean, var, None, None
    a, b = pairs[:, 0], pairs[:, 1]
    cross = np.asarray((w.multiply(v[None, :]) @ w.T).todense())
    delta_var = np.maximum(var[a] + var[b] - 2.0 * cross[a, b], 0.0)
    return mean, var, mean[a] - mean[b], delta_var
