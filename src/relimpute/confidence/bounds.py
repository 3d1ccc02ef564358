"""Monte Carlo error of an interval's bounds, and the bounds printed to the digits it leaves.

A percentile interval from Monte Carlo draws is a pair of tail quantiles: with a model's
posterior draws they rest on the few draws in the tail, so their last digits change with the
seed. :func:`bound_standard_errors` estimates that error; :func:`bound_decimals` and
:func:`rounded_bounds` print each bound to the decimal of its error
(:meth:`~relimpute.confidence.Comparison.to_frame` with ``rounded=True``).
"""

from __future__ import annotations

import math

import numpy as np


def pair_differences(by_system: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """``(P, B)`` rows ``by_system[a] − by_system[b]`` for each pair ``(a, b)`` of ``pairs``.

    Written a pair at a time into one array (gathering both sides' rows first would make
    two more arrays of its size: millions of values, each page of them a fault)."""
    out = np.empty((len(pairs), by_system.shape[1]))
    for q, (a, b) in enumerate(pairs.tolist()):
        np.subtract(by_system[a], by_system[b], out=out[q])
    return out


def bound_standard_errors(
    draws: np.ndarray, pairs: np.ndarray, level: float, n_clusters: int, max_elements: int = 1 << 22
) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo standard errors of the percentile interval's bounds of each pair's ΔMAP.

    ``draws (B, S)`` are the MAP draws, draw ``d`` in cluster ``d mod n_clusters`` (the
    posterior draw it used: draws of one cluster are not independent). For the bound at
    probability ``p``, the indicators ``Δ_d ≤ q̂`` are averaged per cluster; their standard
    error ``s_p`` (between clusters) is turned into the bound's by the quantiles at
    ``p ± s_p``: ``(Q(p + s_p) − Q(p − s_p)) / 2`` (the interval-inversion standard error
    of a quantile, Flegal & Jones 2011 §3 on batch means; Doss et al. 2014 on quantiles).
    """
    n_draws, n_pairs = len(draws), len(pairs)
    clusters = np.arange(n_draws) % max(1, min(int(n_clusters), n_draws))
    counts = np.bincount(clusters)
    out = (np.zeros(n_pairs), np.zeros(n_pairs))
    by_system = np.ascontiguousarray(np.asarray(draws).T)  # a pair's draws: two rows
    block = max(1, max_elements // max(n_draws, 1))
    for lo in range(0, n_pairs, block):
        sel = pairs[lo : lo + block]
        delta = pair_differences(by_system, sel)  # (pairs, draws)
        ordered = np.sort(delta, axis=1)
        for side, p in enumerate(((1 - level) / 2, (1 + level) / 2)):
            below = delta <= _sorted_quantile(ordered, np.full(len(sel), p))[:, None]
            share = _cluster_counts(below, clusters, len(counts))
            s_p = (share / counts).std(axis=1, ddof=1) / np.sqrt(len(counts)) if len(counts) > 1 else 0.0
            upper = _sorted_quantile(ordered, np.minimum(p + s_p, 1.0))
            lower = _sorted_quantile(ordered, np.maximum(p - s_p, 0.0))
            out[side][lo : lo + block] = (upper - lower) / 2
    return out


def _cluster_counts(below: np.ndarray, clusters: np.ndarray, n_clusters: int) -> np.ndarray:
    """``(pairs, C)`` how many of each row's draws in each cluster are True (as floats).

    Draw ``d`` is in cluster ``clusters[d] = d mod C``: with whole rounds of ``C`` draws the
    counts are sums down a reshaped view (no index array); else pair ``i``'s draw ``d``
    counts in bin ``i · C + clusters[d]`` of one bincount. Counts: the same numbers either way.
    """
    n_rows, n_draws = below.shape
    if n_draws % n_clusters == 0:
        rounds = below.reshape(n_rows, n_draws // n_clusters, n_clusters)
        return rounds.sum(axis=1, dtype=np.int64).astype(np.float64)
    cell = (np.arange(n_rows)[:, None] * n_clusters + clusters[None, :]).ravel()
    share = np.bincount(cell, weights=below.ravel(), minlength=n_rows * n_clusters)
    return share.reshape(n_rows, n_clusters)


def _sorted_quantile(sorted_rows: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Per row, the linear-method quantile (numpy's default) at its own probability."""
    n = sorted_rows.shape[1]
    virtual = (n - 1) * np.asarray(probs, dtype=float)
    below = np.clip(np.floor(virtual).astype(np.int64), 0, n - 1)
    above = np.minimum(below + 1, n - 1)
    rows = np.arange(len(sorted_rows))
    a, b = sorted_rows[rows, below], sorted_rows[rows, above]
    return a + (b - a) * (virtual - below)


def bound_decimals(value: float, se: float) -> int:
    """Decimals to print a Monte Carlo bound with: those of its standard error ``se`` (1 to 4),
    and more (up to 4) while the bound would read 0 though it is not, so that a bound never
    looks like touching zero beside a confident P(A beats B)."""
    digits = 4 if not se > 0 else min(max(math.floor(-math.log10(se)), 1), 4)
    while digits < 4 and value != 0 and round(value, digits) == 0:
        digits += 1
    return digits


def rounded_bounds(values, errors) -> list[str]:
    """Each bound as text at the decimal of its standard error (:func:`bound_decimals`;
    never ``-0.0``)."""
    digits = [bound_decimals(float(v), float(e)) for v, e in zip(values, errors)]
    rounded = [round(float(v), d) + 0.0 for v, d in zip(values, digits)]
    return [f"{v:.{d}f}" for v, d in zip(rounded, digits)]
