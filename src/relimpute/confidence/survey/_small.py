""":mod:`._kernels`' loops for one sample (B = 1) as numpy arrays, so that a command reading one
sample (``evaluate``/``compare --estimator``) never loads numba: its first cached kernel costs
a process about 0.5 s (numba's import, then its target context importing and registering every
lowering it has, scipy.linalg among them), more than these arrays on one sample. Each function
takes its kernel's arguments; many samplings at once (the coverage studies) or a sample too
large for the arrays go to the kernel, imported then. The arrays are the forms the kernels
replaced (``tests/test_survey_kernels.py``): the same arithmetic in the same order, bit for
bit, except :func:`pair_grams` and :func:`replicate_variance` (to roundoff: other orders).
"""

from __future__ import annotations

import numpy as np

from .measures import ratio_parts
from .samplings import _stratum_means

#: the largest dense temporary (elements) an array form builds; above it, the kernel
LARGEST = 2**21


def _kernel(name: str):
    from . import _kernels  # numba: imported when first needed

    return getattr(_kernels, name)


def pair_grams(ranks, idx, valid, cx, cm, cp):
    """:func:`._kernels.pair_grams`: Σ_{d<e} as half the sum over d ≠ e of dense (R, m, m)
    matrices, a matrix product (another order: to roundoff)."""
    B, m = idx.shape
    if B != 1 or len(ranks) * m * m > LARGEST:
        return _kernel("pair_grams")(ranks, idx, valid, cx, cm, cp)
    r = ranks[:, idx[0]] * valid[0]  # (R, m)
    later = np.maximum(r[:, :, None], r[:, None, :]).astype(float)
    both = (r[:, :, None] > 0) & (r[:, None, :] > 0) & ~np.eye(m, dtype=bool)
    inv = np.where(both, 1.0 / np.where(both, later, 1.0), 0.0).reshape(len(r), m * m)
    out = np.empty((3, 1, len(r), len(r)))
    for k, c in enumerate((cx, cm, cp)):
        out[k, 0] = 0.5 * ((inv * np.outer(c[0], c[0]).ravel()) @ inv.T)
    return out


def pair_overcount_forms(grams, first, second, s1, s2, lam, rx, rp, pop_r):
    """:func:`._kernels.pair_overcount_forms` over (B, Q) arrays, member by member."""
    if len(lam) != 1:
        return _kernel("pair_overcount_forms")(grams, first, second, s1, s2, lam, rx, rp,
                                               pop_r)
    members = [(first, s1)] + ([(second, s2)] if (second >= 0).all() else [])
    if not (second >= 0).all() and (second >= 0).any():  # mixed rows: the kernel's order
        return _kernel("pair_overcount_forms")(grams, first, second, s1, s2, lam, rx, rp,
                                               pop_r)
    rows = np.arange(len(lam))[:, None]
    total = 0.0
    for i, si in members:
        for j, sj in members:
            g = grams[0][rows, i, j] - lam * (grams[1][rows, i, j] + grams[1][rows, j, i]) \
                + lam * lam * grams[2][rows, i, j]
            total = total + (si * sj) * g
    raw = rx[:, None] + lam * (pop_r - rp[:, None])
    return np.where(raw > 0, total / np.where(raw > 0, raw * raw, 1.0), 0.0)


def replicate_variance(nx, np_, rx, rp, least, coef, pop_n, pop_r, first, second, lam, centre,
                       stratum, split, strata):
    """:func:`._kernels.replicate_variance` over (B, Q, m) arrays (sums in numpy's order)."""
    B, R, m = nx.shape
    if B != 1 or len(first) * m > LARGEST:
        return _kernel("replicate_variance")(nx, np_, rx, rp, least, coef, pop_n, pop_r, first,
                                             second, lam, centre, stratum, split, strata)
    lp = lam[..., None]
    raw = rx[:, None] + lp * (pop_r - rp[:, None])
    single = (second < 0)[:, None]
    n = np.where(single, nx[:, first] + lp * (pop_n[first][:, None] - np_[:, first]),
                 nx[:, first] - nx[:, second] + lp * ((pop_n[first] - pop_n[second])[:, None]
                                                      - np_[:, first] + np_[:, second]))
    rep = ratio_parts(n, raw, least[:, None])[0]
    c = _stratum_means(rep, split, stratum, strata, centre[..., None]) if split.any() else \
        centre[..., None]
    e = rep - c
    return (coef[:, None] * (e * e)).sum(-1)


def quadratic_forms(gram, index, left, right):
    """:func:`._kernels.quadratic_forms`: einsum over the (B, Q, k, k) blocks (its order)."""
    if len(gram) != 1:
        return _kernel("quadratic_forms")(gram, index, left, right)
    sub = gram[:, index[:, :, None], index[:, None, :]]
    value = np.einsum("bqi,bqij,bqj->bq", left, sub, right)
    root = np.sqrt(np.maximum(np.diagonal(gram, axis1=1, axis2=2), 0.0))[:, index]
    bound = (np.abs(left) * root).sum(-1) * (np.abs(right) * root).sum(-1)
    return np.where(np.abs(value) <= 1e-12 * bound, 0.0, value)


def paired_forms(gram, index, left, right):
    """:func:`._kernels.paired_forms`: a pair's x and p once, the runs' coefficients summed."""
    if len(gram) != 1:
        return _kernel("paired_forms")(gram, index, left, right)
    sides = [np.concatenate([c[..., [0, 1, 4, 5]], c[..., [2]] + c[..., [6]],
                             c[..., [3]] + c[..., [7]]], -1) for c in (left, right)]
    return quadratic_forms(gram, np.ascontiguousarray(index[:, [0, 1, 4, 5, 2, 3]]), *sides)


def gathered_basis(dnx, dnp, x, p, idx, valid, root, stratum, centred, mean):
    """:func:`._kernels.gathered_basis`: the basis read at the gathered documents."""
    if len(idx) != 1:
        return _kernel("gathered_basis")(dnx, dnp, x, p, idx, valid, root, stratum, centred,
                                         mean)
    at = idx[0]
    z = np.concatenate([dnx[0][:, at], dnp[0][:, at], x[at][None], p[at][None]])  # (K, m)
    h = stratum[at]
    z = z - np.where(centred[0][h], mean[0][:, h], 0.0)
    return (z * np.where(valid[0], root[0], 0.0))[None]


def ratio_rows(nx, np_, pop_n, runs, rx, rp, pop_r, lam, least, floor):
    """:func:`._kernels.ratio_rows`: :func:`.measures.ratio_parts` over (B, Q) arrays."""
    if len(lam) != 1:
        return _kernel("ratio_rows")(nx, np_, pop_n, runs, rx, rp, pop_r, lam, least, floor)
    n_hat = nx[:, runs] + lam * (pop_n[runs] - np_[:, runs])
    raw = rx[:, None] + lam * (pop_r - rp[:, None])
    return (*ratio_parts(n_hat, raw, np.maximum(least[:, None], floor)), n_hat, raw)


def replicate_ratios(nx, np_, pop_n, rx, rp, pop_r, lam, least, floor):
    """:func:`._kernels.replicate_ratios`: :func:`.measures.ratio_parts` over (B, R, m)."""
    if len(nx) != 1:
        return _kernel("replicate_ratios")(nx, np_, pop_n, rx, rp, pop_r, lam, least, floor)
    return ratio_parts(nx + lam * (pop_n[:, None] - np_),
                       rx[:, None] + lam * (pop_r - rp[:, None]),
                       np.maximum(least[:, None], floor))[0]


def replicate_side(deriv, inner, v, idx, w, r_total, n_total, v_h, rest_h, pairs_h, c, g, h,
                   stratified):
    """:func:`._kernels.replicate_side` over (B, R, m) arrays."""
    if len(idx) != 1:
        return _kernel("replicate_side")(deriv, inner, v, idx, w, r_total, n_total, v_h, rest_h,
                                         pairs_h, c, g, h, stratified)
    B, R = n_total.shape
    wv = w * v[idx]
    r = r_total[:, None] - wv
    scaled = w[:, None] * np.take_along_axis(deriv, idx[:, None], 2)
    n = n_total[..., None] - scaled
    if stratified:
        r = r + (c - 1) * (v_h[np.arange(B)[:, None], h] - wv)
        at = np.broadcast_to(h[:, None, :], n.shape)
        cc, gg = c[:, None], g[:, None]
        n = n + ((cc - 1) * np.take_along_axis(rest_h, at, 2)
                 + (gg - 1) * np.take_along_axis(pairs_h, at, 2) - (cc - 1) * scaled
                 + (cc - gg) * np.take_along_axis(inner, idx[:, None], 2))
    return r, n
