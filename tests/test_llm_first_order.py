"""examples/llm_human_sample/first_order.py: the first-order expansion of AP about a control.

- N(x) / R(x) is AP as trec_eval computes it (each relevant retrieved document's precision at
  its rank, over R), by a direct loop on random rankings with unretrieved relevant documents.
- N is multilinear, so its gradient is exact: N(v with v_d = 1) − N(v with v_d = 0) for every d
  at a fractional v.
- The expansion's remainder is 0 when the control is the truth, and the linear terms sum to
  AP(x) − AP(p) to first order in a small step from p.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "llm_human_sample"))
import first_order  # noqa: E402


def _ranks(rng, runs, n):
    """Each run retrieves a random part of the n documents, at ranks 1.. in a random order (0:
    not retrieved)."""
    out = np.zeros((runs, n))
    for a in range(runs):
        seen = rng.permutation(n)[: rng.integers(1, n + 1)]
        out[a, seen] = np.arange(1, len(seen) + 1)
    return out


def _ap(x, rank):
    order = np.nonzero(rank)[0]
    order = order[np.argsort(rank[order])]
    hits, total = 0, 0.0
    for i, d in enumerate(order, start=1):
        if x[d]:
            hits += 1
            total += hits / i
    return total / x.sum()


def test_numerator_over_r_is_trec_evals_ap():
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(2, 15))
        x = (rng.random(n) < 0.4).astype(float)
        x[rng.integers(n)] = 1.0
        ranks = _ranks(rng, 3, n)
        got = first_order.numerator(x, ranks)[0] / x.sum()
        want = [_ap(x, r) for r in ranks]
        assert np.allclose(got, want, rtol=0, atol=1e-12)


def test_the_gradient_is_exact_for_a_multilinear_numerator():
    rng = np.random.default_rng(4)
    n = 9
    v, ranks = rng.random(n), _ranks(rng, 4, n)
    _, grad = first_order.numerator(v, ranks)
    for d in range(n):
        up, down = v.copy(), v.copy()
        up[d], down[d] = 1.0, 0.0
        diff = first_order.numerator(up, ranks)[0] - first_order.numerator(down, ranks)[0]
        assert np.allclose(grad[:, d], diff, rtol=0, atol=1e-12)


def test_the_remainder_vanishes_at_the_truth_and_is_second_order():
    rng = np.random.default_rng(5)
    n = 12
    x = (rng.random(n) < 0.5).astype(float)
    x[0] = 1.0
    ranks = _ranks(rng, 3, n)
    truth, point, terms = first_order.first_order(x, x, ranks)
    assert np.allclose(truth, point, atol=1e-12) and np.allclose(terms, 0, atol=1e-12)
    q = rng.random(n)
    rest = []
    for eps in (1e-2, 1e-3):  # p = x + eps (q − x): the remainder shrinks as eps²
        truth, point, terms = first_order.first_order(x, x + eps * (q - x), ranks)
        rest.append(np.abs(truth - point - terms.sum(1)).max())
    assert rest[1] < rest[0] / 50
