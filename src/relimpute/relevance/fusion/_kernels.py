"""numba kernels of the fusion model's capture adjustment over posterior draws.

Per draw the capture adjustment (:mod:`relimpute.relevance.fusion`, module
docstring) cuts the log-odds of every document outside the fit set at their
quantiles and sums, per group, the expected relevant count ``E_b``, the relevant
documents found ``F_b`` and the unjudged documents' expected count ``U_b``. Done
with numpy that is a sort-like quantile, a search and three weighted counts over
every document of the campaign for every draw; these kernels do the same in two
linear passes, with the same floating-point results as
``np.quantile(..., method="linear")``, ``np.searchsorted(..., side="right")`` and
``np.bincount`` (tested). Imported lazily (numba compiles on first use).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from ..._jit import njit_cached

_HISTOGRAM_BINS = 4096
#: documents whose log-odds :func:`capture_draws` computes before storing them by draw
_BLOCK = 64
#: documents to compute from which :func:`topic_draws` shares them out among threads (DL
#: 2019's few per topic, the judged ones, cost more CPU shared than computed serially)
_SHARED_TOPIC = 64 * _BLOCK
#: draws times documents from which :func:`capture_draws` shares out its passes
_SHARED_VALUES = 1 << 25


@njit_cached()
def order_statistics(x, ks):
    """``x``'s ``ks``-th smallest values (``ks`` sorted, 0-based), exactly, in O(n).

    A histogram of the values over their range finds the bucket holding each
    rank; only the values of those buckets are sorted. Bucketing is monotone in
    the value, so the ranks are exact whatever the rounding.
    """
    n = x.size
    out = np.empty(ks.size)
    lo = x.min()
    hi = x.max()
    if not hi > lo:
        out[:] = lo
        return out
    n_buckets = _HISTOGRAM_BINS
    scale = n_buckets / (hi - lo)
    counts = np.zeros(n_buckets + 1, dtype=np.int64)
    for i in range(n):
        b = min(int((x[i] - lo) * scale), n_buckets - 1)
        counts[b + 1] += 1
    for b in range(n_buckets):
        counts[b + 1] += counts[b]  # counts[b]: values in buckets before b
    wanted = np.zeros(n_buckets, dtype=np.bool_)
    bucket_of = np.empty(ks.size, dtype=np.int64)
    b = 0
    for j in range(ks.size):
        while counts[b + 1] <= ks[j]:
            b += 1
        bucket_of[j] = b
        wanted[b] = True
    # gather the wanted buckets' values, bucket by bucket, and sort each
    start = np.zeros(n_buckets + 1, dtype=np.int64)
    for b in range(n_buckets):
        start[b + 1] = start[b] + (counts[b + 1] - counts[b] if wanted[b] else 0)
    values = np.empty(start[n_buckets])
    fill = start[:n_buckets].copy()
    for i in range(n):
        b = min(int((x[i] - lo) * scale), n_buckets - 1)
        if wanted[b]:
            values[fill[b]] = x[i]
            fill[b] += 1
    for b in range(n_buckets):
        if wanted[b]:
            values[start[b] : start[b + 1]] = np.sort(values[start[b] : start[b + 1]])
    for j in range(ks.size):
        b = bucket_of[j]
        out[j] = values[start[b] + ks[j] - counts[b]]
    return out


def quantiles(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``np.quantile(x, q)`` (linear method, ``x`` non-empty, no NaN), bit for bit."""
    return _quantiles(np.ascontiguousarray(x, dtype=np.float64), np.asarray(q, dtype=np.float64))


@njit_cached()
def _quantiles(x, q):
    """numpy's linear-method quantile (``virtual = (n − 1) q``, its ``_lerp``) on exact order
    statistics."""
    n = x.size
    lower = np.empty(q.size, dtype=np.int64)
    upper = np.empty(q.size, dtype=np.int64)
    gamma = np.empty(q.size)
    for j in range(q.size):
        virtual = (n - 1) * q[j]
        previous = np.floor(virtual)
        following = previous + 1.0
        if virtual >= n - 1:
            previous = following = -1.0
        if virtual < 0:
            previous = following = 0.0
        gamma[j] = virtual - previous
        lower[j] = int(previous) % n
        upper[j] = int(following) % n
    ks = np.unique(np.concatenate((lower, upper)))
    stats = order_statistics(x, ks)
    out = np.empty(q.size)
    for j in range(q.size):
        a = stats[np.searchsorted(ks, lower[j])]
        b = stats[np.searchsorted(ks, upper[j])]
        diff = b - a
        out[j] = b - diff * (1 - gamma[j]) if gamma[j] >= 0.5 else a + diff * gamma[j]
    return out


@njit_cached()
def _log_odds(
    indptr, indices, data, theta_t, offsets, spreads, capped, b_ptr, b_idx, b_val, effects_t,
    row, d0, d1, eta, extra,
):  # fmt: skip
    """Draws ``d0..d1``'s log-odds of document ``row`` into ``eta``: ``design · θ_d + offset −
    spread_d · capped`` plus the runs' effects below the pool, each sum in the order of
    scipy's sparse products (so the numbers equal the numpy code's). ``theta_t`` and
    ``effects_t`` are transposed: one document's row is read once for every draw."""
    n = d1 - d0
    eta[:n] = 0.0
    _row_times(indptr, indices, data, theta_t, row, d0, n, eta)
    spread = spreads[d0:]
    for k in range(n):
        eta[k] = eta[k] + offsets[row]
        eta[k] = eta[k] - spread[k] * capped[row]
    if effects_t.shape[0]:
        extra[:n] = 0.0
        _row_times(b_ptr, b_idx, b_val, effects_t, row, d0, n, extra)
        for k in range(n):
            eta[k] = eta[k] + extra[k]


@njit_cached()
def _row_times(indptr, indices, data, table_t, row, d0, n, acc):
    """``acc[k] += Σ_e data[e] · table_t[indices[e], d0 + k]`` over the CSR row, in order.

    The row is sliced at ``d0`` first: indexed by ``k`` alone (never negative) the loop is
    vectorised; ``d0 + k`` might wrap around, and numba's check for it kept it scalar."""
    for e in range(indptr[row], indptr[row + 1]):
        value = data[e]
        column = table_t[indices[e], d0:]
        for k in range(n):
            acc[k] += value * column[k]


def capture_draws(
    indptr, indices, data, theta_t, offsets, spreads, capped, b_ptr, b_idx, b_val, effects_t,
    alive, rows, starts, judged, relevant, q, floor, chunk, threads=None,
):  # fmt: skip
    """Per draw, the capture adjustment's group edges and factors (module docstring).

    ``rows`` are the documents outside the fit set (rows of the stacked design), topic by
    topic (``starts``); ``alive[row]`` is False in a topic no run retrieves (p = 0). A
    document's group is found from its log-odds clipped as ``logit(clip(p, 1e-300,
    1 − 1e-16))`` clips them. ``chunk`` draws at a time. Returns ``(n_draws, n_bins − 1)``
    edges (none without documents outside the fit set), ``(n_draws, n_bins)`` factors and,
    when every draw fits one pass (``chunk ≥ n_draws``), ``(n_draws, n_out)`` the
    capture-adjusted draws of p of the ``rows`` (the pass's buffer of log-odds, overwritten:
    :func:`topic_draws` reads them instead of computing them again), else a ``(0, 0)`` array.

    No random numbers and nothing summed across draws or across document blocks: the
    blocks' log-odds, then the draws, are shared out among ``threads`` threads (numba's
    thread count by default) when there are many, each with its own scratch, and the
    numbers are the same whatever the count. Serial when numba has no threading layer.
    """
    n_draws = theta_t.shape[1]
    n_bins = q.size + 1
    n_out = rows.size
    # shared out only when large: DL 2019's 100 draws of 200,000 documents took more CPU
    # time on two threads than on one (numba's thread count starts its threads: not asked)
    parts = _usable_threads(threads) if n_draws * n_out > _SHARED_VALUES else 1
    keep = chunk >= n_draws
    edges = np.empty((n_draws, n_bins - 1 if n_out else 0))
    factors = np.empty((n_draws, n_bins))
    logits = np.empty((chunk, n_out))
    alive_out = alive[rows]
    # per part: a block of documents' log-odds, then copied a draw at a time (one
    # document's draws written straight down a column of ``logits`` touch a page per
    # draw), the draws' group keys and groups
    block = np.empty((parts, _BLOCK, chunk))
    extra = np.empty((parts, chunk))
    keys = np.empty((parts, n_out))
    groups = np.empty((parts, n_out), dtype=np.int64)
    args = (
        indptr, indices, data, theta_t, offsets, spreads, capped, b_ptr, b_idx, b_val,
        effects_t, rows, alive_out, starts, judged, relevant, q, floor, chunk, keep, edges,
        factors, logits, block, extra, keys, groups,
    )  # fmt: skip
    if parts > 1:
        _capture_parallel(*args)
    else:
        for d0 in range(0, n_draws, chunk):
            _capture_part(0, 1, d0, *args)
    if keep:
        return edges, factors, logits
    return edges, factors, np.empty((0, 0))


def _usable_threads(threads: int | None) -> int:
    """``threads``, else numba's thread count (``NUMBA_NUM_THREADS``, ``set_num_threads``);
    1 when numba has no threading layer (its thread count raises then)."""
    try:
        available = numba.get_num_threads()
    except ValueError as exc:
        if "threading layer" not in str(exc):
            raise
        return 1
    return max(1, available if threads is None else threads)


@njit_cached(parallel=True)
def _capture_parallel(
    indptr, indices, data, theta_t, offsets, spreads, capped, b_ptr, b_idx, b_val, effects_t,
    rows, alive_out, starts, judged, relevant, q, floor, chunk, keep, edges, factors,
    logits, block, extra, keys, groups,
):  # fmt: skip
    """:func:`capture_draws`'s passes, each shared out among ``block.shape[0]`` threads."""
    parts = block.shape[0]
    for d0 in range(0, theta_t.shape[1], chunk):
        for p in prange(parts):
            _log_odds_part(
                p, parts, d0, indptr, indices, data, theta_t, offsets, spreads, capped, b_ptr,
                b_idx, b_val, effects_t, rows, chunk, logits, block[p], extra[p],
            )  # fmt: skip
        for p in prange(parts):
            _draws_part(
                p, parts, d0, theta_t.shape[1], alive_out, starts, judged, relevant, q, floor,
                chunk, keep, edges, factors, logits, keys[p], groups[p],
            )  # fmt: skip


@njit_cached()
def _capture_part(
    p, parts, d0, indptr, indices, data, theta_t, offsets, spreads, capped, b_ptr, b_idx,
    b_val, effects_t, rows, alive_out, starts, judged, relevant, q, floor, chunk, keep, edges,
    factors, logits, block, extra, keys, groups,
):  # fmt: skip
    """One pass of :func:`capture_draws` (draws ``d0..d0 + chunk``), part ``p`` of ``parts``
    of each of its steps, with part ``p``'s scratch: the serial path."""
    _log_odds_part(
        p, parts, d0, indptr, indices, data, theta_t, offsets, spreads, capped, b_ptr, b_idx,
        b_val, effects_t, rows, chunk, logits, block[p], extra[p],
    )  # fmt: skip
    _draws_part(
        p, parts, d0, theta_t.shape[1], alive_out, starts, judged, relevant, q, floor, chunk,
        keep, edges, factors, logits, keys[p], groups[p],
    )  # fmt: skip


@njit_cached()
def _log_odds_part(
    p, parts, d0, indptr, indices, data, theta_t, offsets, spreads, capped, b_ptr, b_idx,
    b_val, effects_t, rows, chunk, logits, block, extra,
):  # fmt: skip
    """Part ``p`` of ``parts`` of the document blocks: their log-odds of draws ``d0..d0 +
    chunk`` into their columns of ``logits`` (a draw per row)."""
    d1 = min(d0 + chunk, theta_t.shape[1])
    n_out = rows.size
    n_blocks = -(-n_out // _BLOCK)
    for blk in range(n_blocks * p // parts, n_blocks * (p + 1) // parts):
        i0 = blk * _BLOCK
        i1 = min(i0 + _BLOCK, n_out)
        for i in range(i0, i1):
            _log_odds(
                indptr, indices, data, theta_t, offsets, spreads, capped, b_ptr, b_idx,
                b_val, effects_t, rows[i], d0, d1, block[i - i0], extra,
            )  # fmt: skip
        for k in range(d1 - d0):
            for i in range(i0, i1):
                logits[k, i] = block[i - i0, k]


@njit_cached()
def _draws_part(
    p, parts, d0, n_draws, alive_out, starts, judged, relevant, q, floor, chunk, keep, edges,
    factors, logits, keys, groups,
):  # fmt: skip
    """Part ``p`` of ``parts`` of draws ``d0..d0 + chunk``: each draw's group edges, sums
    and factors from its row of ``logits`` (with ``keep``, the row becomes its adjusted
    draws of p)."""
    n_bins = q.size + 1
    n_out = keys.size
    n = min(d0 + chunk, n_draws) - d0
    for k in range(n * p // parts, n * (p + 1) // parts):
        d = d0 + k
        row = logits[k]
        for i in range(n_out):
            keys[i] = _key(row[i]) if alive_out[i] else LOW
        if n_out:
            edges[d] = _quantiles(keys, q)
        expected, found, unjudged = capture_sums(
            keys, row, alive_out, judged, relevant, starts, edges[d], n_bins, groups, keep
        )
        for b in range(n_bins):
            if unjudged[b] > 0:
                ratio = max(expected[b] - found[b], floor * unjudged[b]) / unjudged[b]
                factors[d, b] = min(ratio, 1.0)
            else:
                factors[d, b] = 1.0
        if keep:  # ``row`` holds the points now (capture_sums): adjust them
            for i in range(n_out):
                row[i] = row[i] * factors[d, groups[i]]


def topic_draws(
    indptr, indices, data, theta_t, offsets, spreads, capped, b_ptr, b_idx, b_val, effects_t,
    alive, lo, hi, edges, factors, kept, rows, first, last, threads=None,
):  # fmt: skip
    """``(n_draws, hi − lo)`` capture-adjusted draws of p of the documents ``lo..hi`` (one
    topic) of the stacked design, C-ordered (a draw's documents in a row, as the Monte
    Carlo reads them; no transposed copy). The documents outside the fit set
    (``rows[first:last]``) are copied from ``kept`` when :func:`capture_draws` kept them
    (``kept`` not empty); the others' are computed, a block of documents' draws first, then
    copied a draw at a time (as in :func:`capture_draws`: one document's draws written
    straight down a column touch a page per draw), the blocks shared out among ``threads``
    threads as :func:`capture_draws` shares them (the same numbers on any count) when
    there are many."""
    n_draws = theta_t.shape[1]
    if not alive:
        return np.zeros((n_draws, hi - lo))
    out, todo = _topic_setup(n_draws, lo, hi, kept, rows, first, last)
    # numba's thread count starts its threads: asked only when they may be used
    parts = _usable_threads(threads) if todo.size >= _SHARED_TOPIC else 1
    eta = np.empty((parts, n_draws))
    extra = np.empty((parts, n_draws))
    block = np.empty((parts, _BLOCK, n_draws))
    args = (
        indptr, indices, data, theta_t, offsets, spreads, capped, b_ptr, b_idx, b_val,
        effects_t, lo, edges, factors, todo, out, eta, extra, block,
    )  # fmt: skip
    if parts > 1:
        _topic_parallel(*args)
    else:
        _topic_part(0, 1, *args)
    return out


@njit_cached()
def _topic_setup(n_draws, lo, hi, kept, rows, first, last):
    """:func:`topic_draws`'s output with the kept draws copied in, and the documents left
    to compute (``lo..hi`` but the copied ``rows[first:last]``)."""
    out = np.zeros((n_draws, hi - lo))
    copied = kept.shape[0] > 0
    if copied:
        for d in range(n_draws):
            for j in range(first, last):
                out[d, rows[j] - lo] = kept[d, j]
    todo = np.empty(hi - lo, dtype=np.int64)
    n = 0
    j = first
    for row in range(lo, hi):
        if copied and j < last and rows[j] == row:
            j += 1
        else:
            todo[n] = row
            n += 1
    return out, todo[:n]


@njit_cached(parallel=True)
def _topic_parallel(
    indptr, indices, data, theta_t, offsets, spreads, capped, b_ptr, b_idx, b_val, effects_t,
    lo, edges, factors, todo, out, eta, extra, block,
):  # fmt: skip
    """:func:`_topic_part` on every part, ``block.shape[0]`` of them, in parallel."""
    parts = block.shape[0]
    for p in prange(parts):
        _topic_part(
            p, parts, indptr, indices, data, theta_t, offsets, spreads, capped, b_ptr, b_idx,
            b_val, effects_t, lo, edges, factors, todo, out, eta, extra, block,
        )  # fmt: skip


@njit_cached()
def _topic_part(
    p, parts, indptr, indices, data, theta_t, offsets, spreads, capped, b_ptr, b_idx, b_val,
    effects_t, lo, edges, factors, todo, out, etas, extras, blocks,
):  # fmt: skip
    """Part ``p`` of ``parts`` of the blocks of documents ``todo``: their draws of p into
    their columns of ``out``, with part ``p``'s scratch."""
    n_draws = theta_t.shape[1]
    eta = etas[p]
    extra = extras[p]
    block = blocks[p]
    n_blocks = -(-todo.size // _BLOCK)
    for blk in range(n_blocks * p // parts, n_blocks * (p + 1) // parts):
        i0 = blk * _BLOCK
        n = min(_BLOCK, todo.size - i0)
        for i in range(n):
            _log_odds(
                indptr, indices, data, theta_t, offsets, spreads, capped, b_ptr, b_idx, b_val,
                effects_t, todo[i0 + i], 0, n_draws, eta, extra,
            )  # fmt: skip
            drawn = block[i]
            for d in range(n_draws):
                p_d = 1.0 / (1.0 + np.exp(-eta[d]))
                drawn[d] = p_d * factors[d, _bin(edges[d], _key(eta[d]))]
        for d in range(n_draws):
            for i in range(n):
                out[d, todo[i0 + i] - lo] = block[i, d]


#: ``logit(1e-300)`` and ``logit(1 − 1e-16)``: the log-odds the capture groups clip to
LOW = -690.7755278982137
HIGH = 36.7368005696771


@njit_cached(inline="always")
def _key(eta):
    return min(max(eta, LOW), HIGH)


@njit_cached()
def capture_sums(keys, logits, alive, judged, relevant, starts, edges, n_bins, groups, store):
    """Per group, ``E_b``, ``F_b`` and ``U_b`` over the documents outside the fit set.

    The arrays hold those documents of every topic one after the other (topic
    ``t`` at ``starts[t]:starts[t + 1]``); a document's group is
    ``searchsorted(edges, key, side="right")`` and its point probability
    ``expit(logit)`` (0 where not ``alive``). Sums run per topic in document order and are
    added topic by topic, as ``np.bincount`` per topic would. With ``store``, each
    document's group goes to ``groups`` and its point replaces its log-odds in ``logits``.
    """
    expected = np.zeros(n_bins)
    found = np.zeros(n_bins)
    unjudged = np.zeros(n_bins)
    e_t = np.zeros(n_bins)
    f_t = np.zeros(n_bins)
    u_t = np.zeros(n_bins)
    for t in range(starts.size - 1):
        e_t[:] = 0.0
        f_t[:] = 0.0
        u_t[:] = 0.0
        for i in range(starts[t], starts[t + 1]):
            b = _bin(edges, keys[i])
            point = 1.0 / (1.0 + np.exp(-logits[i])) if alive[i] else 0.0
            if store:
                groups[i] = b
                logits[i] = point
            e_t[b] += point
            if judged[i]:
                f_t[b] += 1.0 if relevant[i] else 0.0
            else:
                u_t[b] += point
        for b in range(n_bins):
            expected[b] += e_t[b]
            found[b] += f_t[b]
            unjudged[b] += u_t[b]
    return expected, found, unjudged


@njit_cached(inline="always")
def _bin(edges, value):
    """``np.searchsorted(edges, value, side="right")`` (edges sorted: a count, no branches)."""
    b = 0
    for e in range(edges.size):
        b += edges[e] <= value
    return b
