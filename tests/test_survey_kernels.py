"""The numba kernels of relimpute.confidence.survey.batched against the array forms they
replace: AP's pair Grams against the m × m matrices of every run (to 1e-12 relative: sums of
non-negative terms in another order), the quadratic forms against einsum (bit for bit: the
same order), the jackknife's replicate sums against the (B, Q, m) arrays (1e-12 relative),
the overcount's forms, AP's ranked sums (totals.ranked_pair_sums), the ratios, a pair's forms,
the Gram's gathered basis and the replicates' totals against their array forms (bit for bit:
the same arithmetic in the same order)."""

import numpy as np

from relimpute.confidence.survey._kernels import gathered_basis, pair_grams, \
    pair_overcount_forms, paired_forms, quadratic_forms, ratio_rows, replicate_ratios, \
    replicate_side, replicate_variance
from relimpute.confidence.survey.measures import ratio_parts
from relimpute.confidence.survey.samplings import _stratum_means
from relimpute.confidence.survey.totals import ranked_pair_sums

B, R, N, M = 4, 5, 60, 25


def ranks_of(rng):
    ranks = np.zeros((R, N), int)
    for r in range(R):
        order = rng.permutation(N)[:30]
        ranks[r, order] = np.arange(1, 31)
    return ranks


def test_pair_grams_equal_the_dense_matrices():
    rng = np.random.default_rng(1)
    ranks = ranks_of(rng)
    idx = np.stack([rng.permutation(N)[:M] for _ in range(B)])
    valid = rng.random((B, M)) < 0.8
    c = [np.where(valid, rng.random((B, M)), 0.0) for _ in range(3)]
    got = pair_grams(ranks, idx, valid, *c)
    r = ranks[:, idx].transpose(1, 0, 2) * valid[:, None]  # (B, R, M)
    later = np.maximum(r[..., :, None], r[..., None, :]).astype(float)
    both = (r[..., :, None] > 0) & (r[..., None, :] > 0) & (np.eye(M) == 0)
    inv = np.where(both, 1.0 / np.where(both, later, 1.0), 0.0)  # (B, R, M, M)
    for k in range(3):
        cc = c[k][:, :, None] * c[k][:, None, :]
        want = 0.5 * np.einsum("bide,bjde,bde->bij", inv, inv, cc)
        assert want.max() > 0
        np.testing.assert_allclose(got[k], want, rtol=1e-12, atol=0)


def test_quadratic_forms_equal_einsum_bit_for_bit():
    rng = np.random.default_rng(2)
    z = rng.standard_normal((B, 12, 30))
    gram = z @ z.transpose(0, 2, 1)
    index = np.stack([rng.permutation(12)[:6] for _ in range(40)])
    left, right = rng.standard_normal((2, B, 40, 6))
    right[0, 0] = 0.0  # a form that vanishes: 0
    got = quadratic_forms(gram, index, left, right)
    sub = gram[:, index[:, :, None], index[:, None, :]]
    want = np.einsum("bqi,bqij,bqj->bq", left, sub, right)
    np.testing.assert_array_equal(got, want)


def test_replicate_variance_equals_the_array_form():
    rng = np.random.default_rng(3)
    nx, np_ = rng.random((2, B, R, M))
    rx = 1.0 + rng.random((B, M))
    rx[0, :3] = 0.0  # R̂ = 0: AP 0
    rp = rng.random((B, M))
    least = np.where(rng.random((B, M)) < 0.3, 1.5, 0.0)  # R̂ held at the relevant judged
    coef = rng.random((B, M))
    pop_n, pop_r = rng.random(R) * 3, 2.0
    first, second = np.array([0, 1, 2, 0, 3]), np.array([-1, -1, 4, 3, 1])
    lam = rng.random((B, len(first)))
    centre = rng.random((B, len(first)))
    h = (rng.random((B, M)) < 0.5).astype(np.int64)
    split = rng.random((B, M)) < 0.7
    for stratified in (False, True):
        sp = split if stratified else np.zeros_like(split)
        got = replicate_variance(nx, np_, rx, rp, least, coef, pop_n, pop_r, first, second,
                                 lam, centre, h, sp, 2)
        lp = lam[..., None]
        raw = rx[:, None] + lp * (pop_r - rp[:, None])
        n = np.where((second < 0)[:, None], nx[:, first] + lp * (pop_n[first][:, None]
                                                                  - np_[:, first]),
                     nx[:, first] - nx[:, second] + lp * ((pop_n[first] - pop_n[second])
                                                          [:, None] - np_[:, first]
                                                          + np_[:, second]))
        rep = ratio_parts(n, raw, least[:, None])[0]
        c = _stratum_means(rep, sp, h, 2, centre[..., None]) if stratified else \
            centre[..., None]
        want = (coef[:, None] * (rep - c) ** 2).sum(-1)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


def test_pair_overcount_forms_equal_the_array_form():
    rng = np.random.default_rng(4)
    grams = rng.random((3, B, R, R))
    rx, rp = 1.0 + rng.random((2, B))
    rx[0] = -3.0  # R̂ ≤ 0: 0
    first, second = np.array([0, 1, 2, 4]), np.array([3, 0, 2, 1])
    lam = rng.random((B, len(first)))
    raw = rx[:, None] + lam * (2.0 - rp[:, None])
    rows = np.arange(B)[:, None]
    for members in ([(first, 1.0)], [(first, -1.0)], [(first, 1.0), (second, -1.0)]):
        total = 0.0
        for i, si in members:
            for j, sj in members:
                q = grams[0][rows, i, j] - lam * (grams[1][rows, i, j] + grams[1][rows, j, i]) \
                    + lam**2 * grams[2][rows, i, j]
                total = total + si * sj * q
        want = np.where(raw > 0, total / np.where(raw > 0, raw, 1.0) ** 2, 0.0)
        (a, sa), (b, sb) = members[0], members[-1] if len(members) == 2 else (-first - 1, 0.0)
        got = pair_overcount_forms(grams, a, b, sa, sb, lam, rx, rp, 2.0)
        assert (want[0] == 0).all() and (want[1:] != 0).any()
        np.testing.assert_array_equal(got, want)


def ranked_pair_sums_arrays(v, w, ranks, stratum, factor, inner=False):
    """The array form ranked_pair_sums had: cumulative sums over (B, R, D) arrays."""
    def reverse_cumsum(a):
        return np.flip(np.cumsum(np.flip(a, -1), axis=-1), -1)

    B, (R, n) = len(w), ranks.shape
    depth = max(int((ranks > 0).sum(1).max(initial=0)), 1)
    order = np.argsort(np.where(ranks > 0, ranks, np.iinfo(np.int64).max), axis=1,
                       kind="stable")[:, :depth]
    at = np.take_along_axis(ranks, order, 1)
    k = np.where(at > 0, at, 1).astype(float)
    vv = np.where(at > 0, v[order], 0.0)
    y = vv * w[:, order]
    before, scaled = np.cumsum(y, axis=-1) - y, y / k
    after = reverse_cumsum(scaled) - scaled
    factor = np.broadcast_to(np.asarray(factor, dtype=float), (B, np.shape(factor)[-1]))
    h = stratum[order]
    share = np.zeros(y.shape) if inner else None
    for s in range(factor.shape[1]):
        if not inner and (factor[:, s] == 1.0).all():
            continue
        inside = h == s
        yin, sin = np.where(inside, y, 0.0), np.where(inside, scaled, 0.0)
        above, below = np.cumsum(yin, axis=-1) - yin, reverse_cumsum(sin) - sin
        f = factor[:, s, None, None]
        before = before + np.where(inside, (f - 1.0) * above, 0.0)
        after = after + np.where(inside, (f - 1.0) * below, 0.0)
        if inner:
            share = share + np.where(inside, f * y * (above / k + below), 0.0)
    total = (scaled * (1.0 + before)).sum(axis=-1)
    deriv, full = np.zeros((B, R, n)), np.zeros((B, R, n))
    index = np.broadcast_to(order, y.shape)
    np.put_along_axis(deriv, index, vv / k * (1.0 + before) + vv * after, axis=2)
    if inner:
        np.put_along_axis(full, index, share, axis=2)
    return total, deriv, full if inner else None


def test_ranked_pair_sums_equal_the_array_form_bit_for_bit():
    rng = np.random.default_rng(5)
    ranks = ranks_of(rng)
    v = np.where(rng.random(N) < 0.5, rng.random(N), 0.0)
    stratum = (rng.random(N) < 0.4).astype(int)
    for b in (1, B):
        w = np.where(rng.random((b, N)) < 0.4, 1 / 0.4, 0.0)
        cases = [(np.zeros(N, int), np.ones((b, 1))), (stratum, 1 + rng.random((b, 2))),
                 (stratum, np.ones((b, 2)))]
        for (st, f), inner in [(c, i) for c in cases for i in (False, True)]:
            got, want = ranked_pair_sums(v, w, ranks, st, f, inner), \
                ranked_pair_sums_arrays(v, w, ranks, st, f, inner)
            assert (want[0] > 0).any()
            for g, e in zip(got, want):
                np.testing.assert_array_equal(g, e)


def test_ratios_equal_ratio_parts_bit_for_bit():
    rng = np.random.default_rng(6)
    nx, np_ = rng.random((2, B, R))
    rx, rp = rng.random((2, B)) * 2
    rx[0] = 0.0  # R̂ = 0 at λ = 0: AP 0
    least = np.where(rng.random(B) < 0.5, 1.2, 0.0)  # held where R̂ < 1.2
    least[0] = 0.0
    pop_n, runs = rng.random(R) * 3, np.array([0, 2, 4, 1])
    lam = rng.random((B, len(runs)))
    lam[0] = 0.0
    for floor in (0.0, 1.0):
        got = ratio_rows(nx, np_, pop_n, runs, rx, rp, 2.5, lam, least, floor)
        n_hat = nx[:, runs] + lam * (pop_n[runs] - np_[:, runs])
        raw = rx[:, None] + lam * (2.5 - rp[:, None])
        want = (*ratio_parts(n_hat, raw, np.maximum(least[:, None], floor)), n_hat, raw)
        assert (want[2] == 0).any() and (want[2] != 0).any()
        assert floor or (want[0][0] == 0).all()
        for g, e in zip(got, want):
            np.testing.assert_array_equal(g, e)
    nx3, np3 = rng.random((2, B, R, M))
    rx3, rp3 = rng.random((2, B, M)) * 2
    least3 = np.where(rng.random((B, M)) < 0.3, 1.5, 0.0)
    got = replicate_ratios(nx3, np3, pop_n, rx3, rp3, 2.5, 0.7, least3, 1.0)
    want = ratio_parts(nx3 + 0.7 * (pop_n[:, None] - np3),
                       rx3[:, None] + 0.7 * (2.5 - rp3[:, None]),
                       np.maximum(least3[:, None], 1.0))[0]
    np.testing.assert_array_equal(got, want)


def test_paired_forms_equal_the_reduced_form():
    rng = np.random.default_rng(7)
    z = rng.standard_normal((B, 12, 30))
    gram = z @ z.transpose(0, 2, 1)
    index = np.stack([np.r_[rng.permutation(10)[:2], 10, 11, rng.permutation(10)[:2], 10, 11]
                      for _ in range(20)])
    left, right = rng.standard_normal((2, B, 20, 8))
    reduce = [0, 1, 4, 5]
    want = quadratic_forms(gram, np.ascontiguousarray(index[:, [0, 1, 4, 5, 2, 3]]),
                           *(np.concatenate([c[..., reduce], c[..., [2]] + c[..., [6]],
                                             c[..., [3]] + c[..., [7]]], -1)
                             for c in (left, right)))
    np.testing.assert_array_equal(paired_forms(gram, index, left, right), want)


def test_gathered_basis_equals_the_array_form():
    rng = np.random.default_rng(8)
    dnx, dnp = rng.random((2, B, R, N))
    x, p = (rng.random(N) < 0.3).astype(float), rng.random(N)
    drawn = rng.random((B, N)) < 0.3
    m = drawn.sum(1).max()
    idx = np.argsort(~drawn, axis=1, kind="stable")[:, :m]
    valid = np.take_along_axis(drawn, idx, 1)
    root = rng.random((B, m))
    stratum = (rng.random(N) < 0.5).astype(np.int64)
    centred = rng.random((B, 2)) < 0.7
    mean = rng.random((B, 2 * R + 2, 2))
    got = gathered_basis(dnx, dnp, x, p, idx, valid, root, stratum, centred, mean)
    z = np.concatenate([dnx, dnp, np.broadcast_to(x, (B, 1, N)), np.broadcast_to(p, (B, 1, N))],
                       axis=1)
    z = z - np.where(centred[:, None], mean, 0.0)[..., stratum]
    want = np.take_along_axis(z, idx[:, None, :], axis=2) * np.where(valid, root, 0.0)[:, None]
    np.testing.assert_array_equal(got, want)


def test_replicate_side_equals_the_array_form():
    rng = np.random.default_rng(9)
    deriv, inner = rng.random((2, B, R, N))
    v, w = rng.random(N), rng.random((B, M)) * 3
    idx = np.stack([rng.permutation(N)[:M] for _ in range(B)])
    r_total, n_total = rng.random(B), rng.random((B, R))
    v_h, rest_h, pairs_h = rng.random((B, 2)), rng.random((B, R, 2)), rng.random((B, R, 2))
    c, g = 1 + rng.random((2, B, M))
    h = (rng.random((B, M)) < 0.5).astype(np.int64)
    for stratified in (False, True):
        got = replicate_side(deriv, inner, v, idx, w, r_total, n_total, v_h, rest_h, pairs_h,
                             c, g, h, stratified)
        r = r_total[:, None] - w * v[idx]
        scaled = w[:, None] * np.take_along_axis(deriv, idx[:, None], 2)
        n = n_total[..., None] - scaled
        if stratified:
            r = r + (c - 1) * (v_h[np.arange(B)[:, None], h] - w * v[idx])
            at = np.broadcast_to(h[:, None, :], (B, R, M))
            cc, gg = c[:, None], g[:, None]
            n = n + ((cc - 1) * np.take_along_axis(rest_h, at, 2)
                     + (gg - 1) * np.take_along_axis(pairs_h, at, 2) - (cc - 1) * scaled
                     + (cc - gg) * np.take_along_axis(inner, idx[:, None], 2))
        np.testing.assert_array_equal(got[0], r)
        np.testing.assert_array_equal(got[1], n)
