"""Exact moments of Q, ΔQ, AP and ΔAP against brute-force enumeration over all 2^n relevance vectors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from relimpute.confidence import (
    delta_q_moments,
    pair_topic_moments,
    q_moments,
    ratio_moments,
    topic_moments,
)

TOL = 1e-12


def random_ranks(rng, n, min_retrieved=0):
    """1-based ranks over n documents: a random subset in random order (0 = not retrieved)."""
    m = int(rng.integers(min_retrieved, n + 1))
    docs = rng.permutation(n)[:m]
    ranks = np.zeros(n, dtype=np.int32)
    ranks[docs] = np.arange(1, m + 1)
    return ranks


def random_p(rng, n):
    """Probabilities with judged documents (exact 0/1) mixed in."""
    p = rng.random(n)
    judged = rng.random(n) < 0.3
    p[judged] = (rng.random(judged.sum()) < 0.5).astype(float)
    return p


def a_matrix(ranks):
    """a_ij = 1 / max(r_i, r_j) (0 when either is not retrieved), Carterette 2007 §2.1."""
    r = ranks.astype(float)
    a = 1.0 / np.maximum(r[:, None], r[None, :]).clip(min=1)
    a[(ranks == 0)[:, None] | (ranks == 0)[None, :]] = 0.0
    return a


def enumerate_moments(p, *matrices):
    """All 2^n outcomes: Q_k(x) for each matrix, R(x), and their probabilities."""
    n = len(p)
    x = np.array(list(itertools.product([0.0, 1.0], repeat=n)))
    w = np.prod(np.where(x == 1.0, p, 1.0 - p), axis=1)
    qs = []
    for a in matrices:
        upper = np.triu(a, k=1)
        qs.append(x @ np.diag(a) + np.einsum("bi,ij,bj->b", x, upper, x))
    return qs, x.sum(axis=1), w


def moments(values, other, w):
    mean = w @ values
    var = w @ (values - mean) ** 2
    cov = w @ ((values - mean) * (other - w @ other))
    return mean, var, cov


@pytest.mark.parametrize("n", [1, 2, 5, 9, 14])
def test_q_moments_match_enumeration(rng, n):
    for _ in range(3 if n < 14 else 1):
        ranks, p = random_ranks(rng, n), random_p(rng, n)
        (q,), r, w = enumerate_moments(p, a_matrix(ranks))
        mean, var, cov = moments(q, r, w)
        got = q_moments(ranks, p)
        assert got.mean == pytest.approx(mean, abs=TOL)
        assert got.var == pytest.approx(var, abs=TOL)
        assert got.cov_r == pytest.approx(cov, abs=TOL)


@pytest.mark.parametrize("n", [2, 6, 10, 14])
def test_delta_q_moments_match_enumeration(rng, n):
    for _ in range(3 if n < 14 else 1):
        ranks_a, ranks_b, p = random_ranks(rng, n), random_ranks(rng, n), random_p(rng, n)
        (qa, qb), r, w = enumerate_moments(p, a_matrix(ranks_a), a_matrix(ranks_b))
        mean, var, cov = moments(qa - qb, r, w)
        got = delta_q_moments(ranks_a, ranks_b, p)
        assert got.mean == pytest.approx(mean, abs=TOL)
        assert got.var == pytest.approx(var, abs=TOL)
        assert got.cov_r == pytest.approx(cov, abs=TOL)


def test_delta_q_heavy_overlap_and_noncontiguous_ranks(rng):
    """Both systems retrieve nearly everything (every concordant/discordant case), ranks with gaps."""
    n = 12
    ranks_a = np.zeros(n, dtype=np.int32)
    ranks_a[rng.permutation(n)[:11]] = np.sort(rng.choice(np.arange(1, 40), 11, replace=False))
    ranks_b = np.zeros(n, dtype=np.int32)
    ranks_b[rng.permutation(n)] = np.arange(1, n + 1)
    p = rng.uniform(0.05, 0.95, n)
    (qa, qb), r, w = enumerate_moments(p, a_matrix(ranks_a), a_matrix(ranks_b))
    mean, var, cov = moments(qa - qb, r, w)
    got = delta_q_moments(ranks_a, ranks_b, p)
    assert (got.mean, got.var, got.cov_r) == pytest.approx((mean, var, cov), abs=TOL)


def test_identical_rankings_have_zero_delta(rng):
    ranks, p = random_ranks(rng, 10, min_retrieved=5), rng.random(10)
    got = delta_q_moments(ranks, ranks, p)
    assert got.mean == 0.0
    assert got.var == pytest.approx(0.0, abs=1e-13)
    assert got.cov_r == 0.0


@pytest.mark.parametrize("ratio", ["constant", "delta"])
def test_ap_ratio_formulas(rng, ratio):
    """E[AP] = E[Q]/E[R]; Var = Var[Q]/E[R]² (constant) or Var[Q - θR]/E[R]² (delta), by enumeration."""
    n = 11
    ranks_a, ranks_b, p = random_ranks(rng, n, 4), random_ranks(rng, n, 4), rng.uniform(0.1, 0.9, n)
    (qa, qb), r, w = enumerate_moments(p, a_matrix(ranks_a), a_matrix(ranks_b))
    e_r, var_r = w @ r, w @ (r - w @ r) ** 2
    for q, got in [
        (qa, topic_moments(ranks_a, p, e_r, var_r=var_r, ratio=ratio)),
        (qa - qb, pair_topic_moments(ranks_a, ranks_b, p, e_r, var_r=var_r, ratio=ratio)),
    ]:
        e_q = w @ q
        theta = e_q / e_r
        target = q - theta * r if ratio == "delta" else q
        var = w @ (target - w @ target) ** 2 / e_r**2
        assert got == pytest.approx((theta, var), abs=TOL)


def test_delta_variance_tracks_monte_carlo_better(rng):
    """With R random, the delta-method Var[AP] is closer to the exact one than the constant form."""
    n = 14
    ranks, p = random_ranks(rng, n, 10), rng.uniform(0.2, 0.8, n)
    (q,), r, w = enumerate_moments(p, a_matrix(ranks))
    ap = np.where(r > 0, q / np.where(r > 0, r, 1), 0.0)
    exact = w @ (ap - w @ ap) ** 2
    e_r, var_r = w @ r, w @ (r - w @ r) ** 2
    const = topic_moments(ranks, p, e_r, ratio="constant")[1]
    delta = topic_moments(ranks, p, e_r, var_r=var_r, ratio="delta")[1]
    assert abs(delta - exact) < abs(const - exact)


def test_zero_expected_r_gives_zero_moments():
    ranks = np.array([1, 2, 0])
    p = np.zeros(3)
    assert topic_moments(ranks, p, 0.0) == (0.0, 0.0)
    assert pair_topic_moments(ranks, ranks[::-1], p, 0.0, var_r=0.0, ratio="delta") == (0.0, 0.0)


def test_empty_ranking_and_judged_only():
    p = np.array([1.0, 0.0, 1.0])
    assert q_moments(np.zeros(3, dtype=int), p) == (0.0, 0.0, 0.0)
    # all judged: Q is a constant equal to AP·R
    got = q_moments(np.array([1, 2, 3]), p)
    assert got.mean == pytest.approx(1.0 + 2.0 / 3.0) and got.var == 0.0


def test_ratio_moments_broadcast():
    mean, var = ratio_moments([1.0, 2.0], [0.5, 0.0], 0.0, [2.0, 0.0], 0.0)
    assert mean.tolist() == [0.5, 0.0] and var.tolist() == [0.125, 0.0]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: q_moments(np.array([1, 1]), np.array([0.5, 0.5])), "distinct"),
        (lambda: q_moments(np.array([1, 2]), np.array([0.5, 1.5])), r"\[0, 1\]"),
        (lambda: q_moments(np.array([1, 2, 3]), np.array([0.5, 0.5])), "shape"),
        (lambda: topic_moments(np.array([1]), np.array([0.5]), 1.0, ratio="delta"), "var_r"),
        (lambda: topic_moments(np.array([1]), np.array([0.5]), 1.0, ratio="exact"), "ratio"),
    ],
)
def test_invalid_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_pair_terms_many_pairs_match_quadratic_forms(rng):
    """The kernel's cross terms over many pairs in any order (a pair repeated, shallow runs,
    judged documents with v = 0) against Σ v g^a g^b and Σ_{i<j} a_ij b_ij v_i v_j summed
    from the dense a_ij of each ranking."""
    from relimpute.confidence import _kernels
    from relimpute.confidence.moments import _stack_ranks

    n = 60
    p = random_p(rng, n)
    v = p * (1.0 - p)
    ranks = [random_ranks(rng, n, min_retrieved=1) for _ in range(7)]
    ranking, rank, depth = _stack_ranks(ranks, n)
    _, _, _, _, g = _kernels.system_terms(ranking, rank, depth, p, v)
    pairs = np.array([(3, 1), (0, 5), (0, 2), (6, 0), (0, 5), (2, 3), (1, 4), (5, 6)])
    cf, cs = _kernels.pair_terms(ranking, rank, depth, g, v, n, pairs[:, 0], pairs[:, 1])
    grad = np.zeros((len(ranks), n))  # the gradient by document (0 where not retrieved)
    for s in range(len(ranks)):
        grad[s, ranking[s, : depth[s]]] = g[s, : depth[s]]
    for q, (a, b) in enumerate(pairs):
        both = a_matrix(ranks[a]) * a_matrix(ranks[b]) * np.outer(v, v)
        assert cf[q] == pytest.approx(np.sum(v * grad[a] * grad[b]), rel=TOL, abs=TOL)
        assert cs[q] == pytest.approx(np.triu(both, k=1).sum(), rel=TOL, abs=TOL)
