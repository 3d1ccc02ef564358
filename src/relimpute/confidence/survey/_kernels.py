"""numba kernels of :mod:`.batched`: the loops its arrays spelled out as (B, Q, m) or
(B, R, m²) temporaries, in the same arithmetic (``tests/test_survey_kernels.py`` checks them
against the array forms they replace).
"""

from __future__ import annotations

import numpy as np

from ..._jit import njit_cached
from .measures import NO_RELEVANT


@njit_cached(nogil=True, fastmath=True)
def pair_grams(ranks, idx, valid, cx, cm, cp):
    """Per sampling b and two runs i, j: Σ_{d<e} c_d c_e / (max(r^i_d, r^i_e) max(r^j_d, r^j_e))
    over the gathered documents ``idx`` (B, m) (``valid``) both runs retrieve (``ranks``
    (R, n) > 0), for c = ``cx``, ``cm``, ``cp`` (B, m): (3, B, R, R), symmetric in i, j.
    Only the documents two runs share enter, so a run pair costs its common sample's pairs,
    not m²; 1/max(r_d, r_e) is min(1/r_d, 1/r_e), and the sums of these non-negative terms
    run in vector lanes (fastmath: another order, to roundoff)."""
    R = ranks.shape[0]
    B, m = idx.shape
    out = np.zeros((3, B, R, R))
    rk = np.zeros((R, m), np.int64)
    inv = np.zeros((R, m))
    lists = np.zeros((R, m), np.int64)
    counts = np.zeros(R, np.int64)
    bi, bj, bx, bm, bp = np.zeros(m), np.zeros(m), np.zeros(m), np.zeros(m), np.zeros(m)
    for b in range(B):
        for i in range(R):
            c = 0
            for d in range(m):
                r = ranks[i, idx[b, d]] if valid[b, d] else 0
                rk[i, d] = r
                if r > 0:
                    inv[i, d] = 1.0 / r
                    lists[i, c] = d
                    c += 1
            counts[i] = c
        for i in range(R):
            for j in range(i, R):
                size = 0
                for t in range(counts[i]):
                    d = lists[i, t]
                    if rk[j, d] > 0:
                        bi[size], bj[size] = inv[i, d], inv[j, d]
                        bx[size], bm[size], bp[size] = cx[b, d], cm[b, d], cp[b, d]
                        size += 1
                sxx, sxp, spp = 0.0, 0.0, 0.0
                for u in range(1, size):
                    ax, am, ap = 0.0, 0.0, 0.0
                    iu, ju = bi[u], bj[u]
                    for v in range(u):
                        w = min(bi[v], iu) * min(bj[v], ju)
                        ax += w * bx[v]
                        am += w * bm[v]
                        ap += w * bp[v]
                    sxx += bx[u] * ax
                    sxp += bm[u] * am
                    spp += bp[u] * ap
                out[0, b, i, j], out[1, b, i, j], out[2, b, i, j] = sxx, sxp, spp
                out[0, b, j, i], out[1, b, j, i], out[2, b, j, i] = sxx, sxp, spp
    return out


@njit_cached(nogil=True)
def pair_overcount_forms(grams, first, second, s1, s2, lam, rx, rp, pop_r):
    """Σ_ij s_i s_j (G^xx_ij − λ (G^xp_ij + G^xp_ji) + λ² G^pp_ij) / R̂(λ)² per sampling and
    quantity (B, Q) over the members ``first[q]`` (sign ``s1``) and, where ``second[q]`` ≥ 0,
    ``second[q]`` (``s2``): ``grams`` :func:`pair_grams`' (3, B, R, R), R̂(λ) = ``rx`` +
    λ (``pop_r`` − ``rp``) (B,), 0 where R̂ ≤ 0 (:meth:`.batched.TopicSamplings.pair_overcount`,
    its member-by-member sum in the same order)."""
    B = lam.shape[0]
    Q = len(first)
    out = np.zeros((B, Q))
    runs = np.zeros(2, np.int64)
    signs = np.array([s1, s2])
    for b in range(B):
        for q in range(Q):
            runs[0], runs[1] = first[q], second[q]
            k = 1 if second[q] < 0 else 2
            lp = lam[b, q]
            total = 0.0
            for u in range(k):
                for v in range(k):
                    i, j = runs[u], runs[v]
                    g = grams[0, b, i, j] - lp * (grams[1, b, i, j] + grams[1, b, j, i]) \
                        + lp * lp * grams[2, b, i, j]
                    total = total + signs[u] * signs[v] * g
            raw = rx[b] + lp * (pop_r - rp[b])
            out[b, q] = total / (raw * raw) if raw > 0 else 0.0
    return out


@njit_cached(nogil=True)
def replicate_variance(nx, np_, rx, rp, least, coef, pop_n, pop_r, first, second, lam, centre,
                       stratum, split, strata):
    """Σ_d coef_d (θ̂_(d) − c_d)² per sampling and quantity (B, Q): θ̂_(d) AP of run
    ``first[q]`` (``second[q]`` < 0) or ΔAP of ``first[q]`` − ``second[q]`` over the shared R̂,
    from the runs' replicate totals ``nx``, ``np_`` (B, R, m) and ``rx``, ``rp``, ``least``
    (B, m) at λ ``lam`` (B, Q), as :func:`.measures.ratio_parts`; c_d the mean of the split
    replicates of d's stratum (``stratum``, ``split`` (B, m), ``strata`` H) where d is split,
    else ``centre`` (B, Q)."""
    B, R, m = nx.shape
    Q = len(first)
    out = np.zeros((B, Q))
    rep = np.zeros(m)
    total = np.zeros(strata)
    count = np.zeros(strata)
    for b in range(B):
        rxb, rpb, lb, cb = rx[b], rp[b], least[b], coef[b]
        sb, hb = split[b], stratum[b]
        count[:] = 0.0  # the split replicates of each stratum (the same for every q)
        for d in range(m):
            if sb[d]:
                count[hb[d]] += 1.0
        anysplit = count.sum() > 0
        for q in range(Q):
            a, o, lp = first[q], second[q], lam[b, q]
            na, pa = nx[b, a], np_[b, a]
            if o < 0:
                pn = pop_n[a]
                for d in range(m):
                    n = na[d] + lp * (pn - pa[d])
                    r = max(rxb[d] + lp * (pop_r - rpb[d]), lb[d])
                    rep[d] = n / r if r >= NO_RELEVANT else 0.0
            else:
                no, po = nx[b, o], np_[b, o]
                pn = pop_n[a] - pop_n[o]
                for d in range(m):
                    n = na[d] - no[d] + lp * (pn - pa[d] + po[d])
                    r = max(rxb[d] + lp * (pop_r - rpb[d]), lb[d])
                    rep[d] = n / r if r >= NO_RELEVANT else 0.0
            s = 0.0
            c = centre[b, q]
            if anysplit:
                total[:] = 0.0
                for d in range(m):
                    if sb[d]:
                        total[hb[d]] += rep[d]
                for h in range(strata):  # each stratum's mean replicate
                    total[h] = total[h] / max(count[h], 1.0)
                for d in range(m):
                    e = rep[d] - (total[hb[d]] if sb[d] else c)
                    s += cb[d] * (e * e)
            else:
                for d in range(m):
                    e = rep[d] - c
                    s += cb[d] * (e * e)
            out[b, q] = s
    return out


@njit_cached(nogil=True)
def quadratic_forms(gram, index, left, right):
    """lᵀ G r per sampling and quantity (B, Q): ``gram`` (B, K, K), ``index`` (Q, k) basis
    positions, ``left``, ``right`` (B, Q, k); a form below 1e-12 of its bound
    Σ|l_i|√G_ii Σ|r_j|√G_jj is 0 (:meth:`.batched.TopicSamplings._form`)."""
    B = gram.shape[0]
    Q, k = index.shape
    out = np.zeros((B, Q))
    root = np.zeros(gram.shape[1])
    for b in range(B):
        for i in range(gram.shape[1]):
            root[i] = np.sqrt(max(gram[b, i, i], 0.0))
        for q in range(Q):
            value, bound_l, bound_r = 0.0, 0.0, 0.0
            for i in range(k):  # einsum's order: l_i G_ij r_j, i outer, one accumulator
                gi, li = index[q, i], left[b, q, i]
                if li != 0.0:  # a zero coefficient's terms are ±0: adding them changes nothing
                    for j in range(k):
                        if right[b, q, j] != 0.0:
                            value += li * gram[b, gi, index[q, j]] * right[b, q, j]
                    bound_l += abs(li) * root[gi]
                bound_r += abs(right[b, q, i]) * root[gi]
            out[b, q] = 0.0 if abs(value) <= 1e-12 * (bound_l * bound_r) else value
    return out


@njit_cached(nogil=True)
def gathered_basis(dnx, dnp, x, p, idx, valid, root, stratum, centred, mean):
    """The basis [dN_r (R), dNp_r (R), x, p] of :meth:`.batched.TopicSamplings._gram` at each
    sampling's drawn documents (B, 2R + 2, m): ``dnx``, ``dnp`` (B, R, n), ``x``, ``p`` (n,)
    read at the gathered ``idx`` (``valid``), less ``mean`` (B, 2R + 2, H) of d's stratum
    (``stratum`` (n,)) where ``centred`` (B, H), times ``root`` (B, m), √ of the variance
    coefficient; 0 where not drawn."""
    B, R, n = dnx.shape
    m = idx.shape[1]
    K = 2 * R + 2
    out = np.zeros((B, K, m))
    for b in range(B):
        for k in range(K):
            for d in range(m):
                if valid[b, d]:
                    doc = idx[b, d]
                    if k < R:
                        z = dnx[b, k, doc]
                    elif k < 2 * R:
                        z = dnp[b, k - R, doc]
                    else:
                        z = x[doc] if k == 2 * R else p[doc]
                    h = stratum[doc]
                    out[b, k, d] = ((z - mean[b, k, h]) if centred[b, h] else z) * root[b, d]
    return out


@njit_cached(nogil=True)
def ratio_rows(nx, np_, pop_n, runs, rx, rp, pop_r, lam, least, floor):
    """(AP̂, a, b, N̂, R̂(λ) unheld) (B, Q) of ``runs`` (Q,) at λ ``lam`` (B, Q) from the totals
    ``nx``, ``np_`` (B, R), ``rx``, ``rp``, ``least`` (B,): N̂ = nx + λ (pop_n − np_), R̂ =
    rx + λ (pop_r − rp), :func:`.measures.ratio_parts` with R̂ held at max(least, ``floor``)
    (:meth:`.batched.TopicSamplings.ratio`, elementwise in its arithmetic)."""
    B, Q = lam.shape
    value, a, b = np.zeros((B, Q)), np.zeros((B, Q)), np.zeros((B, Q))
    n_hat, raw = np.zeros((B, Q)), np.zeros((B, Q))
    for i in range(B):
        held_at = max(least[i], floor)
        for q in range(Q):
            r, lp = runs[q], lam[i, q]
            n = nx[i, r] + lp * (pop_n[r] - np_[i, r])
            total = rx[i] + lp * (pop_r - rp[i])
            n_hat[i, q], raw[i, q] = n, total
            value[i, q], a[i, q], b[i, q] = _ratio(n, total, held_at)
    return value, a, b, n_hat, raw


@njit_cached(nogil=True)
def _ratio(n, total, held_at):
    """:func:`.measures.ratio_parts` of one element."""
    r = max(total, held_at)
    if r < NO_RELEVANT:
        return 0.0, 0.0, 0.0
    return n / r, 1.0 / r, 0.0 if total < held_at else -n / (r * r)


@njit_cached(nogil=True)
def replicate_ratios(nx, np_, pop_n, rx, rp, pop_r, lam, least, floor):
    """AP̂ of every run in each replicate (B, R, m) at one λ ``lam`` from the replicate totals
    ``nx``, ``np_`` (B, R, m), ``rx``, ``rp``, ``least`` (B, m), as :func:`ratio_rows`."""
    B, R, m = nx.shape
    out = np.zeros((B, R, m))
    for i in range(B):
        for r in range(R):
            for d in range(m):
                n = nx[i, r, d] + lam * (pop_n[r] - np_[i, r, d])
                out[i, r, d] = _ratio(n, rx[i, d] + lam * (pop_r - rp[i, d]),
                                      max(least[i, d], floor))[0]
    return out


@njit_cached(nogil=True)
def paired_forms(gram, index, left, right):
    """:func:`quadratic_forms` of a pair's 8 positions (two runs' [dN, dNp, x, p]): x and p
    once, each with the two runs' coefficients summed (:meth:`.batched.TopicSamplings._form`)."""
    B, Q, _ = left.shape
    at = np.empty((Q, 6), np.int64)
    for q in range(Q):
        at[q, 0], at[q, 1], at[q, 2], at[q, 3] = index[q, 0], index[q, 1], index[q, 4], \
            index[q, 5]
        at[q, 4], at[q, 5] = index[q, 2], index[q, 3]
    sides = []
    for c in (left, right):
        s = np.empty((B, Q, 6))
        for i in range(B):
            for q in range(Q):
                s[i, q, 0], s[i, q, 1], s[i, q, 2], s[i, q, 3] = c[i, q, 0], c[i, q, 1], \
                    c[i, q, 4], c[i, q, 5]
                s[i, q, 4], s[i, q, 5] = c[i, q, 2] + c[i, q, 6], c[i, q, 3] + c[i, q, 7]
        sides.append(s)
    return quadratic_forms(gram, at, sides[0], sides[1])


@njit_cached(nogil=True)
def replicate_side(deriv, inner, v, idx, w, r_total, n_total, v_h, rest_h, pairs_h, c, g, h,
                   stratified):
    """(R̂, N̂) of ``v`` in each delete-one replicate (B, m) and (B, R, m) of
    :meth:`.batched.TopicSamplings._replicate_side`: R̂ − w_d v_d and N̂ − w_d ∂N/∂w_d at each
    gathered drawn d (``idx``, weights ``w``) from the totals ``r_total`` (B,), ``n_total``
    (B, R) and ``deriv`` (B, R, n); stratified, plus the reweighting of d's stratum ``h``
    (c, g (B, m); ``v_h`` Σ_h w v (B, H), ``rest_h`` A_h and ``pairs_h`` W_h (B, R, H),
    ``inner`` i_d (B, R, n)), in the array form's arithmetic."""
    B, R, n = deriv.shape
    m = idx.shape[1]
    r = np.empty((B, m))
    out = np.empty((B, R, m))
    for b in range(B):
        for d in range(m):
            wv = w[b, d] * v[idx[b, d]]
            r[b, d] = r_total[b] - wv
            if stratified:
                r[b, d] = r[b, d] + (c[b, d] - 1) * (v_h[b, h[b, d]] - wv)
        for k in range(R):
            for d in range(m):
                doc = idx[b, d]
                scaled = w[b, d] * deriv[b, k, doc]
                value = n_total[b, k] - scaled
                if stratified:
                    cc, gg, hh = c[b, d], g[b, d], h[b, d]
                    value = value + ((cc - 1) * rest_h[b, k, hh] + (gg - 1) * pairs_h[b, k, hh]
                                     - (cc - 1) * scaled + (cc - gg) * inner[b, k, doc])
                out[b, k, d] = value
    return r, out
