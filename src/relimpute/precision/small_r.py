"""The small-R correction: silver bullets and lead balloons (Cormack & Lynam 2006, §7).

AP = 0 means none of the R relevant documents was retrieved; the source
population may still hold *silver bullets*, relevant documents the system
would retrieve. The largest share ``u`` of them compatible with seeing none
among R is the smallest ``u`` with ``(1 − u)^R ≤ α``, i.e.
``u = 1 − α^{1/R}`` (R = 4, α = 0.05 gives the paper's 0.53). The upper
limit for AP is the expected AP when each relevant document is a silver
bullet with probability ``u`` and a silver bullet's rank is uniform on
``1..n`` (computed exactly by enumerating the order statistics). AP = 1 is
mirrored with *lead balloons*, relevant documents the system cannot retrieve:
the lower limit is the expected AP when each relevant document is one with
probability ``u``, ``E[(R − M)/R] = 1 − u``. Lists with AP within ``near`` of
0 (of 1) get the union of their interval and the AP = 0 (AP = 1) interval, as
the paper does for "AP ≈ 0 and AP ≈ 1".
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import gammaln
from scipy.stats import binom

from .intervals import APIntervals
from .resample import CorpusBootstrap

DEFAULT_NEAR = 0.01


def unseen_share(n_relevant, alpha: float) -> np.ndarray:
    """Upper binomial limit ``1 − α^{1/R}`` on the share of relevant documents never seen."""
    n_relevant = np.asarray(n_relevant, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(n_relevant > 0, 1.0 - alpha ** (1.0 / np.maximum(n_relevant, 1)), 1.0)


@lru_cache(maxsize=4096)
def expected_ap_random_ranks(n_relevant: int, n_placed: int, depth: int) -> float:
    """E[AP] when ``n_placed`` of R relevant documents sit at uniformly random ranks of ``1..depth``.

    With the ranks a uniform random ``m``-subset of ``1..n``, the ``j``-th
    smallest is ``r`` with probability ``C(r−1, j−1) C(n−r, m−j) / C(n, m)``,
    and ``AP = (1/R) Σ_j j / r_(j)``.
    """
    m, n = int(n_placed), int(depth)
    if m == 0 or n_relevant == 0:
        return 0.0
    m = min(m, n)
    ranks = np.arange(1, n + 1, dtype=float)[None, :]
    j = np.arange(1, m + 1, dtype=float)[:, None]
    log_p = _log_choose(ranks - 1, j - 1) + _log_choose(n - ranks, m - j) - _log_choose(n, m)
    total = np.sum(np.exp(log_p) * j / ranks)
    return float(total / n_relevant)


def _log_choose(n, k):
    n, k = np.broadcast_arrays(np.asarray(n, dtype=float), np.asarray(k, dtype=float))
    valid = (k >= 0) & (k <= n)
    out = np.full(n.shape, -np.inf)
    out[valid] = gammaln(n[valid] + 1) - gammaln(k[valid] + 1) - gammaln(n[valid] - k[valid] + 1)
    return out


def silver_bullet_upper(n_relevant: int, depth: int, alpha: float) -> float:
    """Upper AP limit for a list of ``depth`` documents with AP = 0 and R relevant."""
    if n_relevant <= 0 or depth <= 0:
        return 0.0
    u = float(unseen_share(n_relevant, alpha))
    counts = np.arange(n_relevant + 1)
    weights = binom.pmf(counts, n_relevant, u)
    counts, weights = counts[weights > 1e-12], weights[weights > 1e-12]  # the rest is negligible
    values = [expected_ap_random_ranks(int(n_relevant), int(m), int(depth)) for m in counts]
    return float(np.dot(weights, values))


def lead_balloon_lower(n_relevant: int, alpha: float) -> float:
    """Lower AP limit for a list with AP = 1: ``1 − u``."""
    return float(1.0 - unseen_share(n_relevant, alpha))


def small_r_corrected(
    intervals: APIntervals, boot: CorpusBootstrap, depth: np.ndarray, *, near: float = DEFAULT_NEAR
) -> APIntervals:
    """Widen the intervals of lists with AP ≈ 0 or ≈ 1 to the binomial limits.

    ``depth`` is the ``(S, T)`` length of each list (the ``n`` silver bullets
    are spread over); the tail probability is ``α = 1 − level``.
    """
    alpha = 1.0 - intervals.level
    low, high = intervals.low.copy(), intervals.high.copy()
    ap = intervals.estimate
    n_rel = np.broadcast_to(boot.n_relevant[None, :], ap.shape)
    for s, t in zip(*np.nonzero(ap <= near)):
        upper = silver_bullet_upper(int(n_rel[s, t]), int(depth[s, t]), alpha)
        low[s, t] = min(low[s, t], 0.0)
        high[s, t] = max(high[s, t], upper)
    for s, t in zip(*np.nonzero(ap >= 1.0 - near)):
        low[s, t] = min(low[s, t], lead_balloon_lower(int(n_rel[s, t]), alpha))
        high[s, t] = max(high[s, t], 1.0)
    return APIntervals(
        systems=intervals.systems,
        query_ids=intervals.query_ids,
        method=f"{intervals.method}+small-R",
        level=intervals.level,
        estimate=ap,
        low=low,
        high=high,
    )
