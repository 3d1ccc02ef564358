"""numba kernels of the corpus bootstrap of ranked lists (Cormack & Lynam 2006, §5).

A resample of the corpus replicates every document ``k ~ Poisson(1)`` times.
The count of document ``d`` in resample ``b`` is a pure function of
``(seed, b, d)`` (a splitmix64 hash fed to the Poisson(1) inverse CDF), so the
counts need no storage, every resample can run on its own thread, and two
systems scored with the same seed see the same corpus (paired resamples). The
copies of a retrieved document are ranked consecutively in its place; ``R*``
is the sum of the counts of every relevant document of the topic, retrieved
or not (``R*_ret + Σ_{R_not} Poisson(1)``, the paper's partition of R).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .._jit import njit_cached

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_TO_UNIT = 2.0**-53


def _poisson1_cdf(top: int = 20) -> np.ndarray:
    """``P(K <= k)`` for ``K ~ Poisson(1)``, ``k = 0..top`` (the last entry forced to 1)."""
    pmf = np.array([math.exp(-1.0) / math.factorial(k) for k in range(top + 1)])
    cdf = np.cumsum(pmf)
    cdf[-1] = 1.0
    return cdf


POISSON1_CDF = _poisson1_cdf()


@njit(inline="always")
def _mix(x):
    """splitmix64 finaliser (Steele, Lea & Flood 2014)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(inline="always")
def _count(seed, b, d, n_docs, cdf):
    """Poisson(1) count of document ``d`` in resample ``b``."""
    index = np.uint64(b) * np.uint64(n_docs) + np.uint64(d) + np.uint64(1)
    u = np.float64(_mix(np.uint64(seed) + index * _GAMMA) >> np.uint64(11)) * _TO_UNIT
    k = 0
    while u >= cdf[k] and k < cdf.size - 1:
        k += 1
    return k


@njit_cached()
def resample_counts(seed, n_resamples, n_docs, cdf):
    """``(B, n)`` the counts the kernels below use (for tests and inspection)."""
    out = np.empty((n_resamples, n_docs), dtype=np.int64)
    for b in range(n_resamples):
        for d in range(n_docs):
            out[b, d] = _count(seed, b, d, n_docs, cdf)
    return out


@njit(inline="always")
def _ap_with_counts(row, stop, relevant, counts, n_relevant):
    """AP of one ranked list whose documents appear ``counts[d]`` times each, in place."""
    if n_relevant <= 0:
        return np.nan
    seen = 0
    found = 0
    total = 0.0
    for i in range(stop):
        d = row[i]
        if not relevant[d]:  # its copies only push the relevant ones down
            seen += counts[d]
            continue
        for _ in range(counts[d]):  # each copy of a relevant document is a relevant rank
            found += 1
            seen += 1
            total += found / seen
    return total / n_relevant


@njit(inline="always")
def _documents_read(ranking, stop, relevant):
    """The documents some list reads before its stop, and the relevant ones: only they need a count."""
    read = relevant.copy()
    for s in range(ranking.shape[0]):
        for i in range(stop[s]):
            read[ranking[s, i]] = True
    return np.nonzero(read)[0]


@njit(inline="always")
def _resample_ap(out, b, ranking, stop, relevant, rel_docs, needed, seed, cdf):
    """``out[:, b]``: every system's AP in corpus resample ``b``."""
    counts = np.zeros(relevant.size, dtype=np.uint8)  # small: stays in cache while lists are read
    for d in needed:
        counts[d] = _count(seed, b, d, relevant.size, cdf)
    n_relevant = 0
    for d in rel_docs:
        n_relevant += counts[d]
    for s in range(ranking.shape[0]):
        out[s, b] = _ap_with_counts(ranking[s], stop[s], relevant, counts, n_relevant)


@njit(inline="always")
def _resample_inputs(ranking, stop, relevant, n_resamples):
    """What both bootstrap kernels start from: the relevant documents, the documents read and
    the ``(S, B)`` output."""
    rel_docs = np.nonzero(relevant)[0]
    needed = _documents_read(ranking, stop, relevant)
    return rel_docs, needed, np.empty((ranking.shape[0], n_resamples))


@njit_cached(parallel=True)
def bootstrap_ap(ranking, stop, relevant, seed, n_resamples, cdf):
    """``(S, B)`` AP of every system in every corpus resample of one topic.

    ``ranking (S, D)`` padded document indices, ``stop (S,)`` positions to read
    (past the last relevant document nothing changes AP), ``relevant (n,)``
    bool. A resample with ``R* = 0`` gives NaN (AP undefined). Resamples run
    on numba's threads: call it from the main thread only (see
    :func:`bootstrap_ap_serial`).
    """
    rel_docs, needed, out = _resample_inputs(ranking, stop, relevant, n_resamples)
    for b in prange(n_resamples):
        _resample_ap(out, b, ranking, stop, relevant, rel_docs, needed, seed, cdf)
    return out


@njit_cached()
def bootstrap_ap_serial(ranking, stop, relevant, seed, n_resamples, cdf):
    """:func:`bootstrap_ap` on the calling thread, the same numbers: for a study's units that run
    on threads (a Dask worker's), where a parallel kernel launched from several threads at once
    oversubscribes the cores and can abort the process (numba's workqueue threading layer)."""
    rel_docs, needed, out = _resample_inputs(ranking, stop, relevant, n_resamples)
    for b in range(n_resamples):
        _resample_ap(out, b, ranking, stop, relevant, rel_docs, needed, seed, cdf)
    return out


@njit_cached()
def jackknife_influence(row, stop, relevant, n_relevant):
    """Influence of deleting each document on the AP of one list (for BCa).

    Returns ``(stop + 1,)`` values ``AP − AP_(−i)``: one per retrieved position
    up to ``stop`` and, last, the value shared by each of the ``R_not``
    relevant documents the list does not retrieve. With ranks ``k`` and
    ``c_k`` relevant up to ``k``, deleting position ``i`` gives
    ``AP_(−i) = (A_<i + Σ_{rel k>i} (c_k − rel_i)/(k − 1)) / (R − rel_i)``,
    computed for all ``i`` with suffix sums (O(n)). An undefined delete-one
    AP (R becomes 0) has influence NaN.
    """
    out = np.full(stop + 1, np.nan)
    if n_relevant <= 0:
        return out
    found = np.zeros(stop, dtype=np.int64)
    c = 0
    for i in range(stop):
        if relevant[row[i]]:
            c += 1
        found[i] = c
    # suffix sums over relevant ranks k > i of c_k/(k-1) and 1/(k-1) (rank k = i + 1)
    s_ck = 0.0
    s_one = 0.0
    suffix_ck = np.zeros(stop + 1)
    suffix_one = np.zeros(stop + 1)
    for i in range(stop - 1, -1, -1):
        suffix_ck[i + 1] = s_ck
        suffix_one[i + 1] = s_one
        if relevant[row[i]] and i >= 1:
            s_ck += found[i] / i  # rank i+1 becomes rank i after a deletion above it
            s_one += 1.0 / i
    prefix = 0.0  # A_<i: Σ over relevant ranks before i of c_k / k
    ap = 0.0
    for i in range(stop):
        if relevant[row[i]]:
            ap += found[i] / (i + 1)
    ap /= n_relevant
    for i in range(stop):
        rel_i = 1 if relevant[row[i]] else 0
        remaining = n_relevant - rel_i
        if remaining > 0:
            after = suffix_ck[i + 1] - rel_i * suffix_one[i + 1]
            out[i] = ap - (prefix + after) / remaining
        if rel_i:
            prefix += found[i] / (i + 1)
    if n_relevant > 1:
        out[stop] = ap - ap * n_relevant / (n_relevant - 1)
    return out
