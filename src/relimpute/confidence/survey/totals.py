"""The sums over the universe that AP, P@k and nDCG@k are made of, estimated from the sample.

Every total is T = Σ t(x) over single documents (and, for AP's numerator, over pairs). With
w_d = 1[d ∈ S] / π_d its Horvitz–Thompson (HT) estimate and the model's version are

    HT_x = Σ_u t_u(x) w_u        HT_p = Σ_u t_u(p) w_u        POP_p = Σ_{u ∈ U} t_u(p)

(a pair u = (j, k) weighs w_j w_k f_jk = 1 / π_jk, f_jk = 1 across strata or under Poisson
sampling). The estimator with the prediction scaled by λ is (``docs/sampled.md``)

    T̂(λ) = HT_x + λ (POP_p − HT_p)

λ = 0 is HT, λ = 1 the difference (GREG) estimator, a tuned λ PPI++ (Angelopoulos, Duchi &
Zrnic 2023); it is design-unbiased for every fixed λ and every p. Each :class:`Total` keeps the
derivatives ∂HT/∂w_d (``dx``, ``dp``) for the linearised variance (:mod:`.measures`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np



@dataclass
class Total:
    """One total's pieces (module docstring): ``ht_x``, ``ht_p``, ``pop_p`` and the
    derivatives ``dx``, ``dp`` over the universe's documents (``ht_x``, ``ht_p`` are ``(B,)``
    under replicate weights ``(B, n)``)."""

    ht_x: float | np.ndarray
    ht_p: float | np.ndarray
    pop_p: float
    dx: np.ndarray
    dp: np.ndarray

    def value(self, lam: float) -> float:
        """T̂(λ)."""
        return self.ht_x + lam * (self.pop_p - self.ht_p)

    def derivative(self, lam: float) -> np.ndarray:
        """∂T̂(λ)/∂w_d."""
        return self.dx - lam * self.dp


def linear_total(coef: np.ndarray, x: np.ndarray, p: np.ndarray, w: np.ndarray) -> Total:
    """T = Σ_d coef_d x_d over U (P@k's and DCG@k's numerators, R, a grade's count)."""
    return Total((w * (coef * x)).sum(axis=-1), (w * (coef * p)).sum(axis=-1),
                 float((coef * p).sum()), coef * x, coef * p)


def ranked_pair_sums(v: np.ndarray, w: np.ndarray, ranks: np.ndarray, stratum: np.ndarray,
                     factor: np.ndarray, inner: bool = False):
    """AP's numerator Σ_k v_k w_k / k + Σ_{j<k} v_j v_k w_j w_k f_jk / k of each run over its
    retrieved documents (``ranks`` (R, n) > 0, their positions), under each of the weights
    ``w`` (B, n), with ``factor`` f_h (B, H) within a stratum (1 across): ``(B, R)`` sums,
    their derivatives in each w_d ``(B, R, n)`` and, with ``inner``, each document's share
    from pairs inside its own stratum (``(B, R, n)``, else None).

    With y = v w in rank order and Y_{k−1} the sum of y above k (statAP's prefix form,
    :func:`relimpute.measures.statap.stat_ap`), the sum is Σ_k (y_k / k)(1 + Y'_{k−1}), Y'
    counting a same-stratum y with f_h; ∂/∂w_d = (v_d / r_d)(1 + Y'_{d−1}) + v_d Σ_{k > d} y_k
    f_dk / k; the inner share of d is f_h y_d (Y^h_{d−1} / r_d + Σ_{k > d, k ∈ h} y_k / k).
    """
    w = np.atleast_2d(np.asarray(w, dtype=float))
    ranks = np.atleast_2d(ranks)
    B = len(w)
    depth = max(int((ranks > 0).sum(1).max(initial=0)), 1)
    order = np.argsort(np.where(ranks > 0, ranks, np.iinfo(np.int64).max), axis=1,
                       kind="stable")[:, :depth]  # (R, D): documents in rank order
    factor = np.ascontiguousarray(np.broadcast_to(np.asarray(factor, dtype=float),
                                                  (B, np.shape(factor)[-1])))
    adjust = np.asarray([inner or not (factor[:, s] == 1.0).all()
                         for s in range(factor.shape[1])], dtype=bool)
    if B == 1 and "numba" not in sys.modules:  # one sample: the arrays (no numba to load;
        terms_of = ranked_pair_arrays  # the same numbers: where numba is, its kernel is faster)
    else:
        from ._ranked import ranked_pair_terms as terms_of  # numba: imported when first needed
    total, terms, deriv, share = terms_of(np.asarray(v, dtype=float), w, order,
                                          np.take_along_axis(ranks, order, 1),
                                          np.asarray(stratum)[order], factor, adjust, inner)
    if B == 1:  # one row is contiguous: numpy summed its terms pairwise (else in rank order)
        total = terms.sum(axis=-1)
    return total, deriv, share if inner else None


def ranked_pair_arrays(v, w, order, at, strata, factor, adjust, inner):
    """:func:`._ranked.ranked_pair_terms` (same arguments and results) as cumulative sums over
    (B, R, D) arrays, the form the kernel replaced, bit for bit: for one sample, whose arrays
    cost less than loading numba."""
    B, n = w.shape
    k = np.where(at > 0, at, 1).astype(float)
    vv = np.where(at > 0, v[order], 0.0)
    y = vv * w[:, order]  # (B, R, D)
    before, scaled = np.cumsum(y, axis=-1) - y, y / k
    after = _reverse_cumsum(scaled) - scaled
    share = np.zeros(y.shape)
    for s in np.flatnonzero(adjust):
        inside = strata == s
        if not inside.any():
            continue
        yin, sin = np.where(inside, y, 0.0), np.where(inside, scaled, 0.0)
        above, below = np.cumsum(yin, axis=-1) - yin, _reverse_cumsum(sin) - sin
        f = factor[:, s, None, None]
        before = before + np.where(inside, (f - 1.0) * above, 0.0)
        after = after + np.where(inside, (f - 1.0) * below, 0.0)
        if inner:
            share = np.where(inside, f * y * (above / k + below), share)
    terms = scaled * (1.0 + before)
    deriv = np.zeros((B, len(order), n))
    index = np.broadcast_to(order, y.shape)
    np.put_along_axis(deriv, index, vv / k * (1.0 + before) + vv * after, axis=2)
    full = np.zeros((B, len(order), n) if inner else (0, 0, 0))
    if inner:
        np.put_along_axis(full, index, share, axis=2)
    return terms.sum(axis=-1), terms, deriv, full


def _reverse_cumsum(a):
    return np.flip(np.cumsum(np.flip(a, -1), axis=-1), -1)


