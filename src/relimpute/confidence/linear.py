"""Measures linear in relevance: exact mean and variance.

A linear measure scores a ranking as ``M = Σ_i w(r(i)) X_i`` with a weight
per rank and none for unretrieved documents, so with independent
Bernoulli(p) relevance ``E[M] = Σ w p`` and ``Var[M] = Σ w² p(1 - p)``; for
two systems ``ΔM = Σ (w_a - w_b) X`` likewise. Which measures are linear,
and their weights, the measure registry says (``Measure.exact_moments()``
and ``Measure.rank_weights``, :mod:`relimpute.measures`): P@k, RBP(p=φ)[@k]
(Moffat & Zobel 2008, the lower bound), DCG[@k] (Järvelin & Kekäläinen 2002,
gain 1 per relevant document) and NumRelRet.
"""

from __future__ import annotations

import numpy as np

from ..measures import Measure, parse_measure


def linear_measure(name) -> Measure | None:
    """The registry's measure named ``name`` when it is linear in relevance, else None.

    Raises ValueError (the registry's, with its "did you mean") for unknown names.
    """
    measure = parse_measure(name)
    return measure if measure.exact_moments() == "linear" else None


def weight_matrix(measure: Measure, ranking: np.ndarray, depth: np.ndarray, n_docs: int):
    """``(S, n)`` sparse weight of every document for every system of one topic."""
    import scipy.sparse as sp  # here: the exact engine loads no scipy

    width = ranking.shape[1]
    w = measure.rank_weights(width)
    keep = np.arange(width)[None, :] < depth[:, None]
    rows, cols = np.nonzero(keep)
    return sp.csr_matrix((w[cols], (rows, ranking[rows, cols])), shape=(ranking.shape[0], n_docs))


def linear_moments(
    measure: Measure,
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
