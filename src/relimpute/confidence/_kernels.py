"""numba kernels for the moments of Q = AP·R and ΔQ (Carterette 2007 §2.1).

The variance uses the Hoeffding (ANOVA) decomposition of Q as a multilinear
polynomial in independent Bernoulli variables, algebraically identical to the
paper's four sums but computable with prefix sums.

Rankings enter as ``ranking (S, D)`` rows of document indices in rank order
(padded with -1), ``rank (S, D)`` the 1-based rank value at each position and
``depth (S,)`` the number of positions used. ``p`` and ``v = p(1 - p)`` are per
document of the topic. Everything here is O(n) per system and O(n log n) per
pair; the callers in :mod:`relimpute.confidence.moments` and
:mod:`relimpute.confidence.engine` add labels and checks.
"""

from __future__ import annotations

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros  # the cttz instruction

from .._jit import njit_cached


@njit_cached(nogil=True)  # nogil: topics can run on threads (ConfidenceEngine, jobs)
def system_terms(ranking, rank, depth, p, v):
    """Per-system pieces of E[Q], Var[Q] and Cov(Q, R) for one topic.

    With ``P_<k`` the prefix sum of p above position k, the gradient of Q at
    the mean is ``g_k = (1 + P_<k) / r_k + Σ_{l>k} p_l / r_l`` (a_kk + s_k, the
    first-order Hoeffding term), and

    - ``E[Q] = Σ_k p_k (1 + P_<k) / r_k``
    - ``first = Σ_k v_k g_k²``, ``second = Σ_k v_k / r_k² · V_<k``
      (``Var[Q] = first + second``, the Hoeffding form)
    - ``cov = Σ_k v_k g_k = Cov(Q, R)``.

    Returns ``eq, first, second, cov`` as ``(S,)`` arrays and ``g`` as ``(S, D)``.
    """
    n_sys, width = ranking.shape
    eq = np.zeros(n_sys)
    first = np.zeros(n_sys)
    second = np.zeros(n_sys)
    cov = np.zeros(n_sys)
    g = np.zeros((n_sys, width))
    suffix = np.zeros(width + 1)
    for s in range(n_sys):
        m = depth[s]
        suffix[m] = 0.0
        for k in range(m - 1, -1, -1):
            suffix[k] = suffix[k + 1] + p[ranking[s, k]] / rank[s, k]
        prefix_p = 0.0
        prefix_v = 0.0
        for k in range(m):
            d = ranking[s, k]
            r = rank[s, k]
            pk = p[d]
            vk = v[d]
            eq[s] += pk * (1.0 + prefix_p) / r
            gk = (1.0 + prefix_p) / r + suffix[k + 1]
            g[s, k] = gk
            first[s] += vk * gk * gk
            cov[s] += vk * gk
            second[s] += vk / (r * r) * prefix_v
            prefix_p += pk
            prefix_v += vk
    return eq, first, second, cov, g


@njit_cached(nogil=True)
def _fenwick_add(tree, size, i, value_0, value_1):
    """Add ``value_0`` to tree 0 and ``value_1`` to tree 1 at ``i`` (two Fenwick trees
    interleaved as the columns of ``tree``: one walk, neighbouring cells), in cells below
    ``size`` (the cells a prefix up to ``size - 1`` reads)."""
    while i < size:
        tree[i, 0] += value_0
        tree[i, 1] += value_1
        i += i & (-i)


@njit_cached(nogil=True)
def _fenwick_prefix(tree, column, i):
    total = 0.0
    while i > 0:
        total += tree[i, column]
        i -= i & (-i)
    return total


@njit_cached(nogil=True)
def pair_terms(ranking, rank, depth, g, v, n_docs, pair_a, pair_b):
    """Cross terms coupling two rankings, for each pair ``(pair_a[q], pair_b[q])``.

    - ``cross_first = Σ_i v_i g^a_i g^b_i``
    - ``cross_second = Σ_{i<j} a_ij b_ij v_i v_j``

    so that ``Var[ΔQ] = first_a + first_b - 2 cross_first + second_a +
    second_b - 2 cross_second``. Both run over documents retrieved by both
    systems with ``v > 0``. The second is a weighted dominance sum: walking
    ranking b from the top, document j (deeper in b than every earlier i)
    adds ``v_j / (r^a_j r^b_j) · Σ_{earlier i, r^a_i < r^a_j} v_i`` (j deeper
    in both) plus ``v_j / r^b_j · Σ_{earlier i, r^a_i > r^a_j} v_i / r^a_i``
    (i deeper in a), both read from Fenwick trees indexed by position in a:
    O(D log D) per pair. Pairs sharing ``a`` should be adjacent (the dense
    position index of ``a`` is rebuilt only when ``a`` changes).
    """
    n_pairs = pair_a.shape[0]
    width = ranking.shape[1]
    cross_first = np.zeros(n_pairs)
    cross_second = np.zeros(n_pairs)
    pos_a = np.zeros(n_docs, dtype=np.int64)  # 1-based position in a, 0 = not retrieved or v = 0
    tree = np.zeros((width + 1, 2))  # the Fenwick trees of v (column 0) and of v / r^a (1)
    shared = np.empty(width, dtype=np.int64)  # positions in b of the documents a shares
    shared_a = np.empty(width, dtype=np.int64)  # and their positions in a
    current = -1
    for q in range(n_pairs):
        a = pair_a[q]
        b = pair_b[q]
        if a != current:
            if current >= 0:
                for k in range(depth[current]):
                    pos_a[ranking[current, k]] = 0
            for k in range(depth[a]):
                d = ranking[a, k]
                pos_a[d] = k + 1 if v[d] != 0.0 else 0
            current = a
        size = depth[a] + 1
        for k in range(size):
            tree[k, 0] = 0.0
            tree[k, 1] = 0.0
        # the shared documents in b's order, gathered without a branch per document (whether
        # b's next document is in a is a coin flip the CPU cannot predict)
        n_shared = 0
        for k in range(depth[b]):
            ka = pos_a[ranking[b, k]]
            shared[n_shared] = k
            shared_a[n_shared] = ka
            n_shared += ka != 0
        total_w = 0.0
        cf = 0.0
        cs = 0.0
        for j in range(n_shared):
            k = shared[j]
            ka = shared_a[j]
            vd = v[ranking[b, k]]
            ra = rank[a, ka - 1]
            rb = rank[b, k]
            cf += vd * g[a, ka - 1] * g[b, k]
            shallower_in_a = _fenwick_prefix(tree, 0, ka - 1)
            deeper_in_a = total_w - _fenwick_prefix(tree, 1, ka)
            cs += vd / rb * (shallower_in_a / ra + deeper_in_a)
            w = vd / ra
            _fenwick_add(tree, size, ka, vd, w)
            total_w += w
        cross_first[q] = cf
        cross_second[q] = cs
    return cross_first, cross_second


@njit_cached()
def pair_summaries(draws_t, pair_a, pair_b):
    """Mean, variance and ``P(Δ > 0) + ½ P(Δ = 0)`` over the draws of ``Δ = draws_t[a] −
    draws_t[b]`` for each pair ``(pair_a[q], pair_b[q])``; ``draws_t (S, B)``.

    The numbers of numpy's ``mean`` and ``var`` along the draws of a ``(B, P)`` array of
    differences, up to rounding (the sums here run in order, shifted by the first draw's
    difference; numpy's, pairwise or in order by the array's shape), without that array."""
    n_pairs = pair_a.size
    n = draws_t.shape[1]
    mean = np.zeros(n_pairs)
    var = np.zeros(n_pairs)
    prob = np.zeros(n_pairs)
    for q in range(n_pairs):
        x = draws_t[pair_a[q]]
        y = draws_t[pair_b[q]]
        shift = x[0] - y[0]  # sums of Δ − Δ_0: a Δ that never changes has variance 0, exactly
        total = 0.0
        above = 0
        tied = 0
        for d in range(n):
            delta = x[d] - y[d]
            total += delta - shift
            above += delta > 0
            tied += delta == 0
        offset = total / n
        squares = 0.0
        for d in range(n):
            centred = (x[d] - y[d]) - shift - offset
            squares += centred * centred
        mean[q] = shift + offset
        var[q] = squares / n
        prob[q] = above / n + 0.5 * (tied / n)
    return mean, var, prob


@njit_cached()
def average_precision_draws(ranking, depth, base, uncertain, draws, fixed_relevant):
    """AP of every system for each drawn relevance vector, with the drawn R.

    ``base (n,)`` holds the fixed 0/1 relevance of every document (0 where
    uncertain), ``uncertain (m,)`` the indices of the drawn documents and
    ``draws (B, m)`` uint8 their drawn relevance; ``R = fixed_relevant + Σ draws``.
    AP is 0 when R = 0 (trec_eval). Returns ``(B, S)``.
    """
    n_draws = draws.shape[0]
    n_sys, width = ranking.shape
    out = np.zeros((n_draws, n_sys))
    rel = np.zeros(base.shape[0], dtype=np.uint8)
    for i in range(base.shape[0]):
        rel[i] = 1 if base[i] > 0.0 else 0
    inverse_rank = np.empty(width)
    for k in range(width):
        inverse_rank[k] = 1.0 / (k + 1.0)
    for b in range(n_draws):
        n_rel = fixed_relevant
        row = draws[b]
        for u in range(uncertain.shape[0]):
            rel[uncertain[u]] = row[u]
            n_rel += row[u]
        if n_rel == 0:
            continue
        scale = 1.0 / n_rel
        for s in range(n_sys):
            hits = 0
            total = 0.0
            docs = ranking[s]
            for k in range(depth[s]):
                if rel[docs[k]]:
                    hits += 1
                    total += hits * inverse_rank[k]
            out[b, s] = total * scale
    return out


@njit_cached()
def ap_monte_carlo(ranking, depth, fixed, uncertain, probs, starts, n_draws, seed):
    """AP of every system for ``n_draws`` drawn relevance vectors of one topic, with the drawn R.

    ``fixed (n,)`` uint8 marks the judged relevant documents; the ``uncertain (m,)``
    documents are drawn independently, Bernoulli with draw ``b``'s probabilities
    ``probs[b mod M, uncertain] (M, n)`` (read in place: no gathered copy). Same distribution as drawing every document with a
    uniform (:func:`average_precision_draws`), at the cost of the relevant ones:

    - sampling by thinning: the documents go in blocks (``starts``: the first of each, then
      ``m``; blocks of similar probabilities make it fast, any blocks are exact); in a block
      whose largest probability in the draw is ``q`` a geometric(q) skip proposes
      documents, each kept with probability ``p / q``;
    - AP from the relevant ranks: with ``F`` the judged relevant documents, a system's
      ``AP · R = Σ_F (hits before + 1) / r`` plus, per drawn document retrieved at rank
      ``r`` (the ``i``-th drawn one in rank order), ``(F above r + i + 1) / r`` and
      ``Σ_{F below r} 1 / r_F`` (the hit it adds to every judged one below it); the sums
      over ``F`` are prefix tables of the system's ranking, built once.

    The uniforms are numba's ``np.random.random()`` stream after ``np.random.seed(seed)``
    (the same numbers, made a twist at a time by :func:`_mt_twist`; the global state is
    left alone). Returns ``(B, S)``.
    """
    n_sys, width = ranking.shape
    n_docs = fixed.size
    m = uncertain.size
    n_post = probs.shape[0]
    out = np.zeros((n_draws, n_sys))
    # per system: the rank of each document, the judged relevant ones above and their 1/r below
    pos = np.zeros((n_docs, n_sys), dtype=np.int32)  # by document: its systems' ranks together
    above = np.zeros((n_sys, width + 2), dtype=np.int32)
    below = np.zeros((n_sys, width + 2))
    base = np.zeros(n_sys)
    n_fixed = 0
    for i in range(n_docs):
        n_fixed += fixed[i]
    for s in range(n_sys):
        hits = 0
        for k in range(depth[s]):
            d = ranking[s, k]
            pos[d, s] = k + 1
            above[s, k + 2] = above[s, k + 1]
            if fixed[d]:
                hits += 1
                base[s] += hits / (k + 1.0)
                above[s, k + 2] += 1
        for k in range(depth[s] - 1, -1, -1):  # below[s, r]: Σ 1/r_F over F ranked below r
            below[s, k] = below[s, k + 1] + (fixed[ranking[s, k]] / (k + 1.0))
    # each posterior draw's bound on the probabilities of each block, and its geometric step
    n_blocks = starts.size - 1
    bound = np.zeros((n_post, n_blocks))
    step = np.zeros((n_post, n_blocks))
    for r in range(n_post):
        for blk in range(n_blocks):
            for j in range(starts[blk], starts[blk + 1]):
                if probs[r, uncertain[j]] > bound[r, blk]:
                    bound[r, blk] = probs[r, uncertain[j]]
            if 0.0 < bound[r, blk] <= DENSE:
                step[r, blk] = np.log1p(-bound[r, blk])
    # a drawn document at rank r, i-th drawn in rank order, adds fixed_part[r] + i / r
    inverse = np.zeros(width + 2)
    for k in range(1, width + 2):
        inverse[k] = 1.0 / k
    fixed_part = below + above * inverse
    # who retrieves each uncertain document, at which rank: its bit in the systems' bitmaps
    # (system s's ranks are bits s * n_words * 64 + r of one array; CSR by document)
    n_words = width // 64 + 1
    stride = n_words * 64
    ptr = np.zeros(m + 1, dtype=np.int64)
    for j in range(m):
        n_ret = 0
        for s in range(n_sys):
            if pos[uncertain[j], s] > 0:
                n_ret += 1
        ptr[j + 1] = ptr[j] + n_ret
    who = np.empty(ptr[m], dtype=np.int64)
    slot = np.empty(ptr[m], dtype=np.int64)
    for j in range(m):
        e = ptr[j]
        for s in range(n_sys):
            if pos[uncertain[j], s] > 0:
                who[e] = s
                slot[e] = s * stride + pos[uncertain[j], s]
                e += 1
    drawn = np.empty(m, dtype=np.int64)
    bits = np.zeros(n_sys * n_words, dtype=np.uint64)
    # shallow runs: every word of a system is read back; deep ones: only the words between
    # the first and the last drawn rank (tracked at a cost per drawn document)
    track = n_words > TRACKED_WORDS
    first = np.arange(n_sys) * n_words
    last = np.arange(1, n_sys + 1) * n_words - 1
    if track:
        first[:] = n_sys * n_words
        last[:] = -1
    one = np.uint64(1)
    state = _mt_seed(seed)
    uniform = np.empty(MT_N // 2)
    u = uniform.size  # the next uniform to read: none made yet
    for b in range(n_draws):
        r = b % n_post
        k = 0
        for blk in range(n_blocks):
            q = bound[r, blk]
            if q <= 0.0:
                continue
            lo = starts[blk]
            hi = starts[blk + 1]
            if q > DENSE:  # (branch-free: the test is a coin flip the CPU cannot predict)
                for j in range(lo, hi):
                    if u == uniform.size:
                        u = _mt_twist(state, uniform)
                    u += 1
                    drawn[k] = j
                    k += uniform[u - 1] < probs[r, uncertain[j]]
                continue
            j = lo - 1
            while True:
                if u == uniform.size:
                    u = _mt_twist(state, uniform)
                u += 1
                # the skip is compared as a float: for a tiny q it exceeds any int64, and
                # converting it first would wrap to a negative index (a crash, not an error)
                skip = np.floor(np.log(1.0 - uniform[u - 1]) / step[r, blk])
                if skip >= hi - j - 1:
                    break
                j += 1 + int(skip)
                if u == uniform.size:
                    u = _mt_twist(state, uniform)
                u += 1
                drawn[k] = j
                k += uniform[u - 1] * q < probs[r, uncertain[j]]
        n_rel = n_fixed + k
        if n_rel == 0:
            continue
        # each system's drawn ranks as set bits of its bitmap, read back in rank order
        if track:
            for i in range(k):
                for e in range(ptr[drawn[i]], ptr[drawn[i] + 1]):
                    w = slot[e] >> 6
                    bits[w] |= one << np.uint64(slot[e] & 63)
                    first[who[e]] = min(first[who[e]], w)
                    last[who[e]] = max(last[who[e]], w)
        else:
            for i in range(k):
                for e in range(ptr[drawn[i]], ptr[drawn[i] + 1]):
                    bits[slot[e] >> 6] |= one << np.uint64(slot[e] & 63)
        for s in range(n_sys):
            total = base[s]
            i = 0
            offset = s * stride
            for w in range(first[s], last[s] + 1):
                word = bits[w]
                while word != 0:
                    rank = (w << 6) + trailing_zeros(word) - offset  # the lowest set bit's
                    i += 1
                    total += fixed_part[s, rank] + i * inverse[rank]
                    word &= word - one
                bits[w] = 0
            if track:
                first[s] = n_sys * n_words
                last[s] = -1
            out[b, s] = total / n_rel
    return out


#: thinning proposes documents in blocks whose largest probability is at most this;
#: above it every document of the block gets its own uniform
DENSE = 0.25
#: bitmaps of at most this many 64-bit words per system (ranks 1..64 × this) are read whole
TRACKED_WORDS = 32
#: the Mersenne Twister's state size and shift (Matsumoto & Nishimura 1998)
MT_N = 624
MT_M = 397


@njit_cached()
def _mt_seed(seed):
    """MT19937's state seeded as ``np.random.seed(seed)`` seeds numba's (init_genrand)."""
    state = np.empty(MT_N, dtype=np.uint32)
    x = np.uint32(seed)
    for i in range(MT_N):
        state[i] = x
        x = np.uint32(np.uint32(1812433253) * (x ^ (x >> np.uint32(30))) + np.uint32(i + 1))
    return state


@njit_cached()
def _mt_twist(state, out):
    """The next ``MT_N`` words of MT19937 (one twist of ``state``), tempered, as ``MT_N / 2``
    uniforms in ``out``, each of two words as numba's and numpy's legacy ``random()`` make
    it: ``((a >> 5) · 2^26 + (b >> 6)) / 2^53``. Returns 0 (the index of the next one)."""
    upper = np.uint32(0x80000000)
    lower = np.uint32(0x7FFFFFFF)
    matrix = np.uint32(0x9908B0DF)
    one = np.uint32(1)
    zero = np.uint32(0)
    for i in range(MT_N - MT_M):
        y = (state[i] & upper) | (state[i + 1] & lower)
        state[i] = state[i + MT_M] ^ (y >> one) ^ (matrix if y & one else zero)
    for i in range(MT_N - MT_M, MT_N - 1):
        y = (state[i] & upper) | (state[i + 1] & lower)
        state[i] = state[i + MT_M - MT_N] ^ (y >> one) ^ (matrix if y & one else zero)
    y = (state[MT_N - 1] & upper) | (state[0] & lower)
    state[MT_N - 1] = state[MT_M - 1] ^ (y >> one) ^ (matrix if y & one else zero)
    for i in range(MT_N // 2):
        a = _temper(state[2 * i]) >> np.uint32(5)
        b = _temper(state[2 * i + 1]) >> np.uint32(6)
        out[i] = (a * 67108864.0 + b) / 9007199254740992.0
    return 0


@njit_cached(inline="always")
def _temper(y):
    y ^= y >> np.uint32(11)
    y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
    y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
    y ^= y >> np.uint32(18)
    return y
