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


def ranked_pair_sum(v: np.ndarray, w: np.ndarray, rank: np.ndarray, stratum: np.ndarray,
                    factor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """AP's numerator Σ_k v_k w_k / k + Σ_{j<k} v_j v_k w_j w_k f_jk / k over the retrieved
    documents (``rank`` > 0, their positions in the run), and its derivative in each w_d.

    With y = v w in rank order and Y_{k−1} the sum of y above k (statAP's prefix form,
    :func:`relimpute.measures.statap.stat_ap`), the sum is Σ_k (y_k / k)(1 + Y'_{k−1}), Y'
    counting a same-stratum y with f_h; ∂/∂w_d = (v_d / r_d)(1 + Y'_{d−1}) + v_d Σ_{k > d} y_k
    f_dk / k. ``w`` may be ``(B, n)`` (replicate weights) and ``factor`` ``(H,)`` or ``(B, H)``:
    the sum is then ``(B,)``.
    """
    w = np.asarray(w, dtype=float)
    deriv = np.zeros(w.shape)
    at = np.flatnonzero(rank > 0)
    if not len(at):
        return np.zeros(w.shape[:-1]), deriv
    at = at[np.argsort(rank[at], kind="stable")]
    k = rank[at].astype(float)
    vv, y, h = v[at], v[at] * w[..., at], stratum[at]
    before = np.cumsum(y, axis=-1) - y
    scaled = y / k
    after = np.flip(np.cumsum(np.flip(scaled, -1), axis=-1), -1) - scaled
    factor = np.asarray(factor, dtype=float)
    for s in np.flatnonzero((factor != 1.0).reshape(-1, factor.shape[-1]).any(axis=0)):
        inside = h == s
        if not inside.any():
            continue
        f = factor[..., s, None] - 1.0
        yin, sin = np.where(inside, y, 0.0), np.where(inside, scaled, 0.0)
        before = before + np.where(inside, f * (np.cumsum(yin, axis=-1) - yin), 0.0)
        after = after + np.where(inside, f * (np.flip(np.cumsum(np.flip(sin, -1), axis=-1), -1)
                                              - sin), 0.0)
    total = (scaled * (1.0 + before)).sum(axis=-1)
    deriv[..., at] = vv / k * (1.0 + before) + vv * after
    return total, deriv


def pair_total(x: np.ndarray, p: np.ndarray, w: np.ndarray, rank: np.ndarray,
               stratum: np.ndarray, factor: np.ndarray) -> Total:
    """AP's numerator N = Σ_{j ≤ k} x_j x_k / k as a :class:`Total`: the prediction of a pair
    is p_j p_k (independent documents under the model), its population sum over all pairs."""
    ht_x, dx = ranked_pair_sum(x, w, rank, stratum, factor)
    ht_p, dp = ranked_pair_sum(p, w, rank, stratum, factor)
    pop_p, _ = ranked_pair_sum(p, np.ones(len(p)), rank, np.zeros(len(p), dtype=int),
                               np.ones(1))
    return Total(ht_x, ht_p, float(pop_p), dx, dp)
