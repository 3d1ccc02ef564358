"""numba kernel for Monte Carlo DCG and nDCG with drawn grades (:mod:`relimpute.confidence.graded`).

A document's grade is ``l_c`` with ``c = #{k : U < P(G ≥ l_k)}`` for one uniform ``U``
(``docs/math/fusion.md``, "Monte Carlo over grades"). A document no system ranks within the
cutoff changes only the ideal DCG, through the counts of documents at each grade or above,
and those counts matter only up to the ideal list's length: a level the fixed (judged)
grades already fill is saturated, and such a document matters only when ``U < P(G ≥ l_k)``
at the lowest level ``l_k`` that is not. So, as
:func:`~relimpute.confidence._kernels.ap_monte_carlo` does for relevance, the kernel draws
only those documents, by thinning: in a block of documents whose largest such probability
is ``q``, a geometric(q) skip proposes documents and ``U = u · q`` (``u`` uniform) is,
given the proposal, uniform on ``[0, q)``: the document keeps its grade by the same count.
The documents some system ranks within the cutoff get a uniform each. Every grade that
changes a score has the same distribution as with a uniform per document, at the cost of
the documents drawn above the saturated levels.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit_cached
from ._kernels import DENSE, _mt_twist


@njit_cached()
def dcg_monte_carlo(
    ranking, limit, base, order, exceed, rows, n_post, n_ranked, col, starts, levels, gain_of,
    step_of, prefix, discount, normalise, out, state, uniform, cursor,
):
    """DCG (``normalise``: nDCG) of every system for draws ``rows[i] + j · n_post`` of one topic.

    - ``ranking (S, D)``, ``limit (S,)``: the ranks that count (depth and cutoff);
      ``discount (D,)`` ``1 / log2(r + 1)``;
    - ``base (n,)`` the fixed grades (judged; 0 for the drawn documents), none above
      ``len(gain_of) − 1``; ``gain_of[g]`` the gain of grade ``g ≥ 0``, ``step_of[g]``
      ``gain(g) − gain(g − 1)``; ``prefix`` the ideal list's cumulative discounts (its
      length − 1 the ideal depth): the ideal DCG is ``Σ_g step_of[g] · prefix[min(c_g, ·)]``
      with ``c_g`` the documents of grade ``≥ g``, as :func:`relimpute.measures.ndcg._ideal_dcg`;
    - ``order (m,)`` the drawn documents: first the ``n_ranked`` some system ranks within
      its limit, a uniform each, then the others, drawn by thinning on their
      ``P(G ≥ l_{col + 1})`` in blocks (``starts``, from ``n_ranked`` to ``m``);
      ``exceed (G, m, K − 1)`` ``P(G ≥ l_k)`` of posterior row ``rows[i]`` for them;
      ``levels (K,)`` the grades, the lowest at most 0;
    - ``out (B, S)`` receives the scores; ``state``, ``uniform``, ``cursor[0]``: the
      Mersenne Twister's state, its current uniforms and the next one to read (carried
      from one call to the next).
    """
    n_sys = ranking.shape[0]
    n_draws = out.shape[0]
    m = order.size
    top = gain_of.size - 1
    depth_ideal = prefix.size - 1
    # the fixed grades' part: each system's DCG and the count of each positive grade
    fixed_dcg = np.zeros(n_sys)
    fixed_count = np.zeros(top + 1, dtype=np.int64)
    for i in range(base.size):
        if base[i] > 0:
            fixed_count[base[i]] += 1
    # who ranks each drawn document within its limit, at which rank (CSR by position in order)
    slot = np.full(base.size, -1, dtype=np.int64)
    for j in range(m):
        slot[order[j]] = j
    ptr = np.zeros(m + 1, dtype=np.int64)
    for s in range(n_sys):
        for r in range(limit[s]):
            d = ranking[s, r]
            if d >= 0:
                if base[d] > 0:
                    fixed_dcg[s] += gain_of[base[d]] * discount[r]
                if slot[d] >= 0:
                    ptr[slot[d] + 1] += 1
    for j in range(m):
        ptr[j + 1] += ptr[j]
    who = np.empty(ptr[m], dtype=np.int64)
    at = np.empty(ptr[m], dtype=np.int64)
    fill = ptr[:m].copy()
    for s in range(n_sys):
        for r in range(limit[s]):
            d = ranking[s, r]
            if d >= 0 and slot[d] >= 0:
                who[fill[slot[d]]] = s
                at[fill[slot[d]]] = r
                fill[slot[d]] += 1
    n_blocks = starts.size - 1
    bound = np.zeros(n_blocks)
    log_q = np.zeros(n_blocks)
    dcg = np.zeros(n_sys)
    drawn_count = np.zeros(top + 1, dtype=np.int64)
    filled = np.zeros(top + 1, dtype=np.int64)
    u = cursor[0]
    for i in range(rows.size):
        e1 = exceed[i, :, col]
        for blk in range(n_blocks):
            bound[blk] = 0.0
            for j in range(starts[blk], starts[blk + 1]):
                bound[blk] = max(bound[blk], e1[j])
            log_q[blk] = np.log1p(-bound[blk]) if 0.0 < bound[blk] <= DENSE else 0.0
        for b in range(rows[i], n_draws, n_post):
            for j in range(n_ranked):
                x, u = _next_uniform(state, uniform, u)
                _place(x, exceed[i, j], levels, gain_of, discount, ptr[j], ptr[j + 1], who, at,
                       dcg, drawn_count)
            for blk in range(n_blocks):
                q = bound[blk]
                lo = starts[blk]
                hi = starts[blk + 1]
                if q > DENSE:  # every document its own uniform
                    for j in range(lo, hi):
                        x, u = _next_uniform(state, uniform, u)
                        if x < e1[j]:
                            _count(x, exceed[i, j], levels, drawn_count)
                    continue
                j = lo - 1
                while q > 0.0:  # geometric skips to the proposed documents
                    x, u = _next_uniform(state, uniform, u)
                    # compared as a float: for a tiny q the skip exceeds any int64
                    skip = np.floor(np.log(1.0 - x) / log_q[blk])
                    if skip >= hi - j - 1:
                        break
                    j += 1 + int(skip)
                    x, u = _next_uniform(state, uniform, u)
                    if x * q < e1[j]:
                        _count(x * q, exceed[i, j], levels, drawn_count)
            idcg = 0.0
            if normalise:
                total = 0
                for g in range(top, 0, -1):
                    total += fixed_count[g] + drawn_count[g]
                    filled[g] = min(total, depth_ideal)
                for g in range(1, top + 1):  # in the order of measures.ndcg._ideal_dcg
                    idcg += step_of[g] * prefix[filled[g]]
            for s in range(n_sys):
                value = fixed_dcg[s] + dcg[s]
                if normalise:
                    value = value / idcg if idcg > 0.0 else 0.0
                out[b, s] = value
                dcg[s] = 0.0
            drawn_count[:] = 0
    cursor[0] = u


@njit_cached(inline="always")
def _next_uniform(state, uniform, u):
    """The uniform at index ``u`` (after a twist when all are read) and the index after it."""
    if u == uniform.size:
        u = _mt_twist(state, uniform)
    return uniform[u], u + 1


@njit_cached()
def _count(x, exceed, levels, drawn_count):
    """A document with uniform ``x``: its grade ``levels[#{k : x < exceed[k]}]`` added to the
    draw's counts; returns it."""
    c = 0
    for k in range(exceed.size):
        c += x < exceed[k]
    g = levels[c]
    if g > 0:
        drawn_count[g] += 1
    return g


@njit_cached()
def _place(x, exceed, levels, gain_of, discount, lo, hi, who, at, dcg, drawn_count):
    """:func:`_count`, and the grade's gain added to the DCG of the systems ranking the
    document (``who[lo:hi]`` at ranks ``at[lo:hi]``)."""
    g = _count(x, exceed, levels, drawn_count)
    if g <= 0:
        return
    gain = gain_of[g]
    for e in range(lo, hi):
        dcg[who[e]] += gain * discount[at[e]]
