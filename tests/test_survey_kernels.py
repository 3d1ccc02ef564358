"""The numba kernels of relimpute.confidence.survey.batched against the array forms they
replace: AP's pair Grams against the m × m matrices of every run (to 1e-12 relative: sums of
non-negative terms in another order), the quadratic forms against einsum (bit for bit: the
same order), the jackknife's replicate sums against the (B, Q, m) arrays (1e-12 relative)."""

import numpy as np

from relimpute.confidence.survey._kernels import pair_grams, quadratic_forms, \
    replicate_variance
from relimpute.confidence.survey.measures import ratio_parts
from relimpute.confidence.survey.samplings import _stratum_means

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
