""":func:`.totals.ranked_pair_sums`' numba kernel for many samplings at once (one sample is
read by the array form beside it, :func:`.totals.ranked_pair_arrays`: no numba to load)."""

from __future__ import annotations

import numpy as np

from ..._jit import njit_cached


@njit_cached(nogil=True)
def ranked_pair_terms(v, w, order, at, strata, factor, adjust, inner):
    """:func:`.totals.ranked_pair_sums` per sampling b and run r over the documents ``order``
    (R, D) in rank order (``at`` their ranks, 0 past the run's end; ``strata`` theirs): the
    sums (B, R) and their terms (B, R, D), derivatives and, with ``inner``, inner shares
    (B, R, n), stratum s adjusted by ``factor`` (B, H) where ``adjust[s]``; every sum in rank
    order, as the cumulative sums (and the sum over ranks) of the array form did."""
    B, n = w.shape
    R, D = order.shape
    H = len(adjust)
    total, terms = np.zeros((B, R)), np.zeros((B, R, D))
    deriv = np.zeros((B, R, n))
    share = np.zeros((B, R, n) if inner else (0, 0, 0))
    k, vv, y, scaled = np.ones(D), np.zeros(D), np.zeros(D), np.zeros(D)
    before, after, above, below, part = np.zeros(D), np.zeros(D), np.zeros(D), np.zeros(D), \
        np.zeros(D)
    for r in range(R):
        present = np.zeros(H, np.bool_)
        for t in range(D):
            if 0 <= strata[r, t] < H:
                present[strata[r, t]] = True
        for t in range(D):  # the run's ranks and values, the same in every sampling
            if at[r, t] > 0:
                k[t], vv[t] = float(at[r, t]), v[order[r, t]]
            else:
                k[t], vv[t] = 1.0, 0.0
        for b in range(B):
            c = 0.0
            for t in range(D):
                y[t] = vv[t] * w[b, order[r, t]]
                c += y[t]
                before[t] = c - y[t]
                scaled[t] = y[t] / k[t]
                part[t] = 0.0
            c = 0.0
            for t in range(D - 1, -1, -1):
                c += scaled[t]
                after[t] = c - scaled[t]
            for s in range(H):
                if not (adjust[s] and present[s]):
                    continue
                f = factor[b, s]
                c = 0.0
                for t in range(D):
                    if strata[r, t] == s:
                        c += y[t]
                        above[t] = c - y[t]
                c = 0.0
                for t in range(D - 1, -1, -1):
                    if strata[r, t] == s:
                        c += scaled[t]
                        below[t] = c - scaled[t]
                for t in range(D):
                    if strata[r, t] == s:
                        before[t] = before[t] + (f - 1.0) * above[t]
                        after[t] = after[t] + (f - 1.0) * below[t]
                        if inner:
                            part[t] = f * y[t] * (above[t] / k[t] + below[t])
            c = 0.0
            for t in range(D):
                terms[b, r, t] = scaled[t] * (1.0 + before[t])
                c += terms[b, r, t]
                deriv[b, r, order[r, t]] = vv[t] / k[t] * (1.0 + before[t]) + vv[t] * after[t]
                if inner:
                    share[b, r, order[r, t]] = part[t]
            total[b, r] = c
    return total, terms, deriv, share
